//! Measures the loop's overhead over real pipes: messages sent through a peer process and
//! back, either all pipelined or one at a time (ping-pong). No protocol work happens, so this is
//! the adapter's own cost: reads, line splitting, batching, writes, and two pipe hops. The peer
//! is `cat`, then this same program re-run as an echo server; the client and the echo server
//! run on the smol `Driver` (`smol`) or on the `PollDriver` (`poll`), both sides the same.
//!
//! `cargo run --release -p mcp-sansio-stdio --example pipe_roundtrip [COUNT] [smol|poll] [pingpong]`
//! (both drivers when the second argument is absent; `pingpong`: only COUNT one-at-a-time
//! round trips through the echo server, for `strace -c -f` per round trip).

use std::time::Instant;

use bytes::Bytes;
use mcp_sansio_stdio::{
    serve_stdio, ChildProcess, DriveOptions, Driven, Driver, FrameError, PollDriver, StderrMode,
};

const LINE: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}"#;

/// Sends `total` lines, at most `window` in flight; closes when all came back.
struct Client {
    total: usize,
    window: usize,
    sent: usize,
    received: usize,
}

impl Driven for Client {
    fn handle_frame(&mut self, _now: Instant, frame: Bytes) {
        assert_eq!(&frame[..], LINE);
        self.received += 1;
    }
    fn handle_frame_error(&mut self, _now: Instant, error: FrameError) {
        panic!("{error}");
    }
    fn handle_eof(&mut self, _now: Instant) {
        panic!("cat ended early");
    }
    fn handle_timeout(&mut self, _now: Instant) {}
    fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<usize> {
        if self.sent == self.total || self.sent - self.received >= self.window {
            return None;
        }
        self.sent += 1;
        buf.extend_from_slice(LINE);
        Some(LINE.len())
    }
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
    fn is_closed(&self) -> bool {
        self.received == self.total
    }
}

/// The server side: answers every line with itself, exits on stdin EOF.
struct Echo {
    out: std::collections::VecDeque<Bytes>,
    eof: bool,
}

impl Driven for Echo {
    fn handle_frame(&mut self, _now: Instant, frame: Bytes) {
        self.out.push_back(frame);
    }
    fn handle_frame_error(&mut self, _now: Instant, error: FrameError) {
        panic!("{error}");
    }
    fn handle_eof(&mut self, _now: Instant) {
        self.eof = true;
    }
    fn handle_timeout(&mut self, _now: Instant) {}
    fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<usize> {
        let frame = self.out.pop_front()?;
        buf.extend_from_slice(&frame);
        Some(frame.len())
    }
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
    fn is_closed(&self) -> bool {
        self.eof && self.out.is_empty()
    }
}

fn spawn_peer(peer: &str, driver: &str) -> ChildProcess {
    let command = if peer == "cat" {
        std::process::Command::new("cat")
    } else {
        let mut own = std::process::Command::new(std::env::current_exe().expect("own path"));
        own.env("PIPE_ROUNDTRIP_ECHO", driver);
        own
    };
    ChildProcess::spawn(command, StderrMode::Inherit).expect("spawn peer")
}

fn run(peer: &str, driver: &str, total: usize, window: usize) {
    let mut child = spawn_peer(peer, driver);
    let client = Client {
        total,
        window,
        sent: 0,
        received: 0,
    };
    let started = Instant::now();
    let finished = if driver == "poll" {
        let driver = PollDriver::new(DriveOptions::default()).expect("wake-up");
        child.drive_poll(driver, client)
    } else {
        child.drive_blocking(Driver::new(DriveOptions::default()), client)
    }
    .expect("drive");
    let took = started.elapsed();
    assert_eq!(finished.driven.received, total);
    child
        .shutdown_blocking(Default::default())
        .expect("shutdown");
    let window = if window == usize::MAX {
        "all".to_string()
    } else {
        window.to_string()
    };
    println!(
        "{driver:>4} {peer:>6}, window {window:>4}: {total} messages of {} B in {took:?}: {:.0} msgs/s",
        LINE.len(),
        total as f64 / took.as_secs_f64()
    );
}

fn main() {
    if let Some(driver) = std::env::var_os("PIPE_ROUNDTRIP_ECHO") {
        let echo = Echo {
            out: Default::default(),
            eof: false,
        };
        if driver == "poll" {
            let driver = PollDriver::new(DriveOptions::default()).expect("wake-up");
            driver.serve_stdio(echo);
        } else {
            serve_stdio(echo);
        }
        return;
    }
    let total: usize = std::env::args()
        .nth(1)
        .map(|n| n.parse().expect("COUNT"))
        .unwrap_or(200_000);
    let drivers = match std::env::args().nth(2) {
        Some(driver) => vec![driver],
        None => vec!["smol".to_string(), "poll".to_string()],
    };
    if std::env::args().nth(3).as_deref() == Some("pingpong") {
        for driver in &drivers {
            run("echo", driver, total, 1);
        }
        return;
    }
    for driver in &drivers {
        for peer in ["cat", "echo"] {
            run(peer, driver, total, usize::MAX);
            run(peer, driver, total, 64);
            run(peer, driver, (total / 20).max(1), 1);
        }
    }
}
