//! The round-trip benches' loops without criterion, for instruction counting: the engine's
//! cost per round trip is stable under `valgrind --tool=callgrind` even on a loaded machine,
//! where wall and CPU times are not.
//!
//! `roundtrip_count <ours|ours_serde|rmcp> <ping|echo> <in_flight> <rounds>` runs `rounds` batches of
//! `in_flight` round trips after the handshake and one untimed warm-up batch. Run it twice with
//! different `rounds` and divide the difference of the instruction totals by the difference of
//! the round trips: setup and handshake cancel out (see docs/benchmarks.md).

use bench_rmcp::{echo_params, is_echo_read, rmcp_side, OursPair, Reader};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [engine, case, in_flight, rounds] = args.as_slice() else {
        eprintln!("usage: roundtrip_count <ours|ours_serde|rmcp> <ping|echo> <in_flight> <rounds>");
        std::process::exit(2);
    };
    let n: usize = in_flight.parse().expect("in_flight is a number");
    let rounds: usize = rounds.parse().expect("rounds is a number");
    let echo = match case.as_str() {
        "ping" => false,
        "echo" => true,
        other => panic!("unknown case {other}"),
    };
    let done = match engine.as_str() {
        "ours" => ours(echo, n, rounds, Reader::View),
        "ours_serde" => ours(echo, n, rounds, Reader::Serde),
        "rmcp" => rmcp(echo, n, rounds),
        other => panic!("unknown engine {other}"),
    };
    assert_eq!(done, n * (rounds + 1), "every round trip completes");
    println!("{engine} {case} {n} in flight: {done} round trips");
}

fn ours(echo: bool, n: usize, rounds: usize, reader: Reader) -> usize {
    let mut pair = OursPair::connected_with(reader);
    let params = echo_params();
    let mut done = 0;
    for _ in 0..=rounds {
        if echo {
            pair.round_trips(n, "tools/call", Some(&params), |r| {
                done += usize::from(is_echo_read(r, reader));
            });
        } else {
            done += pair.round_trips(n, "ping", None, |_| {});
        }
    }
    done
}

fn rmcp(echo: bool, n: usize, rounds: usize) -> usize {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let client = rmcp_side::connect().await;
        let params = rmcp_side::echo_params();
        let mut done = 0;
        for _ in 0..=rounds {
            done += if echo {
                rmcp_side::echo_calls(&client, n, &params).await
            } else {
                rmcp_side::pings(&client, n).await
            };
        }
        done
    })
}
