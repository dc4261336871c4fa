//! What the HTTP tests share: input strategies for the property tests (one of a few known
//! strings or anything matching a pattern, request bodies), the statuses an endpoint may
//! answer, and reads of a response stream.

use mcp_sansio::http::{Body, HttpResponse, StreamChunk, StreamId};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// Every status the endpoints document.
const STATUSES: [u16; 11] = [200, 202, 400, 403, 404, 405, 406, 409, 413, 415, 503];

/// Checks that `resp` has a documented status and keeps its stream, if it has one, in `open`.
pub fn take_answer(resp: HttpResponse, open: &mut Vec<StreamId>) -> Result<(), TestCaseError> {
    prop_assert!(STATUSES.contains(&resp.status), "{}", resp.status);
    if let Body::Stream(id) = resp.body {
        open.push(id);
    }
    Ok(())
}

/// Reads a stream through `poll` as far as it goes now: what it wrote, and whether it ended.
pub fn read_now(mut poll: impl FnMut(&mut Vec<u8>) -> Option<StreamChunk>) -> (Vec<u8>, bool) {
    let mut bytes = Vec::new();
    while let Some(chunk) = poll(&mut bytes) {
        if chunk == StreamChunk::End {
            return (bytes, true);
        }
    }
    (bytes, false)
}

/// Reads a stream through `poll` until it stops producing data: what it wrote. A stream that
/// goes on past 10,000 chunks fails the case.
pub fn read_bounded(
    mut poll: impl FnMut(&mut Vec<u8>) -> Option<StreamChunk>,
) -> Result<Vec<u8>, TestCaseError> {
    let mut buf = Vec::new();
    let mut n = 0;
    while let Some(StreamChunk::Data { .. }) = poll(&mut buf) {
        n += 1;
        prop_assert!(n < 10_000, "a stream must not produce without bound");
    }
    Ok(buf)
}

/// One of `known` or a string matching `pattern`, each of these as likely as the others.
pub fn known_or(
    known: &'static [&'static str],
    pattern: &'static str,
) -> impl Strategy<Value = String> {
    let weight = u32::try_from(known.len()).expect("a short list");
    prop_oneof![
        weight => proptest::sample::select(known).prop_map(str::to_string),
        1 => pattern,
    ]
}

/// A request body: an `initialize` for `version`, `initialized`, a call of `echo`, a batch,
/// or arbitrary bytes.
pub fn body(version: &str) -> impl Strategy<Value = Vec<u8>> {
    let initialize = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"c","version":"1"}}}}}}"#
    );
    prop_oneof![
        Just(initialize.into_bytes()),
        Just(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec()),
        Just(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#.to_vec()),
        Just(br#"[{"jsonrpc":"2.0","id":2,"method":"ping"}]"#.to_vec()),
        proptest::collection::vec(any::<u8>(), 0..64),
    ]
}
