//! Runs the CLI's 2026-07-28 client against our fixture: `mcp-sansio client <target> --era
//! stateless --timeout 30 --server-stderr null <args>`, spawning `mcp-sansio serve --stdio` when
//! the target is `--stdio` (else the target is an HTTP URL).

use std::process::{Command, Output};

/// The `mcp-sansio` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_mcp-sansio");

/// `mcp-sansio client <target> --era stateless … <args> [-- mcp-sansio serve --stdio]`.
pub fn run_stateless_client(target: &[&str], args: &[&str]) -> Output {
    let mut command = Command::new(BIN);
    command
        .arg("client")
        .args(target)
        .args([
            "--era",
            "stateless",
            "--timeout",
            "30",
            "--server-stderr",
            "null",
        ])
        .args(args);
    if target == ["--stdio"] {
        command.args(["--", BIN, "serve", "--stdio"]);
    }
    command.output().expect("run mcp-sansio client")
}
