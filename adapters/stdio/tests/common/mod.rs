//! Toy machines for the adapter tests: they implement `Driven` without any MCP.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio_stdio::{Driven, FrameError};

/// Sends queued lines, records every frame that comes back, closes when `expect` frames
/// arrived (or on EOF when `close_on_eof`). Deadlines in `deadlines` fire `handle_timeout`.
#[derive(Default)]
pub struct Recorder {
    pub outbox: VecDeque<Vec<u8>>,
    pub received: Vec<Bytes>,
    pub frame_errors: Vec<FrameError>,
    pub eof_calls: usize,
    pub expect: Option<usize>,
    pub close_on_eof: bool,
    pub deadlines: VecDeque<Instant>,
    pub fired: Vec<(Instant, Instant)>,
    pub close_after_timeouts: Option<usize>,
    pub closed: bool,
}

impl Recorder {
    /// The frames received so far, as text.
    pub fn received_text(&self) -> Vec<String> {
        self.received
            .iter()
            .map(|b| String::from_utf8(b.to_vec()).expect("UTF-8 frame"))
            .collect()
    }

    pub fn queue(&mut self, line: impl Into<Vec<u8>>) {
        self.outbox.push_back(line.into());
    }
}

impl Driven for Recorder {
    fn handle_frame(&mut self, _now: Instant, frame: Bytes) {
        self.received.push(frame);
        if self.expect.is_some_and(|n| self.received.len() >= n) {
            self.closed = true;
        }
    }
    fn handle_frame_error(&mut self, _now: Instant, error: FrameError) {
        self.frame_errors.push(error);
    }
    fn handle_eof(&mut self, _now: Instant) {
        self.eof_calls += 1;
        if self.close_on_eof {
            self.closed = true;
        }
    }
    fn handle_timeout(&mut self, now: Instant) {
        while let Some(&at) = self.deadlines.front() {
            if at > now {
                break;
            }
            self.deadlines.pop_front();
            self.fired.push((at, now));
        }
        if self
            .close_after_timeouts
            .is_some_and(|n| self.fired.len() >= n)
        {
            self.closed = true;
        }
    }
    fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<usize> {
        let line = self.outbox.pop_front()?;
        buf.extend_from_slice(&line);
        Some(line.len())
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.deadlines.front().copied()
    }
    fn is_closed(&self) -> bool {
        self.closed
    }
}

/// A server-shaped toy: answers each frame `X` with `{"n":<count>,"echo":X}`; closes on EOF
/// once no delayed answer is pending.
#[derive(Default)]
pub struct EchoServer {
    pub outbox: VecDeque<Vec<u8>>,
    pub count: usize,
    pub eof: bool,
    pub pending_tasks: usize,
}

impl EchoServer {
    pub fn answer(&mut self, frame: &[u8]) {
        self.count += 1;
        let mut line = format!("{{\"n\":{},\"echo\":", self.count).into_bytes();
        line.extend_from_slice(frame);
        line.push(b'}');
        self.outbox.push_back(line);
    }
}

impl Driven for EchoServer {
    fn handle_frame(&mut self, _now: Instant, frame: Bytes) {
        self.answer(&frame);
    }
    fn handle_frame_error(&mut self, _now: Instant, error: FrameError) {
        self.outbox
            .push_back(format!("{{\"error\":\"{error}\"}}").into_bytes());
    }
    fn handle_eof(&mut self, _now: Instant) {
        self.eof = true;
    }
    fn handle_timeout(&mut self, _now: Instant) {}
    fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<usize> {
        let line = self.outbox.pop_front()?;
        buf.extend_from_slice(&line);
        Some(line.len())
    }
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
    fn is_closed(&self) -> bool {
        self.eof && self.pending_tasks == 0
    }
}

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Which driver a test runs on: every adapter test runs on both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Smol,
    Poll,
}

/// Either driver, with the calls the tests make.
pub enum AnyDriver<D> {
    Smol(mcp_sansio_stdio::Driver<D>),
    Poll(mcp_sansio_stdio::PollDriver<D>),
}

impl<D: Driven + 'static> AnyDriver<D> {
    pub fn new(kind: Kind, options: mcp_sansio_stdio::DriveOptions) -> Self {
        match kind {
            Kind::Smol => AnyDriver::Smol(mcp_sansio_stdio::Driver::new(options)),
            Kind::Poll => AnyDriver::Poll(mcp_sansio_stdio::PollDriver::new(options).unwrap()),
        }
    }
    pub fn handle(&self) -> mcp_sansio_stdio::LoopHandle<D> {
        match self {
            AnyDriver::Smol(d) => d.handle(),
            AnyDriver::Poll(d) => d.handle(),
        }
    }
    pub fn remote(&self) -> mcp_sansio_stdio::Remote<D> {
        match self {
            AnyDriver::Smol(d) => d.remote(),
            AnyDriver::Poll(d) => d.remote(),
        }
    }
    /// Drives `machine` over the child's pipes on this thread.
    pub fn drive(
        self,
        child: &mut mcp_sansio_stdio::ChildProcess,
        machine: D,
    ) -> mcp_sansio_stdio::Finished<D> {
        match self {
            AnyDriver::Smol(d) => child.drive_blocking(d, machine),
            AnyDriver::Poll(d) => child.drive_poll(d, machine),
        }
        .unwrap()
    }
}

/// Runs each named `fn(Kind)` as two tests: `smol::name` and `poll::name`.
#[macro_export]
macro_rules! on_both_drivers {
    ($($name:ident),* $(,)?) => {
        mod smol_driver {
            $(#[test] fn $name() { super::$name($crate::common::Kind::Smol) })*
        }
        mod poll_driver {
            $(#[test] fn $name() { super::$name($crate::common::Kind::Poll) })*
        }
    };
}
