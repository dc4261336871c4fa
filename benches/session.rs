//! In-memory request/response round trips through a `SessionPair` (1 and 64 in flight): `ping`
//! (answered by the server session itself) and an echo-like `tools/call` answered by the
//! application. Throughput is reported in round trips per second.
//!
//! Group `session_pair` measures wall time. Group `session_pair_cpu` measures this thread's
//! CPU time (`CLOCK_THREAD_CPUTIME_ID`), so it reports the rate on one core even when the
//! machine is shared and the thread gets only part of a core.

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mcp_sansio::jsonrpc::RawJson;
use mcp_sansio::model::{Implementation, ProtocolVersion, ServerCapabilities};
use mcp_sansio::session::{ClientSetup, Event, RequestOptions, ServerSetup};
use mcp_sansio::testing::SessionPair;
use mcp_sansio::Config;

fn connected() -> SessionPair {
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
    let mut pair = SessionPair::new(
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
fn round_trips(pair: &mut SessionPair, method: &str, params: &Option<RawJson>, in_flight: usize) {
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

/// CPU time this thread has used so far.
fn thread_cpu_time() -> Option<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

fn bench_cpu(c: &mut Criterion) {
    if thread_cpu_time().is_none() {
        return;
    }
    let echo = Some(RawJson::from_text(r#"{"name":"echo","arguments":{"text":"hello"}}"#).unwrap());
    let mut group = c.benchmark_group("session_pair_cpu");
    for in_flight in [1usize, 64] {
        group.throughput(Throughput::Elements(in_flight as u64));
        for (name, method, params) in [("ping", "ping", None), ("echo", "tools/call", echo.clone())]
        {
            let mut pair = connected();
            group.bench_function(format!("{name}/{in_flight}_in_flight"), |b| {
                b.iter_custom(|iters| {
                    let start = thread_cpu_time().unwrap_or_default();
                    for _ in 0..iters {
                        round_trips(&mut pair, method, &params, in_flight);
                    }
                    thread_cpu_time().unwrap_or_default().saturating_sub(start)
                })
            });
        }
    }
    group.finish();
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
                b.iter(|| round_trips(&mut pair, method, &params, in_flight))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench, bench_cpu);
criterion_main!(benches);
