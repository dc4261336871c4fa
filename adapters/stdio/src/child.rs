//! Running a server as a child process and talking to it over its stdin/stdout, with the
//! shutdown sequence of the MCP stdio transport: close the child's stdin, wait; send `SIGTERM`,
//! wait; send `SIGKILL`.

use std::ffi::OsStr;
use std::io;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use smol::io::{AsyncRead, AsyncReadExt};
use smol::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use smol::Timer;

use crate::driven::Driven;
use crate::driver::{Driver, Finished};
#[cfg(unix)]
use crate::pipe_reader::PipeReader;
#[cfg(unix)]
use crate::poll::{set_nonblocking, ForegroundFuture, PollDriver};

/// What happens to the child's stderr (which the spec reserves for logs, not errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StderrMode {
    /// The child writes to our stderr.
    Inherit,
    /// Kept in memory: the last [`STDERR_TAIL_LIMIT`] bytes, see [`ChildProcess::stderr_tail`].
    Capture,
    /// Discarded.
    Null,
}

/// How many bytes of a captured stderr are kept (the most recent ones).
pub const STDERR_TAIL_LIMIT: usize = 64 * 1024;

/// The waits of the shutdown sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShutdownTimeouts {
    /// How long to wait for an exit after closing the child's stdin. Default 2 s.
    pub after_stdin_close: Duration,
    /// How long to wait for an exit after `SIGTERM`, before `SIGKILL`. Default 2 s.
    pub after_sigterm: Duration,
}

impl Default for ShutdownTimeouts {
    fn default() -> Self {
        Self {
            after_stdin_close: Duration::from_secs(2),
            after_sigterm: Duration::from_secs(2),
        }
    }
}

/// The stage at which the child exited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShutdownStage {
    /// It had exited before the sequence started.
    AlreadyExited,
    /// It exited after its stdin was closed.
    StdinClosed,
    /// It exited after `SIGTERM`.
    Terminated,
    /// It was killed with `SIGKILL`.
    Killed,
}

/// How a shutdown went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShutdownReport {
    /// The stage at which the child exited.
    pub stage: ShutdownStage,
    /// Its exit status.
    pub status: ExitStatus,
    /// Time the sequence took.
    pub elapsed: Duration,
}

/// A child process speaking MCP on its stdin/stdout.
///
/// Dropping it kills the child (`SIGKILL`); call [`ChildProcess::shutdown`] for the graceful
/// sequence.
pub struct ChildProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    stderr_tail: Option<Arc<Mutex<Vec<u8>>>>,
}

/// Spawns `program` with `args` as a child with piped stdin/stdout.
pub fn connect_child<I, S>(
    program: impl AsRef<OsStr>,
    args: I,
    stderr: StderrMode,
) -> io::Result<ChildProcess>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut command = std::process::Command::new(program);
    command.args(args);
    ChildProcess::spawn(command, stderr)
}

impl ChildProcess {
    /// Spawns `command` (its environment and working directory as set) with piped
    /// stdin/stdout; its stdio settings are replaced.
    pub fn spawn(command: std::process::Command, stderr: StderrMode) -> io::Result<Self> {
        let mut command = Command::from(command);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match stderr {
                StderrMode::Inherit => Stdio::inherit(),
                StderrMode::Capture => Stdio::piped(),
                StderrMode::Null => Stdio::null(),
            })
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let stderr_tail = child.stderr.take().map(|mut pipe| {
            let tail = Arc::new(Mutex::new(Vec::new()));
            let sink = Arc::clone(&tail);
            // Always drained, so a chatty child never blocks on a full stderr pipe.
            smol::spawn(async move {
                let mut chunk = [0u8; 4096];
                while let Ok(n @ 1..) = pipe.read(&mut chunk).await {
                    let mut tail = sink.lock().unwrap_or_else(|e| e.into_inner());
                    tail.extend_from_slice(&chunk[..n]);
                    let excess = tail.len().saturating_sub(STDERR_TAIL_LIMIT);
                    tail.drain(..excess);
                }
            })
            .detach();
            tail
        });
        Ok(Self {
            stdin: child.stdin.take(),
            stdout: child.stdout.take(),
            child,
            stderr_tail,
        })
    }

    /// The child's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The child's pipes, to exchange lines with it before a loop drives them (for example
    /// a 2026-07-28 `server/discover` probe, then the `initialize` client on the same process
    /// if the probe was refused); `None` once they were driven or closed. Bytes read here are
    /// not seen by the loop that drives the pipes later.
    pub fn pipes_mut(&mut self) -> Option<(&mut ChildStdin, &mut ChildStdout)> {
        Some((self.stdin.as_mut()?, self.stdout.as_mut()?))
    }

    /// The most recent captured stderr bytes (lossy UTF-8); `None` unless [`StderrMode::Capture`].
    pub fn stderr_tail(&self) -> Option<String> {
        let tail = self.stderr_tail.as_ref()?;
        let tail = tail.lock().unwrap_or_else(|e| e.into_inner());
        Some(String::from_utf8_lossy(&tail).into_owned())
    }

    /// Drives `driven` over the child's stdout (input) and stdin (output) until the loop
    /// returns. The child's stdin is closed when it does, which starts the child's own
    /// shutdown; follow with [`ChildProcess::shutdown`]. Fails if the pipes were already used.
    pub async fn drive<D: Driven + 'static>(
        &mut self,
        driver: Driver<D>,
        driven: D,
    ) -> io::Result<Finished<D>> {
        let (Some(stdin), Some(stdout)) = (self.stdin.take(), self.stdout.take()) else {
            return Err(io::Error::other("the child's pipes were already driven"));
        };
        Ok(driver.run(driven, pipe_reader(stdout), stdin).await)
    }

    /// [`ChildProcess::drive`], blocking the calling thread.
    pub fn drive_blocking<D: Driven + 'static>(
        &mut self,
        driver: Driver<D>,
        driven: D,
    ) -> io::Result<Finished<D>> {
        smol::block_on(self.drive(driver, driven))
    }

    /// Drives `driven` over the child's pipes with a [`PollDriver`] on the calling thread
    /// (no async runtime in the loop); otherwise as [`ChildProcess::drive`]. The child's stdout
    /// is switched to blocking reads and its stdin to non-blocking writes: both pipe ends are
    /// ours alone.
    #[cfg(unix)]
    pub fn drive_poll<D: Driven + 'static>(
        &mut self,
        driver: PollDriver<D>,
        driven: D,
    ) -> io::Result<Finished<D>> {
        self.drive_poll_with(driver, driven, None)
    }

    /// [`ChildProcess::drive_poll`], also polling `foreground` on the loop thread.
    #[cfg(unix)]
    pub(crate) fn drive_poll_with<D: Driven + 'static>(
        &mut self,
        driver: PollDriver<D>,
        driven: D,
        foreground: Option<ForegroundFuture<'_>>,
    ) -> io::Result<Finished<D>> {
        use std::os::fd::AsFd;
        let (Some(stdin), Some(stdout)) = (self.stdin.take(), self.stdout.take()) else {
            return Err(io::Error::other("the child's pipes were already driven"));
        };
        set_nonblocking(&stdout, false)?;
        set_nonblocking(&stdin, true)?;
        // Shortened to the pipes' borrow (a trait object's lifetime may shrink behind `&mut`).
        let foreground = foreground.map(|f| -> ForegroundFuture<'_> { f });
        let finished = driver.run_with(driven, stdout.as_fd(), stdin.as_fd(), foreground);
        drop(stdin); // closes the child's stdin: its own shutdown starts
        Ok(finished)
    }

    /// The MCP stdio shutdown sequence: close the child's stdin and wait up to
    /// `after_stdin_close`; then `SIGTERM` and wait up to `after_sigterm`; then `SIGKILL`.
    pub async fn shutdown(&mut self, timeouts: ShutdownTimeouts) -> io::Result<ShutdownReport> {
        let start = Instant::now();
        let report = |stage, status| ShutdownReport {
            stage,
            status,
            elapsed: start.elapsed(),
        };
        if let Some(status) = self.child.try_status()? {
            return Ok(report(ShutdownStage::AlreadyExited, status));
        }
        self.stdin = None;
        self.stdout = None;
        if let Some(status) = self.wait_for_exit(timeouts.after_stdin_close).await? {
            return Ok(report(ShutdownStage::StdinClosed, status));
        }
        self.terminate()?;
        if let Some(status) = self.wait_for_exit(timeouts.after_sigterm).await? {
            return Ok(report(ShutdownStage::Terminated, status));
        }
        if let Some(status) = self.child.try_status()? {
            return Ok(report(ShutdownStage::Terminated, status));
        }
        self.child.kill()?;
        let status = self.child.status().await?;
        Ok(report(ShutdownStage::Killed, status))
    }

    /// [`ChildProcess::shutdown`], blocking the calling thread.
    pub fn shutdown_blocking(&mut self, timeouts: ShutdownTimeouts) -> io::Result<ShutdownReport> {
        smol::block_on(self.shutdown(timeouts))
    }

    async fn wait_for_exit(&mut self, limit: Duration) -> io::Result<Option<ExitStatus>> {
        let exited = async { self.child.status().await.map(Some) };
        let timed_out = async {
            Timer::after(limit).await;
            Ok(None)
        };
        smol::future::or(exited, timed_out).await
    }

    /// Sends `SIGTERM` (on non-Unix systems there is none: the next stage kills).
    fn terminate(&mut self) -> io::Result<()> {
        if self.child.try_status()?.is_some() {
            return Ok(());
        }
        send_sigterm(self.child.id())
    }
}

#[cfg(unix)]
#[allow(unsafe_code)]
fn send_sigterm(pid: u32) -> io::Result<()> {
    let pid = libc::pid_t::try_from(pid).map_err(io::Error::other)?;
    // SAFETY: `kill` touches no memory of ours. The pid is our own child and was not reaped
    // when the caller checked `try_status`, so it cannot have been reused by another process.
    let rc = unsafe { libc::kill(pid, libc::SIGTERM) };
    if rc == 0 {
        return Ok(());
    }
    let error = io::Error::last_os_error();
    if error.raw_os_error() == Some(libc::ESRCH) {
        return Ok(()); // exited in between: the next wait sees it
    }
    Err(error)
}

#[cfg(not(unix))]
fn send_sigterm(_pid: u32) -> io::Result<()> {
    Ok(())
}

/// The child's stdout as a [`PipeReader`] (no empty re-read after a short read): our own
/// descriptor of the same pipe, registered with the reactor. Falls back to the stdout as it is
/// if the descriptor cannot be duplicated or registered.
#[cfg(unix)]
fn pipe_reader(stdout: ChildStdout) -> Box<dyn AsyncRead + Unpin> {
    use std::os::fd::AsFd;
    let own = stdout
        .as_fd()
        .try_clone_to_owned()
        .and_then(|fd| smol::Async::new(std::fs::File::from(fd)));
    match own {
        // Dropping `stdout` closes only its own descriptor; the pipe stays open through ours.
        Ok(io) => Box::new(PipeReader::new(io)),
        Err(_) => Box::new(stdout),
    }
}

#[cfg(not(unix))]
fn pipe_reader(stdout: ChildStdout) -> Box<dyn AsyncRead + Unpin> {
    Box::new(stdout)
}
