//! Serving on this process's own stdin and stdout.
//!
//! stdin is read and stdout written through `blocking::Unblock` (a thread of the blocking pool
//! does the blocking read/write, the loop awaits it). We chose that over `Async::new` on fd 0/1
//! because `Async` needs `O_NONBLOCK`, which lives on the open file description shared with the
//! parent: setting it would leave the user's terminal or the parent's pipe non-blocking after we
//! exit, and epoll refuses regular files (`mcp-sansio serve --stdio < requests.jsonl`). `Unblock`
//! works the same for pipes, terminals, files and `/dev/null`. The cost is a thread hand-off per
//! read chunk (64 KiB by default), which batching makes small. A read still blocked when the
//! loop returns stays parked in its pool thread; the process exits over it.
//!
//! Only protocol messages go to stdout; everything else (logs) must go to stderr.

use std::io;

use smol::Unblock;

use crate::driven::Driven;
use crate::driver::{DriveOptions, Driver, Finished};

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
        let stdin = Unblock::with_capacity(chunk, io::stdin());
        let stdout = Unblock::with_capacity(chunk, io::stdout());
        self.block_on(driven, stdin, stdout)
    }
}
