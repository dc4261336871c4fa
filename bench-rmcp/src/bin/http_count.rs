//! The HTTP bench's loops without criterion, for instruction counting (feature `http`): the
//! user-space cost of an exchange is stable under `valgrind --tool=callgrind` even on a loaded
//! machine, where wall and CPU times are not. Client and server run in this one process (the
//! server on a thread of its own, as in the bench), so the count covers both sides;
//! `--separate-threads=yes` counts the server's thread alone.
//!
//! `http_count <ours|rmcp|floor> <ping|echo> <in_flight> <rounds>` starts the server, then
//! runs one client sample of `rounds` batches of `in_flight` exchanges (handshake untimed, as
//! in the bench). Run it twice with different `rounds` and divide the difference of the
//! instruction totals by the difference of the exchanges: setup, handshake and shutdown cancel
//! out (see docs/benchmarks.md). Kernel work (the syscalls) is not counted: `strace -c -f`
//! gives those.
//!
//! `lean-ours`, `lean-floor` and `lean-rmcp` (echo only) drive that server with the lean
//! client of the server-only bench instead (`bench_rmcp::http_side::lean`: blocking sockets on
//! the main thread, no MCP engine), so the server threads of the three compare under the same
//! client.
//!
//! An optional fifth argument `idle` (ours only) first opens that many other sessions that
//! stay idle, each by one `initialize` on a connection of its own: what an exchange costs
//! when the endpoint holds many sessions. With `IDLE_GET=1` in the environment each idle
//! session also holds its standalone GET stream open, as SDK clients do: what an exchange
//! costs when the server has many parked response bodies.

#[cfg(feature = "http")]
fn main() {
    use bench_rmcp::http_side::lean::{LeanClient, Target};
    use bench_rmcp::http_side::{floor, ours, rmcp, Call};

    let args: Vec<String> = std::env::args().skip(1).collect();
    let (side, case, in_flight, rounds, idle) = match args.as_slice() {
        [side, case, in_flight, rounds] => (side, case, in_flight, rounds, 0),
        [side, case, in_flight, rounds, idle] => (
            side,
            case,
            in_flight,
            rounds,
            idle.parse().expect("idle is a number"),
        ),
        _ => {
            eprintln!(
                "usage: http_count <ours|rmcp|floor|lean-ours|lean-floor|lean-rmcp> <ping|echo> <in_flight> <rounds> [idle]"
            );
            std::process::exit(2);
        }
    };
    let n: usize = in_flight.parse().expect("in_flight is a number");
    let rounds: u64 = rounds.parse().expect("rounds is a number");
    let call = match case.as_str() {
        "ping" => Call::Ping,
        "echo" => Call::Echo,
        other => panic!("unknown case {other}"),
    };
    let elapsed = match side.as_str() {
        "ours" => {
            let server = ours::spawn_server();
            let with_get = std::env::var("IDLE_GET").is_ok_and(|v| v == "1");
            // Held open until the sample is taken.
            let streams: Vec<_> = (0..idle)
                .filter_map(|_| open_idle_session(server.url(), with_get))
                .collect();
            let elapsed = ours::sample(&server, call, n, rounds);
            drop(streams);
            elapsed
        }
        "rmcp" => {
            let server = rmcp::spawn_server();
            let runtime = rmcp::current_thread();
            let client = rmcp::connect(&runtime, &server);
            rmcp::sample(&runtime, &client, call, n, rounds)
        }
        "floor" => floor::sample(&floor::spawn_server(), &floor::body(call), n, rounds),
        lean if lean.starts_with("lean-") => {
            assert!(
                matches!(call, Call::Echo),
                "the lean client sends echo calls only"
            );
            let (server, target) = match &lean[5..] {
                "ours" => (ours::spawn_server(), Target::Mcp),
                "floor" => (floor::spawn_server(), Target::Floor),
                "rmcp" => (rmcp::spawn_server(), Target::Mcp),
                other => panic!("unknown side {other}"),
            };
            let mut client = LeanClient::connect(server.url(), target, n).expect("connect");
            client.sample(rounds).expect("lean sample").1
        }
        other => panic!("unknown side {other}"),
    };
    println!("{side} {case} {n} in flight, {rounds} rounds: {elapsed:?}");
}

/// One `initialize` POST to `url` (`http://HOST:PORT/PATH`) on a fresh connection; the
/// session it opens is left idle. With `with_get`, the session's `initialized` notification
/// and a standalone GET stream follow; the stream's connection is returned, to hold open.
#[cfg(feature = "http")]
fn open_idle_session(url: &str, with_get: bool) -> Option<std::net::TcpStream> {
    use std::io::{BufRead, BufReader, Write};

    let rest = url.strip_prefix("http://").expect("http url");
    let (host, path) = rest.split_at(rest.find('/').expect("path"));
    let post = |session: &str, body: &str| {
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {host}\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{session}\r\n{body}",
            body.len()
        );
        let mut conn = std::net::TcpStream::connect(host).expect("connect");
        conn.write_all(request.as_bytes()).expect("send");
        let mut answer = String::new();
        std::io::Read::read_to_string(&mut conn, &mut answer).expect("answer");
        answer
    };
    let answer = post(
        "",
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"idle","version":"0"}}}"#,
    );
    let session = answer
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session: {answer}"));
    if !with_get {
        return None;
    }
    let headers = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n");
    let accepted = post(
        &headers,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert!(
        accepted.starts_with("HTTP/1.1 202"),
        "initialized: {accepted}"
    );
    let mut stream = std::net::TcpStream::connect(host).expect("connect");
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n{headers}\r\n"
    );
    stream.write_all(request.as_bytes()).expect("send");
    let mut status = String::new();
    BufReader::new(&stream)
        .read_line(&mut status)
        .expect("GET status");
    assert!(status.starts_with("HTTP/1.1 200"), "GET: {status}");
    Some(stream)
}

#[cfg(not(feature = "http"))]
fn main() {
    eprintln!("http_count needs the `http` feature");
    std::process::exit(2);
}
