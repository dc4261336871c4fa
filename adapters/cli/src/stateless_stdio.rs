//! The 2026-07-28 client's stdio wire: a child process, one JSON text per line each way. Each
//! attempt is written as a line; lines are read (bounded) until the core finds the response
//! with the attempt's id; notifications and anything else in between are passed over.

use std::ffi::OsString;
use std::time::{Duration, Instant};

use mcp_sansio::app::client::stateless::{
    reply_from_message, Reply, ReplyError, StatelessClientError, StatelessRequest,
    StatelessTransport,
};
use mcp_sansio_stdio::{connect_child, ChildProcess, ShutdownTimeouts, StderrMode};
use serde_json::Value;
use smol::io::{AsyncReadExt, AsyncWriteExt};

use crate::args::StderrArg;

/// The longest line read from the server.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// How long the server gets to exit after its stdin closed, then after SIGTERM.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// A server child process spoken to in 2026-07-28 lines.
pub(crate) struct StatelessStdio {
    child: ChildProcess,
    pending: Vec<u8>,
    /// Bounds each attempt.
    pub(crate) timeout: Duration,
    /// An attempt went unanswered: a late answer may still come on these pipes.
    unanswered: bool,
}

impl StatelessStdio {
    /// Starts `server` (program and arguments) with piped stdin/stdout; its stderr is
    /// inherited, discarded, or kept (see [`StatelessStdio::stderr_tail`]).
    pub(crate) fn spawn(
        server: &[OsString],
        stderr: StderrArg,
        timeout: Duration,
    ) -> std::io::Result<Self> {
        let mode = match stderr {
            StderrArg::Null => StderrMode::Null,
            StderrArg::Inherit => StderrMode::Inherit,
            StderrArg::Capture => StderrMode::Capture,
        };
        Ok(StatelessStdio {
            child: connect_child(&server[0], &server[1..], mode)?,
            pending: Vec::new(),
            timeout,
            unanswered: false,
        })
    }

    /// The server's last stderr bytes (lossy UTF-8; empty unless captured).
    pub(crate) fn stderr_tail(&self) -> String {
        self.child.stderr_tail().unwrap_or_default()
    }

    /// The child, for the `initialize` client after a refused probe: only when every attempt
    /// was answered and nothing past the answers was read, so the handshake client starts on
    /// clean pipes (an unanswered probe's late answer could be taken for its own). Otherwise
    /// the child is shut down and `None` returned (the caller starts the server again).
    pub(crate) async fn into_child(mut self) -> Option<ChildProcess> {
        if !self.unanswered && self.pending.is_empty() && self.child.pipes_mut().is_some() {
            return Some(self.child);
        }
        self.shutdown().await;
        None
    }

    /// The stdio shutdown sequence: close stdin, wait, SIGTERM, wait, SIGKILL.
    pub(crate) async fn shutdown(mut self) {
        let timeouts = ShutdownTimeouts {
            after_stdin_close: EXIT_WAIT,
            after_sigterm: EXIT_WAIT,
        };
        let _ = self.child.shutdown(timeouts).await;
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
            let (_, stdout) = self
                .child
                .pipes_mut()
                .ok_or_else(|| "the server's stdout is closed".to_owned())?;
            let n = stdout
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
        let (stdin, _) = self
            .child
            .pipes_mut()
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

    async fn read_reply(
        &mut self,
        id: i64,
    ) -> Result<Result<Reply, ReplyError>, StatelessClientError> {
        loop {
            let Some(line) = self
                .next_line()
                .await
                .map_err(StatelessClientError::Transport)?
            else {
                return Err(StatelessClientError::Transport(
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

impl StatelessTransport for StatelessStdio {
    async fn exchange(
        &mut self,
        request: &StatelessRequest,
    ) -> Result<Result<Reply, ReplyError>, StatelessClientError> {
        self.write_line(&request.body)
            .await
            .map_err(StatelessClientError::Transport)?;
        let deadline = Instant::now() + self.timeout;
        let timeout = self.timeout;
        let answer = smol::future::or(async { Some(self.read_reply(request.id).await) }, async {
            smol::Timer::at(deadline).await;
            None
        })
        .await;
        answer.unwrap_or_else(|| {
            self.unanswered = true;
            Err(StatelessClientError::Transport(format!(
                "no answer within {timeout:?}"
            )))
        })
    }
}
