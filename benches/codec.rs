//! Codec throughput: JSON-RPC decode and encode of typical MCP messages, against a bare
//! `serde_json` borrowed-struct parse of the same bytes as the baseline, and ndjson framing of a
//! large buffer.
//!
//! Run: `cargo bench --bench codec -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mcp_sansio::framing::{encode_frame, NdjsonDecoder};
use mcp_sansio::jsonrpc::{decode, Incoming};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The baseline for calls: what a hand-written borrowed parse of the envelope costs.
#[derive(Deserialize, Serialize)]
struct BaselineCall<'a> {
    #[serde(borrow)]
    jsonrpc: &'a str,
    id: serde_json::Value,
    #[serde(borrow)]
    method: &'a str,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    params: Option<&'a RawValue>,
}

/// The baseline for results.
#[derive(Deserialize, Serialize)]
struct BaselineResult<'a> {
    #[serde(borrow)]
    jsonrpc: &'a str,
    id: serde_json::Value,
    #[serde(borrow)]
    result: &'a RawValue,
}

fn ping() -> Vec<u8> {
    br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec()
}

fn tools_call_1k() -> Vec<u8> {
    let query = "how do I frame JSON-RPC over stdio \\\"safely\\\"? ".repeat(18);
    let text = format!(
        r#"{{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{{"name":"search","arguments":{{"query":"{query}","limit":10,"filters":{{"lang":["rust","go"],"recent":true}}}},"_meta":{{"progressToken":"p-42"}}}}}}"#
    );
    assert!((900..1300).contains(&text.len()), "{}", text.len());
    text.into_bytes()
}

fn resources_read_64k() -> Vec<u8> {
    let line = "fn main() { println!(\\\"hello, world\\\"); }\\n\\tlet x = 1;\\n";
    let body = line.repeat(64 * 1024 / line.len());
    let text = format!(
        r#"{{"jsonrpc":"2.0","id":"req-7","result":{{"contents":[{{"uri":"file:///src/main.rs","mimeType":"text/x-rust","text":"{body}"}}]}}}}"#
    );
    text.into_bytes()
}

fn bench_decode(c: &mut Criterion) {
    let cases = [
        ("ping", ping()),
        ("tools_call_1k", tools_call_1k()),
        ("resources_read_64k", resources_read_64k()),
    ];
    let mut group = c.benchmark_group("decode");
    for (name, text) in &cases {
        let frame = Bytes::from(text.clone());
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::new("ours", name), &frame, |b, frame| {
            b.iter(|| decode(black_box(frame)).unwrap())
        });
        let is_result = name.starts_with("resources");
        group.bench_with_input(BenchmarkId::new("serde_baseline", name), text, |b, text| {
            if is_result {
                b.iter(|| serde_json::from_slice::<BaselineResult<'_>>(black_box(text)).unwrap())
            } else {
                b.iter(|| serde_json::from_slice::<BaselineCall<'_>>(black_box(text)).unwrap())
            }
        });
    }
    group.finish();
}

fn bench_encode(c: &mut Criterion) {
    let cases = [
        ("ping", ping()),
        ("tools_call_1k", tools_call_1k()),
        ("resources_read_64k", resources_read_64k()),
    ];
    let mut group = c.benchmark_group("encode");
    for (name, text) in &cases {
        let Ok(Incoming::Single(message)) = decode(&Bytes::from(text.clone())) else {
            panic!("bench input must decode");
        };
        group.throughput(Throughput::Bytes(text.len() as u64));
        let mut buf = Vec::with_capacity(text.len() + 64);
        group.bench_function(BenchmarkId::new("ours", name), |b| {
            b.iter(|| {
                buf.clear();
                black_box(&message).encode(&mut buf);
                black_box(buf.len())
            })
        });
        let is_result = name.starts_with("resources");
        group.bench_function(BenchmarkId::new("serde_baseline", name), |b| {
            if is_result {
                let v: BaselineResult<'_> = serde_json::from_slice(text).unwrap();
                b.iter(|| {
                    buf.clear();
                    serde_json::to_writer(&mut buf, black_box(&v)).unwrap();
                    black_box(buf.len())
                })
            } else {
                let v: BaselineCall<'_> = serde_json::from_slice(text).unwrap();
                b.iter(|| {
                    buf.clear();
                    serde_json::to_writer(&mut buf, black_box(&v)).unwrap();
                    black_box(buf.len())
                })
            }
        });
    }
    group.finish();
}

fn bench_ndjson(c: &mut Criterion) {
    const MESSAGES: usize = 10_000;
    let mut stream = Vec::new();
    for i in 0..MESSAGES {
        let msg = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":"t","progress":{i},"total":{MESSAGES}}}}}"#
        );
        encode_frame(&mut stream, msg.as_bytes());
    }
    let mut group = c.benchmark_group("ndjson");
    group.throughput(Throughput::Bytes(stream.len() as u64));
    group.bench_function("frame_10k_messages_64k_chunks", |b| {
        b.iter(|| {
            let mut decoder = NdjsonDecoder::default();
            let mut frames = 0usize;
            for chunk in stream.chunks(64 * 1024) {
                decoder.push(chunk);
                while let Some(frame) = decoder.poll_frame() {
                    black_box(frame.unwrap());
                    frames += 1;
                }
            }
            assert_eq!(frames, MESSAGES);
        })
    });
    group.bench_function("frame_and_decode_10k_messages", |b| {
        b.iter(|| {
            let mut decoder = NdjsonDecoder::default();
            for chunk in stream.chunks(64 * 1024) {
                decoder.push(chunk);
                while let Some(frame) = decoder.poll_frame() {
                    black_box(decode(&frame.unwrap()).unwrap());
                }
            }
        })
    });
    group.bench_function("encode_10k_frames", |b| {
        let msg = &stream[..memchr::memchr(b'\n', &stream).unwrap()];
        let mut buf = Vec::with_capacity(stream.len());
        b.iter(|| {
            buf.clear();
            for _ in 0..MESSAGES {
                encode_frame(&mut buf, black_box(msg));
            }
            black_box(buf.len())
        })
    });
    group.finish();
}

/// Tool-argument validation as `tools/call` does it: the JSON text of the arguments against
/// the tool's compiled inputSchema (a flat schema, and one with a nested object and an array).
fn bench_tool_args(c: &mut Criterion) {
    use mcp_sansio::app::server::Schema;
    let echo = Schema::new(serde_json::json!({
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"]
    }));
    let search = Schema::new(serde_json::json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100},
            "filters": {
                "type": "object",
                "properties": {
                    "lang": {"type": "array", "items": {"type": "string"}},
                    "recent": {"type": "boolean"}
                },
                "additionalProperties": false
            }
        },
        "required": ["query"]
    }));
    let query = "how do I frame JSON-RPC over stdio \\\"safely\\\"? ".repeat(18);
    let search_args = format!(
        r#"{{"query":"{query}","limit":10,"filters":{{"lang":["rust","go"],"recent":true}}}}"#
    );
    let cases = [
        ("echo", echo, r#"{"text":"hello"}"#.to_owned()),
        ("search_1k", search, search_args),
    ];
    let mut group = c.benchmark_group("tool_args");
    for (name, schema, args) in &cases {
        let value: serde_json::Value = serde_json::from_str(args).unwrap();
        assert!(schema.validate(&value).is_ok(), "{name}");
        group.bench_function(BenchmarkId::new("text", name), |b| {
            b.iter(|| {
                let text = black_box(args.as_bytes());
                if schema.admits_text(text) {
                    return true;
                }
                let value: serde_json::Value = serde_json::from_slice(text).unwrap();
                schema.validate(&value).is_ok()
            })
        });
        group.bench_function(BenchmarkId::new("text_parse_always", name), |b| {
            b.iter(|| {
                let text = black_box(args.as_bytes());
                let value: serde_json::Value = serde_json::from_slice(text).unwrap();
                schema.validate(&value).is_ok()
            })
        });
        group.bench_function(BenchmarkId::new("parsed", name), |b| {
            b.iter(|| schema.validate(black_box(&value)).is_ok())
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    bench_decode,
    bench_encode,
    bench_ndjson,
    bench_tool_args
);
criterion_main!(benches);
