//! The server-only stdio bench cannot rot: its lean driver completes every request, each
//! answered with its own id, against our server (`stdio_ours_server app`) and the batching
//! floor (`stdio_floor_echo batch`), at 1 and 8 in flight.

use std::process::Command;

use bench_rmcp::stdio_lean::{LeanPipe, Target};

fn run(bin: &str, arg: &str, target: Target) {
    for in_flight in [1, 8] {
        let mut command = Command::new(bin);
        command.arg(arg);
        let mut pipe = LeanPipe::spawn(command, target, in_flight).expect("spawn and handshake");
        // Two samples: the second starts with the ids the first left off at.
        pipe.sample(40).expect("every request answered with its id");
        pipe.sample(25).expect("every request answered with its id");
    }
}

#[test]
fn the_lean_driver_completes_against_our_server() {
    run(env!("CARGO_BIN_EXE_stdio_ours_server"), "app", Target::Mcp);
}

#[test]
fn the_lean_driver_completes_against_the_batching_floor() {
    run(
        env!("CARGO_BIN_EXE_stdio_floor_echo"),
        "batch",
        Target::Floor,
    );
}
