//! The 2026-07-28 client's stdio wire: a child process, one JSON text per line each way. Each
//! attempt is written as a line; lines are read (bounded) until the core finds the response
//! with the attempt's id; notifications and anything else in between are passed over.

use std::ffi::OsString;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_sansio::app::client::modern::{
    reply_from_message, ModernError, ModernRequest, ModernTransport, Reply, ReplyError,
};
use serde_json::Value;
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::process::{Child, ChildStdin, ChildStdout, Command};

use crate::args::StderrArg;

/// The longest line read from the server.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// Captured server stderr kept at most.
const STDERR_TAIL: usize = 64 * 1024;

/// How long the server gets to exit after its stdin closed, then after SIGKILL.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// A server child process spoken to in 2026-07-28 lines.
pub(crate) struct ModernStdio {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
    pending: Vec<u8>,
    /// Bounds each attempt.
    pub(crate) timeout: Duration,
    stderr_tail: Arc<Mutex<Vec<u8>>>,
}

impl ModernStdio {
    /// Starts `server` (program and arguments) with piped stdin/stdout; its stderr is
    /// inherited, discarded, or kept (the last [`STDERR_TAIL`] bytes, see
    /// [`ModernStdio::stderr_tail`]).
    pub(crate) fn spawn(
        server: &[OsString],
        stderr: StderrArg,
        timeout: Duration,
    ) -> std::io::Result<Self> {
        let mut child = Command::new(&server[0])
            .args(&server[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match stderr {
                StderrArg::Null => Stdio::null(),
                StderrArg::Inherit => Stdio::inherit(),
                StderrArg::Capture => Stdio::piped(),
            })
            .kill_on_drop(true)
            .spawn()?;
        let tail = Arc::new(Mutex::new(Vec::new()));
        if let Some(mut pipe) = child.stderr.take() {
            let sink = Arc::clone(&tail);
            // Always drained, so a chatty server never blocks on a full pipe.
            smol::spawn(async move {
                let mut chunk = [0u8; 4096];
                while let Ok(n @ 1..) = pipe.read(&mut chunk).await {
                    let mut tail = sink.lock().unwrap_or_else(|e| e.into_inner());
                    tail.extend_from_slice(&chunk[..n]);
                    let excess = tail.len().saturating_sub(STDERR_TAIL);
                    tail.drain(..excess);
                }
            })
            .detach();
        }
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("no stdout pipe"))?;
        Ok(ModernStdio {
            child,
            stdin,
            stdout,
            pending: Vec::new(),
            timeout,
            stderr_tail: tail,
        })
    }

    /// The server's last stderr bytes (lossy UTF-8; empty unless captured).
    pub(crate) fn stderr_tail(&self) -> String {
        let tail = self.stderr_tail.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&tail).into_owned()
    }

    /// The stdio shutdown sequence: close stdin, wait, then kill.
    pub(crate) async fn shutdown(mut self) {
        drop(self.stdin.take());
        let exited = smol::future::or(async { self.child.status().await.ok() }, async {
            smol::Timer::after(EXIT_WAIT).await;
            None
        })
        .await;
        if exited.is_none() {
            let _ = self.child.kill();
            let _ = smol::future::or(async { self.child.status().await.ok() }, async {
                smol::Timer::after(EXIT_WAIT).await;
                None
            })
            .await;
        }
    }

    /// The next line (without its newline), `None` at end of file.
    async fn next_line(&mut self) -> Result<Option<Vec<u8>>, String> {
        loop {
            if let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
                let mut line: Vec<u8> = self.pending.drain(..=end).collect();
                line.pop();
                return Ok(Some(line));
            }
            if self.pending.len() > MAX_LINE {
                return Err(format!("the server sent a line over {MAX_LINE} bytes"));
            }
            let mut chunk = [0u8; 16 * 1024];
            let n = self
                .stdout
                .read(&mut chunk)
                .await
                .map_err(|e| format!("reading the server's stdout: {e}"))?;
            if n == 0 {
                return Ok(None);
            }
            self.pending.extend_from_slice(&chunk[..n]);
        }
    }

    async fn write_line(&mut self, body: &[u8]) -> Result<(), String> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| "the server's stdin is closed".to_owned())?;
        let mut line = Vec::with_capacity(body.len() + 1);
        line.extend_from_slice(body);
        line.push(b'\n');
        stdin
            .write_all(&line)
            .await
            .map_err(|e| format!("writing to the server: {e}"))?;
        stdin
            .flush()
            .await
            .map_err(|e| format!("writing to the server: {e}"))
    }

    async fn read_reply(&mut self, id: i64) -> Result<Result<Reply, ReplyError>, ModernError> {
        loop {
            let Some(line) = self.next_line().await.map_err(ModernError::Transport)? else {
                return Err(ModernError::Transport(
                    "the server closed its stdout".into(),
                ));
            };
            let Ok(message) = serde_json::from_slice::<Value>(&line) else {
                continue;
            };
            match reply_from_message(&message, id) {
                Ok(Some(reply)) => return Ok(Ok(reply)),
                Ok(None) => continue,
                Err(error) => return Ok(Err(error)),
            }
        }
    }
}

impl ModernTransport for ModernStdio {
    async fn exchange(
        &mut self,
        request: &ModernRequest,
    ) -> Result<Result<Reply, ReplyError>, ModernError> {
        self.write_line(&request.body)
            .await
            .map_err(ModernError::Transport)?;
        let deadline = Instant::now() + self.timeout;
        let timeout = self.timeout;
        smol::future::or(self.read_reply(request.id), async move {
            smol::Timer::at(deadline).await;
            Err(ModernError::Transport(format!(
                "no answer within {timeout:?}"
            )))
        })
        .await
    }
}
