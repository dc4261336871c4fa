//! The HTTP server adapter through real loopback sockets and a tiny raw HTTP/1.1 client, one
//! binary: Streamable HTTP (`streamable`), the HTTP+SSE transport beside it
//! (`sse_transport`), and the server's connection limits and timeouts (`limits`). The socket
//! rig they share is in `rig`.

mod limits;
mod rig;
mod sse_transport;
mod streamable;
