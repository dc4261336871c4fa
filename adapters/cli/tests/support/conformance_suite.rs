//! Runs one client scenario of the official conformance suite against a command, in its own
//! process group under a watchdog, and judges it: every expected check present and SUCCESS, no
//! FAILURE or WARNING, and the suite itself exits successfully. Shared by the conformance
//! client tests (0.1.16 core and `auth/*`, 0.2.0-alpha.12 at 2026-07-28).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

/// One scenario at a time: the machine is shared, `sse-retry` measures our reconnection delay,
/// and the suite's mocks are not the subject.
static SERIAL: Mutex<()> = Mutex::new(());

/// Longest one scenario run may take (the suite's own client timeout is 30 s).
const RUN_LIMIT: Duration = Duration::from_secs(90);

/// Which suite runs the scenario, and how.
struct SuiteRun<'a> {
    /// Environment variable naming the suite's `dist/index.js` (`MCP_CONFORMANCE`, `MCP_CONFORMANCE_NEXT`).
    suite_var: &'a str,
    /// The scenario name (`tools_call`, `auth/metadata-default`, ...).
    scenario: &'a str,
    /// The client command; the suite appends the mock server's URL.
    command: &'a str,
    /// Extra suite arguments (e.g. `--spec-version 2026-07-28`).
    extra_args: &'a [&'a str],
}

/// One installed suite and the arguments it runs its client scenarios with.
pub struct Suite {
    /// Environment variable naming the suite's `dist/index.js`.
    pub var: &'static str,
    /// Extra suite arguments.
    pub extra_args: &'static [&'static str],
}

/// Conformance 0.1.16: the stateful revisions.
#[allow(dead_code)] // Each test binary uses one of the two suites.
pub const CLASSIC: Suite = Suite {
    var: "MCP_CONFORMANCE",
    extra_args: &[],
};

/// Conformance 0.2.0-alpha.12 at 2026-07-28.
#[allow(dead_code)] // Each test binary uses one of the two suites.
pub const NEXT: Suite = Suite {
    var: "MCP_CONFORMANCE_NEXT",
    extra_args: &["--spec-version", "2026-07-28"],
};

impl Suite {
    /// Runs `scenario` against our conformance client and judges it; skipped (locally) when
    /// the peers are not installed.
    pub fn run(&self, scenario: &str, expected: &[&str]) {
        self.run_command(scenario, &our_client(), expected);
    }

    /// Runs `command` (the suite appends the mock server's URL) for `scenario`.
    pub fn run_command(&self, scenario: &str, command: &str, expected: &[&str]) {
        if !crate::harness::peers_ready() {
            return;
        }
        let run = SuiteRun {
            suite_var: self.var,
            scenario,
            command,
            extra_args: self.extra_args,
        };
        run_and_judge(&run, expected);
    }
}

/// The command that runs our conformance client.
pub fn our_client() -> String {
    format!("{} conformance-client", env!("CARGO_BIN_EXE_mcp-sansio"))
}

/// Runs `run` and asserts the verdict described in the module header.
fn run_and_judge(run: &SuiteRun, expected: &[&str]) {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let scenario = run.scenario;
    let node = std::env::var("MCP_NODE22").expect("MCP_NODE22");
    let suite = std::env::var(run.suite_var).unwrap_or_else(|_| panic!("{}", run.suite_var));
    let out = std::env::temp_dir().join(format!(
        "mcp-sansio-conformance-{}-{}",
        std::process::id(),
        scenario.replace('/', "-")
    ));
    let _ = std::fs::remove_dir_all(&out);
    let preload =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/listen_loopback.cjs");
    let mut child = Command::new(node)
        .arg(suite)
        .args(["client", "--command", run.command, "--scenario", scenario])
        .args(run.extra_args)
        .arg("-o")
        .arg(&out)
        .env("NODE_OPTIONS", format!("--require {}", preload.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("spawn the conformance suite");
    let group = child.id();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if started.elapsed() > RUN_LIMIT {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // The suite leaves grandchildren on timeout: end the whole group, by its id. The `--` is
    // load-bearing: procps-ng 4.0's kill reads `-KILL -<pgid>` as `kill(-1, SIGKILL)`, which
    // kills every process the user may signal (it took down the machine's process supervisor).
    let _ = Command::new("kill")
        .args(["-s", "KILL", "--", &format!("-{group}")])
        .stderr(Stdio::null())
        .status();
    let output = child.wait_with_output().expect("collect output");
    let log = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(status.is_some(), "{scenario}: timed out\n{log}");
    // A scenario `a/b` writes its results under `<out>/a/b-<timestamp>/`.
    let results = match scenario.rsplit_once('/') {
        Some((dir, _)) => out.join(dir),
        None => out.clone(),
    };
    let checks = read_checks(&results, scenario);
    let _ = std::fs::remove_dir_all(&out);
    for check in &checks {
        let status = check["status"].as_str().unwrap_or("");
        assert!(
            !matches!(status, "FAILURE" | "WARNING"),
            "{scenario}: {check}\n{log}"
        );
    }
    for id in expected {
        let found = checks
            .iter()
            .any(|c| c["id"] == *id && c["status"] == "SUCCESS");
        assert!(found, "{scenario}: no SUCCESS check `{id}`\n{log}");
    }
    assert!(
        status.unwrap().success(),
        "{scenario}: the suite failed\n{log}"
    );
}

/// The checks of the single run under `out` (`<scenario>-<timestamp>/checks.json`).
fn read_checks(out: &Path, scenario: &str) -> Vec<Value> {
    let runs: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap_or_else(|e| panic!("{scenario}: no results in {}: {e}", out.display()))
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(runs.len(), 1, "{scenario}: {runs:?}");
    let text = std::fs::read_to_string(runs[0].join("checks.json")).expect("checks.json");
    match serde_json::from_str(&text).expect("checks.json is JSON") {
        Value::Array(checks) => checks,
        other => panic!("{scenario}: checks.json is not an array: {other}"),
    }
}
