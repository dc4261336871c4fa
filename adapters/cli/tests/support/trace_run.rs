//! Shared by the CLI trace tests: a run that must succeed, the JSON Lines trace file it wrote
//! (in a temporary folder of its own), each record read as (direction, method or
//! `response ID`), and the stdio lines of a trace written to stderr.
#![allow(dead_code)] // Each test binary uses a part of it.

use std::path::PathBuf;
use std::process::Output;

use serde_json::Value;

/// A temporary folder named after `what` and this process, and the trace file inside it.
pub struct TraceFile {
    dir: PathBuf,
    pub path: PathBuf,
}

impl TraceFile {
    pub fn new(what: &str) -> TraceFile {
        let dir = std::env::temp_dir().join(format!("mcp-sansio-{what}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("trace.jsonl");
        TraceFile { dir, path }
    }

    /// The path as a command-line argument.
    pub fn arg(&self) -> &str {
        self.path.to_str().expect("utf-8 path")
    }

    /// The file's text; the folder is removed.
    pub fn read(self) -> String {
        let text = std::fs::read_to_string(&self.path).expect("trace file");
        let _ = std::fs::remove_dir_all(&self.dir);
        text
    }
}

/// Asserts that the run succeeded; its stderr.
pub fn succeeded(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    stderr
}

/// `(dir, method or "response ID")` of each JSON Lines record.
pub fn steps(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(|line| {
            let r: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
            let m = &r["message"];
            let what = m["method"]
                .as_str()
                .map_or_else(|| format!("response {}", m["id"]), str::to_owned);
            (r["dir"].as_str().unwrap_or_default().to_owned(), what)
        })
        .collect()
}

/// `want` as owned pairs, to compare with [`steps`].
pub fn owned(want: &[(&str, &str)]) -> Vec<(String, String)> {
    want.iter()
        .map(|(d, w)| ((*d).to_owned(), (*w).to_owned()))
        .collect()
}

/// The stderr trace's lines about stdio frames.
pub fn stdio_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains(" stdio ")).collect()
}
