//! `mcp-sansio client --era stateless` answering our fixture's input-required tools with the
//! input flags: `--elicit accept|decline|cancel` (+ `--elicit-content`), `--root`,
//! `--sample-text` (sampling fails without it), over stdio and HTTP; bad flag values are usage
//! errors.

use std::process::Output;

use crate::http_fixture;
use crate::stateless_cli;

use http_fixture::HttpFixture;
use stateless_cli::run_stateless_client;

/// `mcp-sansio client <target> --era stateless <flags> tools call <tool> [-- serve --stdio]`.
fn call(target: &[&str], flags: &[&str], tool: &str) -> Output {
    let args: Vec<&str> = flags
        .iter()
        .copied()
        .chain(["tools", "call", tool])
        .collect();
    run_stateless_client(target, &args)
}

fn ok_text(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {stdout}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn failure(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "succeeded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn each_answer(target: &[&str]) {
    let elicit = "test_input_required_result_elicitation";
    let accepted = call(
        target,
        &[
            "--elicit",
            "accept",
            "--elicit-content",
            r#"{"name":"Ada"}"#,
        ],
        elicit,
    );
    assert!(ok_text(&accepted).contains("Hello, Ada!"));
    // Content that does not satisfy the requested schema (`name` is a required string) is
    // declined, with the reason on stderr, instead of going back as an invalid form.
    for content in [None, Some(r#"{"name":5}"#)] {
        let mut flags = vec!["--elicit", "accept"];
        flags.extend(
            content
                .map(|c| ["--elicit-content", c])
                .into_iter()
                .flatten(),
        );
        let refused = failure(&call(target, &flags, elicit));
        assert!(refused.contains("not accepted: decline"), "{refused}");
        assert!(
            refused.contains("does not satisfy the requested schema"),
            "{refused}"
        );
    }
    // The default is decline; the fixture refuses anything but accept, naming the action.
    let declined = failure(&call(target, &[], elicit));
    assert!(declined.contains("not accepted: decline"), "{declined}");
    let cancelled = failure(&call(target, &["--elicit", "cancel"], elicit));
    assert!(cancelled.contains("not accepted: cancel"), "{cancelled}");

    let roots = call(
        target,
        &["--root", "/tmp/one", "--root", "file:///srv/two"],
        "test_input_required_result_list_roots",
    );
    let text = ok_text(&roots);
    assert!(text.contains("file:///tmp/one"), "{text}");
    assert!(text.contains("file:///srv/two"), "{text}");

    let sampling = "test_input_required_result_sampling";
    let refused = failure(&call(target, &[], sampling));
    assert!(refused.contains("--sample-text"), "{refused}");
    let sampled = call(target, &["--sample-text", "Paris"], sampling);
    assert!(ok_text(&sampled).contains("The model answered: Paris"));
}

#[test]
fn input_flags_answer_the_fixture_over_stdio() {
    each_answer(&["--stdio"]);
}

#[test]
fn input_flags_answer_the_fixture_over_http() {
    let fixture = HttpFixture::start(&[]);
    each_answer(&[fixture.url.as_str()]);
}

#[test]
fn bad_input_flags_are_usage_errors() {
    let tool = "test_input_required_result_elicitation";
    for flags in [
        &["--elicit", "accept", "--elicit-content", "[1]"][..],
        &["--elicit-content", r#"{"name":"x"}"#][..],
        &["--elicit", "maybe"][..],
    ] {
        let out = call(&["--stdio"], flags, tool);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{flags:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
