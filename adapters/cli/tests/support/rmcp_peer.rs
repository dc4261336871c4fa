//! The rmcp peer of interop/rmcp.rs: where `rmcp_peer` is (`MCP_RMCP_PEER`), bounded runs of
//! a client process (exit code, stdout and stderr), and `rmcp_peer server --http` as a
//! fixture killed by PID when dropped.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::harness::peers_ready;

/// Longest one client run may take (a handshake and a handful of requests; generous for a
/// loaded machine).
const RUN_LIMIT: Duration = Duration::from_secs(60);

/// The rmcp peer binary, or `None` (skip) when the peers are not installed outside CI.
pub fn rmcp_peer() -> Option<PathBuf> {
    if !peers_ready() {
        return None;
    }
    match std::env::var_os("MCP_RMCP_PEER") {
        Some(path) => Some(PathBuf::from(path)),
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must run scripts/install-peers, which builds rmcp_peer (MCP_RMCP_PEER unset)"
            );
            eprintln!("skipped: MCP_RMCP_PEER unset (rerun scripts/install-peers)");
            None
        }
    }
}

/// What a finished child printed and how it ended (`None`: killed past [`RUN_LIMIT`]).
pub struct Run {
    /// The exit code (`-1`: ended by a signal), `None` if killed past the limit.
    pub code: Option<i32>,
    /// Everything it wrote on stdout.
    pub stdout: String,
    /// Everything it wrote on stderr.
    pub stderr: String,
}

impl Run {
    /// Exit code, stdout and stderr, for assertion messages.
    pub fn describe(&self) -> String {
        format!(
            "exit {:?}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    })
}

/// Runs `command` to completion, bounded by [`RUN_LIMIT`] (killed by PID past it).
pub fn run(mut command: Command) -> Run {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {command:?}: {e}"));
    let stdout = drain(child.stdout.take().expect("piped stdout"));
    let stderr = drain(child.stderr.take().expect("piped stderr"));
    let started = Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().expect("wait for child") {
            break Some(status.code().unwrap_or(-1));
        }
        if started.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code,
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
    }
}

/// `rmcp_peer server --http 127.0.0.1:0`, its URL read from its first stdout line; killed by
/// PID when dropped.
pub struct RmcpHttpServer {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl RmcpHttpServer {
    /// Starts `rmcp_peer server --http` with extra server options; its URL comes first.
    pub fn start(peer: &Path, server_args: &[&str]) -> RmcpHttpServer {
        let mut child = Command::new(peer)
            .args(["server", "--http", "127.0.0.1:0"])
            .args(server_args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn rmcp_peer server --http");
        let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
        let first = lines.next().and_then(Result::ok).unwrap_or_default();
        let Some(url) = first.strip_prefix("listening on ").map(str::to_owned) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("unexpected first line of rmcp_peer server: {first:?}");
        };
        RmcpHttpServer { child, url }
    }
}

impl Drop for RmcpHttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
