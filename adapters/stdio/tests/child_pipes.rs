//! The loop over real pipes, with `cat` and `sh` as the peer process; every test runs on the
//! smol driver and on the poll driver.

mod common;

use std::time::{Duration, Instant};

use common::{ms, AnyDriver, Kind, Recorder};
use mcp_sansio_stdio::{connect_child, DriveOptions, EndReason, FrameError, StderrMode};

fn options() -> DriveOptions {
    DriveOptions {
        linger: ms(300),
        ..DriveOptions::default()
    }
}

fn a_thousand_pipelined_lines_each_come_back_once_in_order(kind: Kind) {
    let mut child = connect_child("cat", [] as [&str; 0], StderrMode::Inherit).unwrap();
    let mut machine = Recorder {
        expect: Some(1000),
        ..Recorder::default()
    };
    for i in 0..1000 {
        machine.queue(format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"ping\"}}"
        ));
    }
    let finished = AnyDriver::new(kind, options()).drive(&mut child, machine);
    assert_eq!(finished.reason, EndReason::Closed);
    let got = finished.driven.received_text();
    let want: Vec<String> = (0..1000)
        .map(|i| format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"ping\"}}"))
        .collect();
    assert_eq!(got, want);
    // The loop closed cat's stdin when it returned, so cat may be gone before shutdown starts.
    let report = child.shutdown_blocking(Default::default()).unwrap();
    use mcp_sansio_stdio::ShutdownStage::{AlreadyExited, StdinClosed};
    assert!(
        matches!(report.stage, AlreadyExited | StdinClosed),
        "{report:?}"
    );
    assert!(report.status.success());
}

fn a_line_split_across_writes_is_one_frame(kind: Kind) {
    let script = r#"printf '{"a"'; sleep 0.1; printf ':1}\n{"b":'; sleep 0.1; printf '2}\n'"#;
    let mut child = connect_child("sh", ["-c", script], StderrMode::Inherit).unwrap();
    let machine = Recorder {
        close_on_eof: true,
        ..Recorder::default()
    };
    let finished = AnyDriver::new(kind, options()).drive(&mut child, machine);
    let got: Vec<&[u8]> = finished.driven.received.iter().map(|b| &b[..]).collect();
    assert_eq!(got, [&b"{\"a\":1}"[..], &b"{\"b\":2}"[..]]);
    assert_eq!(finished.driven.eof_calls, 1);
}

fn end_of_input_is_told_once_and_a_final_unterminated_line_is_a_frame(kind: Kind) {
    let mut child = connect_child("sh", ["-c", "printf 'last'"], StderrMode::Inherit).unwrap();
    // This machine never closes: the loop must stop after the linger.
    let started = Instant::now();
    let finished = AnyDriver::new(kind, options()).drive(&mut child, Recorder::default());
    assert_eq!(finished.reason, EndReason::LingerExpired);
    assert_eq!(finished.driven.eof_calls, 1);
    assert_eq!(finished.driven.received, [&b"last"[..]]);
    assert!(started.elapsed() >= ms(300));
    assert!(started.elapsed() < Duration::from_secs(5));
}

fn an_overlong_line_is_refused_and_the_stream_goes_on(kind: Kind) {
    let script = "printf 'aaaaaaaaaaaaaaaaaaaa\\nok\\n'";
    let mut child = connect_child("sh", ["-c", script], StderrMode::Inherit).unwrap();
    let driver = AnyDriver::new(
        kind,
        DriveOptions {
            max_line_len: 8,
            ..options()
        },
    );
    let machine = Recorder {
        close_on_eof: true,
        ..Recorder::default()
    };
    let finished = driver.drive(&mut child, machine);
    assert_eq!(
        finished.driven.frame_errors,
        [FrameError::TooLong {
            limit: 8,
            len: None,
            head: Default::default()
        }]
    );
    assert_eq!(finished.driven.received, [&b"ok"[..]]);
}

fn deadlines_from_poll_timeout_fire_in_order_and_not_early(kind: Kind) {
    let mut child = connect_child("cat", [] as [&str; 0], StderrMode::Inherit).unwrap();
    let start = Instant::now();
    let machine = Recorder {
        deadlines: [ms(30), ms(60), ms(120)].map(|d| start + d).into(),
        close_after_timeouts: Some(3),
        ..Recorder::default()
    };
    let finished = AnyDriver::new(kind, options()).drive(&mut child, machine);
    assert_eq!(finished.reason, EndReason::Closed);
    let fired = &finished.driven.fired;
    assert_eq!(fired.len(), 3);
    for (deadline, at) in fired {
        assert!(at >= deadline, "fired before its deadline");
    }
    assert!(start.elapsed() < Duration::from_secs(5));
    child.shutdown_blocking(Default::default()).unwrap();
}

fn captured_stderr_keeps_the_childs_log_lines(kind: Kind) {
    let script = "echo 'log: starting' >&2; cat";
    let mut child = connect_child("sh", ["-c", script], StderrMode::Capture).unwrap();
    let mut machine = Recorder {
        expect: Some(1),
        ..Recorder::default()
    };
    machine.queue("{}");
    AnyDriver::new(kind, options()).drive(&mut child, machine);
    child.shutdown_blocking(Default::default()).unwrap();
    // The stderr reader runs on its own task: give it a moment after the child's exit.
    let deadline = Instant::now() + Duration::from_secs(5);
    while child.stderr_tail().as_deref() != Some("log: starting\n") && Instant::now() < deadline {
        std::thread::sleep(ms(10));
    }
    assert_eq!(child.stderr_tail().as_deref(), Some("log: starting\n"));
}

/// Answers every frame with a 1 KiB line; at its deadline records how many frames it got
/// and closes.
#[derive(Default)]
struct Amplifier {
    received: usize,
    outbox: usize,
    deadline: Option<Instant>,
    seen_at_deadline: Option<usize>,
}

impl mcp_sansio_stdio::Driven for Amplifier {
    fn handle_frame(&mut self, _now: Instant, _frame: bytes::Bytes) {
        self.received += 1;
        self.outbox += 1;
    }
    fn handle_frame_error(&mut self, _now: Instant, _error: FrameError) {}
    fn handle_eof(&mut self, _now: Instant) {}
    fn handle_timeout(&mut self, now: Instant) {
        if self.deadline.is_some_and(|d| d <= now) {
            self.deadline = None;
            self.seen_at_deadline = Some(self.received);
        }
    }
    fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<usize> {
        self.outbox = self.outbox.checked_sub(1)?;
        buf.extend_from_slice(&[b'x'; 1024]);
        Some(1024)
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.deadline
    }
    fn is_closed(&self) -> bool {
        self.seen_at_deadline.is_some()
    }
}

fn a_peer_that_does_not_read_stops_our_reading_instead_of_growing_our_output(kind: Kind) {
    // The child sends 200,000 tiny lines and never reads what we write to it.
    let script = "yes '{}' | head -n 200000; exec sleep 5";
    let mut child = connect_child("sh", ["-c", script], StderrMode::Inherit).unwrap();
    let driver = AnyDriver::new(
        kind,
        DriveOptions {
            output_high_water: 64 * 1024,
            linger: ms(200),
            ..DriveOptions::default()
        },
    );
    let machine = Amplifier {
        deadline: Some(Instant::now() + ms(500)),
        ..Amplifier::default()
    };
    let finished = driver.drive(&mut child, machine);
    // Closed but unable to flush: the linger ends the loop.
    assert_eq!(finished.reason, EndReason::LingerExpired);
    let seen = finished.driven.seen_at_deadline.unwrap();
    eprintln!("frames accepted while the peer did not read: {seen}");
    // About: high-water mark + one batch in the writer + the pipe's buffer, 1 KiB per frame.
    assert!(seen > 64, "it did read: {seen}");
    assert!(
        seen < 1000,
        "read {seen} frames whose answers could not be written"
    );
    let report = child
        .shutdown_blocking(mcp_sansio_stdio::ShutdownTimeouts {
            after_stdin_close: ms(100),
            after_sigterm: ms(500),
        })
        .unwrap();
    assert_eq!(report.stage, mcp_sansio_stdio::ShutdownStage::Terminated);
}

/// A machine whose deadline moves when frames come back from `cat`: later after the first
/// echo, earlier after the second. The loop keeps an armed timer when the deadline moves later
/// (it wakes early once, finds nothing due), and re-arms when it moves earlier.
struct MovingDeadline {
    deadline: Option<Instant>,
    outbox: Vec<&'static str>,
    fired: Vec<(Instant, Instant)>,
    early_calls: usize,
    closed: bool,
}

impl mcp_sansio_stdio::Driven for MovingDeadline {
    fn handle_frame(&mut self, now: Instant, frame: bytes::Bytes) {
        self.deadline = Some(match &frame[..] {
            // Later than the armed one.
            b"later" => now + ms(250),
            // Earlier than the armed one (5 s away).
            _ => now + ms(50),
        });
    }
    fn handle_frame_error(&mut self, _now: Instant, _error: FrameError) {}
    fn handle_eof(&mut self, _now: Instant) {}
    fn handle_timeout(&mut self, now: Instant) {
        let Some(deadline) = self.deadline else {
            return;
        };
        if now < deadline {
            self.early_calls += 1;
            return;
        }
        self.fired.push((deadline, now));
        if self.fired.len() == 1 {
            self.deadline = Some(now + Duration::from_secs(5));
            self.outbox.push("earlier");
        } else {
            self.deadline = None;
            self.closed = true;
        }
    }
    fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<usize> {
        let line = self.outbox.pop()?;
        buf.extend_from_slice(line.as_bytes());
        Some(line.len())
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.deadline
    }
    fn is_closed(&self) -> bool {
        self.closed
    }
}

fn a_deadline_that_moves_later_or_earlier_fires_at_its_new_time(kind: Kind) {
    let mut child = connect_child("cat", [] as [&str; 0], StderrMode::Inherit).unwrap();
    let start = Instant::now();
    let machine = MovingDeadline {
        deadline: Some(start + ms(20)),
        outbox: vec!["later"],
        fired: Vec::new(),
        early_calls: 0,
        closed: false,
    };
    let finished = AnyDriver::new(kind, options()).drive(&mut child, machine);
    assert_eq!(finished.reason, EndReason::Closed);
    let m = &finished.driven;
    assert_eq!(m.early_calls, 0, "handle_timeout before the deadline");
    assert_eq!(m.fired.len(), 2, "{:?}", m.fired);
    for (deadline, at) in &m.fired {
        assert!(at >= deadline, "fired before its deadline");
    }
    // The first deadline is the moved one (unless cat echoed after 20 ms: then the original).
    // The second was moved from 5 s to 50 ms after the echo: it must not wait for the 5 s.
    let between = m.fired[1].1 - m.fired[0].1;
    assert!(between < Duration::from_secs(4), "{between:?}");
    child.shutdown_blocking(Default::default()).unwrap();
}

on_both_drivers!(
    a_thousand_pipelined_lines_each_come_back_once_in_order,
    a_line_split_across_writes_is_one_frame,
    end_of_input_is_told_once_and_a_final_unterminated_line_is_a_frame,
    an_overlong_line_is_refused_and_the_stream_goes_on,
    deadlines_from_poll_timeout_fire_in_order_and_not_early,
    captured_stderr_keeps_the_childs_log_lines,
    a_peer_that_does_not_read_stops_our_reading_instead_of_growing_our_output,
    a_deadline_that_moves_later_or_earlier_fires_at_its_new_time,
);
