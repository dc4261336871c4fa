//! The demo server on stdin/stdout with no async runtime at all: std threads, a channel and
//! `recv_timeout`.
//!
//! - A reader thread reads lines from stdin and sends them over a bounded channel (a full
//!   channel blocks the reader: back-pressure).
//! - The main thread owns the `Server`. Each wake-up reads `Instant::now()` once, feeds the
//!   input, drains `poll_transmit` to stdout, and waits on the channel until the earliest of
//!   new input, a wake from a job, and `poll_timeout()`.
//! - Jobs (async handlers still pending after their inline first poll) run on worker threads
//!   with a tiny park-based `block_on`; their replies go through the server's outbox, and the
//!   wake hook puts a `Wake` on the same channel so the main loop drains them.

use std::future::Future;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;
use std::time::{Duration, Instant};

use bytes::Bytes;

/// What wakes the main loop.
enum Input {
    Line(Vec<u8>),
    Eof,
    Wake,
}

/// How long to wait for running jobs after stdin ended.
const LINGER: Duration = Duration::from_secs(10);

fn main() {
    let mut server = mcp_sansio_examples::demo_server("blocking-example", Instant::now());
    let (tx, rx) = sync_channel::<Input>(1024);
    let wake_tx = tx.clone();
    // `try_send`: a full channel already holds something that will wake the loop.
    server.set_waker(Arc::new(move || {
        let _ = wake_tx.try_send(Input::Wake);
    }));
    spawn_reader(tx);
    let running = Arc::new(AtomicUsize::new(0));
    let mut stdout = std::io::stdout().lock();
    let mut buf = Vec::new();
    let mut eof_at: Option<Instant> = None;
    loop {
        // Drain: every transmit on its own line, then one flush per wake-up.
        while server.poll_transmit(&mut buf).is_some() {
            buf.push(b'\n');
        }
        if !buf.is_empty() {
            if stdout
                .write_all(&buf)
                .and_then(|()| stdout.flush())
                .is_err()
            {
                return; // nobody reads our answers any more
            }
            buf.clear();
        }
        while let Some(job) = server.poll_job() {
            let running = Arc::clone(&running);
            running.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                block_on(job);
                running.fetch_sub(1, Ordering::SeqCst);
            });
        }
        while let Some(event) = server.poll_event() {
            eprintln!("blocking-example: {event:?}");
        }
        if let Some(at) = eof_at {
            let idle = running.load(Ordering::SeqCst) == 0;
            if idle || at.elapsed() > LINGER {
                // A job that just finished pushed its reply before the counter dropped;
                // one last drain sends it.
                while server.poll_transmit(&mut buf).is_some() {
                    buf.push(b'\n');
                }
                let _ = stdout.write_all(&buf).and_then(|()| stdout.flush());
                return;
            }
        }
        let input = match server.poll_timeout() {
            Some(deadline) => {
                let wait = deadline.saturating_duration_since(Instant::now());
                match rx.recv_timeout(wait) {
                    Ok(input) => Some(input),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => Some(Input::Eof),
                }
            }
            // After end of input: poll the job counter now and then.
            None if eof_at.is_some() => rx.recv_timeout(Duration::from_millis(50)).ok(),
            None => Some(rx.recv().unwrap_or(Input::Eof)),
        };
        let now = Instant::now();
        match input {
            Some(Input::Line(line)) => server.handle_input(now, Bytes::from(line)),
            Some(Input::Eof) => {
                eof_at.get_or_insert(now);
            }
            // The outbox is drained by the next `poll_transmit`.
            Some(Input::Wake) => {}
            None => server.handle_timeout(now),
        }
    }
}

/// Reads stdin line by line (newline and `\r` stripped, empty lines skipped).
fn spawn_reader(tx: SyncSender<Input>) {
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut line = Vec::new();
        loop {
            line.clear();
            match stdin.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    while matches!(line.last(), Some(b'\n' | b'\r')) {
                        line.pop();
                    }
                    if !line.is_empty() && tx.send(Input::Line(line.clone())).is_err() {
                        return;
                    }
                }
            }
        }
        let _ = tx.send(Input::Eof);
    });
}

/// Wakes a parked thread.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `future` to completion on this thread, parking while it is pending.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::park();
    }
}
