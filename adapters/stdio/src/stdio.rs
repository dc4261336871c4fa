//! Serving on this process's own stdin and stdout.
//!
//! Two ways to read and write them without blocking the loop, chosen per stream:
//! - a pipe (the usual case: a client spawned us) on Linux is reopened through
//!   `/proc/self/fd/N` with `O_NONBLOCK` and polled with `Async`: the reopen gives us our own
//!   open file description, so the flag never leaks to the parent's end;
//! - anything else (a terminal, a regular file, `/dev/null`, a socket, other systems) goes
//!   through `blocking::Unblock`: a pool thread does the blocking read/write, the loop awaits it.
//!
//! We never set `O_NONBLOCK` on fd 0/1 themselves: the flag lives on the open file description
//! shared with the parent, so it would leave the user's terminal or the parent's pipe
//! non-blocking after we exit, and epoll refuses regular files anyway
//! (`mcp-sansio serve --stdio < requests.jsonl`). `Unblock` costs thread hand-offs: on a 2-core
//! machine one ping-pong round trip through a `serve_stdio` echo server took about 47 µs with
//! `Unblock` and about 14 µs with reopened `Async` pipes (`examples/pipe_roundtrip.rs`). A read still blocked when the loop
//! returns stays parked in its pool thread; the process exits over it.
//!
//! Only protocol messages go to stdout; everything else (logs) must go to stderr.

use std::io;

use smol::io::{AsyncRead, AsyncWrite};
use smol::Unblock;

use crate::driven::Driven;
use crate::driver::{DriveOptions, Driver, Finished};
use crate::pipe_reader::PipeReader;

/// Serves `driven` on stdin/stdout with default options until it closes or stdin ends (see
/// [`Driver::serve_stdio`]). Blocks the calling thread.
pub fn serve_stdio<D: Driven + 'static>(driven: D) -> Finished<D> {
    Driver::new(DriveOptions::default()).serve_stdio(driven)
}

impl<D: Driven + 'static> Driver<D> {
    /// Drives `driven` on this process's stdin and stdout, blocking the calling thread.
    ///
    /// Returns when the machine closes, or when stdin has ended and the machine has closed or
    /// the linger time has passed; everything the machine transmitted is flushed to stdout first.
    pub fn serve_stdio(self, driven: D) -> Finished<D> {
        let chunk = self.options().read_chunk.max(1);
        let stdin: Box<dyn AsyncRead + Unpin> = match pipe::reopen(0) {
            Some(pipe) => Box::new(PipeReader::new(pipe)),
            None => Box::new(Unblock::with_capacity(chunk, io::stdin())),
        };
        let stdout: Box<dyn AsyncWrite + Unpin> = match pipe::reopen(1) {
            Some(pipe) => Box::new(pipe),
            None => Box::new(Unblock::with_capacity(chunk, io::stdout())),
        };
        self.block_on(driven, stdin, stdout)
    }
}

#[cfg(target_os = "linux")]
pub(crate) mod pipe {
    use std::fs::{File, OpenOptions};
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};

    use smol::Async;

    /// Our own non-blocking handle on fd `fd` (0 or 1) if it is a pipe; `None` otherwise.
    pub(super) fn reopen(fd: u8) -> Option<Async<File>> {
        Async::new(reopen_file(fd)?).ok()
    }

    /// Our own open file description of fd `fd` (0 or 1), non-blocking, if it is a pipe.
    pub(crate) fn reopen_file(fd: u8) -> Option<File> {
        let path = format!("/proc/self/fd/{fd}");
        if !std::fs::metadata(&path).ok()?.file_type().is_fifo() {
            return None;
        }
        // O_NONBLOCK also keeps `open` from waiting for a peer on a pipe whose other end is
        // already closed: reading then sees end of file, writing fails and we fall back.
        OpenOptions::new()
            .read(fd == 0)
            .write(fd != 0)
            .custom_flags(libc::O_NONBLOCK)
            .open(&path)
            .ok()
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) mod pipe {
    /// Without `/proc/self/fd`, every stream goes through `Unblock`.
    pub(super) fn reopen(_fd: u8) -> Option<smol::Async<std::fs::File>> {
        None
    }

    /// Without `/proc/self/fd`, stdout is written as it is.
    #[allow(dead_code)]
    pub(crate) fn reopen_file(_fd: u8) -> Option<std::fs::File> {
        None
    }
}
