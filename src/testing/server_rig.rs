//! [`ServerRig`]: an app [`Server`] fed raw JSON-RPC frames on a virtual clock. Each send
//! runs the handler jobs and drains every queue (frames, jobs, events), and hands back the
//! frames the server wrote, parsed.

use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::Value;

use super::Jobs;
use crate::app::server::{Server, ServerBuilder};
use crate::session::Event;

/// Passes of one [`ServerRig::settle`] at most (each runs the jobs and drains the queues).
const SETTLE_PASSES: usize = 10_000;

/// An app server driven by raw frames. See the module docs.
pub struct ServerRig {
    /// The server under test.
    pub server: Server,
    /// Its pending handler jobs.
    pub jobs: Jobs,
    /// Application events the server handed out, in order.
    pub events: Vec<Event>,
    /// The virtual time: [`advance`](Self::advance) moves it and fires the timers due; a test
    /// may also set it and call `handle_timeout` itself.
    pub now: Instant,
}

impl ServerRig {
    /// A server built from `builder` at virtual time `now`.
    pub fn new(builder: ServerBuilder, now: Instant) -> ServerRig {
        ServerRig::from_server(builder.build(now), now)
    }

    /// A rig around a built server whose clock reads `now`.
    pub fn from_server(server: Server, now: Instant) -> ServerRig {
        ServerRig {
            server,
            jobs: Jobs::new(),
            events: Vec::new(),
            now,
        }
    }

    /// Moves the clock by `by`, fires the server's due timers and settles; returns what the
    /// server wrote.
    pub fn advance(&mut self, by: Duration) -> Vec<Value> {
        self.now += by;
        self.server.handle_timeout(self.now);
        self.settle()
    }

    /// Feeds one frame and settles; returns what the server wrote.
    pub fn send(&mut self, frame: &Value) -> Vec<Value> {
        self.send_bytes(Bytes::from(frame.to_string()))
    }

    /// Feeds one frame as bytes (which need not be valid JSON) and settles.
    pub fn send_bytes(&mut self, frame: Bytes) -> Vec<Value> {
        self.server.handle_input(self.now, frame);
        self.settle()
    }

    /// Feeds one request and returns the one response it got (with an `id`; notifications
    /// the server wrote meanwhile are dropped). Panics unless exactly one response came.
    pub fn call(&mut self, request: &Value) -> Value {
        let out = self.send(request);
        let mut responses = out.into_iter().filter(|m| m.get("id").is_some());
        let (Some(response), None) = (responses.next(), responses.next()) else {
            panic!("expected one response to {request}");
        };
        response
    }

    /// Runs jobs and drains the queues until nothing moves; returns the frames written.
    pub fn settle(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        for _ in 0..SETTLE_PASSES {
            let mut moved = false;
            while let Some(job) = self.server.poll_job() {
                self.jobs.push(job);
                moved = true;
            }
            moved |= self.jobs.run() > 0;
            self.server.handle_wake(self.now);
            while self.server.poll_transmit(&mut buf).is_some() {
                out.push(serde_json::from_slice(&buf).expect("the server wrote invalid JSON"));
                buf.clear();
                moved = true;
            }
            while let Some(event) = self.server.poll_event() {
                self.events.push(event);
                moved = true;
            }
            if !moved {
                return out;
            }
        }
        panic!("the server rig did not settle in {SETTLE_PASSES} passes");
    }
}
