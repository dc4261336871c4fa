//! The operation decoder shared by the state-machine fuzz bodies: a byte cursor that turns the
//! fuzzer's bytes into choices and arbitrary Unicode text (no `arbitrary` crate), vocabularies
//! of methods, ids, params and results, a structure-aware params and JSON-RPC frame builder,
//! and the output checks every body runs.
//!
//! Every choice reads one byte and an exhausted cursor reads zeros, so any input decodes to a
//! finite, deterministic operation sequence and small mutations change few operations. Every
//! string field a builder writes goes through [`Cursor::field`]: a vocabulary word (so valid
//! paths are reached), arbitrary text of any script and size, or a word with text appended.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use bytes::Bytes;
use serde_json::{json, Map, Value};

use crate::jsonrpc::{self, Incoming, Message, RequestId};
use crate::session::{Event, Session};

/// Reads choices from the fuzz input, one byte each.
pub(crate) struct Cursor<'a> {
    data: &'a [u8],
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Cursor { data }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The next byte, or 0 once the input is used up.
    pub(crate) fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// A number below `n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n.max(1)
    }

    pub(crate) fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// Arbitrary Unicode text of up to `max` characters: ASCII (controls, quotes and
    /// backslashes included), two-byte characters, and any scalar value up to U+10FFFF.
    pub(crate) fn text(&mut self, max: usize) -> String {
        let n = self.below(max + 1);
        let mut s = String::new();
        for _ in 0..n {
            if self.is_empty() {
                break;
            }
            let b = self.byte();
            let ch = match b >> 6 {
                0 | 1 => Some(char::from(b)),
                2 => char::from_u32(
                    0x80 + (u32::from(b & 0x3f) << 5 | u32::from(self.byte() & 0x1f)),
                ),
                _ => {
                    let v = u32::from(b & 0x3f) << 16
                        | u32::from(self.byte()) << 8
                        | u32::from(self.byte());
                    char::from_u32(v % 0x11_0000)
                }
            };
            s.push(ch.unwrap_or(char::REPLACEMENT_CHARACTER));
        }
        s
    }

    /// A string field: a word of `vocab` half the time, otherwise arbitrary text, a word with
    /// text spliced in at any character boundary (a valid shape with a bad character inside:
    /// a multi-byte character where a parser counts bytes), a word with text appended (a valid
    /// prefix with a bad tail), or text repeated to a large size.
    /// An empty `vocab` (no session id issued yet) stands for the empty string.
    pub(crate) fn field(&mut self, vocab: &[&str]) -> String {
        match self.below(8) {
            0..=3 => self.word(vocab).to_owned(),
            4 => self.text(32),
            5 => {
                let mut s = self.word(vocab).to_owned();
                let at = s
                    .char_indices()
                    .map(|(i, _)| i)
                    .nth(self.below(s.chars().count() + 1))
                    .unwrap_or(s.len());
                s.insert_str(at, &self.text(2));
                s
            }
            6 => {
                let mut s = self.word(vocab).to_owned();
                s.push_str(&self.text(8));
                s
            }
            _ => {
                let unit = self.text(8);
                unit.repeat(1 + usize::from(self.byte()) * 4)
            }
        }
    }

    /// A word of `vocab`, or `""` when it is empty.
    fn word<'v>(&mut self, vocab: &[&'v str]) -> &'v str {
        vocab
            .get(self.below(vocab.len()))
            .copied()
            .unwrap_or_default()
    }

    /// Up to `max` raw bytes.
    pub(crate) fn bytes(&mut self, max: usize) -> &'a [u8] {
        let n = self.below(max + 1).min(self.data.len());
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        head
    }
}

/// Methods both directions use, known and unknown.
pub(crate) const METHODS: &[&str] = &[
    "initialize",
    "notifications/initialized",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/message",
    "roots/list",
    "sampling/createMessage",
    "elicitation/create",
    "notifications/roots/list_changed",
    "notifications/tools/list_changed",
    "x/unknown",
];

/// Ids as JSON text: the client's integers, the server's strings, look-alikes and invalid ones.
pub(crate) const IDS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "\"0\"",
    "\"1\"",
    "\"s-0\"",
    "\"s-1\"",
    "\"s-2\"",
    "null",
    "1.5",
    "-1",
    "18446744073709551615",
    "\"a\"",
    "{}",
];

const INIT_PARAMS: &str = r#"{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"sampling":{},"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}"#;

/// Params; `$ID` is replaced by an id from [`IDS`].
pub(crate) const PARAMS: &[&str] = &[
    "{}",
    "null",
    "[]",
    "5",
    INIT_PARAMS,
    r#"{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}"#,
    r#"{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"c","version":"1"}}"#,
    r#"{"name":"echo","arguments":{"x":1}}"#,
    r#"{"name":"echo"}"#,
    r#"{"name":"nope","arguments":{}}"#,
    r#"{"uri":"test://static"}"#,
    r#"{"uri":"test://template/7/data"}"#,
    r#"{"uri":"test://missing"}"#,
    r#"{"name":"greet","arguments":{"name":"a"}}"#,
    r#"{"name":"greet"}"#,
    r#"{"requestId":$ID,"reason":"r"}"#,
    r#"{"progressToken":$ID,"progress":1,"total":2}"#,
    r#"{"_meta":{"progressToken":$ID}}"#,
    r#"{"level":"debug"}"#,
    r#"{"level":"error","data":"x"}"#,
    r#"{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"name","value":"a"}}"#,
    r#"{"cursor":"bm9wZQ"}"#,
];

/// Results, including initialize results of several versions.
pub(crate) const RESULTS: &[&str] = &[
    "{}",
    r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{},"prompts":{},"logging":{}},"serverInfo":{"name":"s","version":"1"}}"#,
    r#"{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"s","version":"1"}}"#,
    r#"{"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"s","version":"1"}}"#,
    r#"{"protocolVersion":"2025-11-25"}"#,
    r#"{"content":[],"isError":false}"#,
    r#"{"roots":[]}"#,
    "[]",
    "null",
    "7",
];

/// Durations a time jump may take.
pub(crate) const JUMPS: &[Duration] = &[
    Duration::ZERO,
    Duration::from_millis(1),
    Duration::from_millis(100),
    Duration::from_secs(1),
    Duration::from_secs(5),
    Duration::from_secs(30),
    Duration::from_secs(61),
    Duration::from_secs(700),
];

/// Pagination cursors: this server's (the key "echo"), the bare prefix, another server's.
const CURSORS: &[&str] = &["c1.6563686f", "c1.", "c1.65", "bm9wZQ", ""];
/// Tool, prompt and argument names, registered or not.
const NAMES: &[&str] = &["echo", "greet", "name", "nope", ""];
/// Resource URIs: the registry's, a template match, near misses.
const URIS: &[&str] = &[
    "test://static",
    "test://template/7/data",
    "test://template//data",
    "test://missing",
    "test:",
];
/// Log levels, valid and not.
const LEVELS: &[&str] = &["debug", "info", "error", "emergency", "loud"];
/// Protocol versions, known and unknown.
const VERSIONS: &[&str] = &[
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2026-07-28",
    "1999-01-01",
];
/// `_meta` keys the engine reads, and others.
const META_KEYS: &[&str] = &[
    "progressToken",
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/clientInfo",
    "io.modelcontextprotocol/logLevel",
    "io.modelcontextprotocol/related-task",
    "x",
];
/// Completion reference types.
const REF_TYPES: &[&str] = &["ref/prompt", "ref/resource"];
/// Free text (reasons, messages, argument values).
const WORDS: &[&str] = &["a", "r", "1"];

/// Params for `method`: a fixed text of [`PARAMS`] (odd shapes), or an object built field by
/// field, usually of the shape `method` reads.
pub(crate) fn params(c: &mut Cursor<'_>, method: &str) -> String {
    match c.below(4) {
        0 => c.pick(PARAMS).replace("$ID", c.pick(IDS)),
        _ => built_params(c, method).to_string(),
    }
}

/// The params shape (see [`built_params`]) that `method` reads; `None` for the others.
fn shape_of(method: &str) -> Option<usize> {
    Some(match method {
        "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list" => 0,
        "resources/read" | "resources/subscribe" => 1,
        "tools/call" | "prompts/get" => 2,
        "notifications/cancelled" => 4,
        "notifications/progress" => 5,
        "logging/setLevel" => 6,
        "completion/complete" => 7,
        "initialize" => 8,
        _ => return None,
    })
}

/// A params object, every string from [`Cursor::field`], sometimes with a `_meta` and a
/// `requestState`: three times in four of the shape `method` reads, otherwise of any shape.
fn built_params(c: &mut Cursor<'_>, method: &str) -> Value {
    let shape = match shape_of(method) {
        Some(shape) if c.below(4) != 0 => shape,
        _ => c.below(10),
    };
    let mut p = match shape {
        0 => json!({ "cursor": c.field(CURSORS) }),
        1 => json!({ "uri": c.field(URIS) }),
        2 => json!({ "name": c.field(NAMES), "arguments": arguments(c) }),
        3 => json!({ "name": c.field(NAMES) }),
        4 => json!({ "requestId": token(c), "reason": c.field(WORDS) }),
        5 => json!({
            "progressToken": token(c),
            "progress": c.byte(),
            "total": 2,
            "message": c.field(WORDS),
        }),
        6 => json!({ "level": c.field(LEVELS) }),
        7 => json!({
            "ref": { "type": c.field(REF_TYPES), "name": c.field(NAMES), "uri": c.field(URIS) },
            "argument": { "name": c.field(NAMES), "value": c.field(WORDS) },
        }),
        8 => json!({
            "protocolVersion": c.field(VERSIONS),
            "capabilities": {},
            "clientInfo": { "name": c.field(NAMES), "version": c.field(WORDS) },
        }),
        _ => json!({ "uri": c.field(URIS), "cursor": c.field(CURSORS) }),
    };
    if c.below(3) == 0 {
        p["_meta"] = meta(c);
    }
    if c.below(8) == 0 {
        p["requestState"] = json!(c.field(WORDS));
    }
    p
}

/// Tool or prompt arguments: up to three members with arbitrary names and string values.
fn arguments(c: &mut Cursor<'_>) -> Value {
    let mut args = Map::new();
    for _ in 0..c.below(4) {
        let key = c.field(NAMES);
        args.insert(key, json!(c.field(WORDS)));
    }
    Value::Object(args)
}

/// A `_meta` object: up to three members with keys and values from the vocabularies or not.
fn meta(c: &mut Cursor<'_>) -> Value {
    let mut meta = Map::new();
    for _ in 0..=c.below(3) {
        let key = c.field(META_KEYS);
        let value = match c.below(4) {
            0 => token(c),
            1 => json!(c.field(VERSIONS)),
            2 => json!(c.field(LEVELS)),
            _ => json!({ "name": c.field(NAMES), "version": c.field(WORDS) }),
        };
        meta.insert(key, value);
    }
    Value::Object(meta)
}

/// A request id or progress token: one of [`IDS`] or an arbitrary string.
fn token(c: &mut Cursor<'_>) -> Value {
    match c.below(3) {
        0 => json!(c.field(WORDS)),
        _ => serde_json::from_str(c.pick(IDS)).unwrap_or(Value::Null),
    }
}

/// A method name: a vocabulary one, or (one time in eight) a string field.
fn method(c: &mut Cursor<'_>) -> String {
    match c.below(8) {
        0 => c.field(METHODS),
        _ => c.pick(METHODS).to_owned(),
    }
}

/// One JSON-RPC message text from the vocabularies (not a batch, not garbage).
fn message(c: &mut Cursor<'_>) -> String {
    let id = match c.below(8) {
        0 => json!(c.field(WORDS)).to_string(),
        _ => c.pick(IDS).to_owned(),
    };
    let name = method(c);
    let method = json!(name);
    match c.below(6) {
        0 | 1 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":{method},"params":{}}}"#,
            params(c, &name)
        ),
        2 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":{method}}}"#),
        3 => format!(
            r#"{{"jsonrpc":"2.0","method":{method},"params":{}}}"#,
            params(c, &name)
        ),
        4 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{}}}"#,
            c.pick(RESULTS)
        ),
        _ => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32000,"message":{}}}}}"#,
            json!(c.field(WORDS))
        ),
    }
}

/// A frame: a vocabulary message, a batch of them, raw garbage, or a message with one byte
/// changed or cut short.
pub(crate) fn frame(c: &mut Cursor<'_>) -> Bytes {
    match c.below(8) {
        0 => Bytes::copy_from_slice(c.bytes(48)),
        1 => {
            let items: Vec<String> = (0..=c.below(3)).map(|_| message(c)).collect();
            Bytes::from(format!("[{}]", items.join(",")))
        }
        2 => {
            let mut text = message(c).into_bytes();
            let at = c.below(text.len());
            text[at] = c.byte();
            Bytes::from(text)
        }
        3 => {
            let mut text = message(c).into_bytes();
            text.truncate(c.below(text.len()));
            Bytes::from(text)
        }
        _ => Bytes::from(message(c)),
    }
}

/// The initialize request and initialized notification a client would send.
pub(crate) fn client_handshake() -> [Bytes; 2] {
    [
        Bytes::from(format!(
            r#"{{"jsonrpc":"2.0","id":"init","method":"initialize","params":{INIT_PARAMS}}}"#
        )),
        Bytes::from_static(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
    ]
}

/// An id as its JSON text (string and number spellings differ).
pub(crate) fn id_json(id: &RequestId) -> String {
    let mut buf = Vec::new();
    id.write_json(&mut buf);
    String::from_utf8(buf).unwrap_or_default()
}

/// Asserts that one transmitted message is a single valid JSON-RPC message on one line.
pub(crate) fn check_transmit(bytes: &[u8]) -> Message {
    assert!(
        !bytes.iter().any(|&b| b == b'\n' || b == b'\r'),
        "raw newline in a transmit: {:?}",
        String::from_utf8_lossy(bytes)
    );
    match jsonrpc::decode(&Bytes::copy_from_slice(bytes)) {
        Ok(Incoming::Single(message)) => message,
        other => panic!(
            "transmit is not one JSON-RPC message ({other:?}): {:?}",
            String::from_utf8_lossy(bytes)
        ),
    }
}

/// Tracks one session's outbound requests and the peer's in-flight requests across a run.
#[derive(Default)]
pub(crate) struct Ledger {
    /// Our requests not yet completed.
    pub(crate) outstanding: HashSet<RequestId>,
    /// Our requests that completed.
    pub(crate) completed: HashSet<RequestId>,
    /// Our requests by method (to judge their results).
    pub(crate) methods: HashMap<RequestId, &'static str>,
    /// The peer's requests the application was handed and has not answered yet.
    pub(crate) inbound: Vec<RequestId>,
}

impl Ledger {
    /// Records a request we sent.
    pub(crate) fn sent(&mut self, id: RequestId, method: &'static str) {
        assert!(
            !self.completed.contains(&id) && self.outstanding.insert(id.clone()),
            "id {id:?} allocated twice"
        );
        self.methods.insert(id, method);
    }

    /// Records one event; asserts each of our requests completes once and closing leaves none.
    pub(crate) fn event(&mut self, event: &Event) {
        match event {
            Event::Completed { id, .. } => {
                assert!(
                    self.outstanding.remove(id),
                    "completion of {id:?}, which is not outstanding (twice, or never sent)"
                );
                self.completed.insert(id.clone());
            }
            Event::Request { id, .. } => self.inbound.push(id.clone()),
            Event::Closed { .. } => assert!(
                self.outstanding.is_empty(),
                "closed with requests never completed: {:?}",
                self.outstanding
            ),
            _ => {}
        }
    }

    /// Takes the `i`-th unanswered inbound id (or any vocabulary id when there is none).
    pub(crate) fn take_inbound(&mut self, i: usize) -> Option<RequestId> {
        if self.inbound.is_empty() {
            return None;
        }
        let i = i % self.inbound.len();
        Some(self.inbound.swap_remove(i))
    }

    /// The `i`-th outstanding request, in a stable order.
    pub(crate) fn outstanding_at(&self, i: usize) -> Option<RequestId> {
        let mut ids: Vec<&RequestId> = self.outstanding.iter().collect();
        ids.sort();
        ids.get(i % ids.len().max(1)).map(|id| (*id).clone())
    }
}

/// Drains a session: every transmit is valid, every event goes through the ledger; then the
/// table bounds hold. `internal` is how many requests the session may start on its own
/// (initialize, keep-alive) beyond `max_pending_outbound`.
pub(crate) fn drain(session: &mut Session, ledger: &mut Ledger, internal: usize) {
    let mut buf = Vec::new();
    while session.poll_transmit(&mut buf).is_some() {
        check_transmit(&buf);
        buf.clear();
    }
    while let Some(event) = session.poll_event() {
        ledger.event(&event);
    }
    let config = session.config();
    assert!(session.inflight_inbound() <= config.max_inflight_inbound);
    assert!(session.pending_outbound() <= config.max_pending_outbound + internal);
}
