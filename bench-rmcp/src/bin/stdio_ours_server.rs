//! The server side of the stdio bench (`benches/stdio.rs`): our server `Session` on this
//! process's stdin/stdout. The session answers `ping` itself; `tools/call` goes to the echo
//! tool. Two drivers:
//! - no argument: the stdio adapter's `serve_stdio` (smol driver);
//! - `poll`: the stdio adapter's `PollDriver::serve_stdio` (no async runtime, poll(2));
//! - `blocking`: a minimal blocking loop, one `read` then one `write` of the whole batch, with
//!   the core's `NdjsonDecoder` (the floor of what a driver can do with this session);
//! - `app`: what `mcp-sansio serve --stdio` runs: the application `Server` with a sync `echo`
//!   tool (arguments parsed by serde) on `serve_server_stdio_poll`, for the server-only bench
//!   (`stdio_server_only`).

use std::io::{Read, Write};
use std::time::Instant;

use bytes::Bytes;
use mcp_sansio::framing::{encode_frame, NdjsonDecoder};
use mcp_sansio::jsonrpc::{ErrorObject, RequestId};
use mcp_sansio::model::{Implementation, ListChangedCapability, ServerCapabilities};
use mcp_sansio::session::{Event, FrameError as SessionFrameError, ServerSetup, Session};
use mcp_sansio::Config;
use mcp_sansio_stdio::{
    serve_server_stdio_poll, serve_stdio, DriveOptions, Driven, FrameError, PollDriver,
};
use serde::Deserialize;

fn main() {
    let session = Session::server(Config::default(), setup(), Instant::now());
    match std::env::args().nth(1).as_deref() {
        None => {
            serve_stdio(Server {
                session,
                eof: false,
            });
        }
        Some("poll") => {
            let driver = PollDriver::new(DriveOptions::default()).expect("wake-up socket");
            driver.serve_stdio(Server {
                session,
                eof: false,
            });
        }
        Some("blocking") => blocking_loop(session),
        Some("app") => {
            let driver = PollDriver::new(DriveOptions::default()).expect("wake-up socket");
            serve_server_stdio_poll(driver, echo_server(Instant::now()));
        }
        Some(other) => panic!("unknown mode {other:?}"),
    }
}

fn setup() -> ServerSetup {
    ServerSetup {
        info: Implementation::new("bench-stdio-server", "0"),
        capabilities: ServerCapabilities {
            tools: Some(ListChangedCapability::default()),
            ..ServerCapabilities::default()
        },
        instructions: None,
    }
}

/// The echo tool's arguments, parsed by serde (what a user of `ToolArguments::parse` writes).
#[derive(Deserialize)]
struct EchoArgs {
    text: String,
}

/// The application server of `app`: the echo tool.
fn echo_server(now: Instant) -> mcp_sansio::app::server::Server {
    use mcp_sansio::app::server::{CallToolResult, Server, Tool};
    let schema = serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}});
    Server::builder(Implementation::new("bench-stdio-app", "0"))
        .tool(Tool::new("echo", schema).sync_handler(|call, _ctx| {
            let args: EchoArgs = call.arguments.parse()?;
            Ok(CallToolResult::text(args.text))
        }))
        .build(now)
}

/// The application: answers every request the session hands up with the echo tool.
fn answer(session: &mut Session) {
    while let Some(event) = session.poll_event() {
        if let Event::Request { id, params, .. } = event {
            respond(session, &id, bench_rmcp::echo_tool(params.as_ref()));
        }
    }
}

fn respond(session: &mut Session, id: &RequestId, result: Option<mcp_sansio::jsonrpc::RawJson>) {
    // A refusal here means the peer cancelled or the session closed: nothing to do.
    let _ = match result {
        Some(result) => session.respond(id, result),
        None => session.respond_error(id, ErrorObject::new(-32602, "unknown tool")),
    };
}

/// The session as the adapter's machine, with the application answering in `handle_frame`.
struct Server {
    session: Session,
    eof: bool,
}

impl Driven for Server {
    fn handle_frame(&mut self, now: Instant, frame: Bytes) {
        self.session.handle_input(now, frame);
        answer(&mut self.session);
    }
    fn handle_frame_error(&mut self, now: Instant, _error: FrameError) {
        let limit = self.session.config().max_frame_len;
        let error = SessionFrameError::too_long(limit);
        self.session.handle_decode_error(now, error);
    }
    fn handle_eof(&mut self, now: Instant) {
        self.eof = true;
        self.session.close(now);
    }
    fn handle_timeout(&mut self, now: Instant) {
        self.session.handle_timeout(now);
    }
    fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<usize> {
        self.session.poll_transmit(buf).map(|t| t.len)
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.session.poll_timeout()
    }
    fn is_closed(&self) -> bool {
        self.eof && !self.session.has_transmit()
    }
}

/// Blocking stdin/stdout: read what is there, feed every line, write every answer in one go.
/// No timers (the bench's server needs none: no keep-alive, requests come from the peer).
fn blocking_loop(mut session: Session) {
    let mut stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    let mut lines = NdjsonDecoder::default();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut out = Vec::with_capacity(64 * 1024);
    let mut scratch = Vec::with_capacity(4096);
    loop {
        let n = match stdin.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let now = Instant::now();
        lines.push(&chunk[..n]);
        while let Some(frame) = lines.poll_frame() {
            match frame {
                Ok(frame) => session.handle_input(now, frame),
                Err(_) => {
                    let limit = session.config().max_frame_len;
                    session.handle_decode_error(now, SessionFrameError::too_long(limit));
                }
            }
            answer(&mut session);
        }
        out.clear();
        loop {
            scratch.clear();
            if session.poll_transmit(&mut scratch).is_none() {
                break;
            }
            encode_frame(&mut out, &scratch);
        }
        // `StdoutLock` is line-buffered; `write_all` + `flush` of the batch costs one write
        // when it ends with a newline (as every batch does).
        if stdout
            .write_all(&out)
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return;
        }
    }
}
