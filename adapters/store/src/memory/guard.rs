//! In-memory single-use guard.

use std::time::{Duration, Instant};

use super::{lock, make_room, MemoryStore};
use crate::key::check_token;
use crate::{Guard, StoreError};

impl Guard for MemoryStore {
    async fn claim(&self, token: &[u8], ttl: Duration) -> Result<bool, StoreError> {
        check_token(token)?;
        let now = Instant::now();
        let mut table = lock(&self.inner.guards);
        if table.get(token).is_some_and(|expires| *expires > now) {
            return Ok(false);
        }
        table.remove(token);
        make_room(
            &mut table,
            self.inner.limits.max_guards,
            "guard claims",
            |expires| *expires <= now,
        )?;
        table.insert(token.to_vec(), now + ttl);
        Ok(true)
    }
}
