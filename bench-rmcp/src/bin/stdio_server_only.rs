//! Server-only stdio figures: the lean driver of `bench_rmcp::stdio_lean` keeps `in_flight`
//! echo `tools/call` requests outstanding against our server (`stdio_ours_server app`: the
//! application `Server` with a sync `echo` tool on the poll driver, as `mcp-sansio serve
//! --stdio` runs) and against the pipe floor (`stdio_floor_echo batch`: one write of every
//! line one read brought), so the ratio carries no client's cost.
//!
//! Build it with `stdio_ours_server` and `stdio_floor_echo` (it runs them from its own
//! directory).
//!
//! `stdio_server_only [in_flight] [pairs] [slice_ms]` (defaults 64, 10, 150): one child per
//! server, then `pairs` alternated rounds of slices (ours then floor, then the reverse order),
//! each about `slice_ms` of wall time. Prints the median rate of each side and the median,
//! quartiles and extremes of the per-pair ratio ours/floor. With `STDIO_OURS_OTHER=PATH` (a
//! `stdio_ours_server` of another build) that server runs as a third side in the same slices,
//! and the ratios ours/other and other/floor are printed too.

use std::process::Command;
use std::time::{Duration, Instant};

use bench_rmcp::stdio_lean::{LeanPipe, Target};

/// A binary of this package, beside this one (build them together).
fn sibling(name: &str) -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("own path");
    exe.with_file_name(name)
}

fn command(bin: impl AsRef<std::ffi::OsStr>, arg: &str) -> Command {
    let mut command = Command::new(bin);
    command.arg(arg);
    command
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numbers: in_flight pairs slice_ms"))
        .collect();
    let in_flight = args.first().copied().unwrap_or(64) as usize;
    let pairs = args.get(1).copied().unwrap_or(10) as usize;
    let slice = Duration::from_millis(args.get(2).copied().unwrap_or(150));

    let mut sides = vec![
        (
            "ours",
            command(sibling("stdio_ours_server"), "app"),
            Target::Mcp,
        ),
        (
            "floor",
            command(sibling("stdio_floor_echo"), "batch"),
            Target::Floor,
        ),
    ];
    if let Some(other) = std::env::var_os("STDIO_OURS_OTHER") {
        sides.push(("other", command(other, "app"), Target::Mcp));
    }
    let mut pipes: Vec<LeanPipe> = sides
        .iter_mut()
        .map(|(name, command, target)| {
            let cmd = std::mem::replace(command, Command::new("true"));
            LeanPipe::spawn(cmd, *target, in_flight).unwrap_or_else(|e| panic!("{name}: {e}"))
        })
        .collect();
    // Requests per slice, from a warm-up of each side.
    let per_slice: Vec<u64> = pipes
        .iter_mut()
        .map(|pipe| {
            let start = Instant::now();
            let step = 16 * in_flight as u64;
            let mut n = 0u64;
            while start.elapsed() < slice {
                pipe.sample(step).expect("warm-up");
                n += step;
            }
            n.max(step)
        })
        .collect();
    let count = pipes.len();
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); count];
    for pair in 0..pairs {
        let order: Vec<usize> = if pair % 2 == 0 {
            (0..count).collect()
        } else {
            (0..count).rev().collect()
        };
        for i in order {
            let took = pipes[i].sample(per_slice[i]).expect("sample");
            rates[i].push(per_slice[i] as f64 / took.as_secs_f64());
        }
    }
    let quantiles = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
        [at(0.0), at(0.25), at(0.5), at(0.75), at(1.0)]
    };
    println!("server-only stdio echo, {in_flight} in flight, {pairs} pairs");
    for (i, (name, _, _)) in sides.iter().enumerate() {
        let q = quantiles(rates[i].clone());
        println!("{name:>5}: median {:.0} exchanges/s", q[2]);
    }
    let mut ratios = vec![(0, 1, "ours/floor")];
    if count == 3 {
        ratios.push((0, 2, "ours/other"));
        ratios.push((2, 1, "other/floor"));
    }
    for (a, b, label) in ratios {
        let pair_ratios: Vec<f64> = rates[a].iter().zip(&rates[b]).map(|(x, y)| x / y).collect();
        let q = quantiles(pair_ratios);
        println!(
            "{label}: median {:.2} (quartiles {:.2}..{:.2}, extremes {:.2}..{:.2})",
            q[2], q[1], q[3], q[0], q[4]
        );
    }
}
