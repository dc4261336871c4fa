//! Streamable HTTP round trips on loopback, side by side in one run: `ping` and an echo
//! `tools/call`, 1 and 64 in flight (send that many at once, wait for all, repeat).
//!
//! - floor: a bare hyper keep-alive POST echo (hyper server and client on smol, one
//!   kept-alive connection per request in flight, TCP_NODELAY); no MCP at all.
//! - ours: `mcp_sansio_http` server (echo tool) and client (`ClientHandle` over the pool).
//! - rmcp: rmcp 3.11's `StreamableHttpService` served with hyper on tokio, and its reqwest
//!   `StreamableHttpClientTransport` as built by default.
//!
//! Each server runs on a thread of its own, the client on the bench thread. Those are pair
//! figures: each server is driven by its own side's client. The group `http_server_only_echo`
//! measures the servers alone: the same lean client (`bench_rmcp::http_side::lean`: raw
//! keep-alive HTTP/1.1 on blocking sockets, no MCP engine) drives all three with the echo
//! `tools/call` (the floor echoes the request). Throughput is in round trips per second;
//! after the run, ours/floor and ours/rmcp are printed from criterion's estimates of this run.
//!
//! Run: `cargo bench --manifest-path bench-rmcp/Cargo.toml --features http --bench http`

use std::path::PathBuf;

use bench_rmcp::http_side::lean::{LeanClient, Target};
use bench_rmcp::http_side::{floor, ours, rmcp, Call};
use criterion::{BenchmarkId, Criterion, Throughput};

const IN_FLIGHT: [usize; 2] = [1, 64];
const GROUPS: [(&str, Call); 2] = [
    ("http_ping", Call::Ping),
    ("http_tools_call_echo", Call::Echo),
];
const SERVER_ONLY: &str = "http_server_only_echo";

fn bench_call(c: &mut Criterion, group_name: &str, call: Call) {
    let floor_server = floor::spawn_server();
    let ours_server = ours::spawn_server();
    let rmcp_server = rmcp::spawn_server();
    let runtime = rmcp::current_thread();
    let rmcp_client = rmcp::connect(&runtime, &rmcp_server);
    let body = floor::body(call);
    let mut group = c.benchmark_group(group_name);
    for n in IN_FLIGHT {
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("floor", n), &n, |b, &n| {
            b.iter_custom(|rounds| floor::sample(&floor_server, &body, n, rounds))
        });
        group.bench_with_input(BenchmarkId::new("ours", n), &n, |b, &n| {
            b.iter_custom(|rounds| ours::sample(&ours_server, call, n, rounds))
        });
        group.bench_with_input(BenchmarkId::new("rmcp", n), &n, |b, &n| {
            b.iter_custom(|rounds| rmcp::sample(&runtime, &rmcp_client, call, n, rounds))
        });
    }
    group.finish();
    drop(rmcp_client);
}

/// The three servers alone, driven by the lean client (one per server and number in
/// flight, connected and through the handshake before timing).
fn bench_server_only(c: &mut Criterion) {
    let servers = [
        ("floor", floor::spawn_server(), Target::Floor),
        ("ours", ours::spawn_server(), Target::Mcp),
        ("rmcp", rmcp::spawn_server(), Target::Mcp),
    ];
    let mut group = c.benchmark_group(SERVER_ONLY);
    for n in IN_FLIGHT {
        group.throughput(Throughput::Elements(n as u64));
        for (name, server, target) in &servers {
            let mut client = LeanClient::connect(server.url(), *target, n).expect("lean client");
            group.bench_with_input(BenchmarkId::new(*name, n), &n, |b, _| {
                b.iter_custom(|rounds| client.sample(rounds).expect("lean sample").1)
            });
        }
    }
    group.finish();
}

/// Where criterion writes its estimates (its own lookup, minus `cargo metadata`).
fn criterion_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(dir);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("criterion")
}

/// Mean time per round trip (ns) of one benchmark, from criterion's latest estimates.
fn ns_per_round_trip(group: &str, name: &str, n: usize) -> Option<f64> {
    let path = criterion_dir()
        .join(group)
        .join(name)
        .join(n.to_string())
        .join("new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let estimates: serde_json::Value = serde_json::from_str(&text).ok()?;
    // The estimate criterion prints: the slope when it sampled linearly, else the mean.
    let per_iteration = estimates["slope"]["point_estimate"]
        .as_f64()
        .or_else(|| estimates["mean"]["point_estimate"].as_f64())?;
    Some(per_iteration / n as f64)
}

fn print_ratios(group: &str) {
    println!("\n{group}: round trips/s and ratios (ours/floor, ours/rmcp), this run");
    for n in IN_FLIGHT {
        let rate = |name| ns_per_round_trip(group, name, n).map(|ns| 1e9 / ns);
        let (Some(floor), Some(ours), Some(rmcp)) = (rate("floor"), rate("ours"), rate("rmcp"))
        else {
            println!("  {n:>2} in flight: (estimates missing; was a filter given?)");
            continue;
        };
        println!(
            "  {n:>2} in flight: floor {floor:>8.0}/s | ours {ours:>8.0}/s | rmcp {rmcp:>8.0}/s | ours/floor {:.2} | ours/rmcp {:.1}x",
            ours / floor,
            ours / rmcp
        );
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    for (name, call) in GROUPS {
        bench_call(&mut c, name, call);
    }
    bench_server_only(&mut c);
    c.final_summary();
    for (name, _) in GROUPS {
        print_ratios(name);
    }
    print_ratios(SERVER_ONLY);
}
