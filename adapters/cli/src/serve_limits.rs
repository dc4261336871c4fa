//! `serve --http` flags for the server's limits: the connection and session caps and every
//! timeout (see `HttpServerOptions`). A flag left out keeps the default; a timeout of 0 turns
//! it off.

use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use mcp_sansio::http::MaxSessionsPerPeer;
use mcp_sansio_http::server::HttpServerOptions;

use crate::Failure;

/// The connection cap and timeouts of `serve --http` (seconds may have a fraction).
#[derive(Debug, Default, Args)]
pub(crate) struct ServeLimitArgs {
    /// Open connections at most; at the cap new ones wait in the listen backlog until one
    /// closes (default 10000).
    #[arg(long, value_name = "N", requires = "http")]
    pub(crate) max_connections: Option<usize>,
    /// Open connections one client address may hold; one more gets 429 and is closed
    /// (default: no per-address cap).
    #[arg(long, value_name = "N", requires = "http")]
    pub(crate) max_connections_per_peer: Option<usize>,
    /// Streamable HTTP sessions held at most (default 10000); past it a new one evicts one
    /// whose handshake is not done, else gets 503.
    #[arg(long, value_name = "N", requires = "http")]
    pub(crate) max_sessions: Option<usize>,
    /// Streamable HTTP sessions one peer may hold: per bearer token subject, else per client
    /// address; one more gets 429 with `Retry-After` (default: no per-peer limit).
    #[arg(long, value_name = "N", requires = "http")]
    pub(crate) max_sessions_per_peer: Option<usize>,
    /// A request head must arrive within this (default 30; 0: off).
    #[arg(long, value_name = "SECS", requires = "http")]
    pub(crate) header_timeout: Option<f64>,
    /// A request body must arrive whole within this, else 408 (default 60; 0: off).
    #[arg(long, value_name = "SECS", requires = "http")]
    pub(crate) body_timeout: Option<f64>,
    /// A request body slower than this on average gets 408 after the grace period
    /// (default 1024; 0: off).
    #[arg(long, value_name = "BYTES_PER_SEC", requires = "http")]
    pub(crate) body_min_rate: Option<u64>,
    /// How long a body may be slower than --body-min-rate (default 10).
    #[arg(long, value_name = "SECS", requires = "http")]
    pub(crate) body_rate_grace: Option<f64>,
    /// A connection with no request in flight closes after this (default 30; 0: off).
    #[arg(long, value_name = "SECS", requires = "http")]
    pub(crate) keep_alive_timeout: Option<f64>,
    /// A response the client reads none of for this long is cut (default 30; 0: off).
    #[arg(long, value_name = "SECS", requires = "http")]
    pub(crate) write_timeout: Option<f64>,
    /// A silent SSE stream gets a `: keep-alive` comment this often (default 15; 0: off).
    #[arg(long, value_name = "SECS", requires = "http")]
    pub(crate) sse_keep_alive: Option<f64>,
    /// TCP keepalive probes after this long without traffic (default 60; 0: off).
    #[arg(long, value_name = "SECS", requires = "http")]
    pub(crate) tcp_keepalive: Option<f64>,
}

/// `secs` as a timeout: `None` for 0 (off).
fn timeout(flag: &str, secs: f64) -> Result<Option<Duration>, Failure> {
    let duration = Duration::try_from_secs_f64(secs)
        .map_err(|e| Failure::Usage(format!("--{flag} wants seconds, got {secs}: {e}")))?;
    Ok((!duration.is_zero()).then_some(duration))
}

impl ServeLimitArgs {
    /// Applies the flags given to `options`.
    pub(crate) fn apply(&self, options: &mut HttpServerOptions) -> Result<(), Failure> {
        if let Some(n) = self.max_connections {
            if n == 0 {
                return Err(Failure::Usage(
                    "--max-connections must be at least 1".into(),
                ));
            }
            options.max_connections = n;
        }
        for (flag, n) in [
            ("max-connections-per-peer", self.max_connections_per_peer),
            ("max-sessions", self.max_sessions),
            ("max-sessions-per-peer", self.max_sessions_per_peer),
        ] {
            if n == Some(0) {
                return Err(Failure::Usage(format!("--{flag} must be at least 1")));
            }
        }
        if self.max_connections_per_peer.is_some() {
            options.max_connections_per_peer = self.max_connections_per_peer;
        }
        if let Some(n) = self.max_sessions {
            options.endpoint.max_sessions = n;
        }
        if let Some(n) = self.max_sessions_per_peer {
            options.endpoint.peer_limit = Some(Arc::new(MaxSessionsPerPeer::new(n)));
        }
        let timeouts = [
            (
                "header-timeout",
                self.header_timeout,
                &mut options.header_read_timeout,
            ),
            ("body-timeout", self.body_timeout, &mut options.body_timeout),
            (
                "keep-alive-timeout",
                self.keep_alive_timeout,
                &mut options.keep_alive_timeout,
            ),
            (
                "write-timeout",
                self.write_timeout,
                &mut options.write_timeout,
            ),
            (
                "sse-keep-alive",
                self.sse_keep_alive,
                &mut options.endpoint.sse_keep_alive,
            ),
            (
                "tcp-keepalive",
                self.tcp_keepalive,
                &mut options.tcp_keepalive,
            ),
        ];
        for (flag, secs, slot) in timeouts {
            if let Some(secs) = secs {
                *slot = timeout(flag, secs)?;
            }
        }
        if self.body_min_rate.is_some() || self.body_rate_grace.is_some() {
            let mut rate = options.body_min_rate.unwrap_or_default();
            if let Some(bytes) = self.body_min_rate {
                rate.bytes_per_sec = bytes;
            }
            if let Some(secs) = self.body_rate_grace {
                rate.grace = timeout("body-rate-grace", secs)?.unwrap_or_default();
            }
            options.body_min_rate = (rate.bytes_per_sec > 0).then_some(rate);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_sansio_http::server::MinRate;

    /// Flags left out keep the defaults; given ones replace them; 0 turns a timeout off.
    #[test]
    fn flags_replace_the_defaults_and_zero_turns_off() {
        let mut options = HttpServerOptions::default();
        let args = ServeLimitArgs {
            max_connections: Some(5),
            max_connections_per_peer: Some(3),
            max_sessions: Some(7),
            max_sessions_per_peer: Some(2),
            header_timeout: Some(0.0),
            body_timeout: Some(2.5),
            body_min_rate: Some(0),
            body_rate_grace: None,
            keep_alive_timeout: None,
            write_timeout: Some(1.0),
            sse_keep_alive: Some(0.0),
            tcp_keepalive: None,
        };
        assert!(args.apply(&mut options).is_ok());
        let defaults = HttpServerOptions::default();
        assert_eq!(options.max_connections, 5);
        assert_eq!(options.max_connections_per_peer, Some(3));
        assert_eq!(defaults.max_connections_per_peer, None);
        assert_eq!(options.endpoint.max_sessions, 7);
        let limit = options
            .endpoint
            .peer_limit
            .as_ref()
            .expect("a per-peer limit");
        assert!(limit.admit("ip:127.0.0.1", 1).is_ok());
        assert!(limit.admit("ip:127.0.0.1", 2).is_err(), "the third session");
        assert!(defaults.endpoint.peer_limit.is_none());
        assert_eq!(options.header_read_timeout, None);
        assert_eq!(options.body_timeout, Some(Duration::from_millis(2500)));
        assert_eq!(options.body_min_rate, None);
        assert_eq!(options.keep_alive_timeout, defaults.keep_alive_timeout);
        assert_eq!(options.write_timeout, Some(Duration::from_secs(1)));
        assert_eq!(options.endpoint.sse_keep_alive, None);
        assert_eq!(options.tcp_keepalive, defaults.tcp_keepalive);
        let negative = ServeLimitArgs {
            body_timeout: Some(-1.0),
            ..args
        };
        assert!(negative.apply(&mut HttpServerOptions::default()).is_err());
        let zero = ServeLimitArgs {
            max_sessions_per_peer: Some(0),
            ..ServeLimitArgs::default()
        };
        assert!(zero.apply(&mut HttpServerOptions::default()).is_err());
        let rate = ServeLimitArgs {
            max_connections: None,
            max_connections_per_peer: None,
            max_sessions: None,
            max_sessions_per_peer: None,
            header_timeout: None,
            body_timeout: None,
            body_min_rate: Some(10),
            body_rate_grace: Some(2.0),
            keep_alive_timeout: None,
            write_timeout: None,
            sse_keep_alive: None,
            tcp_keepalive: None,
        };
        let mut options = HttpServerOptions::default();
        assert!(rate.apply(&mut options).is_ok());
        assert_eq!(
            options.body_min_rate,
            Some(MinRate {
                bytes_per_sec: 10,
                grace: Duration::from_secs(2)
            })
        );
    }
}
