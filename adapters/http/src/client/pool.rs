//! Keep-alive HTTP/1.1 connections to one server: a request takes an idle connection or opens
//! a new one (TCP_NODELAY, against the delayed-ACK stall on small request bodies; head and body
//! in one write), and gives it back once its response body was read to the end. N requests in
//! flight use N connections.

use std::cell::RefCell;
use std::rc::Rc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1::{self, SendRequest};
use smol::LocalExecutor;

use super::tcp;

/// The sending half of one connection.
pub(crate) type Sender = SendRequest<Full<Bytes>>;

/// Idle connections to `addr`, at most `max_idle` kept.
pub(crate) struct Pool {
    addr: String,
    max_idle: usize,
    idle: RefCell<Vec<Sender>>,
    executor: Rc<LocalExecutor<'static>>,
    opened: RefCell<u64>,
}

impl Pool {
    pub(crate) fn new(addr: String, max_idle: usize, executor: Rc<LocalExecutor<'static>>) -> Self {
        Pool {
            addr,
            max_idle,
            idle: RefCell::new(Vec::new()),
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
        loop {
            let candidate = self.idle.borrow_mut().pop();
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
        Box::pin(self.connect()).await
    }

    /// Gives a connection back after its response was read to the end.
    pub(crate) fn checkin(&self, sender: Sender) {
        let mut idle = self.idle.borrow_mut();
        if !sender.is_closed() && idle.len() < self.max_idle {
            idle.push(sender);
        }
    }

    async fn connect(&self) -> Result<Sender, String> {
        let stream = tcp::connect(self.addr.as_str())
            .await
            .map_err(|e| format!("cannot connect to {}: {e}", self.addr))?;
        // Head and body written from one buffer (the body copied after the head), not queued
        // for a vectored write: for the small bodies of MCP messages the copy costs less than
        // hyper's buffer queue and its flush (about 0.8 K instructions per request less).
        let (sender, connection) = http1::Builder::new()
            .writev(false)
            .handshake(stream)
            .await
            .map_err(|e| format!("HTTP handshake with {}: {e}", self.addr))?;
        // The connection task ends when the server closes or every sender is dropped.
        self.executor
            .spawn(async move {
                let _ = connection.await;
            })
            .detach();
        *self.opened.borrow_mut() += 1;
        Ok(sender)
    }
}
