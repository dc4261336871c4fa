//! [`PipeReader`]: a non-blocking pipe (or any `Async` readable) that skips the read bound to
//! fail. After a read that did not fill the buffer the pipe is almost always empty, so the next
//! read would only return `EAGAIN` before registering interest with the reactor; this reader
//! registers first and reads once the reactor reports new data. One syscall less per wake-up,
//! on the path every request and response takes (see docs/benchmarks.md, "stdio").

use std::io::{self, Read};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use async_io::{Async, IoSafe};
use smol::io::AsyncRead;

/// Reads from an [`Async`] handle, waiting for readiness instead of re-reading after a short
/// read.
pub(crate) struct PipeReader<T> {
    io: Async<T>,
    /// The last read returned less than asked: wait for readiness before the next one.
    drained: bool,
    /// Waiting for readiness after a short read has begun (its registration is in place).
    waiting: bool,
}

impl<T> PipeReader<T> {
    pub(crate) fn new(io: Async<T>) -> Self {
        Self {
            io,
            drained: false,
            waiting: false,
        }
    }

    /// Resolves once the reactor reports data that arrived after the last read.
    fn poll_new_data(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if !self.waiting {
            // The readiness that led to the last read may still be recorded as unseen: take
            // it, so the wait below is for new data. If data did arrive meanwhile, nothing is
            // lost: the registration below is level-triggered and reports it at once.
            if let Poll::Ready(result) = self.io.poll_readable(cx) {
                result?;
            }
            self.waiting = true;
        }
        ready!(self.io.poll_readable(cx))?;
        self.waiting = false;
        self.drained = false;
        Poll::Ready(Ok(()))
    }
}

impl<T: Read + IoSafe> AsyncRead for PipeReader<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.drained {
            ready!(this.poll_new_data(cx))?;
        }
        let result = ready!(Pin::new(&mut this.io).poll_read(cx, buf));
        if let Ok(n) = result {
            this.drained = n > 0 && n < buf.len();
        }
        Poll::Ready(result)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use smol::io::AsyncReadExt;
    use std::io::Write;
    use std::os::unix::net::UnixStream;
    use std::time::Duration;

    /// Reads once, or fails after a bound (a lost wake-up would hang here).
    fn read_within(reader: &mut PipeReader<UnixStream>, buf: &mut [u8]) -> usize {
        smol::block_on(smol::future::or(
            async { reader.read(buf).await.expect("read") },
            async {
                smol::Timer::after(Duration::from_secs(5)).await;
                panic!("no data within 5 s: a wake-up was lost");
            },
        ))
    }

    #[test]
    fn data_written_before_or_after_the_wait_starts_is_read() {
        let (ours, mut peer) = UnixStream::pair().unwrap();
        let mut reader = PipeReader::new(Async::new(ours).unwrap());
        let mut buf = [0u8; 64];
        peer.write_all(b"a").unwrap();
        assert_eq!(read_within(&mut reader, &mut buf), 1);
        assert!(reader.drained, "a short read");
        // Written after the short read, before the reader waits: seen at once.
        peer.write_all(b"bc").unwrap();
        let n = read_within(&mut reader, &mut buf);
        assert_eq!(&buf[..n], b"bc");
        // Written while the reader waits.
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            peer.write_all(b"d").unwrap();
            peer
        });
        let n = read_within(&mut reader, &mut buf);
        assert_eq!(&buf[..n], b"d");
        drop(writer.join().unwrap());
        assert_eq!(read_within(&mut reader, &mut buf), 0, "end of file");
    }
}
