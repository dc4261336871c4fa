//! The answers to the task requests (`tasks/update`, `tasks/cancel`) this instance forwards
//! to the instance running the task: each forwarded request carries this instance's name and
//! a token (`<instance>\n<token>\n<request>`); the running instance serves it and publishes its
//! JSON-RPC response on this instance's answer channel (`task-answers.<instance>`, payload
//! `<token>\n<response>`), which hands it to the request waiting under that token. At most
//! [`MAX_WAITING`] requests wait at once, each at most [`ANSWER_TIMEOUT`] (the defaults; see
//! [`TaskAnswers::with_limits`]).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use mcp_sansio::http::{HttpResponse, TaskRequest};
use mcp_sansio_store::StoreError;
use smol::channel::{self, Receiver, Sender};
use smol::Timer;

use mcp_sansio::http::service_unavailable;

use super::refusal::unavailable;

/// Forwarded task requests waiting for their answer at most; past it the client gets 503.
const MAX_WAITING: usize = 1024;

/// How long a forwarded task request waits for the running instance's answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// Answers waiting for the publisher at most (past it they are dropped: the forwarding
/// instance then answers that none came).
const MAX_OUTGOING: usize = 1024;

/// The waiting forwarded requests of this instance, and the answers it owes the others.
pub(crate) struct TaskAnswers {
    /// Requests waiting at most.
    max_waiting: usize,
    /// How long each waits for its answer.
    timeout: Duration,
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
    /// A table with the default limits: [`MAX_WAITING`] requests, [`ANSWER_TIMEOUT`] each.
    pub(crate) fn new() -> Self {
        Self::with_limits(MAX_WAITING, ANSWER_TIMEOUT)
    }

    /// A table where at most `max_waiting` requests wait at once, each at most `timeout`.
    pub(crate) fn with_limits(max_waiting: usize, timeout: Duration) -> Self {
        let (out_tx, out_rx) = channel::bounded(MAX_OUTGOING);
        TaskAnswers {
            max_waiting,
            timeout,
            next: Cell::new(0),
            waiting: RefCell::default(),
            out_tx,
            out_rx,
        }
    }

    /// Forwards `request` (its `body`) to the instance running its task: `publish` sends the
    /// payload on that instance's channel and says how many received it. The answer for the
    /// client: the running instance's, `503` when too many requests wait already (nothing is
    /// sent), the request's error when no instance received it (gone) or no answer came in
    /// time, or `503` when the store failed.
    pub(crate) async fn forward<F, Fut>(
        &self,
        from: &str,
        request: &TaskRequest,
        body: &[u8],
        publish: F,
    ) -> HttpResponse
    where
        F: FnOnce(Vec<u8>) -> Fut,
        Fut: Future<Output = Result<usize, StoreError>>,
    {
        let Some(waiting) = self.wait() else {
            return service_unavailable(body, BUSY);
        };
        match publish(waiting.payload(from, body)).await {
            Ok(0) => request.gone(),
            Ok(_) => match waiting.answer().await {
                Some(answer) => request.relayed(answer),
                None => request.unanswered(),
            },
            Err(_) => unavailable(body),
        }
    }

    /// A new wait under a fresh token; `None` when the most requests wait already.
    fn wait(&self) -> Option<Waiting<'_>> {
        let mut waiting = self.waiting.borrow_mut();
        if waiting.len() >= self.max_waiting {
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
    fn payload(&self, from: &str, request: &[u8]) -> Vec<u8> {
        let mut payload = format!("{from}\n{}\n", self.token).into_bytes();
        payload.extend_from_slice(request);
        payload
    }

    /// The running instance's answer; `None` when none came within the table's timeout.
    async fn answer(&self) -> Option<Bytes> {
        let answer = async { self.rx.recv().await.ok() };
        let timeout = async {
            Timer::after(self.answers.timeout).await;
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

/// Why a request is refused when too many forwarded task requests wait already.
const BUSY: &str = "too many task requests wait for other server instances";

/// `payload` split at its first newline.
fn split_once(payload: &[u8]) -> Option<(&[u8], &[u8])> {
    let at = payload.iter().position(|&b| b == b'\n')?;
    Some((&payload[..at], &payload[at + 1..]))
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use mcp_sansio::app::server::Server;
    use mcp_sansio::http::{Body, Endpoint, EndpointConfig, HttpMethod, HttpRequestHead};
    use mcp_sansio::model::Implementation;
    use serde_json::Value;

    use super::*;

    /// A 2026-07-28 `tasks/cancel` of task `t1` (id 7), as an endpoint sharing a store names
    /// it, and its body.
    fn cancel_request() -> (TaskRequest, Bytes) {
        let config = EndpointConfig {
            instance_id: Some("here".to_owned()),
            ..EndpointConfig::default()
        };
        let endpoint = Endpoint::new(config, |now: Instant| {
            Server::builder(Implementation::new("task-answers-test", "1")).build(now)
        });
        let body = Bytes::from_static(
            br#"{"jsonrpc":"2.0","id":7,"method":"tasks/cancel","params":{"taskId":"t1","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        );
        let head = HttpRequestHead::new(HttpMethod::Post, "/mcp")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tasks/cancel");
        let request = endpoint.task_request(&head, &body).expect("a task request");
        (request, body)
    }

    /// The JSON body of `resp`.
    fn json(resp: &HttpResponse) -> Value {
        match &resp.body {
            Body::Full(bytes) => serde_json::from_slice(bytes).expect("a JSON body"),
            other => panic!("not a whole body: {other:?}"),
        }
    }

    #[test]
    fn a_request_past_the_cap_gets_503_and_is_not_sent() {
        let (request, body) = cancel_request();
        let answers = TaskAnswers::with_limits(2, Duration::from_secs(3600));
        let held = [answers.wait(), answers.wait()];
        assert!(held.iter().all(Option::is_some));
        let sent = Cell::new(false);
        let publish = |_: Vec<u8>| {
            sent.set(true);
            async { Ok(1) }
        };
        let resp = smol::block_on(answers.forward("here", &request, &body, publish));
        assert_eq!(resp.status, 503);
        assert_eq!(json(&resp)["error"]["code"], -32000);
        assert_eq!(json(&resp)["id"], 7, "the refusal names the request");
        assert!(!sent.get(), "nothing is forwarded at the cap");

        // A wait that ends frees its place: the next request is forwarded and relayed.
        drop(held);
        let publish = |payload: Vec<u8>| {
            let (from, token, forwarded) = split_request(&payload).expect("a forwarded request");
            assert_eq!((from, forwarded), ("here", &body[..]));
            let mut answer = token.to_vec();
            answer.push(b'\n');
            answer.extend_from_slice(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#);
            answers.handle_answer(&answer);
            async { Ok(1) }
        };
        let resp = smol::block_on(answers.forward("here", &request, &body, publish));
        assert_eq!(resp.status, 200);
        assert_eq!(json(&resp)["result"], serde_json::json!({}));
    }

    #[test]
    fn a_request_no_one_answers_gets_the_unanswered_error_after_the_wait() {
        let (request, body) = cancel_request();
        let answers = TaskAnswers::with_limits(1, Duration::from_millis(20));
        let publish = |_: Vec<u8>| async { Ok(1) };
        let resp = smol::block_on(answers.forward("here", &request, &body, publish));
        assert_eq!(resp.status, 200);
        let reply = json(&resp);
        assert_eq!(reply["id"], 7);
        assert_eq!(reply["error"]["code"], -32603);
        let message = reply["error"]["message"].as_str().unwrap_or("");
        assert!(message.contains("did not answer"), "{reply}");
        // The wait that timed out left the table: the one place is free again.
        assert!(answers.wait().is_some());
    }

    #[test]
    fn a_request_no_instance_receives_gets_the_gone_error_and_a_store_failure_503() {
        let (request, body) = cancel_request();
        let answers = TaskAnswers::with_limits(1, Duration::from_secs(3600));
        let resp = smol::block_on(answers.forward("here", &request, &body, |_| async { Ok(0) }));
        let reply = json(&resp);
        assert_eq!(reply["error"]["code"], -32603);
        let message = reply["error"]["message"].as_str().unwrap_or("");
        assert!(message.contains("is gone"), "{reply}");
        let failing = |_| async { Err(StoreError::Backend("down".to_owned())) };
        let resp = smol::block_on(answers.forward("here", &request, &body, failing));
        assert_eq!(resp.status, 503);
        assert_eq!(json(&resp)["id"], 7, "the refusal names the request");
    }
}
