//! In-memory request/response round trips through a `Pair` (1 and 64 in flight): `ping`
//! (answered by the server session itself) and an echo-like `tools/call` answered by the
//! application. Throughput is reported in round trips per second.

use std::time::Instant;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use mcp_sansio::jsonrpc::RawJson;
use mcp_sansio::model::{Implementation, ProtocolVersion, ServerCapabilities};
use mcp_sansio::pair::Pair;
use mcp_sansio::session::{ClientSetup, Event, RequestOptions, ServerSetup};
use mcp_sansio::Config;

fn connected() -> Pair {
    let client = ClientSetup {
        info: Implementation::new("bench", "0"),
        capabilities: Default::default(),
        protocol_version: ProtocolVersion::V2025_06_18,
    };
    let server = ServerSetup {
        info: Implementation::new("bench", "0"),
        capabilities: serde_json::from_str::<ServerCapabilities>(r#"{"tools":{}}"#).unwrap(),
        instructions: None,
    };
    let mut pair = Pair::new(
        Config::default(),
        client,
        Config::default(),
        server,
        Instant::now(),
    );
    pair.connect().expect("handshake");
    pair
}

/// Sends `in_flight` requests, lets the server answer (echoing params for `tools/call`), and
/// drains the completions.
fn round_trips(pair: &mut Pair, method: &str, params: &Option<RawJson>, in_flight: usize) {
    let now = pair.now();
    for _ in 0..in_flight {
        let _ = pair
            .client
            .send_request(now, method, params.clone(), RequestOptions::default());
    }
    pair.drive();
    while let Some(event) = pair.server_events.pop_front() {
        if let Event::Request { id, params, .. } = event {
            let result = params.unwrap_or_else(RawJson::empty_object);
            let _ = pair.server.respond(&id, result);
        }
    }
    pair.drive();
    let done = pair.client_events.len();
    assert_eq!(done, in_flight);
    pair.client_events.clear();
}

fn bench(c: &mut Criterion) {
    let echo = Some(RawJson::from_text(r#"{"name":"echo","arguments":{"text":"hello"}}"#).unwrap());
    let mut group = c.benchmark_group("session_pair");
    for in_flight in [1usize, 64] {
        group.throughput(Throughput::Elements(in_flight as u64));
        for (name, method, params) in [("ping", "ping", None), ("echo", "tools/call", echo.clone())]
        {
            let mut pair = connected();
            group.bench_function(format!("{name}/{in_flight}_in_flight"), |b| {
                b.iter_batched_ref(
                    || (),
                    |_| round_trips(&mut pair, method, &params, in_flight),
                    BatchSize::SmallInput,
                )
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
