//! The HTTP bench's loops without criterion, for instruction counting (feature `http`): the
//! user-space cost of an exchange is stable under `valgrind --tool=callgrind` even on a loaded
//! machine, where wall and CPU times are not. Client and server run in this one process (the
//! server on a thread of its own, as in the bench), so the count covers both sides.
//!
//! `http_count <ours|floor> <ping|echo> <in_flight> <rounds>` starts the server, then runs one
//! client sample of `rounds` batches of `in_flight` exchanges (handshake untimed, as in the
//! bench). Run it twice with different `rounds` and divide the difference of the instruction
//! totals by the difference of the exchanges: setup, handshake and shutdown cancel out (see
//! docs/benchmarks.md). Kernel work (the syscalls) is not counted: `strace -c -f` gives those.

#[cfg(feature = "http")]
fn main() {
    use bench_rmcp::http_side::{floor, ours, Call};

    let args: Vec<String> = std::env::args().skip(1).collect();
    let [side, case, in_flight, rounds] = args.as_slice() else {
        eprintln!("usage: http_count <ours|floor> <ping|echo> <in_flight> <rounds>");
        std::process::exit(2);
    };
    let n: usize = in_flight.parse().expect("in_flight is a number");
    let rounds: u64 = rounds.parse().expect("rounds is a number");
    let call = match case.as_str() {
        "ping" => Call::Ping,
        "echo" => Call::Echo,
        other => panic!("unknown case {other}"),
    };
    let elapsed = match side.as_str() {
        "ours" => ours::sample(&ours::spawn_server(), call, n, rounds),
        "floor" => floor::sample(&floor::spawn_server(), &floor::body(call), n, rounds),
        other => panic!("unknown side {other}"),
    };
    println!("{side} {case} {n} in flight, {rounds} rounds: {elapsed:?}");
}

#[cfg(not(feature = "http"))]
fn main() {
    eprintln!("http_count needs the `http` feature");
    std::process::exit(2);
}
