//! HTTP versions the server does not speak: a client that opens with the HTTP/2 preface
//! (prior knowledge, no negotiation) is answered in HTTP/2 that HTTP/1.1 is required, then
//! the connection closes; the next connection is served as usual.

use std::io::{BufReader, Read, Write};
use std::time::Instant;

use mcp_sansio::app::server::Server;
use mcp_sansio::model::Implementation;
use mcp_sansio_http::server::HttpServerOptions;

use super::rig::{read_head, Running};

fn app(now: Instant) -> Server {
    Server::builder(Implementation::new("versions-test", "1")).build(now)
}

/// The HTTP/2 client preface (RFC 9113 §3.4) and an empty SETTINGS frame after it.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0";

#[test]
fn an_http2_preface_is_told_that_http1_is_required() {
    let server = Running::start(HttpServerOptions::default(), app);
    let mut stream = server.raw();
    stream.write_all(PREFACE).unwrap();
    let mut answer = Vec::new();
    // The server closes the connection after its answer: read to the end.
    stream.read_to_end(&mut answer).unwrap();
    assert!(answer.len() >= 26, "{answer:?}");
    // First an empty SETTINGS frame (length 0, type 0x4, stream 0): the server preface.
    assert_eq!(answer[..9], [0, 0, 0, 0x4, 0, 0, 0, 0, 0], "{answer:?}");
    // Then a GOAWAY (length 8, type 0x7, stream 0) with the error HTTP_1_1_REQUIRED (0xd).
    let goaway = &answer[9..26];
    assert_eq!(goaway[..9], [0, 0, 8, 0x7, 0, 0, 0, 0, 0], "{answer:?}");
    let error = u32::from_be_bytes(goaway[13..17].try_into().unwrap());
    assert_eq!(error, 0xd, "{answer:?}");

    // An HTTP/1.1 client on the next connection is served.
    let mut next = server.raw();
    let host = server.addr;
    write!(next, "GET /nowhere HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
    let head = read_head(&mut BufReader::new(&next));
    assert_eq!(head.status, 404);
}
