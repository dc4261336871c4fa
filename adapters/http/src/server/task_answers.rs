//! The answers to the task requests (`tasks/update`, `tasks/cancel`) this instance forwards
//! to the instance running the task: each forwarded request carries this instance's name and
//! a token (`<instance>\n<token>\n<request>`); the running instance serves it and publishes its
//! JSON-RPC response on this instance's answer channel (`task-answers.<instance>`, payload
//! `<token>\n<response>`), which hands it to the request waiting under that token. At most
//! [`MAX_WAITING`] requests wait at once, each at most [`ANSWER_TIMEOUT`].

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use smol::channel::{self, Receiver, Sender};
use smol::Timer;

/// Forwarded task requests waiting for their answer at most; past it the client gets 503.
const MAX_WAITING: usize = 1024;

/// How long a forwarded task request waits for the running instance's answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// Answers waiting for the publisher at most (past it they are dropped: the forwarding
/// instance then answers that none came).
const MAX_OUTGOING: usize = 1024;

/// The waiting forwarded requests of this instance, and the answers it owes the others.
pub(crate) struct TaskAnswers {
    next: Cell<u64>,
    waiting: RefCell<HashMap<u64, Sender<Bytes>>>,
    out_tx: Sender<(String, Bytes)>,
    out_rx: Receiver<(String, Bytes)>,
}

/// One forwarded request waiting for its answer; leaves the table when dropped.
pub(crate) struct Waiting<'a> {
    answers: &'a TaskAnswers,
    token: u64,
    rx: Receiver<Bytes>,
}

impl TaskAnswers {
    pub(crate) fn new() -> Self {
        let (out_tx, out_rx) = channel::bounded(MAX_OUTGOING);
        TaskAnswers {
            next: Cell::new(0),
            waiting: RefCell::default(),
            out_tx,
            out_rx,
        }
    }

    /// A new wait under a fresh token; `None` when [`MAX_WAITING`] requests wait already.
    pub(crate) fn wait(&self) -> Option<Waiting<'_>> {
        let mut waiting = self.waiting.borrow_mut();
        if waiting.len() >= MAX_WAITING {
            return None;
        }
        let token = self.next.get();
        self.next.set(token.wrapping_add(1));
        let (tx, rx) = channel::bounded(1);
        waiting.insert(token, tx);
        Some(Waiting {
            answers: self,
            token,
            rx,
        })
    }

    /// Hands a message of this instance's answer channel to the request waiting for it (one
    /// that stopped waiting, or a malformed message, is ignored).
    pub(crate) fn handle_answer(&self, payload: &[u8]) {
        let Some((token, answer)) = split_once(payload) else {
            return;
        };
        let token = std::str::from_utf8(token).ok().and_then(|t| t.parse().ok());
        if let Some(tx) = token.and_then(|t| self.waiting.borrow_mut().remove(&t)) {
            let _ = tx.try_send(Bytes::copy_from_slice(answer));
        }
    }

    /// Queues `answer` to the request `token` instance `from` forwarded, for
    /// [`TaskAnswers::next_outgoing`]; dropped when the queue is full.
    pub(crate) fn queue_answer(&self, from: &str, token: &[u8], answer: &[u8]) {
        let mut payload = Vec::with_capacity(token.len() + 1 + answer.len());
        payload.extend_from_slice(token);
        payload.push(b'\n');
        payload.extend_from_slice(answer);
        let _ = self
            .out_tx
            .try_send((answer_channel(from), Bytes::from(payload)));
    }

    /// The next answer to publish (its channel and payload); `None` never comes while the
    /// table lives.
    pub(crate) async fn next_outgoing(&self) -> Option<(String, Bytes)> {
        self.out_rx.recv().await.ok()
    }
}

impl Waiting<'_> {
    /// What the running instance receives: `from`'s name, this wait's token, `request`.
    pub(crate) fn payload(&self, from: &str, request: &[u8]) -> Vec<u8> {
        let mut payload = format!("{from}\n{}\n", self.token).into_bytes();
        payload.extend_from_slice(request);
        payload
    }

    /// The running instance's answer; `None` when none came within [`ANSWER_TIMEOUT`].
    pub(crate) async fn answer(&self) -> Option<Bytes> {
        let answer = async { self.rx.recv().await.ok() };
        let timeout = async {
            Timer::after(ANSWER_TIMEOUT).await;
            None
        };
        smol::future::or(answer, timeout).await
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.answers.waiting.borrow_mut().remove(&self.token);
    }
}

/// A forwarded task request's parts: the forwarding instance, its token, the request.
pub(crate) fn split_request(payload: &[u8]) -> Option<(&str, &[u8], &[u8])> {
    let (from, rest) = split_once(payload)?;
    let (token, request) = split_once(rest)?;
    Some((std::str::from_utf8(from).ok()?, token, request))
}

/// The bus channel of the answers to the task requests instance `instance` forwarded.
pub(crate) fn answer_channel(instance: &str) -> String {
    format!("task-answers.{instance}")
}

/// The JSON-RPC error of a `503` when too many forwarded task requests wait already.
pub(crate) const BUSY_BODY: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Service Unavailable: too many task requests wait for other server instances"}}"#;

/// `payload` split at its first newline.
fn split_once(payload: &[u8]) -> Option<(&[u8], &[u8])> {
    let at = payload.iter().position(|&b| b == b'\n')?;
    Some((&payload[..at], &payload[at + 1..]))
}
