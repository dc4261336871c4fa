//! The HTTP fixtures really do the work the bench times: every contender completes its calls
//! with the right answer, at 1 and at 8 in flight, and the server-only bench's lean client
//! drives every server.

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

/// The lean client of the server-only bench completes the handshake and every call, with its
/// own id in each answer, on each server, at 1 and at 8 in flight (8 connections).
#[test]
fn the_lean_client_drives_every_server() {
    use super::lean::{LeanClient, Target};
    let servers = [
        (ours::spawn_server(), Target::Mcp),
        (floor::spawn_server(), Target::Floor),
        (rmcp::spawn_server(), Target::Mcp),
    ];
    for (server, target) in &servers {
        for in_flight in [1, 8] {
            let mut client = LeanClient::connect(server.url(), *target, in_flight).unwrap();
            let (exchanges, _) = client.sample(3).unwrap();
            assert_eq!(exchanges, 3 * in_flight);
        }
    }
}
