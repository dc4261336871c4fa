//! A build without the `otel` feature refuses `--otel` with a usage error (exit 2) instead of
//! running without the telemetry asked for.
#![cfg(not(feature = "otel"))]

use std::process::Command;

#[test]
fn otel_without_the_feature_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-sansio"))
        .args(["serve", "--stdio", "--otel"])
        .output()
        .expect("run mcp-sansio");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`otel` feature"), "{stderr}");
}
