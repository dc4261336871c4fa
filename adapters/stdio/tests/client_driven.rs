//! `StdioClient` against tiny shell-script servers: a server that answers `initialize` and
//! then exits mid-session must not leave the application hanging, and its pending and later
//! calls fail with clear errors. Each case runs on both loops: the smol driver
//! (`connect_stdio_client`) and the poll driver (`connect_stdio_client_poll`).

#![cfg(unix)]

use std::time::{Duration, Instant};

use mcp_sansio::app::client::ClientBuilder;
use mcp_sansio::app::client::{Client, ClientError};
use mcp_sansio::model::Implementation;
use mcp_sansio::session::CloseReason;
use mcp_sansio_stdio::{
    connect_stdio_client, connect_stdio_client_poll, EndReason, ShutdownStage, StderrMode,
    StdioClient,
};

/// How a case spawns its server: `sh -c SCRIPT` with a client on one of the two loops.
type Connect = fn(&str, StderrMode, ClientBuilder) -> std::io::Result<StdioClient>;

fn on_smol(
    script: &str,
    stderr: StderrMode,
    builder: ClientBuilder,
) -> std::io::Result<StdioClient> {
    connect_stdio_client("sh", ["-c", script], stderr, builder)
}

fn on_poll(
    script: &str,
    stderr: StderrMode,
    builder: ClientBuilder,
) -> std::io::Result<StdioClient> {
    connect_stdio_client_poll("sh", ["-c", script], stderr, builder)
}

/// Answers `initialize` (same id, same protocol version), reads `notifications/initialized`
/// and one more line (our next request), then exits without answering it.
const ANSWER_INIT_THEN_EXIT: &str = r#"
read -r line
id=$(printf '%s' "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
version=$(printf '%s' "$line" | sed 's/.*"protocolVersion":"\([^"]*\)".*/\1/')
printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"%s","capabilities":{},"serverInfo":{"name":"sh","version":"1"}}}\n' "$id" "$version"
read -r initialized
read -r request
exit 0
"#;

#[test]
fn a_server_exiting_mid_session_fails_the_calls_instead_of_hanging() {
    exiting_mid_session(on_smol);
}

#[test]
fn a_server_exiting_mid_session_fails_the_calls_instead_of_hanging_on_poll() {
    exiting_mid_session(on_poll);
}

fn exiting_mid_session(connect: Connect) {
    let builder = Client::builder(Implementation::new("client-driven-test", "1"));
    let client = connect(ANSWER_INIT_THEN_EXIT, StderrMode::Capture, builder).expect("spawn sh");
    let handle = client.handle();
    let started = Instant::now();
    let (outcome, report) = client
        .block_on(async move {
            let init = handle.initialize().await;
            // The server reads this ping and exits without answering.
            let pending = handle.ping().await;
            // By now the loop may have ended: this call must still resolve.
            let later = handle.ping().await;
            (init, pending, later)
        })
        .expect("drive");
    let (init, pending, later) = outcome;
    assert_eq!(init.expect("initialize").server_info.name, "sh");
    // Closed because the server's output ended, and said so.
    assert!(
        matches!(
            pending,
            Err(ClientError::Closed(Some(CloseReason::PeerClosed)))
        ),
        "{pending:?}"
    );
    assert!(
        matches!(later, Err(ClientError::NotSent(_) | ClientError::Closed(_))),
        "{later:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(report.reason, EndReason::Closed);
    let shutdown = report.shutdown.expect("shutdown report");
    // The child exits on its own; whether the shutdown sees it already gone or gone right
    // after its stdin closed depends on when the OS reports the exit. Never a signal.
    assert!(
        matches!(
            shutdown.stage,
            ShutdownStage::AlreadyExited | ShutdownStage::StdinClosed
        ),
        "{:?}",
        shutdown.stage
    );
    assert!(shutdown.status.success());
}

#[test]
fn a_server_ignoring_stdin_close_is_terminated_after_the_app_finishes() {
    ignoring_stdin_close(on_smol);
}

#[test]
fn a_server_ignoring_stdin_close_is_terminated_after_the_app_finishes_on_poll() {
    ignoring_stdin_close(on_poll);
}

fn ignoring_stdin_close(connect: Connect) {
    // Answers initialize, then ignores everything including the end of its stdin.
    let script = ANSWER_INIT_THEN_EXIT.replace("exit 0", "exec sleep 30");
    let builder = Client::builder(Implementation::new("client-driven-test", "1"));
    let client = connect(&script, StderrMode::Null, builder)
        .expect("spawn sh")
        .shutdown_timeouts(mcp_sansio_stdio::ShutdownTimeouts {
            after_stdin_close: Duration::from_millis(200),
            after_sigterm: Duration::from_secs(2),
        });
    let handle = client.handle();
    let (init, report) = client
        .block_on(async move { handle.initialize().await })
        .expect("drive");
    init.expect("initialize");
    let shutdown = report.shutdown.expect("shutdown report");
    assert_eq!(shutdown.stage, ShutdownStage::Terminated, "{shutdown:?}");
}

#[test]
fn the_poll_client_runs_an_app_that_borrows_from_the_caller() {
    // Not `'static`: the poll loop borrows the app for the run instead of spawning it.
    let mut seen = Vec::new();
    let builder = Client::builder(Implementation::new("client-driven-test", "1"));
    let client = on_poll(ANSWER_INIT_THEN_EXIT, StderrMode::Null, builder).expect("spawn sh");
    let handle = client.handle();
    let ((), report) = client
        .block_on(async {
            let init = handle.initialize().await.expect("initialize");
            seen.push(init.server_info.name);
        })
        .expect("drive");
    assert_eq!(seen, ["sh"]);
    assert_eq!(report.reason, EndReason::Closed);
}

/// One traced frame: "dir kind", method or id, its size, the length of its raw bytes.
type Seen = (String, String, usize, usize);

/// Collects every traced frame.
#[derive(Clone, Default)]
struct Frames(std::rc::Rc<std::cell::RefCell<Vec<Seen>>>);

impl mcp_sansio::trace::TraceSink for Frames {
    fn frame(&mut self, trace: &mcp_sansio::trace::FrameTrace, raw: &[u8]) {
        let what = trace
            .method
            .clone()
            .or(trace.id.clone())
            .unwrap_or_default();
        self.0.borrow_mut().push((
            format!("{} {}", trace.dir.as_str(), trace.kind.as_str()),
            what,
            trace.bytes,
            raw.len(),
        ));
    }
}

#[test]
fn on_trace_reports_each_frame_both_ways() {
    let builder = Client::builder(Implementation::new("client-driven-test", "1"));
    let frames = Frames::default();
    let client = on_smol(ANSWER_INIT_THEN_EXIT, StderrMode::Capture, builder)
        .expect("spawn sh")
        .on_trace(frames.clone());
    let handle = client.handle();
    let (init, _report) = client
        .block_on(async move { handle.initialize().await })
        .expect("drive");
    init.expect("initialize");
    let seen = frames.0.borrow().clone();
    let kinds: Vec<_> = seen.iter().map(|(k, w, _, _)| format!("{k} {w}")).collect();
    assert_eq!(
        kinds.get(..3),
        Some(
            &[
                "send request initialize".to_owned(),
                "recv response 0".to_owned(),
                "send notification notifications/initialized".to_owned(),
            ][..]
        ),
        "{kinds:?}"
    );
    assert!(seen
        .iter()
        .all(|(_, _, bytes, raw)| bytes == raw && *bytes > 0));
}
