//! `mcp-sansio serve --stdio` as a real child process: its stdout lines arrive on a channel,
//! each parsed as JSON (a stdout line that is not JSON fails the test), and the child is
//! killed and reaped when the value is dropped.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};

use serde_json::Value;

/// The child, its stdin (`None` once closed) and its stdout messages.
pub struct StdioChild {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub lines: Receiver<Value>,
}

impl StdioChild {
    /// Starts `mcp-sansio serve --stdio` with stderr discarded.
    pub fn serve() -> StdioChild {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-sansio"))
            .args(["serve", "--stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn mcp-sansio serve --stdio");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let message: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"));
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        StdioChild {
            stdin: child.stdin.take(),
            child,
            lines,
        }
    }

    /// Writes `bytes` to the child's stdin and flushes.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to the server");
        stdin.flush().expect("flush to the server");
    }

    /// Writes `message` as one line.
    pub fn send(&mut self, message: &Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.send_raw(&line);
    }
}

impl Drop for StdioChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
