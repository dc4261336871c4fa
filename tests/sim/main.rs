//! The seeded network simulation (docs/fuzzing.md): a client and a server on a virtual
//! clock over a stdio-like wire with latency, jitter and server crashes; a scripted HTTP
//! client against the Streamable HTTP endpoint with concurrent streams, reordering, dropped and
//! resumed SSE streams and session expiry; and the real client stack (client `Session` over the
//! sans-IO `HttpClient` transport) against the same endpoint under the same faults plus server
//! restarts, refused connections and a partition; and several endpoints sharing sessions
//! through a store, with instance crashes and a slow or unreachable store (`scale.rs`, a tenth
//! of the seeds). Each seed is one deterministic run; a failing
//! seed is printed with the command that replays it alone.
//!
//!   SIM_SEED=123 cargo test --test sim          # replay one seed (every world)
//!   SIM_SEEDS=5000 cargo test --test sim        # more seeds than the default

mod check;
mod http;
mod http_client;
mod http_client_run;
mod judge;
mod rng;
mod scale;
mod stdio;
mod timeline;
mod worker;
mod world;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// Seeds per world when `SIM_SEEDS` is not set (a few seconds of a debug test build).
const DEFAULT_SEEDS: u64 = 200;
/// Wall-clock cap per world, so a slow machine cannot make the loop unbounded.
const TIME_CAP: Duration = Duration::from_secs(90);

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok()?.trim().parse().ok()
}

/// Runs `world` over the seeds (or only `SIM_SEED`), stopping at the first failure with the
/// seed and its replay command. Returns one summary per seed run.
fn seed_loop<R: std::fmt::Debug>(test: &str, world: impl Fn(u64) -> Result<R, String>) -> Vec<R> {
    let seeds: Vec<u64> = match env_u64("SIM_SEED") {
        Some(seed) => vec![seed],
        None => (0..env_u64("SIM_SEEDS").unwrap_or(DEFAULT_SEEDS)).collect(),
    };
    let started = Instant::now();
    let mut reports = Vec::new();
    for seed in seeds {
        let outcome = catch_unwind(AssertUnwindSafe(|| world(seed)))
            .unwrap_or_else(|panic| Err(format!("panicked: {}", panic_text(&panic))));
        match outcome {
            Ok(report) => reports.push(report),
            Err(why) => panic!(
                "sim {test}: seed {seed} failed: {why}\n  replay: SIM_SEED={seed} cargo test --test sim {test} -- --nocapture"
            ),
        }
        if started.elapsed() > TIME_CAP {
            eprintln!("sim {test}: stopped at the {TIME_CAP:?} wall-clock cap");
            break;
        }
    }
    reports
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(non-text panic)".into())
}

#[test]
fn stdio_world_holds_the_invariants_over_many_seeds() {
    let reports = seed_loop("stdio_world", |seed| stdio::StdioWorld::new(seed).run());
    let mut total = check::Tally::default();
    let (mut requests, mut crashes, mut progress) = (0, 0, 0);
    for r in &reports {
        total.add(&r.tally);
        requests += r.requests;
        crashes += r.crashes;
        progress += r.progress;
    }
    eprintln!(
        "sim stdio_world: {} seeds, {requests} requests ({total:?}), {progress} progress, {crashes} crashes",
        reports.len()
    );
    assert_eq!(total.ended(), requests, "every request ends exactly once");
    if env_u64("SIM_SEED").is_none() {
        // The loop must actually exercise the faults, or it proves nothing.
        assert!(crashes > 0 && total.closed > 0 && total.timed_out > 0 && total.results > 0);
    }
}

#[test]
fn http_world_holds_the_invariants_over_many_seeds() {
    let reports = seed_loop("http_world", |seed| http::HttpWorld::new(seed).run());
    let mut total = check::Tally::default();
    let (mut requests, mut drops, mut resumed, mut refused, mut events, mut not_found) =
        (0, 0, 0, 0, 0, 0);
    let mut restarts = 0;
    for r in &reports {
        total.add(&r.tally);
        requests += r.requests;
        drops += r.drops;
        resumed += r.resumed;
        refused += r.resume_refused;
        events += r.events;
        not_found += r.not_found;
        restarts += r.restarts;
    }
    eprintln!(
        "sim http_world: {} seeds, {requests} requests ({total:?}), {events} SSE events, {drops} drops, {resumed} resumed, {refused} resumes refused (409), {restarts} restarts, {not_found} 404s after restarts and expiry",
        reports.len()
    );
    assert_eq!(total.ended(), requests, "every request ends exactly once");
    if env_u64("SIM_SEED").is_none() {
        assert!(drops > 0 && resumed > 0 && total.results > 0);
        assert!(
            not_found >= reports.len() as u64,
            "every run ends with an expiry and a 404"
        );
        assert!(restarts > 0 && refused > 0 && total.closed > 0);
    }
}

#[test]
fn http_client_world_holds_the_invariants_over_many_seeds() {
    let reports = seed_loop("http_client_world", |seed| {
        http_client::HttpClientWorld::new(seed).run()
    });
    let mut total = check::Tally::default();
    let mut sum = http_client::Report::default();
    for r in &reports {
        total.add(&r.tally);
        sum.requests += r.requests;
        sum.events += r.events;
        sum.notifications += r.notifications;
        sum.drops += r.drops;
        sum.server_closes += r.server_closes;
        sum.resumes += r.resumes;
        sum.resume_refused += r.resume_refused;
        sum.refused += r.refused;
        sum.restarts += r.restarts;
        sum.expired += r.expired;
        sum.reinitialized += r.reinitialized;
        sum.started_over += r.started_over;
        sum.max_exchanges = sum.max_exchanges.max(r.max_exchanges);
        sum.max_sessions = sum.max_sessions.max(r.max_sessions);
    }
    eprintln!(
        "sim http_client_world: {} seeds, {} requests ({total:?}), {} SSE events, {} server notifications, {} drops, {} early closes, {} resumes, {} resumes refused (409), {} connections refused, {} restarts, {} expired (404), {} re-initialized, {} clients started over, at most {} exchanges and {} server sessions at once",
        reports.len(),
        sum.requests,
        sum.events,
        sum.notifications,
        sum.drops,
        sum.server_closes,
        sum.resumes,
        sum.resume_refused,
        sum.refused,
        sum.restarts,
        sum.expired,
        sum.reinitialized,
        sum.started_over,
        sum.max_exchanges,
        sum.max_sessions,
    );
    assert_eq!(
        total.ended(),
        sum.requests,
        "every request ends exactly once"
    );
    if env_u64("SIM_SEED").is_none() {
        assert!(sum.drops > 0 && sum.resumes > 0 && sum.server_closes > 0);
        assert!(sum.restarts > 0 && sum.refused > 0 && sum.resume_refused > 0);
        assert!(total.results > 0 && total.errors > 0 && total.timed_out > 0);
        assert!(sum.notifications > 0);
        assert!(
            sum.expired >= reports.len() as u64 && sum.reinitialized >= reports.len() as u64,
            "every run ends with an expiry, a 404 and a new session"
        );
    }
}

/// Seeds of the scale-out world: a tenth of `SIM_SEEDS` (at least 20; each seed runs two to
/// four endpoints), so the CI budget stays what it was.
fn scale_seeds() -> u64 {
    (env_u64("SIM_SEEDS").unwrap_or(DEFAULT_SEEDS) / 10).max(20)
}

#[test]
fn scale_world_holds_the_invariants_over_many_seeds() {
    let seeds = scale_seeds();
    let reports = seed_loop("scale_world", |seed| {
        if env_u64("SIM_SEED").is_none() && seed >= seeds {
            return Ok(None);
        }
        scale::ScaleWorld::new(seed).run().map(Some)
    });
    let reports: Vec<scale::Report> = reports.into_iter().flatten().collect();
    let mut total = check::Tally::default();
    let mut sum = scale::Report::default();
    for r in &reports {
        total.add(&r.tally);
        sum.requests += r.requests;
        sum.instances += r.instances;
        sum.crashes += r.crashes;
        sum.restored += r.restored;
        sum.unavailable += r.unavailable;
        sum.failed += r.failed;
        sum.not_found += r.not_found;
        sum.forwarded += r.forwarded;
    }
    eprintln!(
        "sim scale_world: {} seeds, {} instances, {} requests ({total:?}), {} restores, {} crashes, {} answered 503 (store unreachable), {} failed by the transport, {} 404s, {} cancellations forwarded",
        reports.len(),
        sum.instances,
        sum.requests,
        sum.restored,
        sum.crashes,
        sum.unavailable,
        sum.failed,
        sum.not_found,
        sum.forwarded,
    );
    assert_eq!(
        total.ended(),
        sum.requests,
        "every request ends exactly once"
    );
    if env_u64("SIM_SEED").is_none() {
        assert!(sum.crashes > 0 && sum.unavailable > 0 && sum.failed > 0);
        assert!(sum.restored > 0 && total.results > 0 && total.errors > 0);
    }
}

/// The checks can fail: a client that resumes from the start of the stream (duplicates) and
/// one that silently loses chunks (gaps) are both caught on some seed, as is a pipe that
/// reorders (progress out of order).
#[test]
fn the_checks_catch_a_broken_transport() {
    let http = |sabotage| {
        move |seed| {
            let mut w = http::HttpWorld::new(seed);
            w.sabotage = sabotage;
            w.run().map(drop)
        }
    };
    let http_client = |sabotage| {
        move |seed| {
            let mut w = http_client::HttpClientWorld::new(seed);
            w.sabotage = sabotage;
            w.run().map(drop)
        }
    };
    caught(
        "resuming from the start",
        "duplicate",
        http(http::Sabotage::ResumeFromStart),
    );
    caught("lost chunks", "progress", http(http::Sabotage::LoseChunks));
    caught(
        "the real client resuming from the start",
        "duplicate",
        http_client(http::Sabotage::ResumeFromStart),
    );
    caught(
        "chunks lost on the way to the real client",
        "gap",
        http_client(http::Sabotage::LoseChunks),
    );
    caught(
        "a request refused with 503 sent again",
        "duplicate",
        |seed| {
            let mut w = scale::ScaleWorld::new(seed);
            w.sabotage = scale::Sabotage::RetryRefused;
            w.run().map(drop)
        },
    );
    caught("a reordering pipe", "progress", |seed| {
        let mut w = stdio::StdioWorld::new(seed);
        w.reorder_pipe();
        w.run().map(drop)
    });
}

/// Some seed of the first 60 fails `world` with an error containing `needle`.
fn caught(what: &str, needle: &str, world: impl Fn(u64) -> Result<(), String>) {
    let failures: Vec<String> = (0..60).filter_map(|seed| world(seed).err()).collect();
    assert!(
        failures.iter().any(|e| e.contains(needle)),
        "{what} went unnoticed: {failures:?}"
    );
}
