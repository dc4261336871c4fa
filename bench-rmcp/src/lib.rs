//! Fixtures shared by the side-by-side benches: the sample messages, our engine's client and
//! server sessions wired in memory (with ndjson framing, as on a pipe), and an rmcp echo server
//! and client over `tokio::io::duplex`. The unit tests check that both sides really do the
//! work the benches time (the echo comes back, every request completes).

use std::borrow::Cow;
use std::time::Instant;

use bytes::Bytes;
use mcp_sansio::framing::NdjsonDecoder;
use mcp_sansio::jsonrpc::{JsonWriter, RawJson, RequestId};
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

/// How the applications of [`OursPair`] read the messages (the server the call's params, the
/// client the result) and how the server writes its result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reader {
    /// In place, with [`RawJson::view`]: the server reads `name` and `arguments.text`, the
    /// client `content[0].text`; strings with escapes are unescaped. The server writes its
    /// result with the session's `JsonWriter` (`respond_with`). What the engine offers an
    /// application that reads a few fields and writes a small result.
    #[default]
    View,
    /// A borrowed serde parse into structs (`Cow` strings, unescaped), as an application that
    /// deserialises typed params and results does (rmcp's client and server always do); the
    /// server serialises its result struct with serde (`respond_serialize`).
    Serde,
}

/// The echo tool's input (the `text` argument, unescaped), `None` unless it is a call of
/// `echo` with well-formed arguments.
fn echo_text(params: Option<&RawJson>, reader: Reader) -> Option<Cow<'_, str>> {
    match reader {
        Reader::View => echo_text_view(params?),
        Reader::Serde => echo_text_serde(params?),
    }
}

fn echo_text_view(params: &RawJson) -> Option<Cow<'_, str>> {
    let params = params.view();
    if params.member("name")?.as_str()? != "echo" {
        return None;
    }
    match params.member("arguments").and_then(|a| a.member("text")) {
        Some(text) => text.as_str(),
        None => Some(Cow::Borrowed("")),
    }
}

fn echo_text_serde(params: &RawJson) -> Option<Cow<'_, str>> {
    let call: EchoCall<'_> = params.parse_borrowed().ok()?;
    if call.name != "echo" {
        return None;
    }
    Some(call.arguments.map(|a| a.text).unwrap_or_default())
}

/// The echo tool on our engine: reads the params, answers with the `text` argument.
pub fn echo_tool(params: Option<&RawJson>) -> Option<RawJson> {
    let text = echo_text(params, Reader::View)?;
    RawJson::from_serialize(&EchoResult::new(&text)).ok()
}

/// The echo call's params, built once.
pub fn echo_params() -> RawJson {
    let params = serde_json::json!({"name": "echo", "arguments": {"text": ECHO_TEXT}});
    RawJson::try_from(&params).expect("an object")
}

/// Our client and server sessions connected in memory. Every message goes through what a
/// pipe transport does: `poll_transmit`, an ndjson line, the peer's line decoder, then
/// `handle_input`. The server answers `tools/call` like [`echo_tool`], reading the params with
/// its [`Reader`]; the session itself answers `ping`.
pub struct OursPair {
    /// The client session.
    pub client: Session,
    /// The server session.
    pub server: Session,
    now: Instant,
    wire: Vec<u8>,
    server_lines: NdjsonDecoder,
    client_lines: NdjsonDecoder,
    reader: Reader,
}

impl OursPair {
    /// A connected pair (handshake done) whose server offers tools and reads params in place.
    pub fn connected() -> OursPair {
        OursPair::connected_with(Reader::View)
    }

    /// A connected pair whose server application reads params with `reader`.
    pub fn connected_with(reader: Reader) -> OursPair {
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
            reader,
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
        let reader = self.reader;
        while done < n {
            self.pump(|server| answer_echo(server, reader));
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
fn answer_echo(server: &mut Session, reader: Reader) {
    while let Some(event) = server.poll_event() {
        if let Event::Request { id, params, .. } = event {
            respond_echo(server, &id, echo_text(params.as_ref(), reader), reader);
        }
    }
}

/// Answers one call straight into the session's outbound queue, the same bytes
/// `respond(id, echo_tool(params))` would send: with the session's `JsonWriter`
/// (`respond_with`, no serde) when the application reads in place, serialised from
/// [`EchoResult`] with serde (`respond_serialize`) when it reads with serde.
fn respond_echo(server: &mut Session, id: &RequestId, text: Option<Cow<'_, str>>, reader: Reader) {
    let Some(text) = text else {
        let error = mcp_sansio::jsonrpc::ErrorObject::new(-32602, "unknown tool");
        return server.respond_error(id, error).expect("respond");
    };
    let answered = match reader {
        Reader::View => server.respond_with(id, |w| write_echo_result(w, &text)),
        Reader::Serde => server.respond_serialize(id, &EchoResult::new(&text)),
    };
    answered.expect("respond");
}

/// Writes the echo tool's result (as [`EchoResult`] serialises): `{"content":[{"type":"text",
/// "text":…}],"isError":false}`.
fn write_echo_result(w: &mut JsonWriter<'_>, text: &str) {
    w.begin_object().key("content").begin_array();
    w.begin_object().key("type").string("text");
    w.key("text").string(text).end_object();
    w.end_array().key("isError").bool(false).end_object();
}

/// Whether an echo result carries [`ECHO_TEXT`].
pub fn is_echo(result: &RawJson) -> bool {
    let value = result.to_value().unwrap_or_default();
    value["content"][0]["text"] == ECHO_TEXT
}

/// Whether an echo result carries [`ECHO_TEXT`], read the way the client application of
/// [`OursPair`] does with `reader`.
pub fn is_echo_read(result: &RawJson, reader: Reader) -> bool {
    match reader {
        Reader::View => is_echo_view(result),
        Reader::Serde => is_echo_borrowed(result),
    }
}

/// Whether an echo result carries [`ECHO_TEXT`], read in place: `content[0].text`, unescaped.
pub fn is_echo_view(result: &RawJson) -> bool {
    let text = result.view().member("content").and_then(|c| c.element(0));
    text.and_then(|block| block.member("text")?.as_str())
        .is_some_and(|text| text == ECHO_TEXT)
}

/// Whether an echo result carries [`ECHO_TEXT`], read with a borrowed serde parse of `content[].text` (unescaped), as rmcp's client does
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
pub mod demo;
#[cfg(feature = "http")]
pub mod http_side;
pub mod paired;
pub mod rmcp_side;
pub mod stdio_lean;

#[cfg(test)]
mod tests;
