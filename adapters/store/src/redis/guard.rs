//! The single-use guard in Redis: `SET mcp:guard:<token> 1 NX PX <ttl>`.

use std::time::Duration;

use super::RedisStore;
use crate::key::{check_token, guard_key};
use crate::record::ttl_millis;
use crate::{Guard, StoreError};

impl Guard for RedisStore {
    async fn claim(&self, token: &[u8], ttl: Duration) -> Result<bool, StoreError> {
        check_token(token)?;
        let set: Option<String> = redis::cmd("SET")
            .arg(guard_key(token))
            .arg(1)
            .arg("NX")
            .arg("PX")
            .arg(ttl_millis(ttl))
            .query_async(&mut self.connection().await?)
            .await?;
        Ok(set.is_some())
    }
}
