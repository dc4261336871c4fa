//! `mcp-sansio client URL`: the same operations as `client --stdio`, against a Streamable
//! HTTP endpoint through `mcp_sansio_http::client` (the request logic is `client_cmd`'s).

use std::time::Duration;

use mcp_sansio::app::client::Client;
use mcp_sansio::http::TransportEvent;
use mcp_sansio::model::Implementation;
use mcp_sansio_http::client::{connect_http_client, HttpClientOptions};

use crate::args::ClientArgs;
use crate::client_cmd::{client_config, conclude, perform, report_event};
use crate::request::PlannedRequest;
use crate::Failure;

/// Runs `planned` against the endpoint at `url` and prints the answer.
pub(crate) fn run(args: &ClientArgs, planned: PlannedRequest, url: &str) -> Result<(), Failure> {
    let timeout = Duration::from_secs_f64(args.timeout);
    let builder = Client::builder(Implementation::new("mcp-sansio", env!("CARGO_PKG_VERSION")))
        .config(client_config(timeout));
    let options = HttpClientOptions {
        bearer_token: args.bearer_token.clone(),
        ..HttpClientOptions::default()
    };
    let client = connect_http_client(url, builder, options)
        .map_err(|e| Failure::Usage(e.to_string()))?
        .on_event(report_event)
        .on_transport_event(report_transport_event);
    let handle = client.handle();
    let paginate = planned.paginated && !args.no_paginate;
    let (outcome, _report) = client
        .block_on(perform(handle, planned, paginate, timeout))
        .map_err(|e| Failure::Failed(format!("driving the HTTP client failed: {e}")))?;
    conclude(outcome, args.pretty, |_| {})
}

/// Transport events worth a line on stderr (a missing standalone stream is normal).
pub(crate) fn report_transport_event(event: TransportEvent) {
    match event {
        TransportEvent::SessionExpired => {
            eprintln!("the server dropped the session (404); re-initializing")
        }
        TransportEvent::SessionLost { reason } => eprintln!("HTTP session lost: {reason}"),
        _ => {}
    }
}
