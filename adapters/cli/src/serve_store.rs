//! `serve --http` flags for sessions shared by several instances: `--store memory` (the
//! default: sessions live in this process) or `--store redis://HOST:PORT` (any instance using
//! the same Redis serves any session, see docs/scale-out.md), and the sessions' idle timeout,
//! which with a store is the time to live of their records.

use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use mcp_sansio_http::server::{HttpServerOptions, SessionStore, StoreError, StoreReady};

use crate::Failure;

/// The shared secret the instances' `requestState` key is.
const STATE_KEY_SECRET: &str = "request-state-key";

/// Where `serve --http` keeps its sessions.
#[derive(Debug, Args)]
pub(crate) struct ServeStoreArgs {
    /// Where sessions live: `memory` (this process, the default) or `redis://HOST:PORT`
    /// (shared with every instance using the same Redis).
    #[arg(long, value_name = "STORE", requires = "http")]
    pub(crate) store: Option<String>,
    /// A session with no request for this long ends (default 1800); with a store, on every
    /// instance.
    #[arg(long, value_name = "SECS", requires = "http")]
    pub(crate) session_idle_timeout: Option<f64>,
}

impl ServeStoreArgs {
    /// Sets the store and the idle timeout of `options` (Redis is connected to when the
    /// server starts, see [`state_key_ready`]).
    pub(crate) fn apply(&self, options: &mut HttpServerOptions) -> Result<(), Failure> {
        if let Some(secs) = self.session_idle_timeout {
            let idle = Duration::try_from_secs_f64(secs)
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| {
                    Failure::Usage(format!(
                        "--session-idle-timeout wants seconds > 0, got {secs}"
                    ))
                })?;
            options.endpoint.idle_timeout = idle;
        }
        options.store = match self.store.as_deref() {
            None | Some("memory") => None,
            Some(url) if url.starts_with("redis://") || url.starts_with("redis+unix://") => {
                // Connected on first use: an instance started before its Redis answers 503
                // until Redis answers.
                let store = SessionStore::redis_lazy(url)
                    .map_err(|e| Failure::Usage(format!("--store {url}: {e}")))?;
                options.endpoint.shared_state_guard = true;
                // Tasks answered and steered from any instance.
                options.tasks = Some(crate::fixture::task_table());
                Some(store)
            }
            Some(other) => {
                return Err(Failure::Usage(format!(
                    "--store wants memory or redis://HOST:PORT, got {other:?}"
                )))
            }
        };
        Ok(())
    }
}

/// What the server reads from the store before it serves: the instances' one `requestState`
/// key.
pub(crate) fn state_key_ready() -> StoreReady {
    Arc::new(|store: SessionStore| {
        Box::pin(async move {
            let secret = store.shared_secret(STATE_KEY_SECRET).await?;
            let key = secret
                .get(..32)
                .and_then(|key| <[u8; 32]>::try_from(key).ok())
                .ok_or_else(|| {
                    StoreError::Backend("the shared requestState key is short".into())
                })?;
            crate::fixture::share_state_key(key);
            Ok(())
        })
    })
}
