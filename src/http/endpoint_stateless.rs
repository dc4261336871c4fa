//! 2026-07-28 requests on the Streamable HTTP endpoint: a POST whose `MCP-Protocol-Version`
//! is not a stateful revision (and that names no session) is one stateless exchange. The
//! transport checks the headers the revision mirrors from the body (`MCP-Protocol-Version`
//! against `_meta`, `Mcp-Method`, `Mcp-Name`: a mismatch is 400 + -32020), then a fresh
//! machine serves the request statelessly; its refusals keep their status (400, or 404 for an
//! unknown method). No `Mcp-Session-Id` is issued; GET and DELETE get 405.

use std::time::Instant;

use bytes::Bytes;
use serde_json::{Map, Value};

use super::{Endpoint, BODIES_IN_FLIGHT, SSE};
use crate::encoding::base64_standard_decode;
use crate::http::admission::{check_content_coding, content_coding, KnownFields};
use crate::http::machine::{ExchangeMachine, SessionMachine};
use crate::http::reply::{error, rpc_error_with_id, too_large, undecodable};
use crate::http::streams::{LogicalStream, Mode, SessionState};
use crate::http::types::{Body, HttpRequestHead, HttpResponse};
use crate::http::HttpMethod;
use crate::http::ResponseMode;
use crate::http::{accepts_json_and_sse, is_json_content_type};
use crate::jsonrpc::{self as m, decode, ErrorObject, Incoming, Message, Request};
use crate::model::stateless::{header_mismatch_error, stateless_method, PROTOCOL_VERSION_KEY};
use crate::model::ProtocolVersion;
use crate::stateless::{ListenChange, ParamHeader};

/// Jobs of finished exchanges waiting for the driver at most (task handlers; past it a task
/// stays `working` until its TTL).
const MAX_DETACHED_JOBS: usize = 4096;

impl<M: SessionMachine + ExchangeMachine> Endpoint<M> {
    /// Whether `head` opens a stateless exchange: a version header that is not a stateful
    /// revision (2026-07-28, or one the server may not know, which it must refuse with
    /// -32022), and no session id.
    pub(super) fn is_stateless(fields: &KnownFields<'_>) -> bool {
        let Some(version) = fields.protocol_version else {
            return false;
        };
        fields.session_id.is_none()
            && ProtocolVersion::parse(version.trim()).is_none_or(|v| !v.is_stateful())
    }

    pub(super) fn handle_stateless(
        &mut self,
        now: Instant,
        head: &HttpRequestHead,
        body: Bytes,
    ) -> HttpResponse {
        if head.method != HttpMethod::Post {
            return error(405, "Method Not Allowed: 2026-07-28 uses POST only")
                .with_header("Allow", "POST");
        }
        let accept = head.get("accept").unwrap_or("");
        if !accepts_json_and_sse(accept) {
            return error(
                406,
                "Not Acceptable: Accept must allow application/json and text/event-stream",
            );
        }
        if !head.get("content-type").is_some_and(is_json_content_type) {
            return error(
                415,
                "Unsupported Media Type: Content-Type must be application/json",
            );
        }
        if let Err(refusal) = check_content_coding(content_coding(head)) {
            return refusal;
        }
        if body.len() > self.config.max_body
            || crate::http::admission::declared_too_large(&self.config, head.get("content-length"))
        {
            return too_large(&body, self.config.max_body);
        }
        let request = match decode(&body) {
            Ok(Incoming::Single(Message::Request(r))) => r,
            // Closing the stream is the cancellation on HTTP: nothing to act on.
            Ok(Incoming::Single(Message::Notification(_))) => return HttpResponse::status(202),
            Ok(_) => {
                let e = ErrorObject::invalid_request("expected a single JSON-RPC request");
                return rpc_error_with_id(400, None, &e);
            }
            Err(e) => return undecodable(&e),
        };
        let checked = params_object(&request).and_then(|params| {
            check_headers(head, &request.method, &params)?;
            Ok(params)
        });
        let params = match checked {
            Ok(params) => params,
            Err(e) => return rpc_error_with_id(400, Some(&request.id), &e),
        };
        let listen = request.method == m::SUBSCRIPTIONS_LISTEN;
        if listen && self.config.max_listen_streams == 0 {
            self.stats.sessions_refused += 1;
            return rpc_error_with_id(
                503,
                Some(&request.id),
                &ErrorObject::new(-32000, "Service Unavailable: listen streams are off"),
            );
        }
        let machine = (self.factory)(now);
        if let Err(e) = check_param_headers(head, &request.method, &params, &machine) {
            return rpc_error_with_id(400, Some(&request.id), &e);
        }
        if !self.bodies.admits(body.len()) {
            self.stats.bodies_refused += 1;
            return BODIES_IN_FLIGHT.answer(Some(&request.id));
        }
        let xid = match self.claim_exchange() {
            Ok(xid) => xid,
            Err(refusal) => return refusal.answer(Some(&request.id)),
        };
        let id = request.id;
        let mut state = SessionState::new(machine, now, 0, self.config.retry_ms);
        let charge = self.bodies.charge(body.len());
        state
            .streams
            .insert(1, LogicalStream::new(Mode::Undecided, 1).charged(charge));
        state.request_streams.insert(id.clone(), 1);
        state.machine.handle_exchange(now, body);
        state.pump();
        let status = state.machine.exchange_status(&id);
        self.exchanges.insert(xid, state);
        self.fan_out(xid);
        let conn = self.new_conn();
        let mut resp = self.open_response(xid, 1, conn, ResponseMode::Auto, false);
        if matches!(resp.body, Body::Full(_)) {
            if let Some(mut done) = self.exchanges.remove(&xid) {
                while let Some(job) = done.machine.poll_job() {
                    if self.detached_jobs.len() < MAX_DETACHED_JOBS {
                        self.detached_jobs.push_back(job);
                    }
                }
            }
            if let Some(status) = status {
                resp.status = status;
            }
        } else if resp.get("content-type") == Some(SSE) {
            resp = resp.with_header("X-Accel-Buffering", "no");
            if listen {
                self.admit_listener(xid, head);
            }
        }
        resp
    }

    /// Announces `event` (a list change, a resource update) to every open 2026-07-28 listen
    /// stream from outside any exchange: what an application calls when its registries
    /// change on a timer or a file watcher, with no exchange machine to make the change on.
    /// Each stream's machine sends it only if its filter asked for it, tagged with its
    /// subscription id. Returns how many listen streams were offered the event.
    pub fn announce_listen_change(&mut self, event: &ListenChange) -> usize {
        self.listeners
            .retain(|xid| self.exchanges.contains_key(&xid));
        let mut offered = 0;
        for xid in self.listeners.xids() {
            if let Some(listener) = self.exchanges.get_mut(&xid) {
                listener.machine.handle_listen_change(event);
                listener.pump();
                offered += 1;
            }
        }
        self.exchanges.flush();
        offered
    }

    /// The next change a 2026-07-28 exchange made (a tool added, a resource updated), for the
    /// listen streams of other instances sharing a store: only with
    /// [`EndpointConfig::instance_id`](crate::http::EndpointConfig::instance_id) set, so an
    /// endpoint alone keeps nothing. The driver publishes it; each other instance hands it to
    /// [`Endpoint::announce_listen_change`]. At most 1,024 wait; past it the oldest is dropped.
    pub fn poll_listen_change(&mut self) -> Option<ListenChange> {
        self.listen_out.pop_front()
    }

    /// Hands the changes exchange `from` made (a tool added, a resource updated) to every
    /// exchange holding a listen stream: each machine is its own server, so a change reaches
    /// other listeners only through here.
    pub(super) fn fan_out(&mut self, from: u64) {
        let Some(source) = self.exchanges.get_mut(&from) else {
            return;
        };
        let mut events = Vec::new();
        while let Some(event) = source.machine.poll_listen_change() {
            events.push(event);
        }
        if events.is_empty() {
            return;
        }
        if self.config.instance_id.is_some() {
            for event in &events {
                if self.listen_out.len() >= MAX_LISTEN_OUT {
                    self.listen_out.pop_front();
                }
                self.listen_out.push_back(event.clone());
            }
        }
        self.listeners
            .retain(|xid| self.exchanges.contains_key(&xid));
        for xid in self.listeners.xids().filter(|&xid| xid != from) {
            if let Some(listener) = self.exchanges.get_mut(&xid) {
                for event in &events {
                    listener.machine.handle_listen_change(event);
                }
                listener.pump();
            }
        }
    }
}

impl<M: SessionMachine + ExchangeMachine> Endpoint<M> {
    /// Exchange `xid` opened a listen stream for the peer of `head`. At `max_listen_streams`
    /// the oldest stream of the peer holding the most ends first, with its closing listen
    /// result (a client reopens on it), so no peer can take every slot from the others.
    fn admit_listener(&mut self, xid: u64, head: &HttpRequestHead) {
        let key = match &self.config.peer_limit {
            Some(limit) => limit.key(&head.peer),
            None => head.peer.default_key(),
        };
        self.listeners
            .retain(|xid| self.exchanges.contains_key(&xid));
        while self.listeners.len() >= self.config.max_listen_streams {
            let Some(victim) = self.listeners.victim(key.as_deref()) else {
                break;
            };
            self.listeners.remove(victim);
            if let Some(evicted) = self.exchanges.get_mut(&victim) {
                evicted.machine.end_listen_streams();
                evicted.pump();
                self.stats.listen_streams_evicted += 1;
            }
        }
        self.listeners.push(xid, key);
        self.exchanges.flush();
    }
}

/// Changes waiting for `poll_listen_change` at most (oldest dropped: the driver fell behind).
const MAX_LISTEN_OUT: usize = 1024;

/// The request's params as an object (absent: empty), read once for the header checks; -32602
/// when they are not an object or nest deeper than the JSON reader goes.
fn params_object(request: &Request) -> Result<Map<String, Value>, ErrorObject> {
    match &request.params {
        None => Ok(Map::new()),
        Some(params) => params
            .parse()
            .map_err(|e| ErrorObject::invalid_params(format!("Invalid params: {e}"))),
    }
}

/// The mirrored headers against the body: -32020 on any mismatch or a missing one.
fn check_headers(
    head: &HttpRequestHead,
    method: &str,
    params: &Map<String, Value>,
) -> Result<(), ErrorObject> {
    let header_version = mirrored(head, "MCP-Protocol-Version")?.unwrap_or("");
    let body_version = params
        .get("_meta")
        .and_then(|m| m.get(PROTOCOL_VERSION_KEY))
        .and_then(Value::as_str);
    if let Some(body_version) = body_version {
        if body_version != header_version {
            return Err(header_mismatch_error(
                "MCP-Protocol-Version",
                header_version,
                body_version,
            ));
        }
    }
    let header_method = mirrored(head, "Mcp-Method")?;
    if header_method != Some(method) {
        return Err(header_mismatch_error(
            "Mcp-Method",
            header_method.unwrap_or(""),
            method,
        ));
    }
    let name_param = stateless_method(method)
        .and_then(|mm| mm.name_param)
        .or_else(|| crate::tasks::is_task_method(method).then_some("taskId"));
    if let Some(param) = name_param {
        let body_name = params.get(param).and_then(Value::as_str).unwrap_or("");
        let header = mirrored(head, "Mcp-Name")?.map(decode_sentinel);
        if header.as_deref() != Some(body_name) {
            let shown = header.unwrap_or_default();
            return Err(header_mismatch_error("Mcp-Name", &shown, body_name));
        }
    }
    Ok(())
}

/// The `Mcp-Param-*` headers of a `tools/call` against the arguments they mirror (the tool's
/// `x-mcp-header` annotations, SEP-2243): a string argument as is, a number or boolean as its
/// JSON text; the header must be present exactly when the argument is (null counts as absent)
/// and, sentinel-decoded, equal it; otherwise -32020.
fn check_param_headers<M: ExchangeMachine>(
    head: &HttpRequestHead,
    method: &str,
    params: &Map<String, Value>,
    machine: &M,
) -> Result<(), ErrorObject> {
    if method != m::TOOLS_CALL {
        return Ok(());
    }
    let Some(tool) = params.get("name").and_then(Value::as_str) else {
        return Ok(());
    };
    let annotated = machine.tool_param_headers(tool);
    let arguments = params.get("arguments");
    for ParamHeader { header, property } in annotated {
        let name = format!("Mcp-Param-{header}");
        let expected = match arguments.and_then(|a| a.get(&property)) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(v @ (Value::Number(_) | Value::Bool(_))) => Some(v.to_string()),
            // Objects and arrays cannot be annotated; nothing to compare.
            Some(_) => continue,
        };
        let got = mirrored(head, &name)?.map(decode_sentinel);
        if got != expected {
            return Err(header_mismatch_error(
                &name,
                got.as_deref().unwrap_or(""),
                expected.as_deref().unwrap_or(""),
            ));
        }
    }
    Ok(())
}

/// The value of mirrored header `name` (trimmed), `None` when absent; -32020 when it came more
/// than once: two values have no one meaning, and a proxy in front may have routed by the
/// other one.
fn mirrored<'a>(head: &'a HttpRequestHead, name: &str) -> Result<Option<&'a str>, ErrorObject> {
    let mut values = head
        .headers
        .iter()
        .filter(|(n, _)| n.len() == name.len() && n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str().trim());
    let first = values.next();
    if values.next().is_some() {
        return Err(ErrorObject::new(
            m::code::HEADER_MISMATCH,
            format!("Header mismatch: the {name} header appears more than once"),
        ));
    }
    Ok(first)
}

/// A header value in the `=?base64?…?=` sentinel form, decoded; any other value verbatim (an
/// undecodable sentinel stays as is, so it mismatches the body).
fn decode_sentinel(value: &str) -> String {
    let Some(inner) = value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    else {
        return value.to_owned();
    };
    base64_standard_decode(inner)
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_else(|| value.to_owned())
}
