//! Signed event ids and the stream log: two endpoints sharing a key and a "store" the test
//! keeps (a map of stream logs). A stream one endpoint wrote, cut off, is resumed on the
//! other from the log; forged and foreign ids are refused; a stream whose owner is gone ends
//! its open request with an error.

use std::collections::HashMap;
use std::time::Instant;

use bytes::Bytes;
use serde_json::{json, Value};

use crate::app::server::{CallToolResult, Server, Tool};
use crate::framing::{SseDecoder, SseItem};
use crate::http::{
    Body, EndpointConfig, EventKey, HttpMethod, HttpRequestHead, ListenRelay, RemoteResume,
    StreamLogEntry,
};
use crate::model::Implementation;
use crate::testing::HttpRig;

/// Stream logs by (session, stream name).
type Logs = HashMap<(String, String), Vec<Bytes>>;

/// A tool that asks the client for its roots and answers with them.
fn ask() -> Tool {
    Tool::new("ask", json!({"type": "object"})).handler(|_call, ctx| async move {
        Ok(match ctx.list_roots().await {
            Ok(roots) => CallToolResult::text(format!("roots: {roots}")),
            Err(e) => CallToolResult::error(format!("failed: {e}")),
        })
    })
}

/// A tool that registers another: a `tools/list_changed` on the session's GET stream.
fn grow() -> Tool {
    Tool::new("grow", json!({"type": "object"})).sync_handler(|_call, ctx| {
        let grown = Tool::new("grown", json!({"type": "object"}))
            .sync_handler(|_call, _ctx| Ok(CallToolResult::text("grown")));
        Ok(match ctx.server().add_tool(grown) {
            Ok(()) => CallToolResult::text("grew"),
            Err(e) => CallToolResult::error(format!("failed: {e}")),
        })
    })
}

fn rig(instance: Option<&str>, key: &[u8], now: Instant) -> HttpRig {
    let config = EndpointConfig {
        instance_id: instance.map(str::to_owned),
        event_key: EventKey::new(key),
        ..EndpointConfig::default()
    };
    let (tool, grow) = (ask(), grow());
    let factory = move |now| {
        Server::builder(Implementation::new("log", "1"))
            .tool(tool.clone())
            .tool(grow.clone())
            .build(now)
    };
    HttpRig::new(config, factory, now)
}

const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

/// A 2025-11-25 session whose client has roots (its streams start with a priming event).
fn open(rig: &mut HttpRig) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"roots": {}},
        "clientInfo": {"name": "rig", "version": "1"}}});
    let resp = rig.post(None, &init);
    let sid = resp.get("mcp-session-id").expect("a session id").to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(rig.post(Some(&sid), &initialized).status, 202);
    sid
}

fn call() -> Value {
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "ask", "arguments": {}}})
}

fn get_head(sid: &str, last_event_id: &str) -> HttpRequestHead {
    HttpRequestHead::new(HttpMethod::Get, "/mcp")
        .header("Host", "localhost:3000")
        .header("Accept", "text/event-stream")
        .header("Mcp-Session-Id", sid)
        .header("Last-Event-ID", last_event_id)
}

/// Appends what `rig` hands out to `logs`; returns the entries.
fn store(rig: &mut HttpRig, logs: &mut Logs) -> Vec<StreamLogEntry> {
    let mut seen = Vec::new();
    while let Some(entry) = rig.endpoint.poll_stream_log() {
        logs.entry((entry.session.clone(), entry.stream.clone()))
            .or_default()
            .push(entry.data.clone());
        seen.push(entry);
    }
    seen
}

/// The last session snapshot `rig` hands out.
fn latest_snapshot(rig: &mut HttpRig) -> Vec<u8> {
    let mut latest = None;
    while let Some(change) = rig.endpoint.poll_session_change() {
        if let crate::http::SessionChange::Saved { snapshot, .. } = change {
            latest = Some(snapshot);
        }
    }
    latest.expect("a snapshot")
}

/// The JSON-RPC messages of SSE bytes.
fn messages(bytes: &[u8]) -> Vec<Value> {
    let mut decoder = SseDecoder::new(1 << 20);
    decoder.push(bytes);
    let mut out = Vec::new();
    while let Some(item) = decoder.poll_item() {
        if let Ok(SseItem::Event(e)) = item {
            if !e.data_str().is_empty() {
                out.push(serde_json::from_str(e.data_str()).expect("JSON"));
            }
        }
    }
    out
}

/// Serves `resume` from `logs` as a driver does: what it hands out for each entry.
fn serve(resume: &mut RemoteResume, logs: &Logs) -> Vec<u8> {
    let key = (resume.session().to_owned(), resume.stream().to_owned());
    let mut out = Vec::new();
    for entry in logs.get(&key).map(Vec::as_slice).unwrap_or_default() {
        if let Some(bytes) = resume.handle_entry(entry) {
            out.extend_from_slice(&bytes);
        }
    }
    out
}

#[test]
fn signed_ids_resume_here_and_forged_or_foreign_ones_get_400() {
    let now = Instant::now();
    let mut a = rig(None, KEY, now);
    let sid = open(&mut a);
    let other = open(&mut a);
    let stream = a.post(Some(&sid), &call());
    a.run_jobs();
    let read = a.read_stream(&stream.body);
    let (priming, _) = read.events.first().expect("a priming event").clone();
    let parts: Vec<&str> = priming.splitn(4, '-').collect();
    assert_eq!(parts.len(), 4, "origin, stream, seq, MAC: {priming}");
    assert!(parts[0].starts_with("local."), "{priming}");
    assert_eq!(a.endpoint.poll_stream_log(), None, "not shared: no log");

    // Its own id resumes the stream: the roots request comes again.
    let resumed = a.request(&get_head(&sid, &priming), "");
    assert_eq!(resumed.status, 200, "{}", resumed.body_text());
    let again = a.read_stream(&resumed.body).messages();
    assert!(
        again.iter().any(|m| m["method"] == "roots/list"),
        "{again:?}"
    );

    let mut forged = priming.clone();
    let last = forged.pop().expect("a MAC");
    forged.push(if last == 'A' { 'B' } else { 'A' });
    let seq_changed = format!("{}-{}-99-{}", parts[0], parts[1], parts[3]);
    for bad in [forged.as_str(), seq_changed.as_str(), "1-2", "x"] {
        let resp = a.request(&get_head(&sid, bad), "");
        assert_eq!(resp.status, 400, "{bad}: {}", resp.body_text());
    }
    // Another session's id, and an id signed with another key.
    assert_eq!(a.request(&get_head(&other, &priming), "").status, 400);
    let mut b = rig(None, b"another key, sixteen bytes long!", now);
    let sid_b = open(&mut b);
    assert_eq!(sid_b, sid, "the rigs' ids are predictable");
    assert_eq!(b.request(&get_head(&sid_b, &priming), "").status, 400);
}

#[test]
fn a_stream_cut_on_one_endpoint_is_resumed_from_the_log_on_another() {
    let now = Instant::now();
    let (mut a, mut b) = (rig(Some("a"), KEY, now), rig(Some("b"), KEY, now));
    let mut logs = Logs::new();
    let sid = open(&mut a);
    let snapshot = latest_snapshot(&mut a);
    assert!(
        store(&mut a, &mut logs).is_empty(),
        "a JSON answer logs nothing"
    );

    let stream = a.post(Some(&sid), &call());
    a.run_jobs();
    let read = a.read_stream(&stream.body);
    let (priming, _) = read.events.first().expect("a priming event").clone();
    let request = read
        .messages()
        .into_iter()
        .next()
        .expect("the roots request");
    assert_eq!(request["method"], "roots/list");
    let Body::Stream(conn) = stream.body else {
        panic!("a stream")
    };
    // The client is cut off; it answers the roots request, and the tool answers with no
    // client attached: the log still gets it.
    a.endpoint.stream_closed(conn);
    let reply = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"roots": []}});
    assert_eq!(a.post(Some(&sid), &reply).status, 202);
    a.run_jobs();
    let entries = store(&mut a, &mut logs);
    let names: Vec<&str> = entries.iter().map(|e| e.stream.as_str()).collect();
    assert!(names.iter().all(|n| *n == "a.0-2"), "{names:?}");
    let tags: Vec<u8> = entries.iter().map(|e| e.data[0]).collect();
    assert_eq!(tags, b"OEEAZ", "opened, two events, answered, ended");
    assert!(store(&mut a, &mut logs).is_empty(), "handed out once");

    // On B the id names A's stream: B's driver serves it from the log.
    assert_eq!(b.endpoint.handle_restore(now, &sid, &snapshot), Ok(true));
    let head = get_head(&sid, &priming);
    let mut resume = b.endpoint.resume_elsewhere(now, &head).expect("A's stream");
    assert_eq!(resume.instance(), "a");
    assert_eq!(resume.head().status, 200);
    let replayed = messages(&serve(&mut resume, &logs));
    assert_eq!(replayed.len(), 2, "{replayed:?}");
    assert_eq!(replayed[0]["method"], "roots/list");
    assert_eq!(replayed[1]["id"], 7);
    assert!(resume.is_ended());
    // After the roots request's id, only the answer.
    let read_id = read.events[1].0.clone();
    let mut later = b
        .endpoint
        .resume_elsewhere(now, &get_head(&sid, &read_id))
        .expect("A's stream");
    assert_eq!(messages(&serve(&mut later, &logs)).len(), 1);
    // Handed in without the driver's help, the foreign id is refused; a forged one never
    // reaches the driver.
    assert_eq!(b.request(&head, "").status, 400);
    let forged = format!("{}x", &priming[..priming.len() - 1]);
    assert!(b
        .endpoint
        .resume_elsewhere(now, &get_head(&sid, &forged))
        .is_none());
    assert_eq!(b.request(&get_head(&sid, &forged), "").status, 400);
    // A's own ids stay A's.
    assert!(a.endpoint.resume_elsewhere(now, &head).is_none());
}

#[test]
fn a_stream_whose_owner_is_gone_ends_its_open_request_with_an_error() {
    let now = Instant::now();
    let (mut a, mut b) = (rig(Some("a"), KEY, now), rig(Some("b"), KEY, now));
    let mut logs = Logs::new();
    let sid = open(&mut a);
    let snapshot = latest_snapshot(&mut a);
    let stream = a.post(Some(&sid), &call());
    a.run_jobs();
    let (priming, _) = a.read_stream(&stream.body).events[0].clone();
    store(&mut a, &mut logs);
    drop(a);

    assert_eq!(b.endpoint.handle_restore(now, &sid, &snapshot), Ok(true));
    let mut resume = b
        .endpoint
        .resume_elsewhere(now, &get_head(&sid, &priming))
        .expect("A's stream");
    let replayed = messages(&serve(&mut resume, &logs));
    assert_eq!(replayed[0]["method"], "roots/list");
    assert!(!resume.is_ended(), "A never answered");
    let ended = messages(&resume.owner_gone());
    assert_eq!(ended.len(), 1, "{ended:?}");
    assert_eq!(ended[0]["id"], 7);
    assert_eq!(ended[0]["error"]["code"], -32603);
    assert!(resume.is_ended());
}

/// Calls `grow` on `rig`: one `tools/list_changed` for the GET stream.
fn grow_on(rig: &mut HttpRig, sid: &str, id: u64) {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "grow", "arguments": {}}});
    let resp = rig.post(Some(sid), &call);
    rig.run_jobs();
    let answer = rig.messages(&resp);
    assert_eq!(answer.last().expect("an answer")["id"], id, "{answer:?}");
}

/// The origin (`<instance>.<serial>`) of a signed event id.
fn origin(id: &str) -> &str {
    id.split('-').next().unwrap_or_default()
}

/// Endpoints A and B sharing a key, and a session opened on A with its GET stream open
/// there: (A, B, the session id, its snapshot, the GET's response).
fn listening_on_a(now: Instant) -> (HttpRig, HttpRig, String, Vec<u8>, crate::http::HttpResponse) {
    let (mut a, b) = (rig(Some("a"), KEY, now), rig(Some("b"), KEY, now));
    let sid = open(&mut a);
    let snapshot = latest_snapshot(&mut a);
    let listen = a.get(&sid, None);
    assert_eq!(listen.status, 200, "{}", listen.body_text());
    let opened = a
        .endpoint
        .poll_listen_relay()
        .expect("A tells every instance");
    assert!(opened.to_every_instance(), "{opened:?}");
    assert_eq!(a.endpoint.poll_listen_relay(), None);
    (a, b, sid, snapshot, listen)
}

#[test]
fn a_get_stream_cut_on_one_endpoint_is_resumed_on_another_with_what_it_missed_first() {
    let now = Instant::now();
    let (mut a, mut b, sid, snapshot, listen) = listening_on_a(now);
    let mut logs = Logs::new();
    for id in 1..=3 {
        grow_on(&mut a, &sid, id);
    }
    let read = a.read_stream(&listen.body);
    let changes: Vec<&(String, String)> =
        read.events.iter().filter(|(_, d)| !d.is_empty()).collect();
    assert_eq!(changes.len(), 3, "{read:?}");
    assert!(changes
        .iter()
        .all(|(_, d)| d.contains("tools/list_changed")));
    // The client saw the first change only; its connection to A is then cut.
    let seen = changes[0].0.clone();
    let Body::Stream(conn) = listen.body else {
        panic!("a stream")
    };
    a.endpoint.stream_closed(conn);
    let entries = store(&mut a, &mut logs);
    let gets: Vec<&StreamLogEntry> = entries
        .iter()
        .filter(|e| e.stream == format!("{}-0", origin(&seen)))
        .collect();
    let tags: Vec<u8> = gets.iter().map(|e| e.data[0]).collect();
    assert_eq!(
        tags, b"EEE",
        "each change is logged, the priming event is not"
    );
    // What arises on A with no GET attached is held there, not logged.
    grow_on(&mut a, &sid, 4);
    assert!(store(&mut a, &mut logs)
        .iter()
        .all(|e| !e.stream.ends_with("-0")));

    // On B the id names A's GET stream: B's driver reads its log, and B's stream opens with
    // the two changes the client missed, then B's own.
    assert_eq!(b.endpoint.handle_restore(now, &sid, &snapshot), Ok(true));
    let head = get_head(&sid, &seen);
    let mut resume = b
        .endpoint
        .resume_elsewhere(now, &head)
        .expect("A's GET stream");
    assert!(resume.is_listen());
    assert_eq!(resume.stream(), format!("{}-0", origin(&seen)));
    assert!(
        serve(&mut resume, &logs).is_empty(),
        "kept for resume_listen"
    );
    let resumed = b.endpoint.resume_listen(now, resume, false);
    assert_eq!(resumed.status, 200, "{}", resumed.body_text());
    grow_on(&mut b, &sid, 5);
    let on_b = b.read_stream(&resumed.body);
    let ids: Vec<&str> = on_b
        .events
        .iter()
        .filter(|(_, d)| !d.is_empty())
        .map(|(id, _)| id.as_str())
        .collect();
    assert_eq!(ids.len(), 3, "{on_b:?}");
    assert_eq!(ids[..2], [changes[1].0.as_str(), changes[2].0.as_str()]);
    assert_ne!(origin(ids[2]), origin(&seen), "B's own change: {ids:?}");
    assert!(!on_b.ended);
    // B logs its GET stream too: its own change, not A's.
    let b_entries = store(&mut b, &mut logs);
    let b_gets: Vec<&StreamLogEntry> = b_entries
        .iter()
        .filter(|e| e.stream == format!("{}-0", origin(ids[2])))
        .collect();
    assert_eq!(b_gets.len(), 1, "{b_entries:?}");

    // A log that lost the client's event (and maybe what followed it) is refused; one that
    // lost only older entries is served.
    let key = (sid.clone(), format!("{}-0", origin(&seen)));
    let last = logs[&key].last().expect("an entry").clone();
    let mut cut = b
        .endpoint
        .resume_elsewhere(now, &head)
        .expect("A's GET stream");
    cut.handle_entry(&last);
    assert_eq!(b.endpoint.resume_listen(now, cut, true).status, 409);
    let mut kept = b
        .endpoint
        .resume_elsewhere(now, &head)
        .expect("A's GET stream");
    serve(&mut kept, &logs);
    assert_eq!(b.endpoint.resume_listen(now, kept, true).status, 200);
    // A session that ended meanwhile gets 404.
    let gone = b
        .endpoint
        .resume_elsewhere(now, &head)
        .expect("A's GET stream");
    assert!(b.endpoint.handle_session_ended(now, &sid));
    assert_eq!(b.endpoint.resume_listen(now, gone, false).status, 404);
}

/// A session holding a GET stream is not visited at every collection: once what its stream
/// wrote is taken, the endpoint has nothing to walk while the stream stays open and silent,
/// and a later event, pulled by the connection, is logged all the same.
#[test]
fn an_open_silent_get_stream_is_not_walked_at_every_collection() {
    let now = Instant::now();
    let mut a = rig(Some("a"), KEY, now);
    let mut logs = Logs::new();
    let sid = open(&mut a);
    let listen = a.get(&sid, None);
    assert_eq!(listen.status, 200, "{}", listen.body_text());
    grow_on(&mut a, &sid, 1);
    let read = a.read_stream(&listen.body);
    assert!(!read.ended);
    let first = store(&mut a, &mut logs);
    assert!(first.iter().any(|e| e.stream.ends_with("-0")), "{first:?}");
    assert!(
        !a.endpoint.logs_streams(),
        "nothing left to collect while the GET stream is silent"
    );

    grow_on(&mut a, &sid, 2);
    let read = a.read_stream(&listen.body);
    assert!(read
        .events
        .iter()
        .any(|(_, d)| d.contains("tools/list_changed")));
    let later = store(&mut a, &mut logs);
    let gets: Vec<u8> = later
        .iter()
        .filter(|e| e.stream.ends_with("-0"))
        .map(|e| e.data[0])
        .collect();
    assert_eq!(gets, b"E", "the pulled event is logged: {later:?}");
    assert!(!a.endpoint.logs_streams());
}

/// Hands every relay `from` has to `to` (the bus), and tells `from` each message was
/// received; returns how many there were.
fn relay(from: &mut HttpRig, to: &mut HttpRig, now: Instant) -> usize {
    let mut count = 0;
    while let Some(relay) = from.endpoint.poll_listen_relay() {
        assert!(to.endpoint.handle_listen_relay(now, &relay.payload()));
        from.endpoint.handle_listen_relay_received(&relay);
        count += 1;
    }
    count
}

/// A GET stream resumed on B keeps getting what arises on A: B tells A, A ends its GET
/// stream and relays to B what it wrote there after the last event B read (an event still
/// written on A's cut connection) and what arises later; B writes each once, in order, with
/// its own ids. When B is gone, A holds its messages again for the next GET stream.
#[test]
fn a_get_stream_resumed_on_another_endpoint_gets_what_arises_on_the_first_once() {
    let now = Instant::now();
    let (mut a, mut b, sid, snapshot, listen) = listening_on_a(now);
    let mut logs = Logs::new();
    grow_on(&mut a, &sid, 1);
    let read = a.read_stream(&listen.body);
    let seen = read.events.last().expect("a change").0.clone();
    store(&mut a, &mut logs);
    assert_eq!(a.endpoint.poll_listen_relay(), None, "nothing moved yet");

    // The client's connection to A is cut, unnoticed there; it resumes on B.
    assert_eq!(b.endpoint.handle_restore(now, &sid, &snapshot), Ok(true));
    let mut resume = b
        .endpoint
        .resume_elsewhere(now, &get_head(&sid, &seen))
        .expect("A's GET stream");
    serve(&mut resume, &logs);
    let resumed = b.endpoint.resume_listen(now, resume, false);
    assert_eq!(resumed.status, 200, "{}", resumed.body_text());
    // A writes one more change on its stream before it hears of the move, then one after.
    grow_on(&mut a, &sid, 2);
    store(&mut a, &mut logs);
    assert_eq!(relay(&mut b, &mut a, now), 1, "B tells A");
    assert!(a.read_stream(&listen.body).ended, "A's GET stream ended");
    grow_on(&mut a, &sid, 3);
    assert_eq!(relay(&mut a, &mut b, now), 2, "both changes go to B");
    let on_b = b.read_stream(&resumed.body);
    let changes: Vec<&(String, String)> =
        on_b.events.iter().filter(|(_, d)| !d.is_empty()).collect();
    assert_eq!(changes.len(), 2, "each once: {on_b:?}");
    assert!(changes
        .iter()
        .all(|(id, d)| { d.contains("tools/list_changed") && origin(id) != origin(&seen) }));
    assert!(changes[0].0 < changes[1].0 || changes[0].0.len() < changes[1].0.len());

    // B is gone: the relay comes back, and A holds it (and what follows) for a GET there.
    grow_on(&mut a, &sid, 4);
    let lost = a.endpoint.poll_listen_relay().expect("a relay");
    assert!(lost.is_message());
    a.endpoint.handle_listen_relay_lost(lost);
    grow_on(&mut a, &sid, 5);
    assert_eq!(a.endpoint.poll_listen_relay(), None);
    let again = a.get(&sid, None);
    let held = a.read_stream(&again.body);
    let held: Vec<_> = held.events.iter().filter(|(_, d)| !d.is_empty()).collect();
    assert_eq!(held.len(), 2, "{held:?}");
}

/// A GET without `Last-Event-ID` on B, for a session whose messages wait on A (its GET
/// stream there was cut before they arose), takes them over as a resume does: B tells every
/// instance, and A relays what it held, then what arises, to B's stream.
#[test]
fn a_plain_get_on_another_endpoint_takes_over_the_messages_held_on_the_first() {
    let now = Instant::now();
    let (mut a, mut b, sid, snapshot, listen) = listening_on_a(now);
    let Body::Stream(conn) = listen.body else {
        panic!("a stream")
    };
    a.endpoint.stream_closed(conn);
    grow_on(&mut a, &sid, 1);
    grow_on(&mut a, &sid, 2);
    assert_eq!(a.endpoint.poll_listen_relay(), None, "held on A");

    assert_eq!(b.endpoint.handle_restore(now, &sid, &snapshot), Ok(true));
    let on_b = b.get(&sid, None);
    assert_eq!(on_b.status, 200, "{}", on_b.body_text());
    let opened = b
        .endpoint
        .poll_listen_relay()
        .expect("B tells every instance");
    assert!(opened.to_every_instance());
    assert_eq!(b.endpoint.poll_listen_relay(), None);
    assert!(a.endpoint.handle_listen_relay(now, &opened.payload()));
    // B hears its own notice too, and ignores it.
    assert!(b.endpoint.handle_listen_relay(now, &opened.payload()));
    assert_eq!(b.endpoint.poll_listen_relay(), None);
    assert_eq!(relay(&mut a, &mut b, now), 2, "A's held changes go to B");
    grow_on(&mut a, &sid, 3);
    assert_eq!(relay(&mut a, &mut b, now), 1, "and what arises later");
    let read = b.read_stream(&on_b.body);
    let changes: Vec<&(String, String)> =
        read.events.iter().filter(|(_, d)| !d.is_empty()).collect();
    assert_eq!(changes.len(), 3, "each once: {read:?}");
    assert!(changes
        .iter()
        .all(|(_, d)| d.contains("tools/list_changed")));
    assert!(!read.ended);
}

/// A message for the GET stream, numbered.
fn numbered(n: u64) -> Bytes {
    Bytes::from(
        json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": n}})
        .to_string(),
    )
}

/// A message for session `sid`'s GET stream reaching `a` from a third instance.
fn feed(a: &mut HttpRig, sid: &str, n: u64, now: Instant) {
    let message = ListenRelay::message("a", sid, numbered(n), 0);
    assert!(a.endpoint.handle_listen_relay(now, &message.payload()));
}

/// A's GET stream is cut, the client opens one on B, and three messages that reach A go
/// out to B: A (relaying), B, the session id and the three relays A handed out.
fn relaying_from_a(now: Instant) -> (HttpRig, HttpRig, String, [ListenRelay; 3]) {
    let (mut a, mut b, sid, snapshot, listen) = listening_on_a(now);
    let Body::Stream(conn) = listen.body else {
        panic!("a stream")
    };
    a.endpoint.stream_closed(conn);
    assert_eq!(b.endpoint.handle_restore(now, &sid, &snapshot), Ok(true));
    assert_eq!(b.get(&sid, None).status, 200);
    assert_eq!(relay(&mut b, &mut a, now), 1, "B tells A");
    for n in 1..=3 {
        feed(&mut a, &sid, n, now);
    }
    let sent: Vec<ListenRelay> = std::iter::from_fn(|| a.endpoint.poll_listen_relay()).collect();
    let sent = <[ListenRelay; 3]>::try_from(sent).expect("three relays out to B");
    (a, b, sid, sent)
}

/// The data of the messages on GET stream `body` of `rig` now, in the order written.
fn numbers_on(rig: &mut HttpRig, body: &Body) -> Vec<Value> {
    let read = rig.read_stream(body);
    read.events
        .iter()
        .filter(|(_, d)| !d.is_empty())
        .map(|(_, d)| serde_json::from_str::<Value>(d).expect("json")["params"]["data"].clone())
        .collect()
}

/// Relays that come back from a dead instance, in any order and with messages arising
/// between them, are held on A in the order the messages first had.
#[test]
fn relays_that_come_back_are_held_in_their_first_order() {
    let now = Instant::now();
    let (mut a, _b, sid, [first, second, third]) = relaying_from_a(now);
    feed(&mut a, &sid, 4, now); // still waiting to be relayed
                                // B is gone: the relays come back, the last first, with a message arising meanwhile.
    a.endpoint.handle_listen_relay_lost(third);
    feed(&mut a, &sid, 5, now);
    a.endpoint.handle_listen_relay_lost(first);
    a.endpoint.handle_listen_relay_lost(second);
    assert_eq!(a.endpoint.stats().listen_relays_lost, 3);
    assert_eq!(a.endpoint.poll_listen_relay(), None, "A relays no more");

    let again = a.get(&sid, None);
    let order = numbers_on(&mut a, &again.body);
    assert_eq!(order, [1, 2, 3, 4, 5].map(Value::from).to_vec());
}

/// The client's GET stream comes back to A while messages A relayed to B are still out:
/// what arises on A meanwhile waits behind them, so the stream writes the session's
/// messages in their order. A message B received is not written on A; one that comes back
/// (B is gone) is written in its place, before the newer ones, never dropped.
#[test]
fn a_get_stream_back_on_the_first_endpoint_writes_relays_that_come_back_in_order() {
    let now = Instant::now();
    let (mut a, _b, sid, [first, second, third]) = relaying_from_a(now);

    // The client comes back to A; a message arises there while the three are still out.
    let back = a.get(&sid, None);
    assert_eq!(back.status, 200);
    feed(&mut a, &sid, 4, now);
    assert_eq!(
        numbers_on(&mut a, &back.body),
        Vec::<Value>::new(),
        "4 waits"
    );
    a.endpoint.handle_listen_relay_received(&first);
    a.endpoint.handle_listen_relay_lost(third);
    assert_eq!(
        numbers_on(&mut a, &back.body),
        Vec::<Value>::new(),
        "2 is out"
    );
    a.endpoint.handle_listen_relay_lost(second);
    assert_eq!(
        numbers_on(&mut a, &back.body),
        [2, 3, 4].map(Value::from).to_vec(),
        "1 went to B; 2 and 3 came back, in their places before 4"
    );
    feed(&mut a, &sid, 5, now);
    assert_eq!(numbers_on(&mut a, &back.body), [Value::from(5)].to_vec());
}
