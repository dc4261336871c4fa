//! `mcp-sansio serve --http 127.0.0.1:0` as a test peer: started, its URLs read from the
//! `listening on URL` and `HTTP+SSE on URL` lines on stderr, killed by PID when dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A running `serve --http`.
pub struct HttpFixture {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// `http://127.0.0.1:PORT/sse` (the HTTP+SSE transport).
    #[allow(dead_code)] // Not every test binary including this module uses it.
    pub sse_url: String,
}

impl HttpFixture {
    /// Starts the server with extra environment variables.
    #[allow(dead_code)] // Not every test binary including this module uses it.
    pub fn start(envs: &[(&str, &str)]) -> HttpFixture {
        HttpFixture::start_with(&[], envs)
    }

    /// Starts the server with extra `serve` flags and environment variables.
    #[allow(dead_code)] // Not every test binary including this module uses it.
    pub fn start_with(flags: &[&str], envs: &[(&str, &str)]) -> HttpFixture {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-sansio"))
            .args(["serve", "--http", "127.0.0.1:0"])
            .args(flags)
            .envs(envs.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcp-sansio serve --http");
        let mut lines = BufReader::new(child.stderr.take().expect("piped stderr")).lines();
        let first = lines.next().and_then(Result::ok).unwrap_or_default();
        let Some(url) = first.strip_prefix("listening on ").map(str::to_owned) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("unexpected first stderr line: {first:?}");
        };
        assert!(
            url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
            "{url}"
        );
        let second = lines.next().and_then(Result::ok).unwrap_or_default();
        let Some(sse_url) = second.strip_prefix("HTTP+SSE on ").map(str::to_owned) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("unexpected second stderr line: {second:?}");
        };
        assert_eq!(sse_url, url.replace("/mcp", "/sse"));
        // Keep draining stderr (shown on ours) so the server never blocks on a full pipe.
        std::thread::spawn(move || lines.map_while(Result::ok).for_each(|l| eprintln!("{l}")));
        HttpFixture {
            child,
            url,
            sse_url,
        }
    }
}

impl HttpFixture {
    /// Stops the server with SIGTERM (a graceful shutdown: it flushes what it writes) and
    /// waits for it, 20 s at most.
    #[allow(dead_code)] // Not every test binary including this module uses it.
    pub fn terminate(mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let started = std::time::Instant::now();
        while self.child.try_wait().ok().flatten().is_none() {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(20),
                "serve --http did not stop after SIGTERM"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl Drop for HttpFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
