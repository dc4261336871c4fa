//! The MCP stdio shutdown sequence against real children: one that exits on stdin EOF, one
//! that ignores EOF but exits on SIGTERM, one that ignores SIGTERM and needs SIGKILL.

mod common;

use std::time::{Duration, Instant};

use common::ms;
use mcp_sansio_stdio::{connect_child, ShutdownStage, ShutdownTimeouts, StderrMode};

const TIMEOUTS: ShutdownTimeouts = ShutdownTimeouts {
    after_stdin_close: Duration::from_millis(300),
    after_sigterm: Duration::from_millis(300),
};

/// Starts `sh -c script` and waits until it printed its ready line, so its traps are set.
fn start(script: &str) -> mcp_sansio_stdio::ChildProcess {
    let child = connect_child("sh", ["-c", script], StderrMode::Capture).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while child.stderr_tail().as_deref() != Some("ready\n") {
        assert!(Instant::now() < deadline, "the child never got ready");
        std::thread::sleep(ms(5));
    }
    child
}

#[test]
fn a_child_that_exits_on_stdin_eof_stops_at_the_first_stage() {
    let mut child = start("echo ready >&2; cat >/dev/null; exit 3");
    let report = child.shutdown_blocking(TIMEOUTS).unwrap();
    assert_eq!(report.stage, ShutdownStage::StdinClosed);
    assert_eq!(report.status.code(), Some(3));
    assert!(report.elapsed < TIMEOUTS.after_stdin_close);
}

#[test]
fn a_child_that_ignores_eof_gets_sigterm() {
    let mut child =
        start("trap 'exit 7' TERM; echo ready >&2; exec 0</dev/null; while :; do sleep 0.02; done");
    let report = child.shutdown_blocking(TIMEOUTS).unwrap();
    assert_eq!(report.stage, ShutdownStage::Terminated);
    assert_eq!(report.status.code(), Some(7));
    assert!(report.elapsed >= TIMEOUTS.after_stdin_close);
    assert!(report.elapsed < TIMEOUTS.after_stdin_close + TIMEOUTS.after_sigterm);
}

#[test]
fn a_child_that_ignores_sigterm_is_killed() {
    let mut child = start("trap '' TERM; echo ready >&2; while :; do sleep 0.02; done");
    let report = child.shutdown_blocking(TIMEOUTS).unwrap();
    assert_eq!(report.stage, ShutdownStage::Killed);
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(report.status.signal(), Some(9));
    }
    let bound = TIMEOUTS.after_stdin_close + TIMEOUTS.after_sigterm;
    assert!(report.elapsed >= bound);
    assert!(report.elapsed < bound + Duration::from_secs(2));
}

#[test]
fn a_child_that_already_exited_is_reported_as_such() {
    let mut child = start("echo ready >&2; exit 0");
    let deadline = Instant::now() + Duration::from_secs(5);
    let report = loop {
        std::thread::sleep(ms(20));
        let report = child.shutdown_blocking(TIMEOUTS).unwrap();
        if report.stage == ShutdownStage::AlreadyExited || Instant::now() > deadline {
            break report;
        }
    };
    assert_eq!(report.stage, ShutdownStage::AlreadyExited);
    assert!(report.status.success());
}
