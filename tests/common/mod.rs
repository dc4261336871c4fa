//! Shared helpers of the session tests: setups, raw-frame driving, and the schema check.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use bytes::Bytes;
use mcp_sansio::model::{ClientCapabilities, Implementation, ProtocolVersion, ServerCapabilities};
use mcp_sansio::session::{ClientSetup, ServerSetup, Session, Transmit};
use mcp_sansio::testing::{Direction, SessionPair};
use mcp_sansio::Config;
use serde_json::Value;

pub fn client_caps(json: &str) -> ClientCapabilities {
    serde_json::from_str(json).unwrap()
}

pub fn server_caps(json: &str) -> ServerCapabilities {
    serde_json::from_str(json).unwrap()
}

pub const ALL_CLIENT_CAPS: &str =
    r#"{"roots":{"listChanged":true},"sampling":{},"elicitation":{}}"#;
pub const ALL_SERVER_CAPS: &str = r#"{"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"prompts":{"listChanged":true},"completions":{},"logging":{}}"#;

pub fn client_setup(version: ProtocolVersion, caps: &str) -> ClientSetup {
    ClientSetup {
        info: Implementation::new("test-client", "1.0"),
        capabilities: client_caps(caps),
        protocol_version: version,
    }
}

pub fn server_setup(caps: &str) -> ServerSetup {
    ServerSetup {
        info: Implementation::new("test-server", "1.0"),
        capabilities: server_caps(caps),
        instructions: Some("be nice".into()),
    }
}

/// A pair with full capabilities both ways, recording, at `version`.
pub fn pair_with(version: ProtocolVersion, client: Config, server: Config) -> SessionPair {
    let mut pair = SessionPair::new(
        client,
        client_setup(version, ALL_CLIENT_CAPS),
        server,
        server_setup(ALL_SERVER_CAPS),
        Instant::now(),
    );
    pair.set_recording(true);
    pair
}

pub fn connected(version: ProtocolVersion) -> SessionPair {
    let mut pair = pair_with(version, Config::default(), Config::default());
    assert_eq!(pair.connect(), Some(version));
    pair
}

/// Feeds one raw JSON frame into a session and returns everything it wrote, parsed.
pub fn feed(session: &mut Session, now: Instant, frame: &str) -> Vec<Value> {
    session.handle_input(now, Bytes::copy_from_slice(frame.as_bytes()));
    drain(session)
}

/// Feeds one raw frame of any bytes into a session and returns everything it wrote, parsed.
pub fn feed_bytes(session: &mut Session, now: Instant, frame: &[u8]) -> Vec<Value> {
    session.handle_input(now, Bytes::copy_from_slice(frame));
    drain(session)
}

/// Everything the session has queued, parsed (and checked to be one compact line each).
pub fn drain(session: &mut Session) -> Vec<Value> {
    drain_transmits(session)
        .into_iter()
        .map(|(v, _)| v)
        .collect()
}

pub fn drain_transmits(session: &mut Session) -> Vec<(Value, Transmit)> {
    let mut out = Vec::new();
    loop {
        let mut buf = Vec::new();
        let Some(t) = session.poll_transmit(&mut buf) else {
            return out;
        };
        assert_eq!(t.len, buf.len());
        assert!(
            !buf.contains(&b'\n') && !buf.contains(&b'\r'),
            "raw newline in {buf:?}"
        );
        if let Some(version) = session.protocol_version() {
            assert_valid(version, &buf);
        }
        out.push((serde_json::from_slice(&buf).unwrap(), t));
    }
}

/// A server session that got `initialize` (and optionally `initialized`).
pub fn server_after_initialize(version: &str, caps: &str, initialized: bool) -> (Session, Instant) {
    let now = Instant::now();
    let mut s = Session::server(Config::default(), server_setup(ALL_SERVER_CAPS), now);
    let init = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{caps},"clientInfo":{{"name":"raw","version":"1"}}}}}}"#
    );
    let out = feed(&mut s, now, &init);
    assert_eq!(out.len(), 1, "{out:?}");
    if initialized {
        feed(
            &mut s,
            now,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        );
    }
    while s.poll_event().is_some() {}
    (s, now)
}

pub fn schema_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("MCP_SCHEMA_DIR") {
        return PathBuf::from(dir);
    }
    // The official schemas are copied into the repository (tests/schema/README.md).
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/schema")
}

fn validators() -> &'static Mutex<HashMap<ProtocolVersion, &'static jsonschema::Validator>> {
    static V: OnceLock<Mutex<HashMap<ProtocolVersion, &'static jsonschema::Validator>>> =
        OnceLock::new();
    V.get_or_init(Default::default)
}

fn validator(version: ProtocolVersion) -> &'static jsonschema::Validator {
    let mut map = validators().lock().unwrap_or_else(|e| e.into_inner());
    map.entry(version).or_insert_with(|| {
        let path = schema_dir().join(version.schema_dir()).join("schema.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("schema {} missing: {e}", path.display()));
        let mut schema: Value = serde_json::from_str(&text).unwrap();
        let defs = if schema.get("$defs").is_some() {
            "$defs"
        } else {
            "definitions"
        };
        schema["$ref"] = Value::String(format!("#/{defs}/JSONRPCMessage"));
        Box::leak(Box::new(
            jsonschema::validator_for(&schema).expect("schema compiles"),
        ))
    })
}

/// Asserts that `frame` is a valid `JSONRPCMessage` of `version`.
pub fn assert_valid(version: ProtocolVersion, frame: &[u8]) {
    let mut value: Value = serde_json::from_slice(frame).unwrap();
    // The schemas before 2025-11-25 require a string or integer id even on an error response,
    // so JSON-RPC 2.0's `"id": null` (for a request whose id could not be read) cannot be
    // expressed in them; check the rest of such a message with a stand-in id.
    if version < ProtocolVersion::V2025_11_25
        && value.get("error").is_some()
        && value["id"].is_null()
    {
        value["id"] = Value::from(0);
    }
    let v = validator(version);
    if let Err(e) = v.validate(&value) {
        panic!(
            "{version}: {} is not a valid JSONRPCMessage: {e}",
            String::from_utf8_lossy(frame)
        );
    }
}

/// Validates every message a pair's sessions wrote against the negotiated version.
pub fn assert_transcript_valid(pair: &SessionPair) {
    let version = pair
        .client
        .protocol_version()
        .or(pair.server.protocol_version())
        .expect("a negotiated version");
    for (_, frame) in pair.transcript() {
        assert_valid(version, frame);
    }
}

pub fn frames(pair: &SessionPair, direction: Direction) -> Vec<Value> {
    pair.transcript()
        .iter()
        .filter(|(d, _)| *d == direction)
        .map(|(_, f)| serde_json::from_slice(f).unwrap())
        .collect()
}
