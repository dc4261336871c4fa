//! `mcp-sansio client ... tools call NAME --era stateless` when our server makes the call a task
//! (tasks extension): the CLI declares the extension, polls `tasks/get` until the task ends and
//! prints the task's result (a tool error exits non-zero with the result, a protocol error
//! fails), over stdio and HTTP.

use std::process::Output;

use serde_json::Value;

use crate::http_fixture;
use crate::stateless_cli;

use http_fixture::HttpFixture;
use stateless_cli::run_stateless_client;

/// One operation against `target` (stdio or HTTP).
fn call(target: &[&str], op: &[&str]) -> Output {
    run_stateless_client(target, op)
}

fn stdout_json(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn each_target(check: impl Fn(&[&str])) {
    check(&["--stdio"]);
    let fixture = HttpFixture::start(&[]);
    check(&[fixture.url.as_str()]);
}

#[test]
fn a_task_call_is_waited_for_and_its_result_printed() {
    each_target(|target| {
        let args = r#"{"seconds": 0.3, "label": "sum"}"#;
        let out = call(target, &["tools", "call", "slow_compute", "--args", args]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let json = stdout_json(&out);
        assert_eq!(
            json["content"][0]["text"], "Computed sum after 0.3s",
            "{json}"
        );
        assert!(
            json.get("taskId").is_none(),
            "the task's result, not the task: {json}"
        );
        // The result inlined by tasks/get, not a synchronous answer (which carries
        // resultType and the serverInfo _meta): the call did become a task.
        assert!(json.get("resultType").is_none(), "{json}");
    });
}

/// `failing_job` requires tasks: without the declared extension it would be -32021.
#[test]
fn a_failing_task_reports_its_tool_error_or_protocol_error() {
    each_target(|target| {
        let out = call(target, &["tools", "call", "failing_job"]);
        assert!(!out.status.success());
        let json = stdout_json(&out);
        assert_eq!(json["isError"], true, "{json}");
        let out = call(target, &["tools", "call", "protocol_error_job"]);
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("failed") && stderr.contains("the job crashed"),
            "{stderr}"
        );
    });
}
