//! Fixtures shared by the side-by-side benches: the sample messages, our engine's client and
//! server sessions wired in memory (with ndjson framing, as on a pipe), and an rmcp echo server
//! and client over `tokio::io::duplex`. The unit tests check that both sides really do the
//! work the benches time (the echo comes back, every request completes).

use std::borrow::Cow;
use std::time::Instant;

use bytes::Bytes;
use mcp_sansio::framing::NdjsonDecoder;
use mcp_sansio::jsonrpc::{RawJson, RequestId};
use mcp_sansio::model::{
    ClientCapabilities, Implementation, ListChangedCapability, ProtocolVersion, ServerCapabilities,
};
use mcp_sansio::session::{ClientSetup, Event, Outcome, RequestOptions, ServerSetup, Session};
use mcp_sansio::Config;
use serde::{Deserialize, Serialize};

/// The text the echo tool call carries (about 100 bytes of arguments).
pub const ECHO_TEXT: &str = "the quick brown fox jumps over the lazy dog, \"twice\", then naps";

/// A JSON-RPC ping request.
pub fn ping() -> Vec<u8> {
    br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec()
}

/// A `tools/call` request of about 1 KiB with escapes in its arguments.
pub fn tools_call_1k() -> Vec<u8> {
    let query = "how do I frame JSON-RPC over stdio \\\"safely\\\"? ".repeat(18);
    let text = format!(
        r#"{{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{{"name":"search","arguments":{{"query":"{query}","limit":10,"filters":{{"lang":["rust","go"],"recent":true}}}},"_meta":{{"progressToken":"p-42"}}}}}}"#
    );
    assert!((900..1300).contains(&text.len()), "{}", text.len());
    text.into_bytes()
}

/// A `resources/read` result of about 64 KiB of source text.
pub fn resources_read_64k() -> Vec<u8> {
    let line = "fn main() { println!(\\\"hello, world\\\"); }\\n\\tlet x = 1;\\n";
    let body = line.repeat(64 * 1024 / line.len());
    let text = format!(
        r#"{{"jsonrpc":"2.0","id":"req-7","result":{{"contents":[{{"uri":"file:///src/main.rs","mimeType":"text/x-rust","text":"{body}"}}]}}}}"#
    );
    text.into_bytes()
}

/// The `tools/call` params of the echo tool.
#[derive(Deserialize)]
struct EchoCall<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    arguments: Option<EchoArgs<'a>>,
}

#[derive(Deserialize)]
struct EchoArgs<'a> {
    #[serde(borrow)]
    text: Cow<'a, str>,
}

/// The echo tool's result: `{"content":[{"type":"text","text":…}],"isError":false}`.
#[derive(Serialize)]
struct EchoResult<'a> {
    content: [TextBlock<'a>; 1],
    #[serde(rename = "isError")]
    is_error: bool,
}

#[derive(Serialize)]
struct TextBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

impl<'a> EchoResult<'a> {
    fn new(text: &'a str) -> Self {
        EchoResult {
            content: [TextBlock { kind: "text", text }],
            is_error: false,
        }
    }
}

/// The echo tool's input: parses the params (unescaping the text), `None` unless it is a call
/// of `echo`.
fn echo_text(params: Option<&RawJson>) -> Option<Cow<'_, str>> {
    let call: EchoCall<'_> = params?.parse_borrowed().ok()?;
    if call.name != "echo" {
        return None;
    }
    Some(call.arguments.map(|a| a.text).unwrap_or_default())
}

/// The echo tool on our engine: reads the params, answers with the `text` argument.
pub fn echo_tool(params: Option<&RawJson>) -> Option<RawJson> {
    let text = echo_text(params)?;
    RawJson::from_serialize(&EchoResult::new(&text)).ok()
}

/// The echo call's params, built once.
pub fn echo_params() -> RawJson {
    let params = serde_json::json!({"name": "echo", "arguments": {"text": ECHO_TEXT}});
    RawJson::try_from(&params).expect("an object")
}

/// Our client and server sessions connected in memory. Every message goes through what a
/// pipe transport does: `poll_transmit`, an ndjson line, the peer's line decoder, then
/// `handle_input`. The server answers `tools/call` with [`echo_tool`]; the session itself
/// answers `ping`.
pub struct OursPair {
    /// The client session.
    pub client: Session,
    /// The server session.
    pub server: Session,
    now: Instant,
    wire: Vec<u8>,
    server_lines: NdjsonDecoder,
    client_lines: NdjsonDecoder,
}

impl OursPair {
    /// A connected pair (handshake done) whose server offers tools.
    pub fn connected() -> OursPair {
        let now = Instant::now();
        let client = ClientSetup {
            info: Implementation::new("bench-client", "0"),
            capabilities: ClientCapabilities::default(),
            protocol_version: ProtocolVersion::LATEST_STATEFUL,
        };
        let server = ServerSetup {
            info: Implementation::new("bench-server", "0"),
            capabilities: ServerCapabilities {
                tools: Some(ListChangedCapability::default()),
                ..ServerCapabilities::default()
            },
            instructions: None,
        };
        let mut pair = OursPair {
            client: Session::client(Config::default(), client, now),
            server: Session::server(Config::default(), server, now),
            now,
            wire: Vec::with_capacity(64 * 1024),
            server_lines: NdjsonDecoder::default(),
            client_lines: NdjsonDecoder::default(),
        };
        pair.client.initialize(now).expect("initialize");
        let mut initialized = false;
        for _ in 0..8 {
            pair.pump(|_| {});
            while let Some(event) = pair.client.poll_event() {
                initialized |= matches!(event, Event::Initialized { .. });
            }
        }
        assert!(initialized, "the handshake did not finish");
        pair
    }

    /// Sends `n` requests of `method`, then moves messages until all of them completed.
    /// Returns how many completed with a result; `check` sees every result.
    pub fn round_trips(
        &mut self,
        n: usize,
        method: &str,
        params: Option<&RawJson>,
        mut check: impl FnMut(&RawJson),
    ) -> usize {
        let now = self.now;
        for _ in 0..n {
            let options = RequestOptions::default();
            let sent = self
                .client
                .send_request(now, method, params.cloned(), options);
            sent.expect("request admitted");
        }
        let mut done = 0;
        let mut results = 0;
        while done < n {
            self.pump(answer_echo);
            let mut progressed = false;
            while let Some(event) = self.client.poll_event() {
                if let Event::Completed { outcome, .. } = event {
                    done += 1;
                    progressed = true;
                    if let Outcome::Result(result) = outcome {
                        check(&result);
                        results += 1;
                    }
                }
            }
            assert!(progressed || done == n, "round trips stalled at {done}/{n}");
        }
        results
    }

    /// One exchange: client output to the server, server events to `serve`, server output to
    /// the client.
    fn pump(&mut self, serve: impl FnOnce(&mut Session)) {
        let now = self.now;
        transfer(
            &mut self.client,
            &mut self.server,
            &mut self.server_lines,
            &mut self.wire,
            now,
        );
        serve(&mut self.server);
        transfer(
            &mut self.server,
            &mut self.client,
            &mut self.client_lines,
            &mut self.wire,
            now,
        );
    }
}

/// Moves everything `from` wrote to `to` as ndjson lines, the way the stdio adapter writes
/// them: each transmit appended to the outgoing batch, then a newline (`poll_transmit` never
/// writes a raw newline, so no re-encoding is needed).
fn transfer(
    from: &mut Session,
    to: &mut Session,
    lines: &mut NdjsonDecoder,
    wire: &mut Vec<u8>,
    now: Instant,
) {
    wire.clear();
    while from.poll_transmit(wire).is_some() {
        wire.push(b'\n');
    }
    lines.push(wire);
    while let Some(frame) = lines.poll_frame() {
        to.handle_input(now, frame.expect("frames fit"));
    }
}

/// The server application: answers every `tools/call` with the echo tool.
fn answer_echo(server: &mut Session) {
    while let Some(event) = server.poll_event() {
        if let Event::Request { id, params, .. } = event {
            respond_echo(server, &id, params.as_ref());
        }
    }
}

/// Answers one call: the result is serialised straight into the session's outbound queue
/// (`respond_serialize`), the same bytes `respond(id, echo_tool(params))` would send.
fn respond_echo(server: &mut Session, id: &RequestId, params: Option<&RawJson>) {
    match echo_text(params) {
        Some(text) => server
            .respond_serialize(id, &EchoResult::new(&text))
            .expect("respond"),
        None => {
            let error = mcp_sansio::jsonrpc::ErrorObject::new(-32602, "unknown tool");
            server.respond_error(id, error).expect("respond");
        }
    }
}

/// Whether an echo result carries [`ECHO_TEXT`].
pub fn is_echo(result: &RawJson) -> bool {
    let value = result.to_value().unwrap_or_default();
    value["content"][0]["text"] == ECHO_TEXT
}

/// Whether an echo result carries [`ECHO_TEXT`], read the way the benches' client does on
/// every result: a borrowed serde parse of `content[].text` (unescaped), as rmcp's client does
/// when it deserialises `CallToolResult` (ours leaves results raw until the application asks).
pub fn is_echo_borrowed(result: &RawJson) -> bool {
    #[derive(Deserialize)]
    struct EchoedResult<'a> {
        #[serde(borrow)]
        content: Vec<EchoedBlock<'a>>,
    }
    #[derive(Deserialize)]
    struct EchoedBlock<'a> {
        #[serde(borrow)]
        text: Cow<'a, str>,
    }
    result
        .parse_borrowed::<EchoedResult<'_>>()
        .is_ok_and(|r| r.content.first().is_some_and(|b| b.text == ECHO_TEXT))
}

/// Input bytes to `Bytes`, for our decoder.
pub fn frame(text: &[u8]) -> Bytes {
    Bytes::copy_from_slice(text)
}

pub mod cpu_time;
#[cfg(feature = "http")]
pub mod http_side;
pub mod rmcp_side;

#[cfg(test)]
mod tests;
