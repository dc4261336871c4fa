//! The HTTP fixtures really do the work the bench times: every contender completes its calls
//! with the right answer, at 1 and at 8 in flight.

use super::{floor, ours, rmcp, Call};

#[test]
fn the_floor_echoes_every_body() {
    let server = floor::spawn_server();
    for call in [Call::Ping, Call::Echo] {
        let body = floor::body(call);
        for in_flight in [1, 8] {
            floor::sample(&server, &body, in_flight, 3);
        }
    }
}

#[test]
fn ours_answers_every_ping_and_echo() {
    let server = ours::spawn_server();
    for call in [Call::Ping, Call::Echo] {
        for in_flight in [1, 8] {
            ours::sample(&server, call, in_flight, 3);
        }
    }
}

#[test]
fn rmcp_answers_every_ping_and_echo() {
    let server = rmcp::spawn_server();
    let runtime = rmcp::current_thread();
    let client = rmcp::connect(&runtime, &server);
    for call in [Call::Ping, Call::Echo] {
        for in_flight in [1, 8] {
            rmcp::sample(&runtime, &client, call, in_flight, 3);
        }
    }
}
