//! The 2026-07-28 client's stdio wire: a child process, one JSON text per line each way. The
//! core's `StatelessMachine` (stdio mode) decides everything: each request it asks for is
//! written as a line, each line read (bounded) goes to `handle_line`, its deadlines wait on a
//! timer and its input handlers run as tasks; this file moves the bytes.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::app::client::stateless::{
    CallId, StatelessClient, StatelessEvent, StatelessMachine, TaskHandle, TaskOutcome, Wire,
};
use mcp_sansio::app::client::ClientError;
use mcp_sansio::outgoing::Action;
use mcp_sansio::trace::{Direction, FrameTrace, TraceSink};
use mcp_sansio_stdio::{connect_child, ChildProcess, ShutdownTimeouts};
use serde_json::Value;
use smol::channel::Receiver;
use smol::io::{AsyncReadExt, AsyncWriteExt};

use crate::args::StderrArg;

/// The longest line read from the server.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// How long the server gets to exit after its stdin closed, then after SIGTERM.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// A server child process spoken to in 2026-07-28 lines by a machine.
pub(crate) struct StatelessStdio {
    child: ChildProcess,
    machine: StatelessMachine,
    pending: Vec<u8>,
    /// Events of calls no one waits for yet.
    stash: VecDeque<StatelessEvent>,
    /// Rung by the machine's waker when an input handler finished.
    woken: Receiver<()>,
    /// Where each line written and read is reported, when someone listens.
    trace: Option<Box<dyn TraceSink>>,
}

impl StatelessStdio {
    /// Starts `server` (program and arguments) with piped stdin/stdout for `client`; its
    /// stderr is inherited, discarded, or kept (see [`StatelessStdio::stderr_tail`]).
    /// `timeout` bounds each attempt.
    pub(crate) fn spawn(
        server: &[OsString],
        stderr: StderrArg,
        client: StatelessClient,
        timeout: Duration,
    ) -> std::io::Result<Self> {
        let mode = stderr.mode();
        let mut machine = StatelessMachine::new(client, Wire::Stdio, Instant::now());
        machine.set_request_timeout(timeout);
        let (ring, woken) = smol::channel::bounded(1);
        machine.set_waker(std::sync::Arc::new(move || {
            let _ = ring.try_send(());
        }));
        Ok(StatelessStdio {
            child: connect_child(&server[0], &server[1..], mode)?,
            machine,
            pending: Vec::new(),
            stash: VecDeque::new(),
            woken,
            trace: None,
        })
    }

    /// Reports every line written and read to `trace` (docs/trace.md).
    pub(crate) fn on_trace<S: TraceSink + 'static>(mut self, trace: Option<S>) -> Self {
        self.trace = trace.map(|sink| Box::new(sink) as Box<dyn TraceSink>);
        self
    }

    /// The machine (its client: version, learned tools).
    pub(crate) fn machine(&self) -> &StatelessMachine {
        &self.machine
    }

    /// Bounds each following attempt.
    pub(crate) fn set_timeout(&mut self, timeout: Duration) {
        self.machine.set_request_timeout(timeout);
    }

    /// Runs `method` with `params` to its final result.
    pub(crate) async fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ClientError> {
        let call = self.machine.start_call(Instant::now(), method, params);
        // Bounded: a plain call ends with one Done.
        loop {
            if let StatelessEvent::Done { result, .. } = self.next_of(call).await {
                return result;
            }
        }
    }

    /// Follows `task` to its end.
    pub(crate) async fn wait_task(&mut self, task: TaskHandle) -> Result<TaskOutcome, ClientError> {
        let call = self.machine.start_task_wait(Instant::now(), task);
        // Bounded: the machine ends every task wait.
        loop {
            match self.next_of(call).await {
                StatelessEvent::TaskDone { outcome, .. } => return outcome,
                StatelessEvent::Done { result, .. } => return result.map(TaskOutcome::Completed),
                _ => continue,
            }
        }
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
        let clean = !self.machine.had_unanswered() && self.pending.is_empty();
        if clean && self.child.pipes_mut().is_some() {
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

    /// The next event of `call`, moving every call meanwhile. A pipe that fails ends the
    /// call with a transport error.
    async fn next_of(&mut self, call: CallId) -> StatelessEvent {
        // Bounded by the call: the machine's deadlines end every wait for an answer.
        loop {
            if let Err(why) = self.pump().await {
                return self.broken(call, why);
            }
            if let Some(at) = self.stash.iter().position(|e| e.call() == call) {
                if let Some(event) = self.stash.remove(at) {
                    return event;
                }
            }
            match self.wait().await {
                Ok(()) => {}
                Err(why) => return self.broken(call, why),
            }
        }
    }

    /// Ends `call` because the pipes broke.
    fn broken(&mut self, call: CallId, why: String) -> StatelessEvent {
        self.machine.cancel(Instant::now(), call);
        StatelessEvent::Done {
            call,
            result: Err(ClientError::Transport(why)),
        }
    }

    /// Writes every line the machine asks for, runs its jobs, takes its events.
    async fn pump(&mut self) -> Result<(), String> {
        while let Some(action) = self.machine.poll_action() {
            // Nothing to abort on a pipe: the machine sends `notifications/cancelled`.
            if let Action::Send(request) = action {
                self.write_line(&request.body).await?;
            }
        }
        while let Some(job) = self.machine.poll_job() {
            smol::spawn(job).detach();
        }
        while let Some(event) = self.machine.poll_event() {
            self.stash.push_back(event);
        }
        Ok(())
    }

    /// Waits for the next line(s), a finished handler, or the machine's deadline.
    async fn wait(&mut self) -> Result<(), String> {
        let deadline = self.machine.poll_timeout();
        let woken = self.woken.clone();
        let mut chunk = [0u8; 16 * 1024];
        let (_, stdout) = self
            .child
            .pipes_mut()
            .ok_or_else(|| "the server's stdout is closed".to_owned())?;
        let read = async { Some(stdout.read(&mut chunk).await) };
        let other = async {
            match deadline {
                Some(at) => {
                    smol::future::or(
                        async {
                            let _ = woken.recv().await;
                        },
                        async {
                            smol::Timer::at(at).await;
                        },
                    )
                    .await
                }
                None => {
                    let _ = woken.recv().await;
                }
            }
            None
        };
        let read = smol::future::or(read, other).await;
        let now = Instant::now();
        match read {
            None => {
                self.machine.handle_wake(now);
                self.machine.handle_timeout(now);
                Ok(())
            }
            Some(Ok(0)) => Err("the server closed its stdout".into()),
            Some(Ok(n)) => {
                self.pending.extend_from_slice(&chunk[..n]);
                self.take_lines(now);
                Ok(())
            }
            Some(Err(e)) => Err(format!("reading the server's stdout: {e}")),
        }
    }

    /// Hands every whole line read to the machine; an over-long line too (it fails the calls
    /// waiting for answers).
    fn take_lines(&mut self, now: Instant) {
        while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
            let mut line: Vec<u8> = self.pending.drain(..=end).collect();
            line.pop();
            if let Some(trace) = &mut self.trace {
                let frame = Bytes::from(line.clone());
                trace.frame(&FrameTrace::new(Direction::Recv, now, &frame), &frame);
            }
            self.machine.handle_line(now, &line);
        }
        if self.pending.len() > MAX_LINE {
            let line = std::mem::take(&mut self.pending);
            self.machine.handle_line(now, &line);
        }
    }

    async fn write_line(&mut self, body: &[u8]) -> Result<(), String> {
        if let Some(trace) = &mut self.trace {
            let frame = Bytes::copy_from_slice(body);
            trace.frame(
                &FrameTrace::new(Direction::Send, Instant::now(), &frame),
                &frame,
            );
        }
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
}
