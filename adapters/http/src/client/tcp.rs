//! Opening a client connection: the first address of `host:port` that accepts, with
//! TCP_NODELAY, as a `TcpIo` (the stream wrapper the server uses too, `crate::tcp_io`).

use std::io;
use std::net::{SocketAddr, TcpStream};

use smol::Async;

use crate::tcp_io::TcpIo;

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
    Ok(TcpIo::connected(stream))
}
