//! Codec, side by side: decode then encode of a ping request, a ~1 KiB `tools/call` request and
//! a ~64 KiB `resources/read` result with our `jsonrpc::decode`/`encode`, with rmcp's typed
//! JSON-RPC messages through serde_json (what its transports do per message), and with a bare
//! serde borrowed-struct parse of the envelope as the floor.
//!
//! Run: `cargo bench --manifest-path bench-rmcp/Cargo.toml --bench codec`

use std::hint::black_box;

use bench_rmcp::{frame, ping, resources_read_64k, tools_call_1k};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mcp_sansio::jsonrpc::{decode, Incoming};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The floor for requests: a borrowed parse of the envelope, params left raw.
#[derive(Deserialize, Serialize)]
struct FloorCall<'a> {
    #[serde(borrow)]
    jsonrpc: &'a str,
    #[serde(borrow)]
    id: &'a RawValue,
    #[serde(borrow)]
    method: &'a str,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    params: Option<&'a RawValue>,
}

/// The floor for results.
#[derive(Deserialize, Serialize)]
struct FloorResult<'a> {
    #[serde(borrow)]
    jsonrpc: &'a str,
    #[serde(borrow)]
    id: &'a RawValue,
    #[serde(borrow)]
    result: &'a RawValue,
}

fn ours(buf: &mut Vec<u8>, frame: &bytes::Bytes) -> usize {
    let Ok(Incoming::Single(message)) = decode(frame) else {
        panic!("bench input must decode");
    };
    buf.clear();
    message.encode(buf);
    buf.len()
}

fn rmcp_client(buf: &mut Vec<u8>, text: &[u8]) -> usize {
    let message: ClientJsonRpcMessage = serde_json::from_slice(text).unwrap();
    buf.clear();
    serde_json::to_writer(&mut *buf, &message).unwrap();
    buf.len()
}

fn rmcp_server(buf: &mut Vec<u8>, text: &[u8]) -> usize {
    let message: ServerJsonRpcMessage = serde_json::from_slice(text).unwrap();
    buf.clear();
    serde_json::to_writer(&mut *buf, &message).unwrap();
    buf.len()
}

fn floor_call(buf: &mut Vec<u8>, text: &[u8]) -> usize {
    let message: FloorCall<'_> = serde_json::from_slice(text).unwrap();
    buf.clear();
    serde_json::to_writer(&mut *buf, &message).unwrap();
    buf.len()
}

fn floor_result(buf: &mut Vec<u8>, text: &[u8]) -> usize {
    let message: FloorResult<'_> = serde_json::from_slice(text).unwrap();
    buf.clear();
    serde_json::to_writer(&mut *buf, &message).unwrap();
    buf.len()
}

type Codec = fn(&mut Vec<u8>, &[u8]) -> usize;

fn bench_decode_encode(c: &mut Criterion) {
    let cases: [(&str, Vec<u8>, Codec, Codec); 3] = [
        ("ping", ping(), rmcp_client, floor_call),
        ("tools_call_1k", tools_call_1k(), rmcp_client, floor_call),
        (
            "resources_read_64k",
            resources_read_64k(),
            rmcp_server,
            floor_result,
        ),
    ];
    let mut group = c.benchmark_group("decode_encode");
    for (name, text, rmcp, floor) in &cases {
        let input = frame(text);
        let mut buf = Vec::with_capacity(text.len() + 256);
        // Every codec must produce the same message back (rmcp may reorder members).
        assert_eq!(ours(&mut buf, &input), text.len());
        assert_eq!(floor(&mut buf, text), text.len());
        let rmcp_len = rmcp(&mut buf, text);
        let again: serde_json::Value = serde_json::from_slice(&buf).unwrap();
        let original: serde_json::Value = serde_json::from_slice(text).unwrap();
        assert_eq!(
            again, original,
            "rmcp changed the {name} message ({rmcp_len} bytes)"
        );

        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::new("ours", name), &input, |b, input| {
            b.iter(|| ours(&mut buf, black_box(input)))
        });
        group.bench_with_input(BenchmarkId::new("rmcp", name), text, |b, text| {
            b.iter(|| rmcp(&mut buf, black_box(text)))
        });
        group.bench_with_input(BenchmarkId::new("serde_floor", name), text, |b, text| {
            b.iter(|| floor(&mut buf, black_box(text)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_decode_encode);
criterion_main!(benches);
