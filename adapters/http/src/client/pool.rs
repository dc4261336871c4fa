//! Keep-alive HTTP/1.1 connections to one server: a request takes an idle connection or opens
//! a new one (TCP_NODELAY, against the delayed-ACK stall on small request bodies; head and body
//! in one write), and gives it back once its response body was read to the end. N requests in
//! flight use N connections. A pool given several addresses (instances serving the same
//! sessions) sends each request to the next one in turn.

use std::cell::{Cell, RefCell};
use std::ops::{Deref, DerefMut};
use std::rc::Rc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1::{self, SendRequest};
use smol::LocalExecutor;

use super::tcp;

/// The sending half of one connection, and which address it reaches.
pub(crate) struct Sender {
    inner: SendRequest<Full<Bytes>>,
    slot: usize,
}

impl Deref for Sender {
    type Target = SendRequest<Full<Bytes>>;
    fn deref(&self) -> &Self::Target {
        &self.inner
    }
}

impl DerefMut for Sender {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.inner
    }
}

/// Idle connections to each of `addrs`, at most `max_idle` kept per address.
pub(crate) struct Pool {
    addrs: Vec<String>,
    max_idle: usize,
    idle: RefCell<Vec<Vec<Sender>>>,
    /// The address the next request goes to (several addresses only).
    next: Cell<usize>,
    executor: Rc<LocalExecutor<'static>>,
    opened: RefCell<u64>,
}

impl Pool {
    pub(crate) fn new(addr: String, max_idle: usize, executor: Rc<LocalExecutor<'static>>) -> Self {
        Pool::rotating(vec![addr], max_idle, executor)
    }

    /// A pool sending each request to the next of `addrs` (at least one) in turn.
    pub(crate) fn rotating(
        addrs: Vec<String>,
        max_idle: usize,
        executor: Rc<LocalExecutor<'static>>,
    ) -> Self {
        Pool {
            idle: RefCell::new(addrs.iter().map(|_| Vec::new()).collect()),
            addrs,
            max_idle,
            next: Cell::new(0),
            executor,
            opened: RefCell::new(0),
        }
    }

    /// Connections opened so far.
    pub(crate) fn opened(&self) -> u64 {
        *self.opened.borrow()
    }

    /// An idle connection that is still usable, or a new one.
    pub(crate) async fn checkout(&self) -> Result<Sender, String> {
        let slot = match self.addrs.len() {
            0 | 1 => 0,
            n => {
                let slot = self.next.get() % n;
                self.next.set(slot + 1);
                slot
            }
        };
        loop {
            let candidate = self.idle.borrow_mut().get_mut(slot).and_then(Vec::pop);
            let Some(mut sender) = candidate else { break };
            if sender.is_closed() {
                continue;
            }
            if sender.ready().await.is_ok() {
                return Ok(sender);
            }
        }
        // Boxed: opening a connection is rare and its future is large; inline, it would
        // enlarge every exchange's future (allocated and moved per request).
        Box::pin(self.connect(slot)).await
    }

    /// Gives a connection back after its response was read to the end.
    pub(crate) fn checkin(&self, sender: Sender) {
        let mut idle = self.idle.borrow_mut();
        if let Some(idle) = idle.get_mut(sender.slot) {
            if !sender.is_closed() && idle.len() < self.max_idle {
                idle.push(sender);
            }
        }
    }

    async fn connect(&self, slot: usize) -> Result<Sender, String> {
        let addr = self.addrs.get(slot).map_or("", String::as_str);
        let stream = tcp::connect(addr)
            .await
            .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
        // Head and body written from one buffer (the body copied after the head), not queued
        // for a vectored write: for the small bodies of MCP messages the copy costs less than
        // hyper's buffer queue and its flush (about 0.8 K instructions per request less).
        let (sender, connection) = http1::Builder::new()
            .writev(false)
            .handshake(stream)
            .await
            .map_err(|e| format!("HTTP handshake with {addr}: {e}"))?;
        // The connection task ends when the server closes or every sender is dropped.
        self.executor
            .spawn(async move {
                let _ = connection.await;
            })
            .detach();
        *self.opened.borrow_mut() += 1;
        Ok(Sender {
            inner: sender,
            slot,
        })
    }
}
