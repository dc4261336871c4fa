//! The demo server on stdin/stdout driven by tokio: a reader task feeds lines through a
//! channel, jobs run on `tokio::spawn`, the wake hook is a `Notify`, timers are
//! `tokio::time::sleep_until(poll_timeout())`. The engine itself knows nothing of tokio.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, Notify};

/// How long to wait for running jobs after stdin ended.
const LINGER: Duration = Duration::from_secs(10);

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut server = mcp_sansio_examples::demo_server("tokio-example", Instant::now());
    let wake = Arc::new(Notify::new());
    let hook = Arc::clone(&wake);
    // `notify_one` stores a permit when nobody waits yet, so no wake-up is lost.
    server.set_waker(Arc::new(move || hook.notify_one()));
    let mut lines = spawn_reader();
    let running = Arc::new(AtomicUsize::new(0));
    let mut stdout = tokio::io::stdout();
    let mut buf = Vec::new();
    let mut eof_at: Option<Instant> = None;
    loop {
        while server.poll_transmit(&mut buf).is_some() {
            buf.push(b'\n');
        }
        if !buf.is_empty() {
            if stdout.write_all(&buf).await.is_err() || stdout.flush().await.is_err() {
                return;
            }
            buf.clear();
        }
        while let Some(job) = server.poll_job() {
            let running = Arc::clone(&running);
            running.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                job.await;
                running.fetch_sub(1, Ordering::SeqCst);
            });
        }
        while let Some(event) = server.poll_event() {
            eprintln!("tokio-example: {event:?}");
        }
        if let Some(at) = eof_at {
            if running.load(Ordering::SeqCst) == 0 || at.elapsed() > LINGER {
                while server.poll_transmit(&mut buf).is_some() {
                    buf.push(b'\n');
                }
                let _ = stdout.write_all(&buf).await;
                let _ = stdout.flush().await;
                return;
            }
        }
        let deadline = server.poll_timeout();
        let timer = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None if eof_at.is_some() => tokio::time::sleep(Duration::from_millis(50)).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            line = lines.recv(), if eof_at.is_none() => {
                let now = Instant::now();
                match line {
                    Some(line) => server.handle_input(now, Bytes::from(line)),
                    None => eof_at = Some(now),
                }
            }
            // Outbox items are drained by the next `poll_transmit`.
            () = wake.notified() => {}
            () = timer => {
                let now = Instant::now();
                if deadline.is_some_and(|at| at <= now) {
                    server.handle_timeout(now);
                }
            }
        }
    }
}

/// Reads stdin line by line on its own task (newline and `\r` stripped, empty lines skipped).
fn spawn_reader() -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel(1024);
    tokio::spawn(async move {
        let mut stdin = BufReader::new(tokio::io::stdin());
        loop {
            let mut line = Vec::new();
            match stdin.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    while matches!(line.last(), Some(b'\n' | b'\r')) {
                        line.pop();
                    }
                    if !line.is_empty() && tx.send(line).await.is_err() {
                        return;
                    }
                }
            }
        }
    });
    rx
}
