//! Our side: the reference HTTP adapter (`mcp_sansio_http`) on both ends. The server offers
//! one tool, `echo` (a sync handler answering with its `text` argument); the session answers
//! `ping` itself. The client is the app `Client` over the core `HttpClient` on the adapter's
//! keep-alive pool, driven through its `ClientHandle` (typed `ping` and `call_tool_raw`). The
//! echo arguments are encoded once and lent to every call, as rmcp's fixture builds its
//! params once and clones them per call.

use std::time::{Duration, Instant};

use futures::future::join_all;
use mcp_sansio::app::client::{Client, ClientHandle};
use mcp_sansio::app::server::{CallToolResult, Server, Tool};
use mcp_sansio::jsonrpc::RawJson;
use mcp_sansio::model::{ContentBlock, Implementation};
use mcp_sansio_http::client::{connect_http_client, HttpClientOptions};
use mcp_sansio_http::server::{HttpServer, HttpServerOptions};
use serde::Deserialize;
use serde_json::json;

use super::{loopback, Call, ServerThread};

/// The echo tool's arguments, parsed by serde (what a user of `ToolArguments::parse` writes).
#[derive(Deserialize)]
struct EchoArgs {
    text: String,
}

/// The application server of every session: the echo tool.
fn echo_server(now: Instant) -> Server {
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    Server::builder(Implementation::new("bench-http-ours", "0"))
        .tool(Tool::new("echo", schema).sync_handler(|call, _ctx| {
            let args: EchoArgs = call.arguments.parse()?;
            Ok(CallToolResult::text(args.text))
        }))
        .build(now)
}

/// Starts our HTTP server with the default options (a `/mcp` endpoint, sessions on).
pub fn spawn_server() -> ServerThread {
    let (listener, url) = loopback();
    let addr = listener.local_addr().expect("addr");
    // Bind is ours to do: free the port, then bind it again at once.
    drop(listener);
    let server = HttpServer::bind(addr, HttpServerOptions::default(), echo_server).expect("bind");
    let stop = server.shutdown_handle();
    let thread = std::thread::spawn(move || {
        let _ = server.run();
    });
    ServerThread {
        url,
        stop: Some(Box::new(move || stop.shutdown())),
        thread: Some(thread),
    }
}

/// One client session: handshake (not timed), then `rounds` batches of `in_flight`
/// concurrent calls, each answer checked; closes the session (not timed). Returns the time
/// of the batches.
pub fn sample(server: &ServerThread, call: Call, in_flight: usize, rounds: u64) -> Duration {
    let builder = Client::builder(Implementation::new("bench-http-ours-client", "0"));
    let client =
        connect_http_client(server.url(), builder, HttpClientOptions::default()).expect("client");
    let handle = client.handle();
    let echo_args = RawJson::from_serialize(&json!({"text": crate::ECHO_TEXT})).expect("args");
    let (elapsed, _report) = client
        .block_on(async move {
            handle.initialize().await.expect("initialize");
            // The pool opens connections as calls need them: one untimed round opens
            // `in_flight` of them, as the floor connects all of its before its clock starts.
            let opened = batch(&handle, Call::Ping, in_flight, &echo_args).await;
            assert_eq!(opened, in_flight, "ours: warm-up pings failed");
            let started = Instant::now();
            for _ in 0..rounds {
                let done = batch(&handle, call, in_flight, &echo_args).await;
                assert_eq!(done, in_flight, "ours: calls failed");
            }
            started.elapsed()
        })
        .expect("client loop");
    elapsed
}

/// `n` concurrent calls (echo ones with `echo_args`); how many came back right.
async fn batch(handle: &ClientHandle, call: Call, n: usize, echo_args: &RawJson) -> usize {
    match call {
        Call::Ping => join_all((0..n).map(|_| handle.ping()))
            .await
            .into_iter()
            .filter(Result::is_ok)
            .count(),
        Call::Echo => {
            let calls = (0..n).map(|_| handle.call_tool_raw("echo", echo_args));
            join_all(calls)
                .await
                .into_iter()
                .filter(|r| r.as_ref().is_ok_and(is_echo))
                .count()
        }
    }
}

fn is_echo(result: &mcp_sansio::model::CallToolResult) -> bool {
    result.is_error != Some(true)
        && matches!(result.content.first(), Some(ContentBlock::Text(t)) if t.text == crate::ECHO_TEXT)
}
