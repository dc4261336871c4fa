//! Server-only HTTP figures (feature `http`): the lean client of
//! `bench_rmcp::http_side::lean` drives our server, rmcp's and the bare hyper floor alike
//! (echo `tools/call`; the floor echoes the request), so the ratios carry no client's cost.
//!
//! `server_only [in_flight] [pairs] [slice_ms]` (defaults 1, 10, 150): each server on its own
//! thread, one lean client per server (in_flight connections of one session), then `pairs`
//! alternated rounds of slices (ours, floor, rmcp; then the reverse order), each slice
//! `slice_ms` of wall time. Prints the median rate of each side and the median, quartiles
//! and extremes of the per-pair ratios ours/floor and ours/rmcp.

#[cfg(feature = "http")]
fn main() {
    use bench_rmcp::http_side::lean::{LeanClient, Target};
    use bench_rmcp::http_side::{floor, ours, rmcp};
    use std::time::{Duration, Instant};

    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numbers: in_flight pairs slice_ms"))
        .collect();
    let in_flight = args.first().copied().unwrap_or(1) as usize;
    let pairs = args.get(1).copied().unwrap_or(10) as usize;
    let slice = Duration::from_millis(args.get(2).copied().unwrap_or(150));

    let servers = [
        ("ours", ours::spawn_server(), Target::Mcp),
        ("floor", floor::spawn_server(), Target::Floor),
        ("rmcp", rmcp::spawn_server(), Target::Mcp),
    ];
    let mut clients: Vec<LeanClient> = servers
        .iter()
        .map(|(name, server, target)| {
            LeanClient::connect(server.url(), *target, in_flight)
                .unwrap_or_else(|e| panic!("{name}: {e}"))
        })
        .collect();
    // Rounds per slice, from a warm-up of each side.
    let rounds: Vec<u64> = clients
        .iter_mut()
        .map(|c| {
            let start = Instant::now();
            let mut n = 0u64;
            while start.elapsed() < slice {
                c.round().expect("warm-up");
                n += 1;
            }
            n.max(1)
        })
        .collect();
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); 3];
    for pair in 0..pairs {
        let order: Vec<usize> = if pair % 2 == 0 {
            vec![0, 1, 2]
        } else {
            vec![2, 1, 0]
        };
        for i in order {
            let (n, took) = clients[i].sample(rounds[i]).expect("sample");
            rates[i].push(n as f64 / took.as_secs_f64());
        }
    }
    let quantiles = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
        [at(0.0), at(0.25), at(0.5), at(0.75), at(1.0)]
    };
    println!("server-only echo, {in_flight} in flight ({in_flight} connections), {pairs} pairs");
    for (i, (name, _, _)) in servers.iter().enumerate() {
        let q = quantiles(rates[i].clone());
        println!("{name:>5}: median {:.0} exchanges/s", q[2]);
    }
    for (other, label) in [(1, "ours/floor"), (2, "ours/rmcp")] {
        let ratios: Vec<f64> = rates[0]
            .iter()
            .zip(&rates[other])
            .map(|(a, b)| a / b)
            .collect();
        let q = quantiles(ratios);
        println!(
            "{label}: median {:.2} (quartiles {:.2}..{:.2}, extremes {:.2}..{:.2})",
            q[2], q[1], q[3], q[0], q[4]
        );
    }
}

#[cfg(not(feature = "http"))]
fn main() {
    eprintln!("server_only needs the `http` feature");
    std::process::exit(2);
}
