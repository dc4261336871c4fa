//! The HTTP server adapter through real loopback sockets and a tiny raw HTTP/1.1 client, one
//! binary: Streamable HTTP (`streamable`), the HTTP+SSE transport beside it
//! (`sse_transport`), the server's connection limits and timeouts (`limits`), sessions
//! shared by two servers through one store (`sharing`) and the HTTP versions it refuses
//! (`versions`). The socket rig they share is in `rig`, an SSE text reader in `sse_events`.

mod limits;
mod rig;
mod sharing;
#[path = "../support/sse_events.rs"]
mod sse_events;
mod sse_transport;
mod streamable;
mod versions;
