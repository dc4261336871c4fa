//! One TCP connection as hyper's `Read` + `Write` over smol, for the server's accepted
//! connections and the client's pooled ones.
//!
//! Reads go through one scratch buffer per thread, zeroed once (safe Rust cannot read into
//! uninitialised memory), not on every read: smol-hyper's `FuturesIo` zeroes hyper's whole
//! unfilled buffer (8 KiB and more) on every `poll_read`, including the polls that find the
//! socket empty. The bytes are copied into hyper's buffer within the same `poll_read`, so the
//! scratch holds nothing between reads and a connection (an idle GET stream, say) none. And a
//! read that did not fill its buffer waits for the reactor's readiness before the next one, instead of reading until `EAGAIN` (one failed `recvfrom` per wake-up).
//!
//! On the server side a write that makes no progress for the write timeout fails with
//! `TimedOut` (the client stopped reading; hyper's backpressure already stopped pulling the
//! body), and hyper closes the connection. An accepted connection that opens with the HTTP/2
//! preface (a client speaking HTTP/2 without negotiating it) is told in HTTP/2 that the
//! server speaks HTTP/1.1 only: an empty SETTINGS frame and a GOAWAY with `HTTP_1_1_REQUIRED`
//! (RFC 9113 §3.4, §7), written before hyper refuses the preface and closes the connection.
//!
//! An accepted connection closed while the client is still sending (a 431 for a head too
//! large, a 413 for a body too large, a `Connection: close` answer to a pipelined request)
//! lingers before the descriptor closes: its write side is shut (the client reads the answer,
//! then end of stream), and what the client still sends is read and dropped until it closes
//! too, for up to `LINGER` and `LINGER_BYTES`. Closing a socket with unread bytes makes the
//! kernel send a reset, which can destroy the answer before the client reads it. A connection
//! with nothing unread at its close closes at once.

use std::cell::RefCell;
use std::future::Future;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use hyper::rt::ReadBufCursor;
use smol::io::AsyncWrite;
use smol::{Async, Timer};

/// Bytes read per `poll_read` at most (hyper asks again while it wants more).
const READ_CHUNK: usize = 16 * 1024;

/// How long a closing connection reads and drops what its client still sends, at most.
const LINGER: Duration = Duration::from_secs(2);
/// Bytes a closing connection reads and drops at most.
const LINGER_BYTES: usize = 16 << 20;

/// The start of the HTTP/2 client preface (RFC 9113 §3.4).
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n";

/// The answer to an HTTP/2 preface: an empty SETTINGS frame (the server preface), then a
/// GOAWAY for stream 0 with the error `HTTP_1_1_REQUIRED` (0xd).
const H2_REFUSAL: [u8; 26] = [
    0, 0, 0, 0x4, 0, 0, 0, 0, 0, // SETTINGS: length 0, no flags, stream 0
    0, 0, 8, 0x7, 0, 0, 0, 0, 0, // GOAWAY: length 8, no flags, stream 0
    0, 0, 0, 0, // last stream id 0
    0, 0, 0, 0xd, // HTTP_1_1_REQUIRED
];

thread_local! {
    /// Where the socket's bytes land before hyper's buffer takes them, shared by every
    /// connection polled on this thread: zeroed once, on the thread's first read.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A smol TCP stream as hyper's `Read` + `Write`.
pub(crate) struct TcpIo {
    stream: Async<TcpStream>,
    /// The last read filled its buffer, so more bytes may be waiting: read before waiting.
    maybe_more: bool,
    /// An accepted connection that has read nothing yet (its first bytes are looked at).
    first: bool,
    /// The write timeout, and its timer while a write waits.
    stall: Option<Stall>,
    /// How the connection's close goes (accepted connections linger, see the module docs).
    close: Close,
}

/// The close of a connection.
enum Close {
    /// Closes at once (a connection this side opened).
    Plain,
    /// Lingers if its client is still sending when it closes.
    Linger,
    /// Shut for writing; reading and dropping what the client still sends.
    Draining { timer: Timer, dropped: usize },
    /// Done.
    Closed,
}

/// A write timeout: armed when a write finds the socket full, disarmed by any progress.
struct Stall {
    limit: Duration,
    /// Created at the first stall, re-armed (not re-created) at later ones.
    timer: Option<Timer>,
    armed: bool,
}

impl Stall {
    /// The socket is full: wait for it, up to the limit since the stall began.
    fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        if !self.armed {
            self.armed = true;
            match &mut self.timer {
                Some(timer) => {
                    timer.set_after(self.limit);
                }
                None => self.timer = Some(Timer::after(self.limit)),
            }
        }
        match self.timer.as_mut().map(|t| Pin::new(t).poll(cx)) {
            Some(Poll::Ready(_)) => Poll::Ready(io::Error::new(
                io::ErrorKind::TimedOut,
                "the peer read nothing for the write timeout",
            )),
            _ => Poll::Pending,
        }
    }
}

/// Reads what `socket` holds into the thread's scratch buffer and drops it: the bytes read
/// (0 at the end of the stream).
fn drop_unread(socket: &TcpStream) -> io::Result<usize> {
    SCRATCH.with_borrow_mut(|chunk| {
        if chunk.is_empty() {
            chunk.resize(READ_CHUNK, 0);
        }
        (&mut &*socket).read(chunk)
    })
}

/// Reads at most `want` bytes from `socket` into `buf` through the thread's scratch buffer;
/// with `first`, answers an HTTP/2 preface among them (see the module docs).
fn read_into(
    socket: &TcpStream,
    want: usize,
    buf: &mut ReadBufCursor<'_>,
    first: bool,
) -> io::Result<usize> {
    SCRATCH.with_borrow_mut(|chunk| {
        if chunk.is_empty() {
            chunk.resize(READ_CHUNK, 0);
        }
        let n = (&mut &*socket).read(&mut chunk[..want])?;
        if first && chunk[..n].starts_with(H2_PREFACE) {
            // Best effort: nothing was written yet, so the socket's buffer takes it whole.
            let _ = (&mut &*socket).write(&H2_REFUSAL);
        }
        buf.put_slice(&chunk[..n]);
        Ok(n)
    })
}

impl TcpIo {
    /// An accepted connection: its first request is usually already there, so the first
    /// read does not wait for readiness. A write that makes no progress for `write_timeout`
    /// fails.
    pub(crate) fn accepted(stream: Async<TcpStream>, write_timeout: Option<Duration>) -> Self {
        TcpIo {
            stream,
            maybe_more: true,
            first: true,
            stall: write_timeout.map(|limit| Stall {
                limit,
                timer: None,
                armed: false,
            }),
            close: Close::Linger,
        }
    }

    /// Shuts the write side, then reads and drops what the client still sends until it
    /// closes, `LINGER` passes or `LINGER_BYTES` are dropped; at once when nothing is unread.
    fn poll_linger(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            let socket = self.stream.get_ref();
            match &mut self.close {
                Close::Plain | Close::Closed => return Poll::Ready(Ok(())),
                Close::Linger => {
                    let _ = socket.shutdown(Shutdown::Write);
                    match drop_unread(socket) {
                        Ok(n) if n > 0 => {
                            self.close = Close::Draining {
                                timer: Timer::after(LINGER),
                                dropped: n,
                            };
                        }
                        // Nothing unread (or the client gone): close now.
                        _ => self.close = Close::Closed,
                    }
                }
                Close::Draining { timer, dropped } => match drop_unread(socket) {
                    Ok(0) => self.close = Close::Closed,
                    Ok(n) => {
                        *dropped += n;
                        if *dropped >= LINGER_BYTES {
                            self.close = Close::Closed;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        if Pin::new(timer).poll(cx).is_ready() {
                            self.close = Close::Closed;
                            continue;
                        }
                        match self.stream.poll_readable(cx) {
                            Poll::Ready(_) => {}
                            Poll::Pending => return Poll::Pending,
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => self.close = Close::Closed,
                },
            }
        }
    }

    /// A write's outcome, with the write timeout applied: pending past the limit fails,
    /// anything else disarms it.
    fn timed<T>(
        &mut self,
        cx: &mut Context<'_>,
        outcome: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        let Some(stall) = self.stall.as_mut() else {
            return outcome;
        };
        match outcome {
            Poll::Pending => stall.poll_expired(cx).map(Err),
            ready => {
                stall.armed = false;
                ready
            }
        }
    }

    /// A connection this side opened: nothing comes before its first request is written.
    pub(crate) fn connected(stream: Async<TcpStream>) -> Self {
        TcpIo {
            stream,
            maybe_more: false,
            first: false,
            stall: None,
            close: Close::Plain,
        }
    }
}

impl hyper::rt::Read for TcpIo {
    /// After a read that did not fill its buffer the socket is almost always empty, so this
    /// waits for the reactor's readiness before reading again, instead of reading to get
    /// `EAGAIN` (what `Async::poll_read` does: one failed `recvfrom` per wake-up).
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: ReadBufCursor<'_>,
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
            let want = buf.remaining().min(READ_CHUNK);
            match read_into(this.stream.get_ref(), want, &mut buf, this.first) {
                Ok(n) => {
                    this.first = false;
                    this.maybe_more = n == want && n > 0;
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

impl hyper::rt::Write for TcpIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let outcome = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.timed(cx, outcome)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let outcome = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.timed(cx, outcome)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(Pin::new(&mut self.stream).poll_close(cx))?;
        self.poll_linger(cx)
    }
}
