//! Answers each inbound request from the registries: lists with cursors, tool calls with
//! input validation, resource reads through fixed URIs then templates, prompts with argument
//! checks and completion, shared by both front ends; `resources/subscribe` and `logging/setLevel`
//! are the stateful front end's (`super::stateful`).

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use serde_json::{json, Map, Value};

use super::arguments::ToolArguments;
use super::call_params::CallParams;
use super::context::RequestContext;
use super::outbox::OutboxItem;
use super::tool::result_json;
use super::types::Started;
use super::Server;
use super::{completion_json, prompt_json};
use super::{CallToolResult, CompleteRequest, PromptRequest, ResourceRead, ToolCall};
use crate::app::server::cursor::paginate;
use crate::app::server::schema::{Schema, SchemaError};
use crate::jsonrpc::{self as m, code, ErrorObject, RawJson, RequestId};
use crate::runtime::CatchPanic;

type Params = Map<String, Value>;

impl Server {
    /// Answers one inbound request (the session already did lifecycle and capability gating).
    pub(super) fn dispatch(&mut self, id: RequestId, method: &str, params: Option<RawJson>) {
        if method == m::TOOLS_CALL {
            // The hot path: only the two members it reads are built.
            let tools = &self.registry.tools;
            let flat_of = |name: &[u8]| {
                let tool = tools.get(std::str::from_utf8(name).ok()?)?;
                tool.input_schema.flat()
            };
            return match CallParams::read(params.as_ref(), &flat_of) {
                Ok(call) => self.call_tool(id, call),
                Err(e) => self.reply(id, Err(e)),
            };
        }
        let params = match parse_params(params) {
            Ok(p) => p,
            Err(e) => return self.reply(id, Err(e)),
        };
        let outcome = match method {
            m::TOOLS_LIST => self.list(&params, |s| list_json(&s.registry.tools, "tools")),
            m::RESOURCES_LIST => {
                self.list(&params, |s| list_json(&s.registry.resources, "resources"))
            }
            m::RESOURCES_TEMPLATES_LIST => self.list(&params, |s| {
                list_json(&s.registry.templates, "resourceTemplates")
            }),
            m::PROMPTS_LIST => self.list(&params, |s| list_json(&s.registry.prompts, "prompts")),
            m::RESOURCES_READ => return self.read_resource(id, &params),
            m::PROMPTS_GET => return self.get_prompt(id, &params),
            m::COMPLETION_COMPLETE => return self.complete(id, params),
            m::RESOURCES_SUBSCRIBE => self.subscribe(&params, true),
            m::RESOURCES_UNSUBSCRIBE => self.subscribe(&params, false),
            m::LOGGING_SET_LEVEL => self.set_level(&params),
            other => Err(ErrorObject::method_not_found(other)),
        };
        self.reply(id, outcome);
    }

    pub(super) fn reply(&mut self, id: RequestId, outcome: Result<Value, ErrorObject>) {
        let outcome = outcome.and_then(|v| raw_json(&v));
        self.outbox.push_required(OutboxItem::Reply { id, outcome });
    }

    fn list(
        &self,
        params: &Params,
        items: impl Fn(&Server) -> (Vec<(&str, Value)>, &'static str),
    ) -> Result<Value, ErrorObject> {
        let cursor = match params.get("cursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) => Some(c.as_str()),
            Some(_) => return Err(ErrorObject::invalid_params("cursor must be a string")),
        };
        let (all, key) = items(self);
        let (page, next) = paginate(all, cursor, self.page_size)
            .map_err(|e| ErrorObject::invalid_params(e.to_string()))?;
        let mut out = Map::new();
        out.insert(key.into(), Value::Array(page));
        if let Some(next) = next {
            out.insert("nextCursor".into(), Value::String(next));
        }
        Ok(Value::Object(out))
    }

    /// A context and cancel token for a handler about to run for `id`.
    fn context(&mut self, id: &RequestId) -> RequestContext {
        let token = self.spare_token.take().unwrap_or_default();
        // Registered for cancellation by `run_raw` only if the handler waits.
        self.starting = Some((id.clone(), token.clone()));
        RequestContext::new(id.clone(), token, self.outbox.clone(), self.shared.clone())
            .with_input(self.input_state(id))
    }

    /// The input state of a stateless exchange `id` (`None` in a stateful session).
    pub(super) fn input_state(
        &self,
        id: &RequestId,
    ) -> Option<std::sync::Arc<super::stateless::mrtr::InputState>> {
        if self.stateless.exchanges.is_empty() {
            return None;
        }
        self.stateless.exchanges.get(id)?.input.clone()
    }

    /// Runs `fut` as a job whose outcome, encoded by `encode`, is the reply to `id`.
    pub(super) fn run<T: Send + 'static>(
        &mut self,
        id: RequestId,
        fut: impl Future<Output = Result<T, ErrorObject>> + Send + Unpin + 'static,
        encode: impl FnOnce(T) -> Value + Send + 'static,
    ) {
        self.run_raw(id, fut, move |t| raw_json(&encode(t)));
    }

    /// [`Server::run`] with an encoder that writes the JSON text itself (no `Value` between).
    ///
    /// The future is polled once here: a sync handler (or any that needs no wait) is done
    /// then, and its reply is applied at once (behind anything it queued), with no boxed job. Only a future that
    /// waits becomes a job, whose drop guard answers if the driver drops it unfinished.
    pub(super) fn run_raw<T: Send + 'static>(
        &mut self,
        id: RequestId,
        fut: impl Future<Output = Result<T, ErrorObject>> + Send + Unpin + 'static,
        encode: impl FnOnce(T) -> Result<RawJson, ErrorObject> + Send + 'static,
    ) {
        let mut fut = super::stateless::mrtr::Watch::new(fut, self.input_state(&id));
        let mut cx = Context::from_waker(Waker::noop());
        if let Poll::Ready(out) = Pin::new(&mut fut).poll(&mut cx) {
            // The handler's context goes with its future.
            drop(fut);
            return self.finish(id, out, encode);
        }
        let starting = self.starting.take();
        if let Some((started, token)) = starting.filter(|(started, _)| *started == id) {
            self.running.insert(started, token);
        }
        let mut guard = ReplyGuard {
            outbox: self.outbox.clone(),
            id: Some(id),
        };
        // Already polled once (above): queued for the driver as is, not polled again here.
        self.jobs.push_back(Box::pin(async move {
            let outcome = fut.await.and_then(encode);
            guard.reply(outcome);
        }));
    }

    /// Replies to `id` with the outcome of a handler that is done (its context dropped).
    fn finish<T>(
        &mut self,
        id: RequestId,
        out: Result<T, ErrorObject>,
        encode: impl FnOnce(T) -> Result<RawJson, ErrorObject>,
    ) {
        // A token no clone of the handler's context outlived serves the next request.
        if let Some((_, mut token)) = self.starting.take() {
            if token.reset_if_unused() {
                self.spare_token = Some(token);
            }
        }
        let outcome = out.and_then(encode);
        let reply = OutboxItem::Reply { id, outcome };
        // With nothing queued before it (no notification the handler sent while it ran),
        // the reply goes to the session at once; otherwise behind those, in order.
        if self.outbox.is_empty() {
            return self.apply(reply);
        }
        self.outbox.push_required(reply);
    }

    fn call_tool(&mut self, id: RequestId, params: CallParams) {
        // Moved out of the parsed params, never cloned: the handler gets this very map.
        let CallParams {
            name,
            arguments,
            admitted,
            suspect,
        } = params;
        let Some(Value::String(name)) = name else {
            return self.reply(id, Err(ErrorObject::invalid_params("missing tool name")));
        };
        let Some(tool) = self.registry.tools.get(&name) else {
            let e = ErrorObject::invalid_params(format!("unknown tool: {name}"));
            return self.reply(id, Err(e));
        };
        let arguments = match arguments {
            None => ToolArguments::default(),
            Some(text) if text.is_null() => ToolArguments::default(),
            Some(text) if text.is_object() => match ToolArguments::read(text, suspect) {
                Ok(arguments) => arguments,
                Err(e) => return self.reply(id, Err(unreadable("arguments", &e))),
            },
            Some(_) => {
                let e = ErrorObject::invalid_params("arguments must be an object");
                return self.reply(id, Err(e));
            }
        };
        // Arguments the params' walk found valid for this tool's flat schema need no check.
        let checked = if admitted {
            Ok(())
        } else {
            check_arguments(&tool.input_schema, &arguments)
        };
        if let Err(errors) = checked {
            let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
            let result = CallToolResult::error(format!("invalid arguments: {}", text.join("; ")));
            return self.reply(id, Ok(result_value(&result)));
        }
        let Some(handler) = tool.handler.clone() else {
            let result = CallToolResult::error(format!("tool {name} has no handler"));
            return self.reply(id, Ok(result_value(&result)));
        };
        let route = self.task_route(tool, &id);
        let output_schema = tool.output_schema.clone();
        if let super::stateless::tasks::TaskRoute::Refuse(e) = route {
            return self.reply(id, Err(e));
        }
        let ctx = self.context(&id);
        // The name again only for an outputSchema's error text.
        let label = output_schema.as_ref().map(|_| name.clone());
        let started = handler.start(ToolCall { name, arguments }, ctx);
        let checked = move |result| {
            let label = label.as_deref().unwrap_or_default();
            check_output(label, output_schema.as_deref(), result)
        };
        match (route, started) {
            (super::stateless::tasks::TaskRoute::Task(tasks), started) => {
                let fut = started.into_future();
                self.launch_task(id, tasks, fut, move |r| result_value(&checked(r)))
            }
            // A sync handler's outcome, as its first poll would give it.
            (_, Started::Done(out)) => self.finish(id, out, move |r| result_json(&checked(r))),
            (_, Started::Running(fut)) => self.run_raw(id, fut, move |r| result_json(&checked(r))),
        }
    }

    fn read_resource(&mut self, id: RequestId, params: &Params) {
        let Some(uri) = params.get("uri").and_then(Value::as_str) else {
            return self.reply(id, Err(ErrorObject::invalid_params("missing uri")));
        };
        let found = match self.registry.resources.get(uri) {
            Some(r) => Some((r.handler.clone(), Vec::new())),
            None => self.registry.templates.values().find_map(|t| {
                t.template
                    .matches(uri)
                    .map(|vars| (t.handler.clone(), vars))
            }),
        };
        let Some((Some(handler), variables)) = found else {
            let e = ErrorObject::new(code::RESOURCE_NOT_FOUND, "Resource not found").with_data(
                RawJson::try_from(&json!({ "uri": uri })).unwrap_or_else(|_| RawJson::null()),
            );
            return self.reply(id, Err(e));
        };
        let ctx = self.context(&id);
        let read = ResourceRead {
            uri: uri.to_owned(),
            variables,
        };
        self.run(id, handler.call(read, ctx), |contents| {
            // Cannot fail: `ResourceContents` has string keys and no fallible `Serialize`.
            let contents = serde_json::to_value(contents).unwrap_or_default();
            json!({ "contents": contents })
        });
    }

    fn get_prompt(&mut self, id: RequestId, params: &Params) {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return self.reply(id, Err(ErrorObject::invalid_params("missing prompt name")));
        };
        let Some(prompt) = self.registry.prompts.get(name).cloned() else {
            let e = ErrorObject::invalid_params(format!("unknown prompt: {name}"));
            return self.reply(id, Err(e));
        };
        let mut arguments = BTreeMap::new();
        if let Some(Value::Object(args)) = params.get("arguments") {
            for (k, v) in args {
                let Some(v) = v.as_str() else {
                    let e = ErrorObject::invalid_params(format!("argument {k} must be a string"));
                    return self.reply(id, Err(e));
                };
                arguments.insert(k.clone(), v.to_owned());
            }
        }
        let missing = prompt
            .arguments()
            .iter()
            .find(|a| a.required == Some(true) && !arguments.contains_key(&a.name));
        if let Some(a) = missing {
            let e = ErrorObject::invalid_params(format!("missing required argument: {}", a.name));
            return self.reply(id, Err(e));
        }
        let Some(handler) = prompt.handler.clone() else {
            let e = ErrorObject::internal(format!("prompt {name} has no handler"));
            return self.reply(id, Err(e));
        };
        let ctx = self.context(&id);
        let request = PromptRequest {
            name: name.to_owned(),
            arguments,
        };
        self.run(id, handler.call(request, ctx), |r| prompt_json(&r));
    }

    fn complete(&mut self, id: RequestId, params: Params) {
        let Some(provider) = self.registry.completion.clone() else {
            let e = ErrorObject::method_not_found(m::COMPLETION_COMPLETE);
            return self.reply(id, Err(e));
        };
        if let Err(e) = super::complete_params::check(&self.registry, &params) {
            return self.reply(id, Err(e));
        }
        let ctx = self.context(&id);
        let request = CompleteRequest {
            params: Value::Object(params),
        };
        let fut = CatchPanic::start(|| provider(request, ctx));
        self.run(id, fut, |c| completion_json(&c));
    }
}

/// Sends a job's one reply; if the driver drops the job unfinished (executor shut down, task
/// aborted), answers with an internal error instead so the request does not hang forever.
struct ReplyGuard {
    outbox: crate::runtime::Outbox<OutboxItem>,
    id: Option<RequestId>,
}

impl ReplyGuard {
    fn reply(&mut self, outcome: Result<RawJson, ErrorObject>) {
        if let Some(id) = self.id.take() {
            self.outbox.push_required(OutboxItem::Reply { id, outcome });
        }
    }
}

impl Drop for ReplyGuard {
    fn drop(&mut self) {
        self.reply(Err(ErrorObject::internal(
            "the handler was dropped before it finished",
        )));
    }
}

/// A reply's JSON text from a `Value` (an error only if the value cannot be serialised).
fn raw_json(value: &Value) -> Result<RawJson, ErrorObject> {
    RawJson::try_from(value).map_err(|e| ErrorObject::internal(e.to_string()))
}

/// `-32602` naming what could not be read and why.
pub(super) fn unreadable(what: &str, error: &serde_json::Error) -> ErrorObject {
    ErrorObject::invalid_params(format!("{what} cannot be read: {error}"))
}

fn parse_params(params: Option<RawJson>) -> Result<Params, ErrorObject> {
    match params {
        None => Ok(Map::new()),
        Some(raw) => match raw.to_value() {
            Ok(Value::Object(o)) => Ok(o),
            Ok(Value::Null) => Ok(Map::new()),
            Ok(_) => Err(ErrorObject::invalid_params("params must be an object")),
            Err(e) => Err(unreadable("params", &e)),
        },
    }
}

/// Every registered item's list entry in key order, and the result member that holds them.
fn list_json<'a, T: ListEntry>(
    items: &'a BTreeMap<String, T>,
    key: &'static str,
) -> (Vec<(&'a str, Value)>, &'static str) {
    let all = items.iter().map(|(k, v)| (k.as_str(), v.entry())).collect();
    (all, key)
}

/// Something that appears in a list result.
trait ListEntry {
    fn entry(&self) -> Value;
}

macro_rules! list_entry {
    ($($t:ty),*) => {$(
        impl ListEntry for $t {
            fn entry(&self) -> Value {
                // Cannot fail: a definition has string keys and valid JSON schemas.
                serde_json::to_value(&self.def).unwrap_or_default()
            }
        }
    )*};
}
list_entry!(
    super::Tool,
    super::Resource,
    super::ResourceTemplate,
    super::Prompt
);

impl<T: ListEntry> ListEntry for std::sync::Arc<T> {
    fn entry(&self) -> Value {
        (**self).entry()
    }
}

/// Validates a call's arguments: on their JSON text when the schema is flat enough to
/// answer there (no map built), else on the parsed map, which the handler then reuses.
/// A tool result's wire form as a `Value` (members in the order serde writes them).
fn result_value(result: &CallToolResult) -> Value {
    // Cannot fail: every map in a result has string keys and no member has a fallible
    // `Serialize`.
    serde_json::to_value(result).unwrap_or_default()
}

fn check_arguments(schema: &Schema, arguments: &ToolArguments) -> Result<(), Vec<SchemaError>> {
    let text = arguments.text().map_or(&b"{}"[..], RawJson::as_bytes);
    if schema.admits_text(text) {
        return Ok(());
    }
    schema.validate(arguments.value())
}

/// A tool with an outputSchema must return matching `structuredContent`; if it does not, that
/// is a bug in the handler, reported to the model as an `isError` result rather than sent on.
fn check_output(tool: &str, schema: Option<&Schema>, mut result: CallToolResult) -> CallToolResult {
    let Some(schema) = schema else {
        return result;
    };
    if result.is_error == Some(true) {
        return result;
    }
    let Some(structured) = result.structured_content.take() else {
        return CallToolResult::error(format!(
            "tool {tool} declares an outputSchema but returned no structuredContent"
        ));
    };
    let checked = schema.validate(&structured);
    result.structured_content = Some(structured);
    match checked {
        Ok(()) => result,
        Err(errors) => {
            let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
            CallToolResult::error(format!(
                "tool {tool} returned structuredContent that does not match its outputSchema: {}",
                text.join("; ")
            ))
        }
    }
}
