//! Measures the loop's overhead over real pipes: messages sent through `cat` and back, either
//! all pipelined or one at a time (ping-pong). No protocol work happens, so this is the
//! adapter's own cost: reads, line splitting, batching, writes, and two pipe hops.
//!
//! `cargo run --release -p mcp-sansio-stdio --example pipe_roundtrip [COUNT]`

use std::time::Instant;

use bytes::Bytes;
use mcp_sansio_stdio::{connect_child, DriveOptions, Driven, Driver, FrameError, StderrMode};

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

fn run(total: usize, window: usize) {
    let mut child = connect_child("cat", [] as [&str; 0], StderrMode::Inherit).expect("spawn cat");
    let client = Client {
        total,
        window,
        sent: 0,
        received: 0,
    };
    let started = Instant::now();
    let finished = child
        .drive_blocking(Driver::new(DriveOptions::default()), client)
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
        "window {window:>4}: {total} messages of {} B in {took:?}: {:.0} msgs/s",
        LINE.len(),
        total as f64 / took.as_secs_f64()
    );
}

fn main() {
    let total: usize = std::env::args()
        .nth(1)
        .map(|n| n.parse().expect("COUNT"))
        .unwrap_or(200_000);
    run(total, usize::MAX);
    run(total, 64);
    run((total / 20).max(1), 1);
}
