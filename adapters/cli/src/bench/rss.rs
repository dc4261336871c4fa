//! The server's memory during a run (`--server-pid`): a thread reads `/proc/PID/status` every
//! [`PERIOD`] and keeps the first and highest `VmRSS`; at the end `VmHWM` (the kernel's own
//! peak, over the process's whole life) is read once more.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the RSS is sampled.
pub(crate) const PERIOD: Duration = Duration::from_millis(100);

/// One reading of `/proc/PID/status`, in KiB.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Reading {
    pub(crate) rss_kib: u64,
    pub(crate) hwm_kib: u64,
}

/// What the sampler saw, in KiB.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ServerMemory {
    /// VmRSS at the first sample (before the sessions opened).
    pub(crate) start_rss_kib: u64,
    /// The highest VmRSS sampled.
    pub(crate) max_rss_kib: u64,
    /// VmRSS at the last sample (the sampler stops once every session has closed).
    pub(crate) end_rss_kib: u64,
    /// VmHWM at the end: the process's peak RSS since it started.
    pub(crate) hwm_kib: u64,
    /// Samples taken.
    pub(crate) samples: u64,
}

/// Reads `VmRSS` and `VmHWM` out of a `/proc/PID/status` text.
pub(crate) fn parse_status(text: &str) -> Option<Reading> {
    let field = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|rest| rest.trim().strip_suffix("kB"))
            .and_then(|n| n.trim().parse::<u64>().ok())
    };
    Some(Reading {
        rss_kib: field("VmRSS")?,
        hwm_kib: field("VmHWM")?,
    })
}

/// Reads process `pid`'s memory now.
pub(crate) fn read(pid: u32) -> Option<Reading> {
    parse_status(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?)
}

impl ServerMemory {
    /// Takes one reading into account.
    pub(crate) fn observe(&mut self, reading: Reading) {
        if self.samples == 0 {
            self.start_rss_kib = reading.rss_kib;
        }
        self.samples += 1;
        self.max_rss_kib = self.max_rss_kib.max(reading.rss_kib);
        self.end_rss_kib = reading.rss_kib;
        self.hwm_kib = self.hwm_kib.max(reading.hwm_kib);
    }
}

/// The sampling thread.
pub(crate) struct Sampler {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<ServerMemory>,
}

impl Sampler {
    /// Starts sampling `pid`; fails when it cannot be read now.
    pub(crate) fn start(pid: u32) -> Result<Self, String> {
        let first = read(pid).ok_or(format!(
            "--server-pid {pid}: cannot read VmRSS/VmHWM from /proc/{pid}/status"
        ))?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::Builder::new()
            .name("bench-rss".into())
            .spawn(move || {
                let mut memory = ServerMemory::default();
                memory.observe(first);
                while !stopped.load(Ordering::Relaxed) {
                    std::thread::sleep(PERIOD);
                    match read(pid) {
                        Some(reading) => memory.observe(reading),
                        None => break, // the process is gone
                    }
                }
                memory
            })
            .map_err(|e| format!("cannot start the RSS sampler: {e}"))?;
        Ok(Sampler { stop, thread })
    }

    /// Stops sampling and returns what was seen.
    pub(crate) fn finish(self) -> ServerMemory {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str = "Name:\tmcp-sansio\nVmPeak:\t  200000 kB\nVmHWM:\t   46012 kB\n\
        VmRSS:\t   30100 kB\nRssAnon:\t   20000 kB\nThreads:\t3\n";

    #[test]
    fn rss_and_hwm_are_read_from_the_status_text() {
        assert_eq!(
            parse_status(STATUS),
            Some(Reading {
                rss_kib: 30_100,
                hwm_kib: 46_012
            })
        );
        assert_eq!(parse_status("Name:\tx\nVmRSS:\t 1 kB\n"), None);
        assert_eq!(parse_status("VmRSS:\tlots kB\nVmHWM:\t1 kB\n"), None);
    }

    #[test]
    fn the_sampler_keeps_the_first_the_highest_and_the_last() {
        let mut memory = ServerMemory::default();
        for (rss, hwm) in [(10, 10), (50, 50), (20, 50)] {
            memory.observe(Reading {
                rss_kib: rss,
                hwm_kib: hwm,
            });
        }
        assert_eq!(
            memory,
            ServerMemory {
                start_rss_kib: 10,
                max_rss_kib: 50,
                end_rss_kib: 20,
                hwm_kib: 50,
                samples: 3
            }
        );
    }

    #[test]
    fn this_process_can_be_read() {
        let reading = read(std::process::id()).expect("/proc/self/status");
        assert!(reading.rss_kib > 0 && reading.hwm_kib >= reading.rss_kib);
    }
}
