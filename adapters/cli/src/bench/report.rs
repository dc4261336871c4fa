//! The report of a run: the same figures as a table for people and as one JSON object for
//! scripts. Throughput counts successful calls; latencies are those of successful calls.

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{json, Value};

use super::answers::AnswerTally;
use super::check::ErrorKind;
use super::cli::Stop;
use super::histogram::Histogram;
use super::mix::Mix;
use super::rss::ServerMemory;
use super::stats::{OpStats, Recorder};
use super::transport::ServerIdentity;

/// The correlation counters summed over the sessions (see `mcp_sansio::session::Stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Correlation {
    /// Responses whose id matched no request of ours.
    pub(crate) unknown: u64,
    /// Responses to calls that had already timed out.
    pub(crate) late: u64,
    /// Malformed responses.
    pub(crate) invalid: u64,
}

/// Everything the report shows.
pub(crate) struct Report<'a> {
    pub(crate) transport: &'static str,
    pub(crate) target: String,
    /// Who answered the first session's handshake.
    pub(crate) server: ServerIdentity,
    pub(crate) mix: &'a Mix,
    pub(crate) sessions: usize,
    pub(crate) concurrency: usize,
    pub(crate) stop: Stop,
    pub(crate) warmup: Duration,
    /// From the end of the warmup to the last measured completion.
    pub(crate) elapsed: Duration,
    pub(crate) recorder: &'a Recorder,
    pub(crate) sessions_lost: usize,
    pub(crate) correlation: Correlation,
    /// Every call's answer, counted (warmup included).
    pub(crate) answers: AnswerTally,
    /// TCP connections the sessions opened (URL targets).
    pub(crate) connections_opened: u64,
    /// URL: whether each session held the standalone GET stream.
    pub(crate) get_stream: bool,
    /// An idle run: how long the sessions were held without calls.
    pub(crate) idle: Option<Duration>,
    /// With `--server-pid`: the server's memory.
    pub(crate) server_memory: Option<ServerMemory>,
}

impl Report<'_> {
    /// Errors the exit status reflects: failed calls and responses that matched no call.
    pub(crate) fn problems(&self) -> u64 {
        self.recorder.total().error_count()
            + self.correlation.unknown
            + self.correlation.invalid
            + self.sessions_lost as u64
            + self.answers.lost
            + self.answers.duplicated
    }

    /// Answers to a call already answered or to no call: the bench's count plus the responses
    /// the client sessions matched to no pending request.
    fn duplicated(&self) -> u64 {
        self.answers.duplicated + self.correlation.unknown
    }

    fn throughput(&self, stats: &OpStats) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            stats.latency.count() as f64 / secs
        } else {
            0.0
        }
    }

    /// The report as one JSON object.
    pub(crate) fn to_json(&self) -> Value {
        let total = self.recorder.total();
        let ops: Vec<Value> = self
            .mix
            .entries
            .iter()
            .zip(&self.recorder.ops)
            .map(|(entry, stats)| {
                json!({
                    "op": entry.op.label(),
                    "weight": entry.weight,
                    "completed": stats.completed(),
                    "ok": stats.latency.count(),
                    "errors": errors_json(stats),
                    "throughput_per_s": round1(self.throughput(stats)),
                    "latency_us": latency_json(&stats.latency),
                })
            })
            .collect();
        let samples: Vec<Value> = self
            .recorder
            .samples
            .iter()
            .map(|(message, count)| json!({"message": message, "count": count}))
            .collect();
        let (requests, duration_s) = match self.stop {
            Stop::Requests(n) => (Some(n), None),
            Stop::Duration(d) => (None, Some(d.as_secs_f64())),
        };
        json!({
            "transport": self.transport,
            "target": self.target,
            "server": {
                "name": self.server.name,
                "version": self.server.version,
                "protocol_version": self.server.protocol_version,
            },
            "sessions": self.sessions,
            "concurrency": self.concurrency,
            "requests": requests,
            "duration_s": duration_s,
            "warmup_s": self.warmup.as_secs_f64(),
            "elapsed_s": self.elapsed.as_secs_f64(),
            "completed": total.completed(),
            "ok": total.latency.count(),
            "errors": errors_json(&total),
            "throughput_per_s": round1(self.throughput(&total)),
            "latency_us": latency_json(&total.latency),
            "ops": ops,
            "error_samples": samples,
            "errors_not_sampled": self.recorder.unsampled,
            "sessions_lost": self.sessions_lost,
            "responses_unmatched": self.correlation.unknown,
            "responses_late": self.correlation.late,
            "responses_invalid": self.correlation.invalid,
            "answers": {
                "sent": self.answers.sent,
                "answered": self.answers.answered,
                "lost": self.answers.lost,
                "duplicated": self.duplicated(),
            },
            "connections_opened": self.connections_opened,
            "get_stream": self.get_stream,
            "idle_s": self.idle.map(|d| d.as_secs_f64()),
            "server_memory_kib": self.server_memory.map(|m| json!({
                "start_rss": m.start_rss_kib,
                "max_rss": m.max_rss_kib,
                "end_rss": m.end_rss_kib,
                "hwm": m.hwm_kib,
                "samples": m.samples,
            })),
        })
    }

    /// The report as a table.
    pub(crate) fn to_table(&self) -> String {
        let total = self.recorder.total();
        let mut out = String::new();
        let stop = match self.stop {
            Stop::Requests(n) => format!("{n} requests"),
            Stop::Duration(d) => format!("{} s", d.as_secs_f64()),
        };
        let _ = writeln!(out, "target      {} `{}`", self.transport, self.target);
        let _ = writeln!(
            out,
            "server      {} {} (protocol {})",
            self.server.name, self.server.version, self.server.protocol_version
        );
        let _ = writeln!(
            out,
            "load        {} session(s) x {} in flight, {stop} after {} s warmup",
            self.sessions,
            self.concurrency,
            self.warmup.as_secs_f64()
        );
        let _ = writeln!(
            out,
            "completed   {} in {:.3} s: {} ok, {} errors",
            total.completed(),
            self.elapsed.as_secs_f64(),
            total.latency.count(),
            total.error_count()
        );
        let _ = writeln!(out, "throughput  {:.1} ok calls/s", self.throughput(&total));
        let a = self.answers;
        let _ = writeln!(
            out,
            "answers     {} calls sent (warmup included): {} answered, {} lost, {} duplicated",
            a.sent,
            a.answered,
            a.lost,
            self.duplicated()
        );
        if self.transport == "http" {
            let stream = if self.get_stream {
                ", each session holding its GET stream"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "connections {} opened{stream}",
                self.connections_opened
            );
        }
        if let Some(idle) = self.idle {
            let _ = writeln!(
                out,
                "idle        sessions held {} s without calls",
                idle.as_secs_f64()
            );
        }
        if let Some(m) = self.server_memory {
            let _ = writeln!(
                out,
                "server RSS  {} at start, {} highest sampled, {} at end, VmHWM {} ({} samples)",
                mib(m.start_rss_kib),
                mib(m.max_rss_kib),
                mib(m.end_rss_kib),
                mib(m.hwm_kib),
                m.samples
            );
        }
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{:<28} {:>9} {:>7} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "op", "ok", "errors", "calls/s", "p50", "p90", "p99", "max"
        );
        let rows = self.mix.entries.iter().zip(&self.recorder.ops);
        let rows = rows.map(|(e, s)| (e.op.label(), s));
        for (label, stats) in rows.chain(std::iter::once(("all".to_string(), &total))) {
            let h = &stats.latency;
            let _ = writeln!(
                out,
                "{:<28} {:>9} {:>7} {:>10.1} {:>10} {:>10} {:>10} {:>10}",
                truncate(&label, 28),
                h.count(),
                stats.error_count(),
                self.throughput(stats),
                human(h.value_at(0.5)),
                human(h.value_at(0.9)),
                human(h.value_at(0.99)),
                human(h.max()),
            );
        }
        if total.error_count() > 0 {
            let _ = writeln!(out, "\nerrors");
            for kind in ErrorKind::ALL {
                let n = total.errors[kind.index()];
                if n > 0 {
                    let _ = writeln!(out, "  {:<16} {n}", kind.name());
                }
            }
            for (message, count) in &self.recorder.samples {
                let _ = writeln!(out, "  {count:>8} x {message}");
            }
            if self.recorder.unsampled > 0 {
                let _ = writeln!(out, "  {:>8} x (other messages)", self.recorder.unsampled);
            }
        }
        let c = self.correlation;
        if self.sessions_lost > 0 || c.unknown + c.late + c.invalid > 0 {
            let _ = writeln!(
                out,
                "\nsessions lost {}; responses matching no call {}, late {}, invalid {}",
                self.sessions_lost, c.unknown, c.late, c.invalid
            );
        }
        out
    }
}

fn errors_json(stats: &OpStats) -> Value {
    let mut map = serde_json::Map::new();
    map.insert("total".into(), stats.error_count().into());
    for kind in ErrorKind::ALL {
        map.insert(kind.name().into(), stats.errors[kind.index()].into());
    }
    Value::Object(map)
}

fn latency_json(h: &Histogram) -> Value {
    let us = |ns: u64| round1(ns as f64 / 1e3);
    json!({
        "min": us(h.min()),
        "mean": us(h.mean()),
        "p50": us(h.value_at(0.5)),
        "p90": us(h.value_at(0.9)),
        "p99": us(h.value_at(0.99)),
        "max": us(h.max()),
    })
}

/// KiB as MiB for people.
fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// A latency for people: µs below 1 ms, ms below 1 s, else s.
fn human(ns: u64) -> String {
    let ns = ns as f64;
    if ns < 1e6 {
        format!("{:.1}us", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2}ms", ns / 1e6)
    } else {
        format!("{:.3}s", ns / 1e9)
    }
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(max - 1).collect();
        cut.push('~');
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::check::CallError;
    use std::time::Instant;

    fn report_of<'a>(mix: &'a Mix, recorder: &'a Recorder) -> Report<'a> {
        Report {
            transport: "stdio",
            target: "srv --x".into(),
            server: ServerIdentity {
                name: "srv".into(),
                version: "1.0".into(),
                protocol_version: "2025-11-25".into(),
            },
            mix,
            sessions: 2,
            concurrency: 8,
            stop: Stop::Requests(4),
            warmup: Duration::ZERO,
            elapsed: Duration::from_secs(2),
            recorder,
            sessions_lost: 0,
            correlation: Correlation::default(),
            answers: AnswerTally::default(),
            connections_opened: 0,
            get_stream: false,
            idle: None,
            server_memory: None,
        }
    }

    #[test]
    fn json_carries_counts_rates_percentiles_and_errors() {
        let mix = Mix::parse("ping=1,tool:t=1", &[]).unwrap();
        let mut recorder = Recorder::new(2);
        let now = Instant::now();
        for us in [100, 200, 300] {
            recorder.record(0, Duration::from_micros(us), now, Ok(()));
        }
        let failed = CallError {
            kind: ErrorKind::ToolError,
            message: "tool:t: isError: true".into(),
        };
        recorder.record(1, Duration::from_micros(9), now, Err(failed));
        let report = report_of(&mix, &recorder);
        let json = report.to_json();
        assert_eq!(json["completed"], 4);
        assert_eq!(json["ok"], 3);
        assert_eq!(json["errors"]["total"], 1);
        assert_eq!(json["errors"]["tool_is_error"], 1);
        assert_eq!(json["throughput_per_s"], 1.5);
        let p50 = json["latency_us"]["p50"].as_f64().unwrap();
        assert!(
            (200.0..=200.0 * (1.0 + 1.0 / 128.0)).contains(&p50),
            "{p50}"
        );
        assert_eq!(json["latency_us"]["max"], 300.0);
        assert_eq!(json["ops"][1]["op"], "tool:t");
        assert_eq!(json["ops"][1]["completed"], 1);
        assert_eq!(json["error_samples"][0]["count"], 1);
        assert_eq!(json["requests"], 4);
        assert_eq!(json["server"]["protocol_version"], "2025-11-25");
        assert_eq!(report.problems(), 1);
        let table = report.to_table();
        assert!(table.contains("tool_is_error"), "{table}");
        assert!(table.contains("1 x tool:t: isError: true"), "{table}");
    }

    #[test]
    fn unmatched_responses_and_lost_sessions_are_problems() {
        let mix = Mix::parse("ping", &[]).unwrap();
        let recorder = Recorder::new(1);
        let mut report = report_of(&mix, &recorder);
        assert_eq!(report.problems(), 0);
        report.correlation.unknown = 2;
        report.sessions_lost = 1;
        assert_eq!(report.problems(), 3);
        assert!(report.to_table().contains("sessions lost 1"));
    }

    #[test]
    fn lost_and_duplicated_answers_are_problems_and_reported() {
        let mix = Mix::parse("ping", &[]).unwrap();
        let recorder = Recorder::new(1);
        let mut report = report_of(&mix, &recorder);
        report.answers = AnswerTally {
            sent: 10,
            answered: 8,
            lost: 1,
            duplicated: 1,
        };
        report.correlation.unknown = 1;
        assert_eq!(report.problems(), 3);
        let json = report.to_json();
        assert_eq!(json["answers"]["lost"], 1);
        assert_eq!(json["answers"]["duplicated"], 2);
        assert!(report
            .to_table()
            .contains("8 answered, 1 lost, 2 duplicated"));
        report.server_memory = Some(ServerMemory {
            start_rss_kib: 1024,
            max_rss_kib: 2048,
            end_rss_kib: 1536,
            hwm_kib: 4096,
            samples: 3,
        });
        assert_eq!(report.to_json()["server_memory_kib"]["max_rss"], 2048);
        assert!(report.to_table().contains("2.0 MiB highest sampled"));
    }

    #[test]
    fn latencies_read_well() {
        assert_eq!(human(12_345), "12.3us");
        assert_eq!(human(12_345_678), "12.35ms");
        assert_eq!(human(2_500_000_000), "2.500s");
        assert_eq!(truncate("abcdef", 4), "abc~");
    }
}
