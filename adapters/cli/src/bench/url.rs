//! The URL target: each bench session is one MCP session on a Streamable HTTP endpoint, run
//! through the HTTP client adapter (`mcp_sansio_http::client`): its own `Mcp-Session-Id`, its
//! own pool of kept-alive connections (one per call in flight), the standalone GET stream with
//! `--get-stream`, closed with DELETE at the end.
//! Every HTTP decision (headers, SSE or JSON bodies, 404 re-initialization) is the core
//! transport's; this file only sizes the pool and tells a dead server from a failed call.

use mcp_sansio::app::client::ClientError;
use mcp_sansio::http::client::TRANSPORT_ERROR;
use mcp_sansio::http::HttpClientConfig;
use mcp_sansio_http::client::{connect_http_client, HttpClientOptions};
use std::future::Future;

use super::cli::Settings;
use super::load::Delivery;
use super::transport::{client_builder, NotRun, Ran, ServerIdentity};
use mcp_sansio::app::client::ClientHandle;

/// Exchanges beyond the calls in flight: the standalone GET stream, the handshake's
/// notification, resumed streams.
const SPARE_EXCHANGES: usize = 16;

/// How the core's HTTP transport words the errors it synthesizes for a request that got no
/// HTTP response (`BROKEN`), and for one that could not reach the server at all: no
/// connection, or the session is gone for good (`UNREACHABLE`). They carry no `httpStatus`;
/// an HTTP error status is an answer from a live server.
const UNREACHABLE: [&str; 3] = [
    "the HTTP request failed: cannot connect",
    "the HTTP session is closed or lost",
    "re-initialization failed",
];
const BROKEN: &str = "the HTTP request failed";

/// Sizes the transport for `concurrency` calls: a response stream may stay open a little
/// after its answer while the next call is already sent.
fn max_exchanges(concurrency: usize) -> usize {
    HttpClientConfig::default()
        .max_exchanges
        .max(2 * concurrency + SPARE_EXCHANGES)
}

/// Checks `url` the way the client will read it (a usage error, before anything starts).
pub(crate) fn check_url(url: &str) -> Result<(), String> {
    let options = HttpClientOptions::default();
    connect_http_client(url, client_builder(Default::default()), options)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// What `error` says about the transport (see [`UNREACHABLE`] and [`BROKEN`]).
pub(crate) fn delivery(error: &ClientError) -> Delivery {
    let ClientError::Rpc(e) = error else {
        return Delivery::Answered;
    };
    if e.code != TRANSPORT_ERROR || e.data.is_some() {
        return Delivery::Answered;
    }
    if UNREACHABLE.iter().any(|p| e.message.starts_with(p)) {
        Delivery::Unreachable
    } else if e.message.starts_with(BROKEN) {
        Delivery::Broken
    } else {
        Delivery::Answered
    }
}

/// Opens one MCP session on `url`, initializes, runs `load` on it, closes it; with
/// `rotation`, its requests go to `url` and those URLs in turn.
pub(crate) fn run_url<T, F>(
    url: &str,
    rotation: Vec<String>,
    bearer_token: Option<String>,
    trace: Option<mcp_sansio_http::HttpTrace>,
    settings: &Settings,
    load: impl FnOnce(Option<ClientHandle>) -> F,
) -> Result<Ran<T>, NotRun>
where
    F: Future<Output = T>,
{
    let options = HttpClientOptions {
        transport: HttpClientConfig {
            max_exchanges: max_exchanges(settings.concurrency),
            open_standalone_stream: settings.get_stream,
            ..HttpClientConfig::default()
        },
        bearer_token,
        trace,
        // Every connection of a call in flight goes back to the pool: none is reopened. An
        // idle run keeps none (only the GET stream stays open).
        max_idle_connections: match settings.idle {
            Some(_) => 0,
            None => settings.concurrency + 1,
        },
        rotate_urls: rotation,
        ..HttpClientOptions::default()
    };
    let client = match connect_http_client(url, client_builder(settings.timeout), options) {
        Ok(client) => client,
        Err(e) => {
            // Still meet the others at the start line, so they stop too.
            smol::block_on(load(None));
            return Err(NotRun::cannot_start(format!("cannot use {url}: {e}")));
        }
    };
    let handle = client.handle();
    let app = async move {
        let initialized = super::transport::initialize(&handle).await;
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
        connections_opened: report.connections_opened,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_sansio::jsonrpc::{ErrorObject, RawJson};

    #[test]
    fn only_the_transports_no_response_errors_are_not_answers() {
        let rpc = |message: &str| ClientError::Rpc(ErrorObject::new(TRANSPORT_ERROR, message));
        let refused = "the HTTP request failed: cannot connect to 127.0.0.1:9: refused";
        assert_eq!(delivery(&rpc(refused)), Delivery::Unreachable);
        let lost = "the HTTP session is closed or lost";
        assert_eq!(delivery(&rpc(lost)), Delivery::Unreachable);
        let broken = "the HTTP request failed: request failed: connection error";
        assert_eq!(delivery(&rpc(broken)), Delivery::Broken);

        // An HTTP error status is an answer: the server is there.
        let status = ErrorObject::new(TRANSPORT_ERROR, "the HTTP request failed: 503")
            .with_data(RawJson::from_text(String::from(r#"{"httpStatus":503}"#)).unwrap());
        assert_eq!(delivery(&ClientError::Rpc(status)), Delivery::Answered);
        // A server's own error with the same code, and an expired session (re-initialized).
        assert_eq!(delivery(&rpc("tool failed")), Delivery::Answered);
        let expired = "the HTTP session expired (404)";
        assert_eq!(delivery(&rpc(expired)), Delivery::Answered);
        assert_eq!(delivery(&ClientError::TimedOut), Delivery::Answered);
    }

    #[test]
    fn a_response_stream_may_outlive_its_answer() {
        assert_eq!(max_exchanges(1), 1024);
        assert_eq!(max_exchanges(1024), 2064);
    }

    #[test]
    fn urls_are_checked_before_the_run() {
        assert!(check_url("http://127.0.0.1:1/mcp").is_ok());
        assert!(check_url("https://example.com/mcp").is_err());
        assert!(check_url("not a url").is_err());
    }
}
