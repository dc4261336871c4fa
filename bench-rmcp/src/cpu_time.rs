//! A criterion measurement of process CPU time (all threads), for rates per CPU-second.
//!
//! The bench machine is shared: wall time there includes waiting for a core. CPU time counts
//! only the cycles this process ran, on every thread (so a multi-thread runtime is charged for
//! all its workers), which makes "round trips per CPU-second" the per-core rate.

use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::Throughput;

/// Process CPU time (`CLOCK_PROCESS_CPUTIME_ID`).
pub struct CpuTime;

/// The CPU time this process has used so far, all threads.
pub fn process_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant libc defines.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID) failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

impl Measurement for CpuTime {
    type Intermediate = Duration;
    type Value = Duration;

    fn start(&self) -> Duration {
        process_cpu_time()
    }

    fn end(&self, start: Duration) -> Duration {
        process_cpu_time().saturating_sub(start)
    }

    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }

    fn zero(&self) -> Duration {
        Duration::ZERO
    }

    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        &CpuFormatter
    }
}

/// Formats nanoseconds of CPU time, and rates per CPU-second.
struct CpuFormatter;

impl ValueFormatter for CpuFormatter {
    fn scale_values(&self, typical_ns: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = match typical_ns {
            t if t < 1e3 => (1.0, "ns cpu"),
            t if t < 1e6 => (1e-3, "µs cpu"),
            t if t < 1e9 => (1e-6, "ms cpu"),
            _ => (1e-9, "s cpu"),
        };
        values.iter_mut().for_each(|v| *v *= factor);
        unit
    }

    fn scale_throughputs(
        &self,
        typical_ns: f64,
        throughput: &Throughput,
        values: &mut [f64],
    ) -> &'static str {
        let (per_iteration, kind) = match *throughput {
            Throughput::Bytes(n) | Throughput::BytesDecimal(n) => (n as f64, "B"),
            Throughput::Elements(n) => (n as f64, "elem"),
            Throughput::Bits(n) => (n as f64, "bit"),
            Throughput::ElementsAndBytes { elements, .. } => (elements as f64, "elem"),
        };
        let typical_rate = per_iteration * 1e9 / typical_ns;
        let (factor, unit) = match (kind, typical_rate) {
            ("elem", r) if r >= 1e6 => (1e-6, "Melem/cpu-s"),
            ("elem", r) if r >= 1e3 => (1e-3, "Kelem/cpu-s"),
            ("elem", _) => (1.0, "elem/cpu-s"),
            (_, r) if r >= 1e6 => (1e-6, "M/cpu-s"),
            (_, _) => (1e-3, "K/cpu-s"),
        };
        values
            .iter_mut()
            .for_each(|v| *v = per_iteration * 1e9 / *v * factor);
        unit
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}
