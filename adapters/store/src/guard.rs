//! The single-use guard: a token (a `requestState` value) is accepted once while its claim
//! lasts.

use std::future::Future;
use std::time::Duration;

use crate::error::StoreError;

/// Single-use claims.
pub trait Guard {
    /// Claims `token` for `ttl`: `true` for the first claim, `false` while an earlier claim
    /// lasts.
    fn claim(
        &self,
        token: &[u8],
        ttl: Duration,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}
