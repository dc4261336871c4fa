//! The live progress line on stderr: phase, elapsed time, calls completed, the rate over the
//! last interval and the error count, rewritten in place about twice a second.

use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::load::Control;

/// How often the line is rewritten.
const INTERVAL: Duration = Duration::from_millis(500);

/// A running progress line; [`Progress::finish`] stops it and ends the line.
pub(crate) struct Progress {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<()>,
}

impl Progress {
    /// Starts the line for the run `control` describes.
    pub(crate) fn start(control: Arc<Control>) -> Self {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let mut last = (Instant::now(), 0u64);
            let mut drawn = false;
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(INTERVAL) {
                let now = Instant::now();
                let completed = control.completed.load(Ordering::Relaxed);
                let errors = control.errors.load(Ordering::Relaxed);
                let rate = (completed - last.1) as f64 / now.duration_since(last.0).as_secs_f64();
                last = (now, completed);
                let line = match (control.started(), control.measure_from()) {
                    (None, _) | (_, None) => "starting sessions…".to_owned(),
                    (Some(start), Some(from)) if now < from => {
                        format!(
                            "warming up {:.1} s",
                            now.duration_since(start).as_secs_f64()
                        )
                    }
                    (_, Some(from)) => format!(
                        "{:.1} s  {completed} calls  {rate:.0}/s  {errors} errors",
                        now.duration_since(from).as_secs_f64()
                    ),
                };
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "\r\x1b[2K{line}");
                let _ = err.flush();
                drawn = true;
            }
            if drawn {
                let _ = writeln!(std::io::stderr());
            }
        });
        Self { stop, thread }
    }

    /// Stops the line and moves stderr to a fresh line.
    pub(crate) fn finish(self) {
        let _ = self.stop.send(());
        let _ = self.thread.join();
    }
}
