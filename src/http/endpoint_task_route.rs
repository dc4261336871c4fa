//! 2026-07-28 task requests (`tasks/get`, `tasks/update`, `tasks/cancel`) for tasks another
//! instance runs: with an `instance_id` set, the endpoint names such a request
//! ([`TaskRequest`]) before serving it; the driver, finding the task is not in this
//! instance's table but in the shared store, answers `tasks/get` from the stored record
//! ([`TaskRequest::answer`]) and forwards the others to the instance running the task,
//! whose answer it relays ([`TaskRequest::relayed`]; [`TaskRequest::unanswered`] when none
//! comes in time), or answers that it is gone ([`TaskRequest::gone`]).

use bytes::Bytes;
use serde_json::Value;

use super::{Endpoint, JSON};
use crate::http::admission::KnownFields;
use crate::http::machine::{ExchangeMachine, SessionMachine};
use crate::http::reply::rpc_error_with_id;
use crate::http::types::{Body, HttpRequestHead, HttpResponse};
use crate::http::HttpMethod;
use crate::jsonrpc::{self as m, decode, ErrorObject, Incoming, Message, RawJson, RequestId};
use crate::tasks::{is_task_method, parse_task_params, TASKS_GET};

/// A task request the driver may have to serve from the shared store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskRequest {
    /// The task it names.
    pub task_id: String,
    /// `tasks/get`: answered from the stored record; else forwarded to the task's instance.
    pub is_get: bool,
    id: RequestId,
}

impl TaskRequest {
    /// The answer to `tasks/get` from the task's stored record (its `DetailedTask`).
    pub fn answer(&self, detailed: &Value) -> HttpResponse {
        match RawJson::from_serialize(detailed) {
            Ok(raw) => result(&self.id, &raw),
            Err(e) => rpc_error_with_id(500, Some(&self.id), &ErrorObject::internal(e.to_string())),
        }
    }

    /// The answer the instance running the task gave (its JSON-RPC response to this
    /// request, see `Tasks::handle_forwarded`), sent as it is.
    pub fn relayed(&self, response: Bytes) -> HttpResponse {
        let mut resp = HttpResponse::status(200).with_header("Content-Type", JSON);
        resp.body = Body::Full(response);
        resp
    }

    /// The answer when the instance running the task took the request but sent no answer in
    /// time: -32603.
    pub fn unanswered(&self) -> HttpResponse {
        let e = ErrorObject::internal("the server instance running this task did not answer");
        rpc_error_with_id(200, Some(&self.id), &e)
    }

    /// The answer when the instance running the task is gone: -32603, the task's work is
    /// lost with it.
    pub fn gone(&self) -> HttpResponse {
        let e = ErrorObject::internal("the server instance running this task is gone");
        rpc_error_with_id(200, Some(&self.id), &e)
    }
}

/// A 200 JSON answer carrying `raw` as the result of request `id`.
fn result(id: &RequestId, raw: &RawJson) -> HttpResponse {
    let mut buf = Vec::new();
    m::encode_result(&mut buf, id, raw);
    let mut resp = HttpResponse::status(200).with_header("Content-Type", JSON);
    resp.body = Body::Full(Bytes::from(buf));
    resp
}

impl<M: SessionMachine + ExchangeMachine> Endpoint<M> {
    /// The task request `head` + `body` is, when it is a 2026-07-28 `tasks/*` request with
    /// valid params and an `instance_id` is set; `None` otherwise (served as usual).
    pub fn task_request(&self, head: &HttpRequestHead, body: &Bytes) -> Option<TaskRequest> {
        self.config.instance_id.as_ref()?;
        if head.method != HttpMethod::Post || !Self::is_stateless(&KnownFields::of(head)) {
            return None;
        }
        let method = head.get("mcp-method").map(str::trim)?;
        if !is_task_method(method) {
            return None;
        }
        let Ok(Incoming::Single(Message::Request(request))) = decode(body) else {
            return None;
        };
        if request.method != method {
            return None;
        }
        let params = parse_task_params(method, request.params.as_ref()).ok()?;
        Some(TaskRequest {
            task_id: params.task_id,
            is_get: method == TASKS_GET,
            id: request.id,
        })
    }
}
