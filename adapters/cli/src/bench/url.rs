//! The URL target: each bench session is one MCP session on a Streamable HTTP endpoint, run
//! through the HTTP client adapter (`mcp_sansio_http::client`): its own `Mcp-Session-Id`, its
//! own pool of kept-alive connections (one per call in flight), closed with DELETE at the end.
//! Every HTTP decision (headers, SSE or JSON bodies, 404 re-initialization) is the core
//! transport's; this file only sizes the pool and tells a dead server from a failed call.

use mcp_sansio::app::client::ClientError;
use mcp_sansio::http::client::TRANSPORT_ERROR;
use mcp_sansio::http::HttpClientConfig;
use mcp_sansio_http::client::{connect_http_client, HttpClientOptions};
use std::future::Future;

use super::cli::Settings;
use super::transport::{client_builder, NotRun, Ran, ServerIdentity};
use mcp_sansio::app::client::ClientHandle;

/// Exchanges beyond the calls in flight: the standalone GET stream, the handshake's
/// notification, resumed streams.
const SPARE_EXCHANGES: usize = 16;

/// How the core's HTTP transport words the errors it synthesizes for a request that got no
/// HTTP response (no connection, or it broke before the answer) or was refused because the
/// session is gone for good. A server's own JSON-RPC errors never reach here with these.
const SERVER_GONE: [&str; 3] = [
    "the HTTP request failed",
    "the HTTP session is closed or lost",
    "re-initialization failed",
];

/// Checks `url` the way the client will read it (a usage error, before anything starts).
pub(crate) fn check_url(url: &str) -> Result<(), String> {
    let options = HttpClientOptions::default();
    connect_http_client(url, client_builder(Default::default()), options)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// Whether `error` says the server is unreachable (see [`SERVER_GONE`]): such a call is
/// counted as `closed` and ends the session's load, like a server process that exited.
pub(crate) fn unreachable(error: &ClientError) -> bool {
    match error {
        ClientError::Rpc(e) => {
            e.code == TRANSPORT_ERROR
                && e.data.is_none()
                && SERVER_GONE.iter().any(|p| e.message.starts_with(p))
        }
        _ => false,
    }
}

/// Opens one MCP session on `url`, initializes, runs `load` on it, closes it.
pub(crate) fn run_url<T, F>(
    url: &str,
    bearer_token: Option<String>,
    settings: &Settings,
    load: impl FnOnce(Option<ClientHandle>) -> F,
) -> Result<Ran<T>, NotRun>
where
    F: Future<Output = T>,
{
    let options = HttpClientOptions {
        transport: HttpClientConfig {
            max_exchanges: settings.concurrency + SPARE_EXCHANGES,
            ..HttpClientConfig::default()
        },
        bearer_token,
        // Every connection of a call in flight goes back to the pool: none is reopened.
        max_idle_connections: settings.concurrency + 1,
        ..HttpClientOptions::default()
    };
    let client = match connect_http_client(url, client_builder(settings.timeout), options) {
        Ok(client) => client,
        Err(e) => {
            // Still meet the others at the start line, so they stop too.
            smol::block_on(load(None));
            return Err(NotRun {
                message: format!("cannot use {url}: {e}"),
                stderr_tail: None,
                stopped_by_another: false,
            });
        }
    };
    let handle = client.handle();
    let app = async move {
        let initialized = handle.initialize().await;
        let ready = initialized.is_ok().then(|| handle.clone());
        (initialized, load(ready).await)
    };
    let ((initialized, output), report) = client.block_on(app).map_err(|e| NotRun {
        message: format!("driving the HTTP client for {url} failed: {e}"),
        stderr_tail: None,
        stopped_by_another: false,
    })?;
    let server = match initialized {
        Ok(result) => ServerIdentity {
            name: result.server_info.name,
            version: result.server_info.version,
            protocol_version: result.protocol_version,
        },
        Err(e) => {
            return Err(NotRun {
                message: format!("the server at {url} did not initialize: {e}"),
                stderr_tail: None,
                stopped_by_another: false,
            })
        }
    };
    Ok(Ran {
        output,
        server,
        stats: Some(report.session),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_sansio::jsonrpc::{ErrorObject, RawJson};

    #[test]
    fn only_the_transports_no_response_errors_mean_the_server_is_gone() {
        let gone = ErrorObject::new(
            TRANSPORT_ERROR,
            "the HTTP request failed: cannot connect to 127.0.0.1:9: Connection refused",
        );
        assert!(unreachable(&ClientError::Rpc(gone)));
        let lost = ErrorObject::new(TRANSPORT_ERROR, "the HTTP session is closed or lost");
        assert!(unreachable(&ClientError::Rpc(lost)));

        // An HTTP error status is an answer: the server is there.
        let status = ErrorObject::new(TRANSPORT_ERROR, "the HTTP request failed: 503")
            .with_data(RawJson::from_text(String::from(r#"{"httpStatus":503}"#)).unwrap());
        assert!(!unreachable(&ClientError::Rpc(status)));
        // A server's own error with the same code, and an expired session (re-initialized).
        let own = ErrorObject::new(TRANSPORT_ERROR, "tool failed");
        assert!(!unreachable(&ClientError::Rpc(own)));
        let expired = ErrorObject::new(TRANSPORT_ERROR, "the HTTP session expired (404)");
        assert!(!unreachable(&ClientError::Rpc(expired)));
        assert!(!unreachable(&ClientError::TimedOut));
    }

    #[test]
    fn urls_are_checked_before_the_run() {
        assert!(check_url("http://127.0.0.1:1/mcp").is_ok());
        assert!(check_url("https://example.com/mcp").is_err());
        assert!(check_url("not a url").is_err());
    }
}
