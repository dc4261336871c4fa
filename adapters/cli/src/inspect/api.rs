//! The page's JSON API, under `/t/<token>/`:
//!
//! | request | what |
//! |---|---|
//! | `GET api/state` | the connection: target, status, transport, revision, server info, capabilities |
//! | `POST api/request` `{method, params}` | one request to the server (lists are followed to the end): `{result}` or 502 `{error}` |
//! | `GET api/pending` | the server's requests waiting for an answer: `[{id, kind, params}]` |
//! | `POST api/answer` `{id, result}` or `{id, error}` | answers one of them (`error` refuses) |
//! | `POST api/roots` `{roots: [uri]}` | replaces the roots offered to the server |
//! | `GET api/frames` | the frame feed as server-sent events |
//!
//! POST bodies are JSON (`Content-Type: application/json`); the page's files are served at
//! `/t/<token>/`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use super::assets;
use super::connection::Connection;
use super::feed::Feed;
use super::server::{Request, Response};

/// The methods the page may send.
const METHODS: &[&str] = &[
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
];

/// What the server answers: a whole response, or the feed from after a record.
pub(crate) enum Reply {
    Full(Response),
    Feed(Option<u64>),
}

/// The API's parts.
pub(crate) struct Api {
    pub(crate) connection: Connection,
    pub(crate) feed: Feed,
    /// Event streams open now.
    pub(crate) listeners: Arc<AtomicUsize>,
}

impl Api {
    pub(crate) fn new(connection: Connection, feed: Feed) -> Self {
        Api {
            connection,
            feed,
            listeners: Arc::default(),
        }
    }

    /// Answers the request for `rest` (the path after the token).
    pub(crate) fn handle(&self, rest: &str, request: &Request) -> Reply {
        let get = request.method == "GET";
        let post = request.method == "POST";
        let response = match rest {
            "api/frames" if get => {
                let after = request
                    .header("last-event-id")
                    .and_then(|id| id.parse().ok());
                return Reply::Feed(after);
            }
            "api/state" if get => json_ok(self.connection.state.get()),
            "api/pending" if get => json_ok(self.connection.pending.list()),
            "api/request" | "api/answer" | "api/roots" if post => match json_body(request) {
                Ok(body) => self.post(rest, &body),
                Err(refusal) => refusal,
            },
            _ if rest.starts_with("api/") => Response::text(405, "no such request"),
            _ if get => match assets::file(rest) {
                Some((content_type, body)) => Response {
                    status: 200,
                    content_type,
                    body: body.as_bytes().to_vec(),
                },
                None => Response::text(404, "not found"),
            },
            _ => Response::text(405, "method not allowed"),
        };
        Reply::Full(response)
    }

    fn post(&self, rest: &str, body: &Value) -> Response {
        match rest {
            "api/request" => self.request(body),
            "api/answer" => self.answer(body),
            _ => self.roots(body),
        }
    }

    fn request(&self, body: &Value) -> Response {
        let method = body["method"].as_str().unwrap_or("");
        if !METHODS.contains(&method) {
            return json_status(
                400,
                json!({"error": format!("method `{method}` is not offered")}),
            );
        }
        let params = body.get("params").filter(|p| p.is_object()).cloned();
        match self.connection.request(method, params) {
            Ok(result) => json_ok(json!({ "result": result })),
            Err(error) => json_status(502, json!({ "error": error })),
        }
    }

    fn answer(&self, body: &Value) -> Response {
        let Some(id) = body["id"].as_u64() else {
            return json_status(400, json!({"error": "`id` must be a number"}));
        };
        let reply = match (body.get("result"), body["error"].as_str()) {
            (Some(result), None) => Ok(result.clone()),
            (None, Some(error)) => Err(error.to_owned()),
            _ => return json_status(400, json!({"error": "send `result` or `error`"})),
        };
        if self.connection.pending.answer(id, reply) {
            json_ok(json!({}))
        } else {
            json_status(409, json!({"error": "no such request waits"}))
        }
    }

    fn roots(&self, body: &Value) -> Response {
        let Some(list) = body["roots"].as_array() else {
            return json_status(400, json!({"error": "`roots` must be an array of URIs"}));
        };
        let mut roots = Vec::new();
        for uri in list.iter().take(1000) {
            match uri.as_str().map(crate::client_inputs::root) {
                Some(Ok(root)) => roots.push(root),
                _ => return json_status(400, json!({"error": "a root is not a path or URI"})),
            }
        }
        self.connection.set_roots(roots);
        json_ok(json!({}))
    }

    /// Counts one more event stream unless `max` are open.
    pub(crate) fn enter_listener(&self, max: usize) -> bool {
        let was = self.listeners.fetch_add(1, Ordering::AcqRel);
        if was >= max {
            self.listeners.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        true
    }

    pub(crate) fn leave_listener(&self) {
        self.listeners.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The body as JSON, or the refusal: only `application/json` (which a cross-site form
/// cannot send without the browser asking first).
fn json_body(request: &Request) -> Result<Value, Response> {
    let json = request
        .header("content-type")
        .is_some_and(|t| t.trim_start().starts_with("application/json"));
    if !json {
        return Err(Response::text(415, "send application/json"));
    }
    serde_json::from_slice(&request.body).map_err(|_| Response::text(400, "the body is not JSON"))
}

fn json_ok(value: Value) -> Response {
    json_status(200, value)
}

fn json_status(status: u16, value: Value) -> Response {
    Response {
        status,
        content_type: "application/json",
        body: value.to_string().into_bytes(),
    }
}
