//! Runs the `mcp-sansio` binary: help everywhere, exit codes, and clear errors for bad usage.

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-sansio"))
        .args(args)
        .output()
        .expect("run mcp-sansio")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn help_works_on_every_command_and_shows_examples() {
    let commands: &[&[&str]] = &[
        &[],
        &["serve"],
        &["client"],
        &["client", "tools"],
        &["client", "tools", "list"],
        &["client", "tools", "call"],
        &["client", "resources"],
        &["client", "resources", "read"],
        &["client", "resources", "templates"],
        &["client", "prompts"],
        &["client", "prompts", "get"],
        &["client", "complete"],
        &["client", "complete", "prompt"],
        &["client", "complete", "resource"],
        &["client", "ping"],
        &["client", "set-level"],
    ];
    for command in commands {
        let mut args = command.to_vec();
        args.push("--help");
        let out = run(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(
            text.contains("Usage:"),
            "{args:?} help lacks usage:\n{text}"
        );
    }
    for (args, example) in [
        (&["--help"][..], "mcp-sansio serve --stdio"),
        (
            &["serve", "--help"][..],
            "mcp-sansio serve --http 127.0.0.1:8080",
        ),
        (&["client", "--help"][..], "-- node server.js"),
        (
            &["client", "tools", "call", "--help"][..],
            "tools call add --args",
        ),
        (
            &["client", "prompts", "get", "--help"][..],
            "prompts get greet",
        ),
    ] {
        let text = stdout(&run(args));
        assert!(
            text.contains(example),
            "{args:?} help lacks {example:?}:\n{text}"
        );
    }
}

#[test]
fn the_client_usage_names_the_server_command_after_dashes() {
    let text = stdout(&run(&["client", "--help"]));
    assert!(text.contains("-- <SERVER_CMD> [SERVER_ARGS]..."), "{text}");
    assert!(text.contains("--pretty"), "{text}");
}

#[test]
fn bad_usage_exits_with_2_and_says_what_is_wrong() {
    let cases: &[(&[&str], &str)] = &[
        (&[], "Usage"),
        (&["frobnicate"], "unrecognized subcommand"),
        (&["serve"], "--stdio"),
        (&["serve", "--http", "nowhere"], "--http wants IP:PORT"),
        (&["serve", "--stdio", "--http"], "cannot be used with"),
        (&["client", "--stdio", "ping"], "missing the server command"),
        (
            &["client", "--stdio", "ping", "--"],
            "missing the server command",
        ),
        (&["client", "ping", "--", "srv"], "--stdio"),
        (&["client", "--stdio", "--", "srv"], "Usage"),
        (
            &[
                "client", "--stdio", "tools", "call", "t", "--args", "{", "--", "srv",
            ],
            "not valid JSON",
        ),
        (
            &[
                "client", "--stdio", "tools", "call", "t", "--args", "[1]", "--", "srv",
            ],
            "expected a JSON object",
        ),
        (
            &[
                "client",
                "--stdio",
                "prompts",
                "get",
                "p",
                "--args",
                r#"{"n":1}"#,
                "--",
                "srv",
            ],
            "must be strings",
        ),
        (
            &["client", "--stdio", "set-level", "loud", "--", "srv"],
            "possible values",
        ),
        (
            &["client", "--stdio", "--timeout", "0", "ping", "--", "srv"],
            "--timeout",
        ),
        (
            &["client", "--stdio", "resources", "read", "--", "srv"],
            "<URI>",
        ),
    ];
    for (args, needle) in cases {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{args:?} wrote to stdout");
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn a_client_whose_server_exits_at_once_fails_clearly_with_1() {
    for args in [
        &["client", "--stdio", "ping", "--", "true"][..],
        &[
            "client", "--stdio", "--pretty", "tools", "list", "--", "true",
        ][..],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(!stderr(&out).is_empty(), "a reason on stderr");
        assert!(stdout(&out).is_empty());
    }
}

#[test]
fn serve_with_no_input_exits_0_and_writes_nothing() {
    // `output()` gives the child a closed stdin: end of input at once, nothing in flight.
    let out = run(&["serve", "--stdio"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
}

#[test]
fn version_prints_the_crate_version() {
    let out = run(&["--version"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains(env!("CARGO_PKG_VERSION")));
}
