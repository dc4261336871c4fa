//! One scenario test per session rule (issue "Core, part 2"), named after the rule.

use std::time::{Duration, Instant};

use crate::common::*;
use mcp_sansio::jsonrpc::{RawJson, RequestId};
use mcp_sansio::model::ProtocolVersion as V;
use mcp_sansio::session::{
    CloseReason, Event, Outcome, RequestOptions, SendError, Session, State, TransmitKind,
};
use mcp_sansio::testing::{Direction, Fault, SessionPair};
use mcp_sansio::Config;
use serde_json::{json, Value};

fn opts() -> RequestOptions {
    RequestOptions::default()
}

fn raw(v: Value) -> RawJson {
    RawJson::from_serialize(&v).unwrap()
}

/// Sends `tools/list` from the pair's client at `now`; its request id.
fn list_tools(pair: &mut SessionPair, now: Instant, options: RequestOptions) -> RequestId {
    pair.client
        .send_request(now, "tools/list", None, options)
        .unwrap()
}

/// Request options that ask for progress notifications.
fn with_progress() -> RequestOptions {
    RequestOptions {
        progress: true,
        ..opts()
    }
}

/// Request options with a timeout of their own.
fn with_timeout(timeout: Duration) -> RequestOptions {
    RequestOptions {
        timeout: Some(timeout),
        ..opts()
    }
}

/// A `tools/list` request frame with id `id`.
fn tools_list(id: u32) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#)
}

/// Asserts the first frame of `out` is an error answer to `id` with JSON-RPC `code`.
fn assert_error(out: &[Value], id: impl Into<Value>, code: i64) {
    assert_eq!(out[0]["id"], id.into());
    assert_eq!(out[0]["error"]["code"], code);
}

/// Asserts the only request completed on the pair's client is `id`, timed out.
fn assert_timed_out(pair: &mut SessionPair, id: RequestId) {
    assert_eq!(
        completed(&mut pair.client_events),
        vec![(id, Outcome::TimedOut)]
    );
}

/// A server past the handshake with `config` and no client capabilities, and its clock.
fn server_with(config: Config) -> (Session, Instant) {
    let now = Instant::now();
    (ready_server(config, "{}", now), now)
}

fn completed(events: &mut std::collections::VecDeque<Event>) -> Vec<(RequestId, Outcome)> {
    let mut out = Vec::new();
    events.retain(|e| match e {
        Event::Completed { id, outcome } => {
            out.push((id.clone(), outcome.clone()));
            false
        }
        _ => true,
    });
    out
}

#[test]
fn lifecycle_reaches_ready_on_both_sides_with_initialized_events() {
    let mut pair = pair_with(V::V2025_06_18, Config::default(), Config::default());
    assert_eq!(pair.client.state(), State::NotInitialized);
    let id = pair.client.initialize(pair.now()).unwrap();
    assert_eq!(pair.client.state(), State::Initializing);
    pair.drive();
    assert_eq!(pair.client.state(), State::Ready);
    assert_eq!(pair.server.state(), State::Ready);
    let init = Event::Initialized {
        protocol_version: V::V2025_06_18,
    };
    assert!(pair.client_events.contains(&init));
    assert!(pair.server_events.contains(&init));
    assert!(
        matches!(&completed(&mut pair.client_events)[..], [(done, Outcome::Result(_))] if *done == id)
    );
    assert_eq!(pair.client.server_instructions(), Some("be nice"));
    assert_eq!(pair.server.peer_info().unwrap().name, "test-client");
    assert!(pair
        .client
        .peer_server_capabilities()
        .unwrap()
        .tools
        .is_some());
    assert_transcript_valid(&pair);
}

#[test]
fn requests_before_initialized_get_invalid_request_and_the_session_keeps_going() {
    let (mut s, now) = server_after_initialize("2025-06-18", "{}", false);
    assert_eq!(s.state(), State::Initializing);
    let out = feed(&mut s, now, &tools_list(5));
    assert_error(&out, 5, -32600);
    assert!(s.poll_event().is_none());
    feed(
        &mut s,
        now,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(s.state(), State::Ready);
    feed(&mut s, now, &tools_list(6));
    assert!(matches!(s.poll_event(), Some(Event::Initialized { .. })));
    assert!(matches!(s.poll_event(), Some(Event::Request { .. })));
}

#[test]
fn requests_before_initialize_get_invalid_request() {
    let now = Instant::now();
    let mut s = Session::server(Config::default(), server_setup(ALL_SERVER_CAPS), now);
    let out = feed(
        &mut s,
        now,
        r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"a"}}"#,
    );
    assert_eq!(out[0]["error"]["code"], -32600);
    assert_eq!(s.state(), State::NotInitialized);
    assert_eq!(s.stats().requests_refused, 1);
}

#[test]
fn ping_is_answered_before_initialization_with_an_empty_object() {
    let now = Instant::now();
    let mut s = Session::server(Config::default(), server_setup("{}"), now);
    let out = feed(&mut s, now, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    assert_eq!(out, vec![json!({"jsonrpc":"2.0","id":1,"result":{}})]);
    assert!(s.poll_event().is_none());
}

#[test]
fn server_may_log_but_not_request_before_initialized() {
    let (mut s, now) = server_after_initialize("2025-06-18", ALL_CLIENT_CAPS, false);
    let log = raw(json!({"level":"info","data":"starting"}));
    s.notify("notifications/message", Some(log)).unwrap();
    assert_eq!(
        s.send_request(now, "roots/list", None, opts()),
        Err(SendError::NotInitialized)
    );
    assert!(s.send_request(now, "ping", None, opts()).is_ok());
    let out = drain(&mut s);
    assert_eq!(out.len(), 2);
    assert_eq!(out[0]["method"], "notifications/message");
    assert_eq!(out[1]["method"], "ping");
}

#[test]
fn client_drops_notifications_other_than_logging_before_ready() {
    let now = Instant::now();
    let mut c = Session::client(Config::default(), client_setup(V::V2025_06_18, "{}"), now);
    c.initialize(now).unwrap();
    drain(&mut c);
    feed(
        &mut c,
        now,
        r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#,
    );
    assert!(c.poll_event().is_none());
    feed(
        &mut c,
        now,
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}"#,
    );
    assert!(matches!(c.poll_event(), Some(Event::Notification { .. })));
    assert_eq!(c.stats().notifications_dropped, 1);
}

#[test]
fn initialize_twice_is_an_invalid_request() {
    let (mut s, now) = server_after_initialize("2025-06-18", "{}", true);
    let again = r#"{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#;
    let out = feed(&mut s, now, again);
    assert_error(&out, 9, -32600);
    assert_eq!(s.state(), State::Ready);
    let mut c = Session::client(Config::default(), client_setup(V::V2025_06_18, "{}"), now);
    c.initialize(now).unwrap();
    assert_eq!(c.initialize(now), Err(SendError::WrongRole));
}

#[test]
fn server_echoes_a_supported_requested_version() {
    for v in V::STATEFUL {
        let (s, _) = server_after_initialize(v.as_str(), "{}", true);
        assert_eq!(s.protocol_version(), Some(v));
    }
}

#[test]
fn server_answers_an_unsupported_version_with_its_latest_not_an_error() {
    let now = Instant::now();
    let mut s = Session::server(Config::default(), server_setup("{}"), now);
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#;
    let out = feed(&mut s, now, init);
    assert_eq!(out[0]["result"]["protocolVersion"], "2025-11-25");
    let config = Config {
        supported_versions: vec![V::V2024_11_05, V::V2025_03_26],
        ..Config::default()
    };
    let mut s = Session::server(config, server_setup("{}"), now);
    let out = feed(&mut s, now, &init.replace("1999-01-01", "2025-06-18"));
    assert_eq!(out[0]["result"]["protocolVersion"], "2025-03-26");
}

#[test]
fn client_closes_with_a_clear_reason_on_an_unsupported_server_version() {
    let only_old = Config {
        supported_versions: vec![V::V2024_11_05],
        ..Config::default()
    };
    let only_new = Config {
        supported_versions: vec![V::V2025_06_18],
        ..Config::default()
    };
    let mut pair = pair_with(V::V2025_06_18, only_new, only_old);
    assert_eq!(pair.connect(), None);
    assert_eq!(pair.client.state(), State::Closed);
    let reason = CloseReason::UnsupportedVersion {
        server_version: "2024-11-05".into(),
    };
    assert!(pair.client_events.contains(&Event::Closed { reason }));
}

#[test]
fn request_for_an_undeclared_capability_gets_method_not_found() {
    let (mut s, now) = server_after_initialize("2025-06-18", "{}", true);
    // The server declared no `elicitation`-style client methods; it also refuses
    // a client-bound method in the wrong direction.
    let out = feed(
        &mut s,
        now,
        r#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}"#,
    );
    assert_eq!(out[0]["error"]["code"], -32601);
    let now2 = Instant::now();
    let mut bare = Session::server(Config::default(), server_setup("{}"), now2);
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#;
    feed(&mut bare, now2, init);
    feed(
        &mut bare,
        now2,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    for method in [
        "tools/list",
        "resources/read",
        "prompts/get",
        "completion/complete",
        "logging/setLevel",
    ] {
        let frame =
            format!(r#"{{"jsonrpc":"2.0","id":"{method}","method":"{method}","params":{{}}}}"#);
        let out = feed(&mut bare, now2, &frame);
        assert_eq!(out[0]["error"]["code"], -32601, "{method}");
    }
    let out = feed(
        &mut bare,
        now2,
        r#"{"jsonrpc":"2.0","id":"u","method":"vendor/thing"}"#,
    );
    assert!(out.is_empty(), "unknown methods go to the application");
}

#[test]
fn session_refuses_to_send_what_the_peer_did_not_declare() {
    let now = Instant::now();
    let mut pair = mcp_sansio::testing::SessionPair::new(
        Config::default(),
        client_setup(V::V2025_06_18, "{}"),
        Config::default(),
        server_setup(r#"{"tools":{}}"#),
        now,
    );
    pair.connect().unwrap();
    let before = pair.client.has_transmit();
    let err = pair.client.send_request(now, "prompts/get", None, opts());
    assert!(matches!(
        err,
        Err(SendError::CapabilityNotDeclared {
            capability: "prompts",
            ..
        })
    ));
    assert!(pair
        .client
        .send_request(now, "tools/list", None, opts())
        .is_ok());
    let err = pair
        .server
        .send_request(now, "sampling/createMessage", None, opts());
    assert!(matches!(
        err,
        Err(SendError::CapabilityNotDeclared {
            capability: "sampling",
            ..
        })
    ));
    let err = pair.server.notify("notifications/tools/list_changed", None);
    assert!(matches!(
        err,
        Err(SendError::CapabilityNotDeclared {
            capability: "tools.listChanged",
            ..
        })
    ));
    let err = pair.client.send_request(now, "roots/list", None, opts());
    assert!(matches!(err, Err(SendError::WrongDirection { .. })));
    assert!(!before);
    assert!(
        !pair.server.has_transmit(),
        "nothing refused reaches the wire"
    );
}

#[test]
fn batches_are_accepted_in_a_2025_03_26_session() {
    let (mut s, now) = server_after_initialize("2025-03-26", "{}", true);
    let out = feed(
        &mut s,
        now,
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#,
    );
    assert_eq!(out, vec![json!({"jsonrpc":"2.0","id":1,"result":{}})]);
    assert!(
        matches!(s.poll_event(), Some(Event::Request { id, .. }) if id == RequestId::number(2))
    );
}

#[test]
fn batches_are_refused_in_other_versions_each_request_with_its_id() {
    for v in ["2024-11-05", "2025-06-18", "2025-11-25"] {
        let (mut s, now) = server_after_initialize(v, "{}", true);
        let out = feed(
            &mut s,
            now,
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/progress"},{"jsonrpc":"2.0","id":"b","method":"tools/list"},{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"1.0","id":3,"method":"ping"}]"#,
        );
        let ids: Vec<&Value> = out.iter().map(|o| &o["id"]).collect();
        assert_eq!(ids, [&json!(1), &json!("b"), &json!(3)], "{v}: {out:?}");
        for o in &out {
            assert_eq!(o["error"]["code"], -32600, "{v}");
            let message = o["error"]["message"].as_str().unwrap();
            assert!(message.contains("batches are not allowed"), "{message}");
        }
        assert!(
            s.poll_event().is_none(),
            "{v}: nothing in a refused batch is served"
        );
        assert_eq!(s.stats().batches_refused, 1);

        // With no request id to answer, one id-less refusal says what happened.
        let out = feed(
            &mut s,
            now,
            r#"[{"jsonrpc":"2.0","method":"notifications/progress"}]"#,
        );
        assert_eq!(out.len(), 1, "{v}");
        assert_eq!(out[0]["error"]["code"], -32600, "{v}");
        assert_eq!(
            out[0].get("id").is_some(),
            v != "2025-11-25",
            "{v}: missing id spelling"
        );
    }
}

#[test]
fn responses_match_by_exact_id_string_seven_is_not_number_seven() {
    let (mut s, now) = server_after_initialize("2025-06-18", ALL_CLIENT_CAPS, true);
    let id = s.send_request(now, "roots/list", None, opts()).unwrap();
    drain(&mut s);
    let wrong = match id.as_str() {
        Some(text) => format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"roots":[]}}}}"#,
            text.trim_start_matches("s-")
        ),
        None => unreachable!("server ids are strings"),
    };
    feed(&mut s, now, &wrong);
    assert_eq!(s.stats().unknown_responses_dropped, 1);
    assert!(matches!(
        s.poll_event(),
        Some(Event::UnmatchedResponse {
            pending_other_type: None,
            ..
        })
    ));
    let right = format!(
        r#"{{"jsonrpc":"2.0","id":"{}","result":{{"roots":[]}}}}"#,
        id.as_str().unwrap()
    );
    feed(&mut s, now, &right);
    assert!(
        matches!(s.poll_event(), Some(Event::Completed { id: done, outcome: Outcome::Result(_) }) if done == id)
    );
}

#[test]
fn request_timeout_ends_the_request_with_an_event_and_sends_cancelled() {
    let mut pair = connected(V::V2025_06_18);
    let now = pair.now();
    let id = list_tools(&mut pair, now, opts());
    assert_eq!(
        pair.client.poll_timeout(),
        Some(now + Duration::from_secs(60))
    );
    pair.drive();
    assert!(matches!(
        pair.server_events.pop_front(),
        Some(Event::Request { .. })
    ));
    pair.advance(Duration::from_secs(60));
    assert_timed_out(&mut pair, id.clone());
    assert!(
        matches!(pair.server_events.pop_front(), Some(Event::Cancelled { id: c, .. }) if c == id)
    );
    let sent = frames(&pair, Direction::ToServer);
    assert_eq!(sent.last().unwrap()["method"], "notifications/cancelled");
    assert_eq!(pair.client.poll_timeout(), None);
    assert_transcript_valid(&pair);
}

#[test]
fn per_call_timeout_overrides_the_config_default() {
    let mut pair = connected(V::V2025_06_18);
    let now = pair.now();
    let o = with_timeout(Duration::from_millis(10));
    let id = list_tools(&mut pair, now, o);
    assert_eq!(
        pair.client.poll_timeout(),
        Some(now + Duration::from_millis(10))
    );
    pair.advance(Duration::from_millis(10));
    assert_timed_out(&mut pair, id);
}

#[test]
fn cancel_ends_the_request_and_sends_cancelled() {
    let mut pair = connected(V::V2025_11_25);
    let now = pair.now();
    let id = list_tools(&mut pair, now, opts());
    pair.drive();
    pair.client.cancel(now, &id, Some("user".into())).unwrap();
    pair.drive();
    assert_eq!(
        completed(&mut pair.client_events),
        vec![(id.clone(), Outcome::Cancelled)]
    );
    let cancel = Event::Cancelled {
        id: id.clone(),
        reason: Some("user".into()),
    };
    assert_eq!(pair.server_events.back(), Some(&cancel));
    assert_eq!(
        pair.client.cancel(now, &id, None),
        Err(SendError::UnknownRequest)
    );
    assert_transcript_valid(&pair);
}

#[test]
fn late_response_to_a_cancelled_request_is_dropped_and_counted() {
    let mut pair = connected(V::V2025_06_18);
    let now = pair.now();
    // Hold the cancellation back so the server answers first.
    let id = list_tools(&mut pair, now, opts());
    pair.drive();
    pair.set_fault_hook(|d, _| {
        if d == Direction::ToServer {
            Fault::Drop
        } else {
            Fault::Deliver
        }
    });
    pair.client.cancel(now, &id, None).unwrap();
    pair.drive();
    pair.server.respond(&id, raw(json!({"tools":[]}))).unwrap();
    pair.drive();
    assert_eq!(
        completed(&mut pair.client_events),
        vec![(id, Outcome::Cancelled)]
    );
    assert_eq!(pair.client.stats().late_responses_dropped, 1);
    assert!(pair.client_events.is_empty());
}

#[test]
fn late_response_to_a_timed_out_request_is_dropped_and_counted() {
    let mut pair = connected(V::V2025_06_18);
    pair.set_latency(Duration::from_secs(1));
    let o = with_timeout(Duration::from_millis(1500));
    let id = pair
        .client
        .send_request(pair.now(), "tools/list", None, o)
        .unwrap();
    pair.advance(Duration::from_secs(1));
    let Some(Event::Request { id: sid, .. }) = pair.server_events.pop_front() else {
        panic!()
    };
    pair.server.respond(&sid, raw(json!({"tools":[]}))).unwrap();
    pair.advance(Duration::from_secs(2));
    assert_timed_out(&mut pair, id);
    assert_eq!(pair.client.stats().late_responses_dropped, 1);
}

#[test]
fn responses_with_unknown_ids_are_dropped_and_counted() {
    let mut pair = connected(V::V2025_06_18);
    pair.inject(
        Direction::ToClient,
        &br#"{"jsonrpc":"2.0","id":424242,"result":{}}"#[..],
    );
    pair.inject(
        Direction::ToClient,
        &br#"{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"x"}}"#[..],
    );
    pair.drive();
    assert_eq!(pair.client.stats().unknown_responses_dropped, 1);
    assert_eq!(pair.client.stats().id_less_errors_dropped, 1);
    // The unknown id is reported; the id-less error has nothing to report.
    let events: Vec<_> = pair.client_events.drain(..).collect();
    assert_eq!(
        events,
        [Event::UnmatchedResponse {
            id: RequestId::number(424242),
            pending_other_type: None,
        }]
    );
    assert!(
        frames(&pair, Direction::ToServer).len() == 2,
        "nothing is answered"
    );
}

#[test]
fn progress_tokens_are_unique_and_progress_events_surface() {
    let mut pair = connected(V::V2025_06_18);
    let now = pair.now();
    let p = with_progress();
    let a = pair
        .client
        .send_request(now, "tools/call", Some(raw(json!({"name":"a"}))), p.clone())
        .unwrap();
    let b = pair
        .client
        .send_request(
            now,
            "tools/call",
            Some(raw(json!({"name":"b","_meta":{"x":1}}))),
            p,
        )
        .unwrap();
    pair.drive();
    let sent = frames(&pair, Direction::ToServer);
    let ta = &sent[sent.len() - 2]["params"]["_meta"]["progressToken"];
    let tb = &sent[sent.len() - 1]["params"]["_meta"]["progressToken"];
    assert_ne!(ta, tb);
    assert_eq!(sent[sent.len() - 1]["params"]["_meta"]["x"], 1);
    let ids: Vec<RequestId> = pair
        .server_events
        .drain(..)
        .filter_map(|e| match e {
            Event::Request { id, .. } => Some(id),
            _ => None,
        })
        .collect();
    pair.server
        .notify_progress(&ids[1], 1.0, Some(2.0), Some("half".into()))
        .unwrap();
    pair.server
        .notify_progress(&ids[0], 5.0, None, None)
        .unwrap();
    pair.server
        .respond(&ids[1], raw(json!({"content":[]})))
        .unwrap();
    pair.drive();
    let progress = Event::Progress {
        id: b.clone(),
        progress: 1.0,
        total: Some(2.0),
        message: Some("half".into()),
    };
    assert_eq!(pair.client_events[0], progress);
    assert_eq!(
        pair.client_events[1],
        Event::Progress {
            id: a,
            progress: 5.0,
            total: None,
            message: None
        }
    );
    assert!(matches!(&pair.client_events[2], Event::Completed { id, .. } if *id == b));
    assert_transcript_valid(&pair);
}

#[test]
fn progress_resets_the_deadline_up_to_the_cap() {
    let config = Config {
        request_timeout: Duration::from_secs(10),
        max_request_timeout: Duration::from_secs(25),
        ..Config::default()
    };
    let mut pair = pair_with(V::V2025_06_18, config, Config::default());
    pair.connect().unwrap();
    let start = pair.now();
    let p = with_progress();
    let id = pair
        .client
        .send_request(start, "tools/call", Some(raw(json!({"name":"a"}))), p)
        .unwrap();
    pair.drive();
    let Some(Event::Request { id: sid, .. }) = pair.server_events.pop_front() else {
        panic!()
    };
    for step in 1..=3 {
        pair.advance(Duration::from_secs(8));
        pair.server
            .notify_progress(&sid, step as f64, None, None)
            .unwrap();
        pair.drive();
        assert!(completed(&mut pair.client_events).is_empty(), "step {step}");
    }
    // Reset at 24 s would give 34 s, but the cap is 25 s.
    assert_eq!(
        pair.client.poll_timeout(),
        Some(start + Duration::from_secs(25))
    );
    pair.advance(Duration::from_secs(1));
    assert_timed_out(&mut pair, id);
}

#[test]
fn progress_after_completion_is_dropped() {
    let mut pair = connected(V::V2025_06_18);
    let p = with_progress();
    let id = pair
        .client
        .send_request(pair.now(), "tools/list", None, p)
        .unwrap();
    pair.drive();
    pair.server_events.clear();
    pair.server.respond(&id, raw(json!({"tools":[]}))).unwrap();
    pair.drive();
    assert_eq!(pair.client_events.len(), 1);
    let token = serde_json::to_string(&id).unwrap();
    let late = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{token},"progress":1}}}}"#
    );
    pair.inject(Direction::ToClient, late.into_bytes());
    pair.drive();
    assert_eq!(pair.client_events.len(), 1);
    assert_eq!(pair.client.stats().progress_dropped, 1);
}

#[test]
fn inbound_cancel_surfaces_an_event_and_suppresses_the_response() {
    let (mut s, now) = server_after_initialize("2025-06-18", "{}", true);
    feed(
        &mut s,
        now,
        r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow"}}"#,
    );
    assert!(matches!(s.poll_event(), Some(Event::Request { .. })));
    feed(
        &mut s,
        now,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a","reason":"bored"}}"#,
    );
    let a = RequestId::string("a");
    assert_eq!(
        s.poll_event(),
        Some(Event::Cancelled {
            id: a.clone(),
            reason: Some("bored".into())
        })
    );
    assert_eq!(s.respond(&a, RawJson::empty_object()), Ok(()));
    assert!(drain(&mut s).is_empty());
    assert_eq!(s.stats().responses_suppressed, 1);
    assert_eq!(s.inflight_inbound(), 0);
}

#[test]
fn initialize_is_never_cancellable() {
    let now = Instant::now();
    let mut c = Session::client(Config::default(), client_setup(V::V2025_06_18, "{}"), now);
    let id = c.initialize(now).unwrap();
    assert_eq!(c.cancel(now, &id, None), Err(SendError::NotCancellable));
    let mut s = Session::server(Config::default(), server_setup("{}"), now);
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#;
    s.handle_input(now, bytes::Bytes::from_static(init.as_bytes()));
    let out = feed(
        &mut s,
        now,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0}}"#,
    );
    assert!(
        out[0]["result"]["protocolVersion"].is_string(),
        "the result still goes out"
    );
    assert_eq!(s.stats().cancellations_ignored, 1);
}

#[test]
fn admission_control_refuses_past_max_inflight_deterministically() {
    let (mut s, now) = server_with(Config {
        max_inflight_inbound: 2,
        ..Config::default()
    });
    for n in 1..=2 {
        let out = feed(
            &mut s,
            now,
            &format!(r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/list"}}"#),
        );
        assert!(out.is_empty());
    }
    let out = feed(&mut s, now, &tools_list(3));
    assert_error(&out, 3, -32603);
    let out = feed(&mut s, now, r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#);
    assert_eq!(out[0]["result"], json!({}), "ping still answered");
    s.respond(&RequestId::number(1), raw(json!({"tools":[]})))
        .unwrap();
    drain(&mut s);
    let out = feed(&mut s, now, &tools_list(5));
    assert!(out.is_empty(), "admitted again once a slot is free");
    assert_eq!(s.stats().requests_refused_busy, 1);
}

#[test]
fn server_to_client_requests_use_ids_that_never_collide_with_the_clients() {
    let mut pair = connected(V::V2025_06_18);
    let now = pair.now();
    let c = list_tools(&mut pair, now, opts());
    let s = pair
        .server
        .send_request(now, "roots/list", None, opts())
        .unwrap();
    assert_ne!(c, s);
    pair.drive();
    let Some(Event::Request { id, method, .. }) = pair.client_events.pop_front() else {
        panic!()
    };
    assert_eq!((id.clone(), method.as_ref()), (s.clone(), "roots/list"));
    pair.client.respond(&id, raw(json!({"roots":[]}))).unwrap();
    pair.drive();
    assert!(matches!(pair.server_events.back(), Some(Event::Completed { id, .. }) if *id == s));
    assert_transcript_valid(&pair);
}

#[test]
fn ping_is_answered_by_the_session_itself() {
    let mut pair = connected(V::V2025_06_18);
    let id = pair
        .server
        .send_request(pair.now(), "ping", None, opts())
        .unwrap();
    pair.drive();
    assert!(pair.client_events.is_empty());
    assert_eq!(
        completed(&mut pair.server_events),
        vec![(id, Outcome::Result(RawJson::empty_object()))]
    );
}

#[test]
fn keep_alive_pings_on_a_timer_and_closes_when_unanswered() {
    let config = Config {
        keep_alive_interval: Some(Duration::from_secs(5)),
        request_timeout: Duration::from_secs(2),
        ..Config::default()
    };
    let mut pair = pair_with(V::V2025_06_18, config, Config::default());
    pair.connect().unwrap();
    pair.advance(Duration::from_secs(5));
    let pings = frames(&pair, Direction::ToServer)
        .iter()
        .filter(|f| f["method"] == "ping")
        .count();
    assert_eq!(pings, 1);
    assert!(pair.client_events.is_empty(), "keep-alive pings are silent");
    pair.set_fault_hook(|_, _| Fault::Drop);
    pair.advance(Duration::from_secs(7));
    assert_eq!(pair.client.state(), State::Closed);
    assert_eq!(
        pair.client_events.back(),
        Some(&Event::Closed {
            reason: CloseReason::KeepAliveTimedOut
        })
    );
}

#[test]
fn decode_errors_are_answered_with_the_recovered_id() {
    let (mut s, now) = server_after_initialize("2025-06-18", "{}", true);
    let out = feed(&mut s, now, r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#);
    assert_error(&out, 7, -32600);
    let out = feed(&mut s, now, "this is not json");
    assert_error(&out, Value::Null, -32700);
    // A request cut short, or with a byte that is not UTF-8 in a string: its first bytes show
    // the id, so the parse error carries it.
    let out = feed(&mut s, now, r#"{"jsonrpc":"2.0","id":19,"method":"ping""#);
    assert_error(&out, 19, -32700);
    let mut bad =
        br#"{"jsonrpc":"2.0","id":"u","method":"tools/list","params":{"cursor":"#.to_vec();
    bad.extend_from_slice(b"\xff\xfe\"}}");
    let out = feed_bytes(&mut s, now, &bad);
    assert_error(&out, "u", -32700);
    // A broken response is never answered with its id (it names a request of ours).
    let out = feed(&mut s, now, r#"{"jsonrpc":"2.0","id":5,"result":{"#);
    assert!(out.iter().all(|o| o["id"] != 5), "{out:?}");
    let out = feed(
        &mut s,
        now,
        r#"{"jsonrpc":"2.0","id":3,"result":1,"error":{"code":1,"message":"x"}}"#,
    );
    assert!(out.is_empty(), "malformed responses are never answered");
    let (mut s, now) = server_after_initialize("2025-11-25", "{}", true);
    let out = feed(&mut s, now, "garbage");
    assert!(out[0].get("id").is_none(), "2025-11-25 omits a missing id");
}

#[test]
fn oversized_frames_are_refused() {
    let now = Instant::now();
    let config = Config {
        max_frame_len: 64,
        ..Config::default()
    };
    let mut s = Session::server(config, server_setup("{}"), now);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"x":"{}"}}}}"#,
        "a".repeat(100)
    );
    let out = feed(&mut s, now, &big);
    assert_eq!(out[0]["error"]["code"], -32600);
    assert_eq!(s.stats().oversized_frames, 1);
}

#[test]
fn transmits_are_one_compact_line_with_related_ids() {
    let (mut s, now) = server_after_initialize("2025-06-18", "{}", true);
    feed(
        &mut s,
        now,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"t"}}}"#,
    );
    let id = RequestId::number(1);
    s.notify_progress(&id, 1.0, None, None).unwrap();
    s.notify_related(
        &id,
        "notifications/message",
        Some(RawJson::from_text("{\n\"level\":\"info\",\r\n\"data\":1}").unwrap()),
    )
    .unwrap();
    s.respond(&id, RawJson::from_text("{\"content\":\n[]}").unwrap())
        .unwrap();
    let out = drain_transmits(&mut s);
    let kinds: Vec<_> = out
        .iter()
        .map(|(_, t)| (t.kind, t.related.clone()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (TransmitKind::Notification, Some(id.clone())),
            (TransmitKind::Notification, Some(id.clone())),
            (TransmitKind::Response, Some(id.clone())),
        ]
    );
    assert_eq!(out[0].0["params"]["progressToken"], "t");
}

#[test]
fn duplicate_inbound_request_ids_are_dropped_and_counted() {
    let (mut s, now) = server_after_initialize("2025-06-18", "{}", true);
    feed(&mut s, now, &tools_list(1));
    feed(&mut s, now, &tools_list(1));
    assert!(matches!(s.poll_event(), Some(Event::Request { .. })));
    assert!(s.poll_event().is_none());
    assert_eq!(s.stats().duplicate_requests_dropped, 1);
}

#[test]
fn a_duplicate_id_is_dropped_before_any_other_rule_and_the_first_request_keeps_its_entry() {
    let (mut s, now) = server_after_initialize("2025-06-18", "{}", true);
    let first = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"t"}}}"#;
    assert!(feed(&mut s, now, first).is_empty());
    assert!(matches!(s.poll_event(), Some(Event::Request { .. })));
    for duplicate in [
        // Accepted but for its id: the entry filed first (with its token) stays.
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"y"}}"#,
        // Answered by the session but for its id.
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        // Refused (a request only servers send) but for its id.
        r#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}"#,
    ] {
        assert!(feed(&mut s, now, duplicate).is_empty(), "{duplicate}");
    }
    assert!(s.poll_event().is_none());
    assert_eq!(s.stats().duplicate_requests_dropped, 3);
    assert_eq!(s.stats().requests_refused, 0);
    let id = RequestId::number(1);
    s.notify_progress(&id, 1.0, None, None).unwrap();
    s.respond(&id, raw(json!({"content":[]}))).unwrap();
    let out = drain(&mut s);
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(out[0]["params"]["progressToken"], "t");
    assert_eq!(out[1]["id"], 1);
}

#[test]
fn a_duplicate_id_past_max_inflight_is_dropped_not_refused_busy() {
    let (mut s, now) = server_with(Config {
        max_inflight_inbound: 1,
        ..Config::default()
    });
    let request = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    assert!(feed(&mut s, now, request).is_empty());
    assert!(feed(&mut s, now, request).is_empty());
    assert_eq!(s.stats().duplicate_requests_dropped, 1);
    assert_eq!(s.stats().requests_refused_busy, 0);
    let out = feed(&mut s, now, &tools_list(2));
    assert_eq!(out[0]["error"]["code"], -32603);
    assert_eq!(s.stats().requests_refused_busy, 1);
}

#[test]
fn a_duplicate_id_of_an_undeclared_or_repeated_initialize_request_is_dropped_not_refused() {
    let now = Instant::now();
    let mut s = ready_server_declaring(Config::default(), r#"{"tools":{}}"#, "{}", now);
    let first = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    assert!(feed(&mut s, now, first).is_empty());
    let init_again = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#;
    for duplicate in [
        // Refused (resources were not declared) but for its id.
        r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"a"}}"#,
        // Refused (already initialized) but for its id.
        init_again,
    ] {
        assert!(feed(&mut s, now, duplicate).is_empty(), "{duplicate}");
    }
    assert_eq!(s.stats().duplicate_requests_dropped, 2);
    assert_eq!(s.stats().requests_refused, 0);
    let out = feed(
        &mut s,
        now,
        r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"a"}}"#,
    );
    assert_eq!(out[0]["error"]["code"], -32601);
    let out = feed(&mut s, now, &init_again.replace(r#""id":1"#, r#""id":3"#));
    assert_eq!(out[0]["error"]["code"], -32600);
    assert_eq!(s.stats().requests_refused, 2);
    assert_eq!(s.stats().duplicate_requests_dropped, 2);
}

#[test]
fn the_progress_token_is_read_under_an_escaped_meta_name_and_only_under_meta() {
    let (mut s, now) = server_after_initialize("2025-06-18", "{}", true);
    feed(
        &mut s,
        now,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","\u005fmeta":{"progressToken":"t"}}}"#,
    );
    feed(
        &mut s,
        now,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","progressToken":"u"}}"#,
    );
    s.notify_progress(&RequestId::number(1), 1.0, None, None)
        .unwrap();
    s.notify_progress(&RequestId::number(2), 1.0, None, None)
        .unwrap();
    let out = drain(&mut s);
    assert_eq!(out.len(), 1, "only the first asked for progress: {out:?}");
    assert_eq!(out[0]["params"]["progressToken"], "t");
}

#[test]
fn close_completes_every_pending_request_then_reports_closed() {
    let mut pair = connected(V::V2025_06_18);
    let now = pair.now();
    let a = list_tools(&mut pair, now, opts());
    let b = pair.client.send_request(now, "ping", None, opts()).unwrap();
    pair.client.close(now);
    while let Some(e) = pair.client.poll_event() {
        pair.client_events.push_back(e);
    }
    let done = completed(&mut pair.client_events);
    assert_eq!(done, vec![(a, Outcome::Closed), (b, Outcome::Closed)]);
    assert_eq!(
        pair.client_events.pop_front(),
        Some(Event::Closed {
            reason: CloseReason::Local
        })
    );
    assert_eq!(
        pair.client.send_request(now, "ping", None, opts()),
        Err(SendError::Closed)
    );
    assert_eq!(pair.client.poll_timeout(), None);
}

#[test]
fn pending_outbound_is_bounded() {
    let config = Config {
        max_pending_outbound: 2,
        ..Config::default()
    };
    let mut pair = pair_with(V::V2025_06_18, config, Config::default());
    pair.connect().unwrap();
    let now = pair.now();
    pair.client.send_request(now, "ping", None, opts()).unwrap();
    pair.client.send_request(now, "ping", None, opts()).unwrap();
    assert_eq!(
        pair.client.send_request(now, "ping", None, opts()),
        Err(SendError::TooManyPending)
    );
}

#[test]
fn client_refuses_server_requests_for_capabilities_it_did_not_declare() {
    let now = Instant::now();
    let mut pair = mcp_sansio::testing::SessionPair::new(
        Config::default(),
        client_setup(V::V2025_06_18, r#"{"roots":{}}"#),
        Config::default(),
        server_setup("{}"),
        now,
    );
    pair.set_recording(true);
    pair.connect().unwrap();
    pair.inject(
        Direction::ToClient,
        &br#"{"jsonrpc":"2.0","id":"e","method":"elicitation/create","params":{}}"#[..],
    );
    pair.inject(
        Direction::ToClient,
        &br#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{}}"#[..],
    );
    pair.inject(
        Direction::ToClient,
        &br#"{"jsonrpc":"2.0","id":"r","method":"roots/list"}"#[..],
    );
    pair.drive();
    let replies = frames(&pair, Direction::ToServer);
    let codes: Vec<_> = replies
        .iter()
        .filter(|f| f.get("error").is_some())
        .map(|f| (f["id"].clone(), f["error"]["code"].clone()))
        .collect();
    assert_eq!(
        codes,
        vec![(json!("e"), json!(-32601)), (json!("i"), json!(-32601))]
    );
    assert!(
        matches!(pair.client_events.pop_front(), Some(Event::Request { method, .. }) if method == "roots/list")
    );
}

#[test]
fn framer_errors_are_answered_without_an_id() {
    let (mut s, now) = server_after_initialize("2025-06-18", "{}", true);
    s.handle_decode_error(now, mcp_sansio::session::FrameError::too_long(10));
    let out = drain(&mut s);
    assert_eq!(out[0]["error"]["code"], -32600);
    assert_eq!(out[0]["id"], Value::Null);
    assert_eq!(s.stats().oversized_frames, 1);
}

#[test]
fn outbound_queue_is_bounded_for_commands() {
    let (mut s, _) = server_with(Config {
        max_outbound_queue: 2,
        ..Config::default()
    });
    let log = || Some(raw(json!({"level":"info","data":1})));
    s.notify("notifications/message", log()).unwrap();
    s.notify("notifications/message", log()).unwrap();
    assert_eq!(
        s.notify("notifications/message", log()),
        Err(SendError::QueueFull)
    );
    assert_eq!(drain(&mut s).len(), 2);
    assert!(s.notify("notifications/message", log()).is_ok());
}

#[test]
fn event_queue_drops_notifications_but_never_requests_past_its_bound() {
    let now = Instant::now();
    let config = Config {
        max_queued_events: 1,
        ..Config::default()
    };
    let mut s = ready_server(config, r#"{"roots":{"listChanged":true}}"#, now);
    feed(
        &mut s,
        now,
        r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#,
    );
    feed(&mut s, now, &tools_list(1));
    let events: Vec<_> = std::iter::from_fn(|| s.poll_event()).collect();
    assert!(
        matches!(
            events[..],
            [Event::Initialized { .. }, Event::Request { .. }]
        ),
        "{events:?}"
    );
    assert_eq!(s.stats().notifications_dropped, 1);
}

/// A 2025-06-18 server session with `config` that got `initialize` (the client declaring
/// `client_caps`) and `initialized`; its answer and events are left to the test.
fn ready_server(config: Config, client_caps: &str, now: Instant) -> Session {
    ready_server_declaring(config, ALL_SERVER_CAPS, client_caps, now)
}

/// `ready_server` with the server declaring `server_caps` instead of every capability.
fn ready_server_declaring(
    config: Config,
    server_caps: &str,
    client_caps: &str,
    now: Instant,
) -> Session {
    let mut s = Session::server(config, server_setup(server_caps), now);
    let init = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{client_caps},"clientInfo":{{"name":"x","version":"1"}}}}}}"#
    );
    feed(&mut s, now, &init);
    feed(
        &mut s,
        now,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    s
}
