//! The simulated server application: a server `Session` whose `tools/call` handler works on
//! the virtual clock. A call's arguments say how many progress steps it reports and the gap
//! between them; the result echoes the request id, so a response reaching another request is
//! caught. Implements `http::SessionMachine` (and `http::ExchangeMachine`, for a worker that
//! serves no 2026-07-28), so the same worker sits behind the HTTP endpoint.

use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::http::{ExchangeMachine, SessionMachine};
use mcp_sansio::jsonrpc::{RawJson, RequestId};
use mcp_sansio::model::{
    Implementation, ListChangedCapability, ProtocolVersion, ServerCapabilities,
};
use mcp_sansio::runtime::Job;
use mcp_sansio::session::{Event, RestoreError, ServerSetup, Session, SessionSnapshot, Transmit};
use mcp_sansio::stateless::{ListenChange, ParamHeader};
use mcp_sansio::Config;
use serde_json::{json, Value};

use super::timeline::Timeline;

/// What a `tools/call` of the simulation asks the worker to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Work {
    /// Progress notifications before the result.
    pub steps: u32,
    /// Time between two of them (and before the result).
    pub gap: Duration,
}

impl Work {
    /// The `tools/call` params asking for this work.
    pub fn params(&self) -> RawJson {
        let args = json!({"steps": self.steps, "gap_ms": self.gap.as_millis() as u64});
        RawJson::from_text(json!({"name": "work", "arguments": args}).to_string())
            .expect("valid JSON")
    }

    fn from_params(params: Option<&RawJson>) -> Option<Work> {
        let value: Value = serde_json::from_slice(params?.as_bytes()).ok()?;
        let args = value.get("arguments")?;
        Some(Work {
            steps: u32::try_from(args.get("steps")?.as_u64()?).ok()?,
            gap: Duration::from_millis(args.get("gap_ms")?.as_u64()?),
        })
    }
}

/// One scheduled action of the worker.
#[derive(Debug)]
enum Action {
    Progress {
        id: RequestId,
        step: u32,
        total: u32,
    },
    Respond {
        id: RequestId,
    },
}

/// The result the worker answers request `id` with.
pub fn echo_result(id: &RequestId) -> Value {
    json!({"content": [{"type": "text", "text": "done"}], "echo": id})
}

/// A server session plus its application, on the virtual clock.
pub struct Worker {
    /// The server session.
    pub session: Session,
    /// Actions by due time.
    plan: Timeline<Action>,
    /// Requests the application was handed (for the simulation's bookkeeping).
    pub requests_seen: u64,
    /// Whether the handshake had finished in the last snapshot handed out (sessions shared
    /// by several endpoints).
    saved_ready: Option<bool>,
}

impl Worker {
    /// A fresh server (a restart builds a new one: all state is lost).
    pub fn new(config: Config, now: Instant) -> Worker {
        let setup = ServerSetup {
            info: Implementation::new("sim-server", "1"),
            capabilities: ServerCapabilities {
                tools: Some(ListChangedCapability::default()),
                ..ServerCapabilities::default()
            },
            instructions: None,
        };
        Worker {
            session: Session::server(config, setup, now),
            plan: Timeline::default(),
            requests_seen: 0,
            saved_ready: None,
        }
    }

    /// Scheduled actions not yet run (bounded by the session's in-flight limit).
    pub fn planned(&self) -> usize {
        self.plan.len()
    }

    fn schedule(&mut self, at: Instant, action: Action) {
        self.plan.schedule(at, action);
    }

    /// Hands every event of the session to the application.
    fn drain_events(&mut self, now: Instant) {
        while let Some(event) = self.session.poll_event() {
            match event {
                Event::Request { id, method, params } => {
                    self.requests_seen += 1;
                    match Work::from_params(params.as_ref()).filter(|_| method == "tools/call") {
                        Some(work) => {
                            let mut at = now;
                            for step in 1..=work.steps {
                                at += work.gap;
                                let (id, total) = (id.clone(), work.steps);
                                self.schedule(at, Action::Progress { id, step, total });
                            }
                            self.schedule(at + work.gap, Action::Respond { id });
                        }
                        None => {
                            let err = mcp_sansio::jsonrpc::ErrorObject::new(-32602, "bad work");
                            let _ = self.session.respond_error(&id, err);
                        }
                    }
                }
                Event::Cancelled { id, .. } => self.plan.retain(|a| match a {
                    Action::Progress { id: x, .. } | Action::Respond { id: x } => *x != id,
                }),
                _ => {}
            }
        }
    }

    fn run_due(&mut self, now: Instant) {
        while let Some(action) = self.plan.pop_due(now) {
            match action {
                Action::Progress { id, step, total } => {
                    let _ = self.session.notify_progress(
                        &id,
                        f64::from(step),
                        Some(f64::from(total)),
                        None,
                    );
                }
                Action::Respond { id } => {
                    let result = RawJson::from_text(echo_result(&id).to_string()).expect("JSON");
                    let _ = self.session.respond(&id, result);
                }
            }
        }
    }
}

impl SessionMachine for Worker {
    fn handle_input(&mut self, now: Instant, frame: Bytes) {
        self.session.handle_input(now, frame);
        self.drain_events(now);
        self.run_due(now);
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.session.poll_timeout().is_some_and(|t| t <= now) {
            self.session.handle_timeout(now);
        }
        self.drain_events(now);
        self.run_due(now);
    }

    fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<Transmit> {
        self.session.poll_transmit(buf)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let next_action = self.plan.next_at();
        [self.session.poll_timeout(), next_action]
            .into_iter()
            .flatten()
            .min()
    }

    fn poll_job(&mut self) -> Option<Job> {
        None
    }

    fn close(&mut self, now: Instant) {
        self.session.close(now);
        self.plan.clear();
    }

    fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.session.protocol_version()
    }

    fn snapshot(&self) -> Option<Vec<u8>> {
        serde_json::to_vec(&self.session.snapshot()?).ok()
    }

    fn take_snapshot_due(&mut self) -> bool {
        let ready = self.session.snapshot().map(|s| s.ready);
        let due = ready.is_some() && ready != self.saved_ready;
        if due {
            self.saved_ready = ready;
        }
        due
    }

    fn number_requests_under(&mut self, id_prefix: &str) {
        let _ = self.session.number_requests_under(id_prefix);
    }

    fn refresh(&mut self, snapshot: &[u8]) -> Result<(), RestoreError> {
        let snapshot: SessionSnapshot =
            serde_json::from_slice(snapshot).map_err(|e| RestoreError::Malformed(e.to_string()))?;
        self.session.refresh(&snapshot);
        self.saved_ready = self.session.snapshot().map(|s| s.ready);
        Ok(())
    }

    fn restore(
        &mut self,
        now: Instant,
        snapshot: &[u8],
        id_prefix: &str,
    ) -> Result<(), RestoreError> {
        let snapshot: SessionSnapshot =
            serde_json::from_slice(snapshot).map_err(|e| RestoreError::Malformed(e.to_string()))?;
        self.saved_ready = Some(snapshot.ready);
        let config = self.session.config().clone();
        self.session = Session::restore(config, snapshot, id_prefix, now)?;
        Ok(())
    }
}

/// The worker speaks only stateful revisions: a 2026-07-28 request reaches its session, which
/// refuses it (no `initialize` came first); it has no listen streams and no annotated tools.
impl ExchangeMachine for Worker {
    fn handle_exchange(&mut self, now: Instant, frame: Bytes) {
        SessionMachine::handle_input(self, now, frame);
    }

    fn exchange_status(&self, _id: &RequestId) -> Option<u16> {
        None
    }

    fn poll_listen_change(&mut self) -> Option<ListenChange> {
        None
    }

    fn handle_listen_change(&mut self, _event: &ListenChange) {}

    fn tool_param_headers(&self, _name: &str) -> Vec<ParamHeader> {
        Vec::new()
    }
}
