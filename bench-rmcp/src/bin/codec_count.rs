//! The bodies of the engine's codec bench (`benches/codec.rs`) without criterion, for
//! instruction counting under `valgrind --tool=callgrind` (stable on a loaded machine, where
//! times are not).
//!
//! `codec_count <decode_ping|decode_ping_rmcp|frame_and_decode> <iterations>` runs one body
//! `iterations` times: `decode_ping` decodes the 40-byte ping with `jsonrpc::decode`,
//! `decode_ping_rmcp` the same bytes into rmcp's `ClientJsonRpcMessage` (serde, as its
//! transports do); `frame_and_decode` frames 10,000 ndjson progress notifications from 64 KiB
//! chunks and decodes each. Run it with two `iterations` values and divide the difference of
//! the instruction totals by the difference of the iterations: the setup cancels out (see
//! docs/benchmarks.md).

use std::hint::black_box;

use bytes::Bytes;
use mcp_sansio::framing::{encode_frame, NdjsonDecoder};
use mcp_sansio::jsonrpc::decode;
use rmcp::model::ClientJsonRpcMessage;

/// The messages of the ndjson body.
const MESSAGES: usize = 10_000;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [case, iterations] = args.as_slice() else {
        eprintln!(
            "usage: codec_count <decode_ping|decode_ping_rmcp|frame_and_decode> <iterations>"
        );
        std::process::exit(2);
    };
    let Ok(iterations) = iterations.parse::<u64>() else {
        eprintln!("iterations must be a number");
        std::process::exit(2);
    };
    match case.as_str() {
        "decode_ping" => decode_ping(iterations),
        "decode_ping_rmcp" => decode_ping_rmcp(iterations),
        "frame_and_decode" => frame_and_decode(iterations),
        other => {
            eprintln!("unknown case {other}");
            std::process::exit(2);
        }
    }
}

/// `decode/ours/ping`: the envelope of a ping, decoded `iterations` times.
fn decode_ping(iterations: u64) {
    let frame = Bytes::from(bench_rmcp::ping());
    for _ in 0..iterations {
        black_box(decode(black_box(&frame)).is_ok());
    }
}

/// rmcp's decode of the same ping: its typed client message through serde_json.
fn decode_ping_rmcp(iterations: u64) {
    let text = bench_rmcp::ping();
    for _ in 0..iterations {
        let message = serde_json::from_slice::<ClientJsonRpcMessage>(black_box(&text));
        black_box(message.is_ok());
    }
}

/// `ndjson/frame_and_decode_10k_messages`: 10,000 frames split out of 64 KiB chunks and
/// decoded, `iterations` times.
fn frame_and_decode(iterations: u64) {
    let mut stream = Vec::new();
    for i in 0..MESSAGES {
        let msg = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":"t","progress":{i},"total":{MESSAGES}}}}}"#
        );
        encode_frame(&mut stream, msg.as_bytes());
    }
    for _ in 0..iterations {
        let mut decoder = NdjsonDecoder::default();
        let mut decoded = 0usize;
        for chunk in stream.chunks(64 * 1024) {
            decoder.push(chunk);
            while let Some(frame) = decoder.poll_frame() {
                let Ok(frame) = frame else { continue };
                decoded += usize::from(black_box(decode(&frame)).is_ok());
            }
        }
        assert_eq!(decoded, MESSAGES, "every frame decodes");
    }
}
