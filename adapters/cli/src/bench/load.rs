//! The load itself: [`Control`] (shared by every session thread) decides when calls start,
//! count and stop; [`drive_session`] keeps `concurrency` calls in flight on one initialized
//! client, checks every answer and records it. Transport-independent: it only needs a
//! [`ClientHandle`].

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use mcp_sansio::app::client::{CallOptions, ClientError, ClientHandle};
use smol::lock::Barrier;

use super::answers::{AnswerTally, Ledger};
use super::check::{check, no_answer, ErrorKind};
use super::cli::{Settings, Stop};
use super::mix::{Mix, Scheduler};
use super::stats::Recorder;

/// What a worker may do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Admission {
    /// Send a call that is not counted.
    Warmup,
    /// Send a call that is counted.
    Measured,
    /// Send nothing more.
    Stop,
}

/// Run-wide state shared by the session threads: the start line, the stop rule, the counters
/// the progress line reads.
pub(crate) struct Control {
    stop: Stop,
    warmup: Duration,
    /// Every session waits here once (ready or failed) so the load starts together.
    ready: Barrier,
    start: OnceLock<Instant>,
    aborted: AtomicBool,
    tickets: AtomicU64,
    /// Measured calls completed so far (successes and errors).
    pub(crate) completed: AtomicU64,
    /// Measured calls that failed so far.
    pub(crate) errors: AtomicU64,
}

impl Control {
    /// Control for `sessions` sessions.
    pub(crate) fn new(stop: Stop, warmup: Duration, sessions: usize) -> Self {
        Self {
            stop,
            warmup,
            ready: Barrier::new(sessions),
            start: OnceLock::new(),
            aborted: AtomicBool::new(false),
            tickets: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            errors: AtomicU64::new(0),
        }
    }

    /// A session is ready (`ok`) or could not start; waits for every other session. Returns
    /// false when the run is aborted (some session failed).
    pub(crate) async fn arrive(&self, ok: bool) -> bool {
        if !ok {
            self.aborted.store(true, Ordering::SeqCst);
        }
        self.ready.wait().await;
        self.start.get_or_init(Instant::now);
        !self.aborted.load(Ordering::SeqCst)
    }

    /// When the load started (after every session was ready), once it has.
    pub(crate) fn started(&self) -> Option<Instant> {
        self.start.get().copied()
    }

    /// When the warmup ends and measuring begins, once the load has started.
    pub(crate) fn measure_from(&self) -> Option<Instant> {
        self.started().map(|start| start + self.warmup)
    }

    /// Whether a worker may start another call at `now`, and whether it counts.
    pub(crate) fn admit(&self, now: Instant) -> Admission {
        let Some(measure_from) = self.measure_from() else {
            return Admission::Stop;
        };
        if self.aborted.load(Ordering::Relaxed) {
            return Admission::Stop;
        }
        if now < measure_from {
            return Admission::Warmup;
        }
        match self.stop {
            Stop::Requests(n) if self.tickets.fetch_add(1, Ordering::Relaxed) < n => {
                Admission::Measured
            }
            Stop::Duration(d) if now < measure_from + d => Admission::Measured,
            _ => Admission::Stop,
        }
    }

    /// How long the measured part of the run lasted: from the end of the warmup to the last
    /// completion. A duration run that was not cut short (no session lost) lasted at least its
    /// duration even when its last call completed a hair before the deadline (a worker stops
    /// when a clock reading after that completion is past the deadline), so the window is
    /// never reported shorter than the duration asked for.
    pub(crate) fn measured_window(
        &self,
        last_completion: Option<Instant>,
        cut_short: bool,
    ) -> Duration {
        let (Some(from), Some(last)) = (self.measure_from(), last_completion) else {
            return Duration::ZERO;
        };
        let measured = last.saturating_duration_since(from);
        match self.stop {
            Stop::Duration(d) if !cut_short && !self.aborted.load(Ordering::Relaxed) => {
                measured.max(d)
            }
            _ => measured,
        }
    }

    fn count(&self, failed: bool) {
        self.completed.fetch_add(1, Ordering::Relaxed);
        if failed {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// What one session's load produced.
pub(crate) struct SessionLoad {
    pub(crate) recorder: Recorder,
    /// The server went away (calls failed with `closed`) before the run ended.
    pub(crate) lost: bool,
    /// Every call's answer, counted.
    pub(crate) answers: AnswerTally,
}

impl SessionLoad {
    /// A session that made no calls (an idle run).
    pub(crate) fn idle(mix: &Mix) -> Self {
        SessionLoad {
            recorder: Recorder::new(mix.entries.len()),
            lost: false,
            answers: AnswerTally::default(),
        }
    }
}

/// Per-session state shared by its workers (one thread, so `RefCell`).
struct Shared {
    scheduler: Scheduler,
    recorder: Recorder,
    ledger: Ledger,
    lost: bool,
}

/// What a failed call says about the transport under it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// The failure is an answer (or a timeout): the checks judge it.
    Answered,
    /// The call got no answer at all (its connection broke): `closed`, the session goes on.
    Broken,
    /// The server cannot be reached any more: `closed`, and the session's load ends.
    Unreachable,
}

/// A transport's rule for telling those apart.
pub(crate) type ServerGone = fn(&ClientError) -> Delivery;

/// Keeps `settings.concurrency` calls in flight on `handle` until `control` says stop or the
/// session is lost (the session closed, or `gone` says the server is unreachable).
pub(crate) async fn drive_session(
    handle: ClientHandle,
    mix: &Mix,
    settings: &Settings,
    control: &Control,
    gone: ServerGone,
) -> SessionLoad {
    let shared = RefCell::new(Shared {
        scheduler: Scheduler::new(mix),
        recorder: Recorder::new(mix.entries.len()),
        ledger: Ledger::default(),
        lost: false,
    });
    let executor = smol::LocalExecutor::new();
    let shared = Rc::new(shared);
    executor
        .run(async {
            let workers: Vec<_> = (0..settings.concurrency)
                .map(|_| {
                    let (handle, shared) = (handle.clone(), shared.clone());
                    let call = Call {
                        mix,
                        timeout: settings.timeout,
                        gone,
                    };
                    executor.spawn(worker(handle, call, control, shared))
                })
                .collect();
            for worker in workers {
                worker.await;
            }
        })
        .await;
    // Every worker has finished; take the tallies out (no other owner can be left using them).
    let mut shared = shared.borrow_mut();
    let recorder = std::mem::replace(&mut shared.recorder, Recorder::new(0));
    SessionLoad {
        recorder,
        lost: shared.lost,
        answers: shared.ledger.tally(),
    }
}

/// What a worker calls and how it judges the answers.
struct Call<'a> {
    mix: &'a Mix,
    timeout: Duration,
    gone: ServerGone,
}

/// One call at a time, back to back, until told to stop or the session is lost.
async fn worker(
    handle: ClientHandle,
    call: Call<'_>,
    control: &Control,
    shared: Rc<RefCell<Shared>>,
) {
    let Call { mix, timeout, gone } = call;
    loop {
        if shared.borrow().lost {
            return;
        }
        let admission = control.admit(Instant::now());
        if admission == Admission::Stop {
            return;
        }
        let (index, number) = {
            let mut shared = shared.borrow_mut();
            (shared.scheduler.next_index(), shared.ledger.send())
        };
        let entry = &mix.entries[index];
        let options = CallOptions {
            timeout: Some(timeout),
            ..CallOptions::default()
        };
        let sent = Instant::now();
        let answer = handle
            .request_raw(entry.op.method(), entry.params.clone(), options)
            .await;
        let done = Instant::now();
        let delivery = match &answer {
            Err(error) => gone(error),
            Ok(_) => Delivery::Answered,
        };
        let outcome = match answer {
            Err(error) if delivery != Delivery::Answered => Err(no_answer(&entry.op, &error)),
            answer => check(&entry.op, answer),
        };
        let mut shared = shared.borrow_mut();
        let answered = outcome
            .as_ref()
            .map_or_else(|e| e.kind.answered(), |_| true);
        shared.ledger.settle(number, answered);
        let closed = matches!(&outcome, Err(e) if e.kind == ErrorKind::Closed);
        if (closed && delivery == Delivery::Answered) || delivery == Delivery::Unreachable {
            shared.lost = true;
        }
        if admission == Admission::Measured {
            control.count(outcome.is_err());
            shared
                .recorder
                .record(index, done.duration_since(sent), done, outcome);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_admitted_before_every_session_arrived() {
        let control = Control::new(Stop::Requests(5), Duration::ZERO, 2);
        assert_eq!(control.admit(Instant::now()), Admission::Stop);
    }

    #[test]
    fn a_request_budget_is_shared_exactly() {
        let control = Control::new(Stop::Requests(3), Duration::ZERO, 1);
        assert!(smol::block_on(control.arrive(true)));
        let now = Instant::now();
        let admitted: Vec<_> = (0..5).map(|_| control.admit(now)).collect();
        let (m, s) = (Admission::Measured, Admission::Stop);
        assert_eq!(admitted, [m, m, m, s, s]);
    }

    #[test]
    fn warmup_then_a_measured_window() {
        let warmup = Duration::from_secs(5);
        let control = Control::new(Stop::Duration(Duration::from_secs(10)), warmup, 1);
        assert!(smol::block_on(control.arrive(true)));
        let from = control.measure_from().unwrap();
        assert_eq!(
            control.admit(from - Duration::from_secs(1)),
            Admission::Warmup
        );
        assert_eq!(control.admit(from), Admission::Measured);
        assert_eq!(
            control.admit(from + Duration::from_secs(9)),
            Admission::Measured
        );
        assert_eq!(
            control.admit(from + Duration::from_secs(10)),
            Admission::Stop
        );
    }

    /// A duration run whose last call completed just before the deadline measured the whole
    /// duration (CI once saw 0.99999998 s for `--duration 1s`); one cut short by a lost
    /// session, or a request-count run, measured up to its last completion.
    #[test]
    fn the_measured_window_of_a_duration_run_is_never_shorter_than_its_duration() {
        let second = Duration::from_secs(1);
        let control = Control::new(Stop::Duration(second), Duration::ZERO, 1);
        assert_eq!(
            control.measured_window(Some(Instant::now()), false),
            Duration::ZERO
        );
        assert!(smol::block_on(control.arrive(true)));
        let from = control.measure_from().unwrap();
        let just_before = from + second - Duration::from_nanos(20);
        assert_eq!(control.measured_window(Some(just_before), false), second);
        let after = from + second + Duration::from_millis(3);
        assert_eq!(control.measured_window(Some(after), false), after - from);
        let early = from + Duration::from_millis(200);
        assert_eq!(control.measured_window(Some(early), true), early - from);
        assert_eq!(control.measured_window(None, false), Duration::ZERO);

        let counted = Control::new(Stop::Requests(10), Duration::ZERO, 1);
        assert!(smol::block_on(counted.arrive(true)));
        let from = counted.measure_from().unwrap();
        let last = from + Duration::from_millis(200);
        assert_eq!(counted.measured_window(Some(last), false), last - from);
    }

    #[test]
    fn one_failed_session_aborts_the_run() {
        let control = std::sync::Arc::new(Control::new(Stop::Requests(5), Duration::ZERO, 2));
        let other = control.clone();
        let failed = std::thread::spawn(move || smol::block_on(other.arrive(false)));
        assert!(!smol::block_on(control.arrive(true)));
        assert!(!failed.join().unwrap());
        assert_eq!(control.admit(Instant::now()), Admission::Stop);
    }
}
