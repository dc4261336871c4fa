//! `ClientHandle`: typed, runtime-agnostic async calls for every client→server method.
//!
//! A call pushes a request into the client's outbox (waking the driver) and awaits a oneshot
//! the state machine completes on the session's `Event::Completed`. Dropping a pending call,
//! or cancelling its token, pushes a cancel item: the session sends `notifications/cancelled`.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::types::{CallOptions, ClientError};
use super::ClientItem;
use crate::jsonrpc::{self as m, RawJson};
use crate::model::{
    read_texts_only, CallToolResult, CompleteParams, CompleteResult, GetPromptResult,
    InitializeResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, LoggingLevel, Prompt, ReadResourceResult, Resource, ResourceTemplate, Root,
    Tool,
};
use crate::runtime::{oneshot, CancelToken, Cancelled, OneshotReceiver, Outbox};

/// Pages followed at most by the `list_all_*` helpers (a server that keeps handing out
/// cursors must not make them loop forever).
pub const MAX_PAGES: usize = 1000;

/// A cloneable, thread-safe handle for calling the server. See the module docs.
#[derive(Clone, Debug)]
pub struct ClientHandle {
    outbox: Outbox<ClientItem>,
    next_key: Arc<AtomicU64>,
}

impl ClientHandle {
    pub(crate) fn new(outbox: Outbox<ClientItem>) -> Self {
        ClientHandle {
            outbox,
            next_key: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Runs the handshake: sends `initialize`, and resolves once the session is ready with
    /// the server's result (negotiated version, capabilities, info, instructions). A version
    /// this client does not support closes the session: [`ClientError::Closed`] with
    /// `CloseReason::UnsupportedVersion`.
    pub async fn initialize(&self) -> Result<InitializeResult, ClientError> {
        let (reply, rx) = oneshot();
        self.outbox.push_required(ClientItem::Initialize { reply });
        rx.await.unwrap_or(Err(ClientError::ClientGone))
    }

    /// `ping`.
    pub async fn ping(&self) -> Result<(), ClientError> {
        self.request(Cow::Borrowed(m::PING), None, CallOptions::default())
            .await
            .map(|_| ())
    }

    /// One page of `tools/list`.
    pub async fn list_tools(&self, cursor: Option<String>) -> Result<ListToolsResult, ClientError> {
        self.call(m::TOOLS_LIST, &cursor_params(cursor)).await
    }

    /// Every tool, following `nextCursor` (at most [`MAX_PAGES`] pages).
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, ClientError> {
        let mut all = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let page = self.list_tools(cursor).await?;
            all.extend(page.tools);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(all),
            }
        }
        Err(too_many_pages())
    }

    /// `tools/call` with the session's default timeout. `arguments` should be an object
    /// (`Null` sends none). A tool failure is a result with `is_error`, not an error.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, ClientError> {
        self.call_tool_with(name, arguments, CallOptions::default())
            .await
    }

    /// `tools/call` with a timeout, a progress callback and/or a cancellation token.
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: CallOptions,
    ) -> Result<CallToolResult, ClientError> {
        // Serialised straight from borrowed parts: no params object built and dropped.
        let params = CallToolParams {
            name,
            arguments: &arguments,
        };
        let params = RawJson::from_serialize(&params)
            .map_err(|e| ClientError::InvalidResult(format!("unencodable params: {e}")))?;
        self.call_tool_params(params, options).await
    }

    /// `tools/call` with arguments already encoded as JSON text (an object, or `null` for
    /// none), with the session's default timeout. The text goes on the wire as is: an
    /// application that calls a tool many times with the same arguments encodes them once
    /// (`RawJson::from_serialize`) and lends them to every call, instead of building and
    /// encoding a [`Value`] per call. The result is the same as [`ClientHandle::call_tool`]'s.
    pub async fn call_tool_raw(
        &self,
        name: &str,
        arguments: &RawJson,
    ) -> Result<CallToolResult, ClientError> {
        self.call_tool_raw_with(name, arguments, CallOptions::default())
            .await
    }

    /// [`ClientHandle::call_tool_raw`] with a timeout, a progress callback and/or a
    /// cancellation token.
    pub async fn call_tool_raw_with(
        &self,
        name: &str,
        arguments: &RawJson,
        options: CallOptions,
    ) -> Result<CallToolResult, ClientError> {
        let params = call_tool_params_raw(name, arguments);
        self.call_tool_params(params, options).await
    }

    /// Sends `tools/call` with its params encoded; reads the result, the common text-only
    /// shape by hand (`read_texts_only`), any other through serde.
    async fn call_tool_params(
        &self,
        params: RawJson,
        options: CallOptions,
    ) -> Result<CallToolResult, ClientError> {
        let raw = self
            .request(Cow::Borrowed(m::TOOLS_CALL), Some(params), options)
            .await?;
        match read_texts_only(raw.as_bytes()) {
            Some(result) => Ok(result),
            None => parse_result(m::TOOLS_CALL, &raw),
        }
    }

    /// One page of `resources/list`.
    pub async fn list_resources(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourcesResult, ClientError> {
        self.call(m::RESOURCES_LIST, &cursor_params(cursor)).await
    }

    /// Every resource, following `nextCursor` (at most [`MAX_PAGES`] pages).
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, ClientError> {
        let mut all = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let page = self.list_resources(cursor).await?;
            all.extend(page.resources);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(all),
            }
        }
        Err(too_many_pages())
    }

    /// One page of `resources/templates/list`.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourceTemplatesResult, ClientError> {
        self.call(m::RESOURCES_TEMPLATES_LIST, &cursor_params(cursor))
            .await
    }

    /// Every resource template, following `nextCursor` (at most [`MAX_PAGES`] pages).
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        let mut all = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let page = self.list_resource_templates(cursor).await?;
            all.extend(page.resource_templates);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(all),
            }
        }
        Err(too_many_pages())
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.call(m::RESOURCES_READ, &json!({ "uri": uri })).await
    }

    /// `resources/subscribe`: the server then sends `notifications/resources/updated`.
    pub async fn subscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.call::<Value>(m::RESOURCES_SUBSCRIBE, &json!({ "uri": uri }))
            .await
            .map(|_| ())
    }

    /// `resources/unsubscribe`.
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.call::<Value>(m::RESOURCES_UNSUBSCRIBE, &json!({ "uri": uri }))
            .await
            .map(|_| ())
    }

    /// One page of `prompts/list`.
    pub async fn list_prompts(
        &self,
        cursor: Option<String>,
    ) -> Result<ListPromptsResult, ClientError> {
        self.call(m::PROMPTS_LIST, &cursor_params(cursor)).await
    }

    /// Every prompt, following `nextCursor` (at most [`MAX_PAGES`] pages).
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        let mut all = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let page = self.list_prompts(cursor).await?;
            all.extend(page.prompts);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(all),
            }
        }
        Err(too_many_pages())
    }

    /// `prompts/get` with argument values by name (`None` sends none).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<GetPromptResult, ClientError> {
        let mut params = Map::new();
        params.insert("name".into(), Value::String(name.to_owned()));
        if let Some(arguments) = arguments {
            params.insert("arguments".into(), Value::Object(arguments));
        }
        self.call(m::PROMPTS_GET, &params).await
    }

    /// `completion/complete`.
    pub async fn complete(&self, params: CompleteParams) -> Result<CompleteResult, ClientError> {
        self.call(m::COMPLETION_COMPLETE, &params).await
    }

    /// `logging/setLevel`: the server sends log messages at `level` and above.
    pub async fn set_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        self.call::<Value>(m::LOGGING_SET_LEVEL, &json!({ "level": level }))
            .await
            .map(|_| ())
    }

    /// Replaces the fixed roots answered to `roots/list` and sends
    /// `notifications/roots/list_changed` (once initialized). Ignored when the client
    /// declared no roots (neither a list nor a handler).
    pub fn set_roots(&self, roots: Vec<Root>) {
        self.outbox.push_required(ClientItem::SetRoots(roots));
    }

    /// Any request by method name with raw params; the raw result. For methods without a
    /// typed call (e.g. newer or experimental ones).
    pub fn request_raw(
        &self,
        method: &str,
        params: Option<RawJson>,
        options: CallOptions,
    ) -> PendingCall {
        self.request(Cow::Owned(method.to_owned()), params, options)
    }

    /// [`ClientHandle::request_raw`] for a method name that may be a constant (the typed
    /// calls' names are, and need no copy).
    fn request(
        &self,
        method: Cow<'static, str>,
        params: Option<RawJson>,
        options: CallOptions,
    ) -> PendingCall {
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        let (reply, rx) = oneshot();
        let cancel = options.cancel.as_ref().map(CancelToken::wait);
        self.outbox.push_required(ClientItem::Request {
            key,
            method,
            params,
            timeout: options.timeout,
            progress: options.progress,
            parent: options.parent,
            reply,
        });
        PendingCall {
            key,
            outbox: self.outbox.clone(),
            rx,
            cancel,
            done: false,
        }
    }

    async fn call<R: DeserializeOwned>(
        &self,
        method: &'static str,
        params: &(impl Serialize + ?Sized),
    ) -> Result<R, ClientError> {
        self.call_with(method, params, CallOptions::default()).await
    }

    async fn call_with<R: DeserializeOwned>(
        &self,
        method: &'static str,
        params: &(impl Serialize + ?Sized),
        options: CallOptions,
    ) -> Result<R, ClientError> {
        let params = RawJson::from_serialize(params)
            .map_err(|e| ClientError::InvalidResult(format!("unencodable params: {e}")))?;
        let raw = self
            .request(Cow::Borrowed(method), Some(params), options)
            .await?;
        parse_result(method, &raw)
    }
}

/// The typed view of `method`'s result.
fn parse_result<R: DeserializeOwned>(method: &str, raw: &RawJson) -> Result<R, ClientError> {
    raw.parse::<R>()
        .map_err(|e| ClientError::InvalidResult(format!("{method}: {e}")))
}

/// `tools/call` params around arguments already encoded: `{"name":…,"arguments":…}`, the
/// arguments' text copied as is (`null` arguments are left out, as
/// [`ClientHandle::call_tool`] leaves out `Value::Null`). Same text as serialising
/// [`CallToolParams`] with the arguments' value.
fn call_tool_params_raw(name: &str, arguments: &RawJson) -> RawJson {
    let mut text = Vec::with_capacity(name.len() + arguments.len() + 24);
    text.extend_from_slice(b"{\"name\":");
    crate::jsonrpc::write_json_string(&mut text, name);
    if !arguments.is_null() {
        text.extend_from_slice(b",\"arguments\":");
        text.extend_from_slice(arguments.as_bytes());
    }
    text.push(b'}');
    // Valid JSON: an object of an escaped string and a value that is valid JSON text.
    RawJson::from_validated(bytes::Bytes::from(text))
}

/// `tools/call` params as sent.
#[derive(Serialize)]
struct CallToolParams<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "is_null")]
    arguments: &'a Value,
}

fn is_null(value: &&Value) -> bool {
    value.is_null()
}

fn cursor_params(cursor: Option<String>) -> Value {
    match cursor {
        Some(c) => json!({ "cursor": c }),
        None => json!({}),
    }
}

fn too_many_pages() -> ClientError {
    ClientError::InvalidResult(format!(
        "the server kept returning nextCursor past {MAX_PAGES} pages"
    ))
}

/// A call in flight: resolves to the server's raw result. Dropping it before it resolves
/// cancels the request (`notifications/cancelled` goes to the server).
#[must_use = "a dropped call is cancelled"]
#[derive(Debug)]
pub struct PendingCall {
    key: u64,
    outbox: Outbox<ClientItem>,
    rx: OneshotReceiver<Result<RawJson, ClientError>>,
    cancel: Option<Cancelled>,
    done: bool,
}

impl Future for PendingCall {
    type Output = Result<RawJson, ClientError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if self.done {
            return Poll::Ready(Err(ClientError::Cancelled));
        }
        if let Poll::Ready(result) = Pin::new(&mut self.rx).poll(cx) {
            self.done = true;
            return Poll::Ready(result.unwrap_or(Err(ClientError::ClientGone)));
        }
        let cancelled = match self.cancel.as_mut() {
            Some(c) => Pin::new(c).poll(cx).is_ready(),
            None => false,
        };
        if cancelled {
            self.done = true;
            self.outbox
                .push_required(ClientItem::Cancel { key: self.key });
            return Poll::Ready(Err(ClientError::Cancelled));
        }
        Poll::Pending
    }
}

impl Drop for PendingCall {
    fn drop(&mut self) {
        if !self.done {
            self.outbox
                .push_required(ClientItem::Cancel { key: self.key });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arguments handed over encoded go on the wire as the same text as a `Value`'s.
    #[test]
    fn raw_params_are_the_serialised_params() {
        for (name, arguments) in [
            ("echo", json!({"text": "a \"quoted\" line\n"})),
            ("na\"me\\", json!({})),
            ("tab\tnew\nline\u{1}\u{7f}é/", json!({"k": 1})),
            (
                "a name longer than two words, past the short path",
                json!(null),
            ),
            ("none", Value::Null),
            ("list", json!([1, {"a": null}])),
        ] {
            let raw = RawJson::from_serialize(&arguments).unwrap();
            let by_value = RawJson::from_serialize(&CallToolParams {
                name,
                arguments: &arguments,
            })
            .unwrap();
            assert_eq!(call_tool_params_raw(name, &raw).get(), by_value.get());
        }
        // Text kept as the caller wrote it (blanks included), `null` with blanks left out.
        let spaced = RawJson::from_text(" { \"a\" : 1 } ").unwrap();
        assert_eq!(
            call_tool_params_raw("t", &spaced).get(),
            r#"{"name":"t","arguments": { "a" : 1 } }"#
        );
        let null = RawJson::from_text(" null").unwrap();
        assert_eq!(call_tool_params_raw("t", &null).get(), r#"{"name":"t"}"#);
    }
}
