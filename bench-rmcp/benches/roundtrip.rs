//! In-memory round trips, side by side: `ping` and an echo `tools/call`, 1 and 64 in flight.
//!
//! - ours: client and server `Session`s in one thread, every message through `poll_transmit`,
//!   an ndjson line and the peer's line decoder (what a pipe transport does, minus the
//!   syscall); the server application answers `tools/call` by reading the params and writing
//!   the echo result straight into the session's outbound queue, the client application reads
//!   the echoed text. `ours`: both applications read in place (`RawJson::view`, strings
//!   unescaped) and the server writes its result with the session's `JsonWriter`
//!   (`Session::respond_with`, no serde). `ours_serde`: both read with a borrowed serde parse
//!   into structs and the server serialises a result struct with serde
//!   (`Session::respond_serialize`). The same bytes go over the wire in both.
//! - rmcp: its client and an echo `ServerHandler` over `tokio::io::duplex`, `n` concurrent
//!   futures through `join_all`, on a current-thread runtime and on a 2-worker multi-thread
//!   runtime.
//!
//! Every case runs twice: `ping`/`tools_call_echo` measure wall time (round trips per
//! second), `cpu/ping`/`cpu/tools_call_echo` measure process CPU time over all threads (round
//! trips per CPU-second, the per-core rate; see `bench_rmcp::cpu_time`).
//!
//! Run: `cargo bench --manifest-path bench-rmcp/Cargo.toml --bench roundtrip`

use std::hint::black_box;

use bench_rmcp::cpu_time::CpuTime;
use bench_rmcp::{
    echo_params, is_echo, is_echo_borrowed, is_echo_read, rmcp_side, OursPair, Reader,
};
use criterion::measurement::Measurement;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tokio::runtime::{Builder, Runtime};

const IN_FLIGHT: [usize; 2] = [1, 64];

fn runtimes() -> [(&'static str, Runtime); 2] {
    let current = Builder::new_current_thread().enable_all().build().unwrap();
    let multi = Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    [
        ("rmcp_current_thread", current),
        ("rmcp_multi_thread_2", multi),
    ]
}

fn bench_ping<M: Measurement>(c: &mut Criterion<M>, prefix: &str) {
    let mut group = c.benchmark_group(format!("{prefix}ping"));
    let runtimes = runtimes();
    for n in IN_FLIGHT {
        group.throughput(Throughput::Elements(n as u64));
        let mut pair = OursPair::connected();
        group.bench_function(BenchmarkId::new("ours", n), |b| {
            b.iter(|| assert_eq!(pair.round_trips(black_box(n), "ping", None, |_| {}), n))
        });
        for (name, runtime) in &runtimes {
            let client = runtime.block_on(rmcp_side::connect());
            group.bench_function(BenchmarkId::new(*name, n), |b| {
                b.iter(|| assert_eq!(runtime.block_on(rmcp_side::pings(&client, n)), n))
            });
        }
    }
    group.finish();
}

fn bench_echo<M: Measurement>(c: &mut Criterion<M>, prefix: &str) {
    let mut group = c.benchmark_group(format!("{prefix}tools_call_echo"));
    let runtimes = runtimes();
    let ours_params = echo_params();
    let rmcp_params = rmcp_side::echo_params();
    for n in IN_FLIGHT {
        group.throughput(Throughput::Elements(n as u64));
        for (name, reader) in [("ours", Reader::View), ("ours_serde", Reader::Serde)] {
            let mut pair = OursPair::connected_with(reader);
            group.bench_function(BenchmarkId::new(name, n), |b| {
                b.iter(|| {
                    let mut echoed = 0;
                    pair.round_trips(n, "tools/call", Some(&ours_params), |r| {
                        echoed += usize::from(is_echo_read(r, reader));
                    });
                    assert_eq!(echoed, n);
                })
            });
        }
        for (name, runtime) in &runtimes {
            let client = runtime.block_on(rmcp_side::connect());
            group.bench_function(BenchmarkId::new(*name, n), |b| {
                b.iter(|| {
                    let echoed = runtime.block_on(rmcp_side::echo_calls(&client, n, &rmcp_params));
                    assert_eq!(echoed, n)
                })
            });
        }
    }
    group.finish();
}

/// `is_echo` (a full `Value` parse) is for tests; make sure both checks agree once.
fn sanity(_: &mut Criterion) {
    let mut pair = OursPair::connected();
    let params = echo_params();
    pair.round_trips(1, "tools/call", Some(&params), |r| {
        assert!(is_echo(r) && is_echo_borrowed(r))
    });
}

fn wall(c: &mut Criterion) {
    bench_ping(c, "");
    bench_echo(c, "");
}

fn cpu(c: &mut Criterion<CpuTime>) {
    bench_ping(c, "cpu/");
    bench_echo(c, "cpu/");
}

criterion_group!(benches, sanity, wall);
criterion_group! {
    name = cpu_benches;
    config = Criterion::default().with_measurement(CpuTime);
    targets = cpu
}
criterion_main!(benches, cpu_benches);
