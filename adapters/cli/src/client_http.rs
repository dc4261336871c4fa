//! `mcp-sansio client URL`: the same operations as `client --stdio`, against an HTTP server
//! through `mcp_sansio_http::client`'s auto-detecting client: Streamable HTTP, or the HTTP+SSE
//! HTTP+SSE transport found by the 2025-03-26 fallback (or forced with `--transport`). With
//! `--verbose` the transport spoken is reported on stderr (`transport: sse` or
//! `transport: streamable`). The request logic is `client_cmd`'s.

use std::time::Duration;

use mcp_sansio::app::client::Client;
use mcp_sansio::http::sse_transport::TransportKind;
use mcp_sansio::http::TransportEvent;
use mcp_sansio::model::Implementation;
use mcp_sansio_http::client::{connect_auto_client, HttpClientOptions};

use crate::args::ClientArgs;
use crate::client_cmd::{client_config, conclude, perform, report_event};
use crate::request::PlannedRequest;
use crate::Failure;

/// Runs `planned` against the server at `url` and prints the answer.
pub(crate) fn run(args: &ClientArgs, planned: PlannedRequest, url: &str) -> Result<(), Failure> {
    let timeout = Duration::from_secs_f64(args.timeout);
    let builder = Client::builder(Implementation::new("mcp-sansio", env!("CARGO_PKG_VERSION")))
        .config(client_config(timeout));
    let builder = crate::client_sampling::register(builder, &args.inputs)?;
    let options = HttpClientOptions {
        bearer_token: args.bearer_token.clone(),
        authorization: crate::client_auth::authorization(
            &args.oauth,
            url,
            args.bearer_token.is_some(),
        )?,
        transport: crate::client_cmd::http_transport_config(),
        trace: args.trace.http(false)?,
        ..HttpClientOptions::default()
    };
    let choice = args.transport.choice();
    let verbose = args.verbose;
    let client = connect_auto_client(url, builder, options, choice)
        .map_err(|e| Failure::Usage(e.to_string()))?
        .on_event(report_event)
        .on_transport_event(report_transport_event)
        .on_wire_event(move |event| report_wire_event(event, verbose));
    let handle = client.handle();
    let paginate = planned.paginated && !args.no_paginate;
    let (outcome, report) = client
        .block_on(perform(handle, planned, paginate, timeout, verbose))
        .map_err(|e| Failure::Failed(format!("driving the HTTP client failed: {e}")))?;
    if verbose {
        match report.transport {
            Some(kind) => eprintln!("transport: {}", transport_name(kind)),
            None => eprintln!("transport: unknown (detection did not conclude)"),
        }
    }
    conclude(outcome, args.pretty, |message| {
        // The app only saw the transport close; say what broke underneath.
        if let Some(failure) = report.last_failure.filter(|_| !message.is_empty()) {
            message.push_str(&format!(" ({failure})"));
        }
    })
}

/// The `--transport` name of a transport.
pub(crate) fn transport_name(kind: TransportKind) -> &'static str {
    match kind {
        TransportKind::StreamableHttp => "streamable",
        TransportKind::SseTransport => "sse",
    }
}

/// Transport events worth a line on stderr (a missing standalone stream is normal).
pub(crate) fn report_transport_event(event: TransportEvent) {
    if let Some(line) = transport_event_line(&event) {
        eprintln!("{line}");
    }
}

/// The line a Streamable transport event is worth (`None`: not worth one), for stderr and
/// the inspector's event log.
pub(crate) fn transport_event_line(event: &TransportEvent) -> Option<String> {
    Some(match event {
        TransportEvent::SessionExpired => {
            "the server dropped the session (404); re-initializing".to_owned()
        }
        TransportEvent::SessionLost { reason } => format!("HTTP session lost: {reason}"),
        TransportEvent::EventTooLarge {
            limit,
            standalone,
            dropped,
        } => format!(
            "warning: dropped {dropped} event(s) of the {} over the {} size limit \
             (--max-frame); what they carried is lost",
            if *standalone {
                "standalone GET stream"
            } else {
                "response stream of a POST"
            },
            mcp_sansio::session::describe_limit(*limit)
        ),
        _ => return None,
    })
}

/// Detection and HTTP+SSE transport events: failures always, the rest with `--verbose`.
fn report_wire_event(event: TransportEvent, verbose: bool) {
    if let Some(line) = wire_event_line(&event, verbose) {
        eprintln!("{line}");
    }
}

/// The line a detection or HTTP+SSE transport event is worth: failures always, the rest
/// when `verbose` (`None`: not worth one), for stderr and the inspector's event log.
pub(crate) fn wire_event_line(event: &TransportEvent, verbose: bool) -> Option<String> {
    Some(match event {
        TransportEvent::Detected(kind) if verbose => {
            format!("detected transport: {}", transport_name(*kind))
        }
        TransportEvent::Ready { post_url } if verbose => {
            format!("HTTP+SSE message URL: {post_url}")
        }
        TransportEvent::PostFailed { status } => match status {
            Some(status) => format!("the message endpoint answered HTTP {status}"),
            None => "a message POST failed".to_owned(),
        },
        TransportEvent::Closed(reason)
            if *reason != mcp_sansio::http::sse_transport::TransportCloseReason::Local =>
        {
            format!("HTTP transport closed: {reason}")
        }
        _ => return None,
    })
}
