//! Opening a client connection: the first address of `host:port` that accepts, with
//! TCP_NODELAY and TCP keepalive, as a `TcpIo` (the stream wrapper the server uses too, `crate::tcp_io`).

use std::io;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use smol::Async;

use crate::tcp_io::TcpIo;

/// TCP keepalive probes start after this long without traffic on a client connection.
const KEEPALIVE_AFTER: Duration = Duration::from_secs(60);

/// Connects to the first address of `addr` (`host:port`) that accepts, with TCP_NODELAY
/// (without it a small POST waits for the peer's delayed ACK).
pub(crate) async fn connect(addr: &str) -> io::Result<TcpIo> {
    let mut last = None;
    for candidate in smol::net::resolve(addr).await? {
        match connect_one(candidate).await {
            Ok(io) => return Ok(io),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "the host has no address")))
}

async fn connect_one(addr: SocketAddr) -> io::Result<TcpIo> {
    let stream = Async::<TcpStream>::connect(addr).await?;
    stream.get_ref().set_nodelay(true)?;
    // Best effort: a pooled connection whose server vanished without a FIN is found.
    let probes = socket2::TcpKeepalive::new().with_time(KEEPALIVE_AFTER);
    let _ = socket2::SockRef::from(stream.get_ref()).set_tcp_keepalive(&probes);
    Ok(TcpIo::connected(stream))
}
