//! The deadline index against a walk over every session: random sessions, requests, open and
//! dropped streams, machine timers, DELETEs and time steps; and many idle sessions.

use std::time::{Duration, Instant};

use bytes::Bytes;
use proptest::prelude::*;

use super::Endpoint;
use crate::app::server::{CallToolResult, Server, Tool};
use crate::http::config::{EndpointConfig, ResponseMode};
use crate::http::machine::{ExchangeMachine, SessionMachine};
use crate::http::streams::StreamChunk;
use crate::http::types::{Body, HttpRequestHead, StreamId};
use crate::http::HttpMethod;
use crate::jsonrpc::{Incoming, RequestId};
use crate::model::{Implementation, ProtocolVersion};
use crate::runtime::Job;
use crate::session::Transmit;
use crate::stateless::{ListenChange, ParamHeader};

const BOTH: &str = "application/json, text/event-stream";
const IDLE: Duration = Duration::from_secs(10);

/// A server whose machine also keeps a timer of its own: armed by each input `step` ahead
/// (so sessions differ), cleared when it fires.
struct Timed {
    inner: Server,
    timer: Option<Instant>,
    step: Duration,
}

impl SessionMachine for Timed {
    fn handle_input(&mut self, now: Instant, frame: Bytes) {
        self.timer = Some(now + self.step);
        self.inner.handle_input(now, frame);
    }
    fn handle_decoded(&mut self, now: Instant, frame: Bytes, incoming: Incoming) {
        self.timer = Some(now + self.step);
        self.inner.handle_decoded(now, frame, incoming);
    }
    fn handle_timeout(&mut self, now: Instant) {
        if self.timer.is_some_and(|t| t <= now) {
            self.timer = None;
        }
        self.inner.handle_timeout(now);
    }
    fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<Transmit> {
        self.inner.poll_transmit(buf)
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.inner
            .poll_timeout()
            .into_iter()
            .chain(self.timer)
            .min()
    }
    fn poll_job(&mut self) -> Option<Job> {
        self.inner.poll_job()
    }
    fn close(&mut self, now: Instant) {
        self.inner.close(now);
    }
    fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.inner.session().protocol_version()
    }
}

impl ExchangeMachine for Timed {
    fn handle_exchange(&mut self, now: Instant, frame: Bytes) {
        self.inner.handle_exchange(now, frame);
    }
    fn exchange_status(&self, id: &RequestId) -> Option<u16> {
        self.inner.exchange_status(id)
    }
    fn poll_listen_change(&mut self) -> Option<ListenChange> {
        ExchangeMachine::poll_listen_change(&mut self.inner)
    }
    fn handle_listen_change(&mut self, event: &ListenChange) {
        ExchangeMachine::handle_listen_change(&mut self.inner, event);
    }
    fn tool_param_headers(&self, name: &str) -> Vec<ParamHeader> {
        ExchangeMachine::tool_param_headers(&self.inner, name)
    }
}

fn server(now: Instant) -> Server {
    Server::builder(Implementation::new("t", "1"))
        .tool(
            Tool::new("echo", serde_json::json!({"type":"object"}))
                .sync_handler(|_, _| Ok(CallToolResult::text("e"))),
        )
        .tool(
            Tool::new("slow", serde_json::json!({"type":"object"})).handler(|_, _| async {
                // Never done: a job (dropped, it answers -32603).
                std::future::pending::<()>().await;
                Ok(CallToolResult::text("s"))
            }),
        )
        .build(now)
}

fn endpoint(mode: ResponseMode) -> Endpoint<Timed> {
    let config = EndpointConfig {
        idle_timeout: IDLE,
        response_mode: mode,
        // The session index alone: SSE keep-alive deadlines are tested in http_endpoint.rs.
        sse_keep_alive: None,
        ..Default::default()
    };
    let mut made = 0u64;
    Endpoint::new(config, move |now| {
        made += 1;
        Timed {
            inner: server(now),
            timer: None,
            step: Duration::from_millis(700 * (made % 7)),
        }
    })
}

fn head(method: HttpMethod, sid: Option<&str>) -> HttpRequestHead {
    let mut h = HttpRequestHead::new(method, "/mcp")
        .header("Host", "localhost:3000")
        .header("Accept", BOTH)
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2025-11-25");
    if let Some(sid) = sid {
        h = h.header("Mcp-Session-Id", sid);
    }
    h
}

fn post(ep: &mut Endpoint<Timed>, now: Instant, sid: Option<&str>, body: &str) -> (u16, Body) {
    let body = Bytes::copy_from_slice(body.as_bytes());
    let resp = ep.handle_request(now, &head(HttpMethod::Post, sid), body, [0; 16]);
    (resp.status, resp.body)
}

/// initialize + initialized; the session id.
fn open(ep: &mut Endpoint<Timed>, now: Instant, seed: u64) -> Option<String> {
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    let mut random = [0u8; 16];
    random[..8].copy_from_slice(&seed.to_le_bytes());
    let h = head(HttpMethod::Post, None);
    let resp = ep.handle_request(now, &h, Bytes::from_static(init.as_bytes()), random);
    let sid = resp.get("mcp-session-id")?.to_string();
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    post(ep, now, Some(&sid), note);
    Some(sid)
}

/// One step of the random walk.
#[derive(Clone, Debug)]
enum Op {
    Open(u64),
    Call { session: usize, slow: bool },
    Get(usize),
    Pull(usize),
    Drop(usize),
    Delete(usize),
    Arm { session: usize, ms: u64 },
    Jobs,
    Wait(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => any::<u64>().prop_map(Op::Open),
        4 => (any::<usize>(), any::<bool>()).prop_map(|(session, slow)| Op::Call { session, slow }),
        1 => any::<usize>().prop_map(Op::Get),
        2 => any::<usize>().prop_map(Op::Pull),
        1 => any::<usize>().prop_map(Op::Drop),
        1 => any::<usize>().prop_map(Op::Delete),
        1 => (any::<usize>(), 0u64..20_000).prop_map(|(session, ms)| Op::Arm { session, ms }),
        1 => Just(Op::Jobs),
        3 => (0u64..12_000).prop_map(Op::Wait),
    ]
}

fn pick<T>(items: &[T], i: usize) -> Option<&T> {
    (!items.is_empty()).then(|| &items[i % items.len()])
}

/// Applies `op`; `sids` and `conns` are the sessions opened and the streams attached.
fn apply(
    ep: &mut Endpoint<Timed>,
    now: &mut Instant,
    op: Op,
    sids: &mut Vec<String>,
    conns: &mut Vec<StreamId>,
) {
    match op {
        Op::Open(seed) => sids.extend(open(ep, *now, seed)),
        Op::Call { session, slow } => {
            let Some(sid) = pick(sids, session).cloned() else {
                return;
            };
            let tool = if slow { "slow" } else { "echo" };
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#,
                conns.len() + sids.len() * 1000 + session % 1000
            );
            if let (_, Body::Stream(conn)) = post(ep, *now, Some(&sid), &body) {
                conns.push(conn);
            }
        }
        Op::Get(session) => {
            let Some(sid) = pick(sids, session) else {
                return;
            };
            let resp = ep.handle_request(
                *now,
                &head(HttpMethod::Get, Some(sid)),
                Bytes::new(),
                [0; 16],
            );
            if let Body::Stream(conn) = resp.body {
                conns.push(conn);
            }
        }
        Op::Pull(i) => {
            let Some(&conn) = pick(conns, i) else {
                return;
            };
            let mut buf = Vec::new();
            while let Some(chunk) = ep.poll_stream(conn, &mut buf) {
                if chunk == StreamChunk::End {
                    conns.retain(|&c| c != conn);
                    break;
                }
            }
        }
        Op::Drop(i) => {
            let Some(&conn) = pick(conns, i) else {
                return;
            };
            ep.stream_closed(conn);
            conns.retain(|&c| c != conn);
        }
        Op::Delete(session) => {
            let Some(sid) = pick(sids, session) else {
                return;
            };
            let h = head(HttpMethod::Delete, Some(sid));
            let _ = ep.handle_request(*now, &h, Bytes::new(), [0; 16]);
        }
        Op::Arm { session, ms } => {
            let Some(sid) = pick(sids, session) else {
                return;
            };
            let at = *now + Duration::from_millis(ms);
            if let Some(machine) = ep.machine_mut(sid) {
                machine.timer = Some(at);
            }
        }
        Op::Jobs => {
            let cx = &mut std::task::Context::from_waker(std::task::Waker::noop());
            while let Some(mut job) = ep.poll_job() {
                let _ = job.as_mut().poll(cx);
            }
        }
        Op::Wait(ms) => {
            *now += Duration::from_millis(ms);
            ep.handle_timeout(*now);
            let left = ep.sessions.walk_deadline();
            assert!(left.is_none_or(|t| t > *now), "a due session was left");
        }
    }
}

proptest! {
    #[test]
    fn deadline_index_matches_the_walk(
        sse in any::<bool>(),
        ops in proptest::collection::vec(op(), 1..60),
    ) {
        let mode = if sse { ResponseMode::AlwaysSse } else { ResponseMode::Auto };
        let mut ep = endpoint(mode);
        let mut now = Instant::now();
        let (mut sids, mut conns) = (Vec::new(), Vec::new());
        for op in ops {
            apply(&mut ep, &mut now, op.clone(), &mut sids, &mut conns);
            prop_assert_eq!(ep.poll_timeout(), ep.sessions.walk_deadline(), "after {:?}", op);
        }
    }
}

#[test]
fn many_idle_sessions_expire_in_deadline_order() {
    let mut ep = endpoint(ResponseMode::Auto);
    let start = Instant::now();
    let sids: Vec<String> = (0..300u64)
        .map(|i| open(&mut ep, start + Duration::from_millis(i), i).expect("opened"))
        .collect();
    assert_eq!(ep.session_count(), 300);
    // The first session's idle expiry (its machine timer, armed by `initialized`, is earlier
    // only for the sessions whose step is shorter; step 0 fires at once).
    assert_eq!(ep.poll_timeout(), ep.sessions.walk_deadline());
    // Touch `sids[0]` late: it expires last.
    let late = start + Duration::from_secs(5);
    let ping = r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#;
    assert_eq!(post(&mut ep, late, Some(&sids[0]), ping).0, 200);
    ep.handle_timeout(start + IDLE + Duration::from_millis(149));
    // `sids[1..=149]` expired (each at start + i ms + IDLE); 0 and 150.. are left.
    assert_eq!(ep.session_count(), 151);
    assert_eq!(ep.stats().sessions_expired, 149);
    assert!(ep.machine_mut(&sids[0]).is_some());
    assert!(ep.machine_mut(&sids[149]).is_none());
    assert_eq!(
        ep.poll_timeout(),
        Some(start + IDLE + Duration::from_millis(150))
    );
    ep.handle_timeout(start + IDLE + Duration::from_secs(1));
    assert_eq!(ep.session_count(), 1);
    assert_eq!(ep.poll_timeout(), Some(late + IDLE));
    ep.handle_timeout(late + IDLE);
    assert_eq!(ep.session_count(), 0);
    assert_eq!(ep.poll_timeout(), None);
}

#[test]
fn jobs_come_from_every_session_that_has_one() {
    let mut ep = endpoint(ResponseMode::AlwaysSse);
    let now = Instant::now();
    let sids: Vec<String> = (0..20u64)
        .map(|i| open(&mut ep, now, i).expect("opened"))
        .collect();
    let slow =
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{}}}"#;
    for sid in sids.iter().step_by(3) {
        assert_eq!(post(&mut ep, now, Some(sid), slow).0, 200);
    }
    let mut jobs = 0;
    while ep.poll_job().is_some() {
        jobs += 1;
    }
    assert_eq!(jobs, 7);
    assert!(ep.poll_job().is_none());
}
