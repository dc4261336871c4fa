//! [`Wake`]: how anything outside the poll driver's thread (a finished blocking job, a timer
//! on the reactor thread, a [`crate::Remote`] command) gets the loop out of `poll(2)`.
//!
//! A flag says "something is queued"; a byte on a socket pair is written only when the loop is
//! actually asleep. The loop publishes `sleeping` before it reads `pending`, a signaller
//! publishes `pending` before it reads `sleeping` (both sequentially consistent), so at least
//! one of them sees the other: either the loop skips the sleep or the signaller writes the
//! byte. Work queued from the loop thread itself, or while the loop is awake, costs no syscall.

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};

/// The poll driver's wake-up: a flag plus a socket pair the loop polls.
pub(crate) struct Wake {
    pending: AtomicBool,
    sleeping: AtomicBool,
    tx: UnixStream,
    rx: UnixStream,
}

impl Wake {
    /// A wake-up with its socket pair (both ends non-blocking).
    pub(crate) fn new() -> io::Result<Self> {
        let (tx, rx) = UnixStream::pair()?;
        tx.set_nonblocking(true)?;
        rx.set_nonblocking(true)?;
        Ok(Self {
            pending: AtomicBool::new(false),
            sleeping: AtomicBool::new(false),
            tx,
            rx,
        })
    }

    /// Marks work as queued; writes the wake byte if the loop sleeps. Any thread.
    pub(crate) fn signal(&self) {
        if self.pending.swap(true, SeqCst) {
            return; // an earlier signal is still unseen: it woke (or will stop) the sleep
        }
        if self.sleeping.load(SeqCst) {
            // A full socket buffer already holds a wake byte: ignoring the error loses nothing.
            let _ = (&self.tx).write(&[1]);
        }
    }

    /// Takes the queued mark: true if something was signalled since the last take.
    pub(crate) fn take(&self) -> bool {
        self.pending.swap(false, SeqCst)
    }

    /// About to sleep: true if the loop may (nothing was signalled meanwhile). Pair with
    /// [`Wake::end_sleep`].
    pub(crate) fn begin_sleep(&self) -> bool {
        self.sleeping.store(true, SeqCst);
        !self.pending.load(SeqCst)
    }

    /// Awake again; the next signals set the flag only.
    pub(crate) fn end_sleep(&self) {
        self.sleeping.store(false, SeqCst);
    }

    /// Reads the wake bytes that woke the loop (or arrived late).
    pub(crate) fn clear(&self) {
        let mut bytes = [0u8; 64];
        while let Ok(1..) = (&self.rx).read(&mut bytes) {}
    }

    /// The end the loop polls for readability.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.rx.as_fd()
    }
}
