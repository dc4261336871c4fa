//! `mcp-sansio client --sampling ask|deny|auto` (and `--sampling-rate`) against our own
//! `serve --stdio` fixture, whose `test_sampling` tool asks the client to sample and returns
//! the answer's text (or the error it got).

use std::io::Write;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-sansio");

/// `mcp-sansio client --stdio --era <era> <flags> tools call <tool> -- mcp-sansio serve --stdio`
/// with `stdin` as the client's standard input.
fn run(era: &str, flags: &[&str], tool: &str, stdin: &str) -> Output {
    let mut child = Command::new(BIN)
        .args(["client", "--stdio", "--era", era, "--timeout", "30"])
        .args(["--server-stderr", "null"])
        .args(flags)
        .args([
            "tools",
            "call",
            tool,
            "--args",
            r#"{"prompt":"Capital of France?"}"#,
        ])
        .args(["--", BIN, "serve", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcp-sansio");
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin.as_bytes()).expect("write stdin");
    drop(input);
    child.wait_with_output().expect("wait for mcp-sansio")
}

fn sample(flags: &[&str], stdin: &str) -> Output {
    run("stateful", flags, "test_sampling", stdin)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn assert_approved(out: &Output, text: &str) {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status,
        stdout(out),
        stderr(out)
    );
    assert!(
        stdout(out).contains(&format!("LLM response: {text}")),
        "{}",
        stdout(out)
    );
}

/// The tool reports the sampling error (a tool error: exit 1).
fn assert_refused(out: &Output, reason: &str) {
    assert_eq!(out.status.code(), Some(1), "stderr: {}", stderr(out));
    let printed = format!("{}{}", stdout(out), stderr(out));
    assert!(printed.contains("Sampling failed"), "{printed}");
    assert!(
        printed.contains("User rejected sampling request"),
        "{printed}"
    );
    assert!(printed.contains(reason), "{printed}");
}

#[test]
fn deny_refuses_with_the_spec_error() {
    assert_refused(&sample(&["--sampling", "deny"], ""), "--sampling deny");
}

#[test]
fn auto_answers_with_the_sample_text_or_the_fixed_one() {
    let out = sample(&["--sampling", "auto", "--sample-text", "Paris"], "");
    assert_approved(&out, "Paris");
    let out = sample(&["--sampling", "auto", "--sampling-rate", "5/min"], "");
    assert_approved(&out, "This is a fixed answer from mcp-sansio-cli");
}

#[test]
fn ask_shows_the_request_and_follows_the_answer() {
    let yes = sample(&["--sampling", "ask", "--sample-text", "Paris"], "y\n");
    assert_approved(&yes, "Paris");
    let shown = stderr(&yes);
    assert!(shown.contains("Capital of France?"), "{shown}");
    assert!(shown.contains("max tokens: 100"), "{shown}");
    assert!(shown.contains("approve? [y]es / [n]o / [e]dit"), "{shown}");
    assert_refused(
        &sample(&["--sampling", "ask"], "n\n"),
        "refused by the user",
    );
    // End of input refuses too.
    assert_refused(&sample(&["--sampling", "ask"], ""), "no answer on stdin");
    let edited = sample(
        &["--sampling", "ask", "--sample-text", "ok"],
        "e\n5\nShorter?\n",
    );
    assert_approved(&edited, "ok");
    assert!(
        stderr(&edited).contains("max tokens [100]"),
        "{}",
        stderr(&edited)
    );
}

#[test]
fn stateless_era_applies_the_decision_in_the_handler() {
    let tool = "test_input_required_result_sampling";
    let out = run("stateless", &["--sampling", "deny"], tool, "");
    assert!(!out.status.success(), "stdout: {}", stdout(&out));
    let printed = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        printed.contains("User rejected sampling request"),
        "{printed}"
    );
    let out = run(
        "stateless",
        &["--sampling", "auto", "--sample-text", "Paris"],
        tool,
        "",
    );
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(stdout(&out).contains("Paris"), "{}", stdout(&out));
}

#[test]
fn bad_sampling_flags_are_usage_errors() {
    let out = sample(&["--sampling", "auto", "--sampling-rate", "0/min"], "");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = sample(&["--sampling-rate", "5/min"], "");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = sample(&["--sampling", "sometimes"], "");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}
