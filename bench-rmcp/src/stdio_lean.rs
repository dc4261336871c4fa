//! A lean driver for the server-only stdio benches: a child process on pipes, blocking reads
//! and writes on the calling thread, no MCP engine. It sends the handshake (`initialize`, then
//! `notifications/initialized`) once to an MCP server, then `tools/call` of the echo tool
//! again and again, keeping `in_flight` requests outstanding: after each read, every answered
//! request is replaced by a new one, all written in one write. Of each answer line it reads
//! only the request id. The same driver runs our server and the pipe floor (which echoes each
//! request line, id included), so a ratio of two servers' rates carries no client's cost.

use std::io::{self, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use crate::ECHO_TEXT;

/// Which server is driven: an MCP server (handshake first) or the floor (none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// An MCP server on stdio.
    Mcp,
    /// The pipe floor: every line comes back as its answer.
    Floor,
}

/// One child process and what was read past the last complete line.
pub struct LeanPipe {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    buf: Vec<u8>,
    chunk: Vec<u8>,
    out: Vec<u8>,
    in_flight: usize,
    /// The id of the next request.
    next_id: u64,
    /// The lowest id not answered yet.
    oldest: u64,
}

impl LeanPipe {
    /// Spawns `command` with piped stdin/stdout and, for an MCP server, runs the handshake.
    pub fn spawn(mut command: Command, target: Target, in_flight: usize) -> io::Result<Self> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take().ok_or_else(|| bad("no stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| bad("no stdout"))?;
        let mut pipe = LeanPipe {
            child,
            stdin,
            stdout,
            buf: Vec::with_capacity(64 * 1024),
            chunk: vec![0; 64 * 1024],
            out: Vec::with_capacity(64 * 1024),
            in_flight: in_flight.max(1),
            next_id: 1,
            oldest: 1,
        };
        if target == Target::Mcp {
            pipe.handshake()?;
        }
        Ok(pipe)
    }

    fn handshake(&mut self) -> io::Result<()> {
        let init = concat!(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"#,
            r#""2025-06-18","capabilities":{},"clientInfo":{"name":"lean","version":"0"}}}"#,
            "\n"
        );
        self.stdin.write_all(init.as_bytes())?;
        let line = self.read_line()?;
        if answer_id(&line) != Some(0) {
            return Err(bad("initialize was not answered"));
        }
        let initialized = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
        self.stdin.write_all(initialized.as_bytes())
    }

    /// Reads up to the next newline (handshake only).
    fn read_line(&mut self) -> io::Result<Vec<u8>> {
        loop {
            if let Some(at) = find_newline(&self.buf, 0) {
                let line = self.buf[..at].to_vec();
                self.buf.drain(..=at);
                return Ok(line);
            }
            self.fill()?;
        }
    }

    fn fill(&mut self) -> io::Result<()> {
        let n = self.stdout.read(&mut self.chunk)?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "closed"));
        }
        self.buf.extend_from_slice(&self.chunk[..n]);
        Ok(())
    }

    /// Appends `count` echo requests to the output buffer.
    fn queue_requests(&mut self, count: u64) {
        let text = serde_json::to_string(ECHO_TEXT).unwrap_or_default();
        for _ in 0..count {
            let id = self.next_id;
            self.next_id += 1;
            let _ = writeln!(
                self.out,
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":{text}}}}}}}"#
            );
        }
    }

    /// Runs until `total` requests were answered, `in_flight` outstanding at a time; returns
    /// the time it took. Every answer must carry the id of an outstanding request, in order.
    pub fn sample(&mut self, total: u64) -> io::Result<Duration> {
        let start = Instant::now();
        let mut sent = 0u64;
        let mut answered = 0u64;
        let first = (self.in_flight as u64).min(total);
        self.out.clear();
        self.queue_requests(first);
        sent += first;
        self.stdin.write_all(&self.out)?;
        while answered < total {
            self.fill()?;
            let mut done = 0u64;
            let mut from = 0;
            while let Some(at) = find_newline(&self.buf, from) {
                if answer_id(&self.buf[from..at]) != Some(self.oldest) {
                    return Err(bad("an answer with an unexpected id"));
                }
                self.oldest += 1;
                done += 1;
                from = at + 1;
            }
            self.buf.drain(..from);
            answered += done;
            let more = done.min(total - sent);
            if more > 0 {
                self.out.clear();
                self.queue_requests(more);
                sent += more;
                self.stdin.write_all(&self.out)?;
            }
        }
        Ok(start.elapsed())
    }
}

impl Drop for LeanPipe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_owned())
}

/// The first newline in `buf` at or after `from`.
fn find_newline(buf: &[u8], from: usize) -> Option<usize> {
    buf.get(from..)?
        .iter()
        .position(|&b| b == b'\n')
        .map(|at| at + from)
}

/// The number after the first `"id":` of a line.
fn answer_id(line: &[u8]) -> Option<u64> {
    let needle = b"\"id\":";
    let at = line.windows(needle.len()).position(|w| w == needle)? + needle.len();
    let digits = line[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&line[at..at + digits])
        .ok()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::answer_id;

    #[test]
    fn the_id_is_the_number_after_the_first_id_key() {
        assert_eq!(
            answer_id(br#"{"jsonrpc":"2.0","id":42,"result":{}}"#),
            Some(42)
        );
        assert_eq!(answer_id(br#"{"id":7,"x":{"id":9}}"#), Some(7));
        assert_eq!(answer_id(br#"{"id":"s"}"#), None);
        assert_eq!(answer_id(b"{}"), None);
    }
}
