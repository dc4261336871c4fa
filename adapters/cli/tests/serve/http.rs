//! `mcp-sansio serve --http`: prints its URL once bound and exits 0 on SIGTERM (graceful
//! shutdown, not the default signal death).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn serve_http_prints_its_url_and_exits_0_on_sigterm() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-sansio"))
        .args(["serve", "--http"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn serve --http");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    assert!(
        first.starts_with("listening on http://127.0.0.1:") && first.ends_with("/mcp"),
        "{first:?}"
    );
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("serve --http did not stop after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "{status:?}");
}
