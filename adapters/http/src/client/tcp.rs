//! One client connection's TCP stream as hyper's `Read` + `Write` over smol, reading through a
//! buffer of its own that is zeroed once per connection (no `unsafe`).
//!
//! Why not smol-hyper's `FuturesIo`: it zeroes hyper's whole unfilled read buffer (8 KiB and
//! more) on every `poll_read`, including the polls that find the socket empty, which on a
//! keep-alive connection is several times per exchange; and it reads until `EAGAIN` (one
//! failed `recvfrom` per wake-up). Here a read that did not fill its buffer waits for the
//! reactor's readiness before the next one, and the bytes read are copied once into hyper's
//! buffer.

use std::io::{self, Read};
use std::net::{SocketAddr, TcpStream};
use std::pin::Pin;
use std::task::{Context, Poll};

use smol::io::AsyncWrite;
use smol::Async;

/// Bytes read per `poll_read` at most (hyper asks again while it wants more).
const READ_CHUNK: usize = 16 * 1024;

/// A connected client socket.
pub(crate) struct ClientIo {
    stream: Async<TcpStream>,
    /// Initialised once; reads land here and are copied into hyper's buffer.
    chunk: Box<[u8]>,
    /// The last read filled what was asked, so more bytes may be waiting: read before
    /// waiting for readiness.
    maybe_more: bool,
}

impl ClientIo {
    /// Connects to the first address of `addr` (`host:port`) that accepts, with TCP_NODELAY
    /// (without it a small POST waits for the peer's delayed ACK).
    pub(crate) async fn connect(addr: &str) -> io::Result<ClientIo> {
        let mut last = None;
        for candidate in smol::net::resolve(addr).await? {
            match connect_one(candidate).await {
                Ok(io) => return Ok(io),
                Err(e) => last = Some(e),
            }
        }
        Err(last
            .unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "the host has no address")))
    }
}

async fn connect_one(addr: SocketAddr) -> io::Result<ClientIo> {
    let stream = Async::<TcpStream>::connect(addr).await?;
    stream.get_ref().set_nodelay(true)?;
    Ok(ClientIo {
        stream,
        chunk: vec![0; READ_CHUNK].into_boxed_slice(),
        // Nothing is expected before the first request is written.
        maybe_more: false,
    })
}

impl hyper::rt::Read for ClientIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        // A readiness consumed before the last read can be stale once: bounded retries.
        for _ in 0..4 {
            if !this.maybe_more {
                match this.stream.poll_readable(cx) {
                    Poll::Ready(Ok(())) => {}
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Pending => return Poll::Pending,
                }
            }
            let want = buf.remaining().min(this.chunk.len());
            let mut socket: &TcpStream = this.stream.get_ref();
            match socket.read(&mut this.chunk[..want]) {
                Ok(n) => {
                    this.maybe_more = n == want && n > 0;
                    buf.put_slice(&this.chunk[..n]);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => this.maybe_more = false,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl hyper::rt::Write for ClientIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_close(cx)
    }
}
