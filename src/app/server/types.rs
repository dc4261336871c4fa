//! What a server registers (tools, resources, resource templates, prompts, a completion
//! provider) and the results their handlers return, with their wire encodings.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::context::RequestContext;
use crate::app::runtime::BoxFuture;
use crate::app::schema::Schema;
use crate::app::uri_template::{TemplateError, UriTemplate};
use crate::jsonrpc::ErrorObject;
use crate::model::Icon;

/// What a handler returns: its result, or a JSON-RPC error for the caller.
pub type HandlerResult<T> = Result<T, ErrorObject>;

/// A type-erased async handler taking `I` and answering `O`.
pub type HandlerFn<I, O> =
    Arc<dyn Fn(I, RequestContext) -> BoxFuture<HandlerResult<O>> + Send + Sync + 'static>;

fn boxed<I, O, F, Fut>(f: F) -> HandlerFn<I, O>
where
    F: Fn(I, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HandlerResult<O>> + Send + 'static,
{
    Arc::new(move |i, ctx| Box::pin(f(i, ctx)))
}

fn boxed_sync<I, O, F>(f: F) -> HandlerFn<I, O>
where
    F: Fn(I, &RequestContext) -> HandlerResult<O> + Send + Sync + 'static,
    O: Send + 'static,
{
    Arc::new(move |i, ctx| Box::pin(std::future::ready(f(i, &ctx))))
}

macro_rules! handler_setters {
    ($input:ty, $output:ty) => {
        /// Sets an async handler (its future runs as a job; see `Server::poll_job`).
        pub fn handler<F, Fut>(mut self, f: F) -> Self
        where
            F: Fn($input, RequestContext) -> Fut + Send + Sync + 'static,
            Fut: Future<Output = HandlerResult<$output>> + Send + 'static,
        {
            self.handler = Some(boxed(f));
            self
        }

        /// Sets a sync handler (it finishes inside the server's inline first poll).
        pub fn sync_handler<F>(mut self, f: F) -> Self
        where
            F: Fn($input, &RequestContext) -> HandlerResult<$output> + Send + Sync + 'static,
        {
            self.handler = Some(boxed_sync(f));
            self
        }
    };
}

fn put(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(v) = value {
        map.insert(key.to_owned(), v);
    }
}

fn icons_json(icons: &Option<Vec<Icon>>) -> Option<Value> {
    icons.as_ref().and_then(|i| serde_json::to_value(i).ok())
}

/// A `tools/call` invocation as the handler sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The tool's name.
    pub name: String,
    /// The arguments (an object; `{}` when the client sent none), already validated against
    /// the tool's inputSchema.
    pub arguments: Map<String, Value>,
}

/// The result of a tool call (`CallToolResult`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CallToolResult {
    /// Content blocks, verbatim (`{"type":"text","text":...}`, images, resource links, …).
    pub content: Vec<Value>,
    /// Structured output (checked against the tool's outputSchema when it has one).
    pub structured_content: Option<Value>,
    /// Whether the tool failed (the model should see it; not a protocol error).
    pub is_error: bool,
}

impl CallToolResult {
    /// One text block.
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![json!({"type": "text", "text": text.into()})],
            ..Default::default()
        }
    }

    /// A tool failure with one text block.
    pub fn error(text: impl Into<String>) -> Self {
        CallToolResult {
            is_error: true,
            ..CallToolResult::text(text)
        }
    }

    /// Structured output, with its JSON text as the text block (for older clients).
    pub fn structured(value: Value) -> Self {
        CallToolResult {
            structured_content: Some(value.clone()),
            ..CallToolResult::text(value.to_string())
        }
    }

    /// The wire form.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("content".into(), Value::Array(self.content.clone()));
        put(&mut m, "structuredContent", self.structured_content.clone());
        if self.is_error {
            m.insert("isError".into(), Value::Bool(true));
        }
        Value::Object(m)
    }
}

/// A tool: its definition (inputSchema kept verbatim) and its handler.
#[derive(Clone)]
pub struct Tool {
    pub(crate) name: String,
    title: Option<String>,
    description: Option<String>,
    pub(crate) input_schema: Arc<Schema>,
    pub(crate) output_schema: Option<Arc<Schema>>,
    annotations: Option<Value>,
    icons: Option<Vec<Icon>>,
    pub(crate) handler: Option<HandlerFn<ToolCall, CallToolResult>>,
}

impl Tool {
    /// A tool named `name` whose arguments must match `input_schema` (a JSON Schema object).
    pub fn new(name: impl Into<String>, input_schema: Value) -> Self {
        Tool {
            name: name.into(),
            title: None,
            description: None,
            input_schema: Arc::new(Schema::new(input_schema)),
            output_schema: None,
            annotations: None,
            icons: None,
            handler: None,
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// A description for the model.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// A schema the result's `structuredContent` must match.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(Arc::new(Schema::new(schema)));
        self
    }

    /// Behaviour hints (`readOnlyHint`, `destructiveHint`, …), verbatim.
    pub fn annotations(mut self, annotations: Value) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Icons.
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = Some(icons);
        self
    }

    handler_setters!(ToolCall, CallToolResult);

    /// The `Tool` object of `tools/list`.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), Value::String(self.name.clone()));
        put(&mut m, "title", self.title.clone().map(Value::String));
        put(
            &mut m,
            "description",
            self.description.clone().map(Value::String),
        );
        m.insert("inputSchema".into(), self.input_schema.document().clone());
        put(
            &mut m,
            "outputSchema",
            self.output_schema.as_ref().map(|s| s.document().clone()),
        );
        put(&mut m, "annotations", self.annotations.clone());
        put(&mut m, "icons", icons_json(&self.icons));
        Value::Object(m)
    }
}

/// A `resources/read` as the handler sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceRead {
    /// The requested URI.
    pub uri: String,
    /// Template variables matched from the URI (empty for a fixed resource).
    pub variables: Vec<(String, String)>,
}

impl ResourceRead {
    /// The value of template variable `name`.
    pub fn variable(&self, name: &str) -> Option<&str> {
        self.variables
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One item of a `resources/read` result.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceContents {
    uri: String,
    mime_type: Option<String>,
    body: (&'static str, String),
}

impl ResourceContents {
    /// Text contents.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        ResourceContents {
            uri: uri.into(),
            mime_type: None,
            body: ("text", text.into()),
        }
    }

    /// Binary contents, already base64-encoded.
    pub fn blob(uri: impl Into<String>, base64: impl Into<String>) -> Self {
        ResourceContents {
            uri: uri.into(),
            mime_type: None,
            body: ("blob", base64.into()),
        }
    }

    /// Sets the MIME type.
    pub fn mime_type(mut self, mime: impl Into<String>) -> Self {
        self.mime_type = Some(mime.into());
        self
    }

    /// The wire form.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("uri".into(), Value::String(self.uri.clone()));
        put(
            &mut m,
            "mimeType",
            self.mime_type.clone().map(Value::String),
        );
        m.insert(self.body.0.into(), Value::String(self.body.1.clone()));
        Value::Object(m)
    }
}

/// Fields shared by resources and resource templates.
#[derive(Clone, Debug, Default)]
struct ResourceMeta {
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
    icons: Option<Vec<Icon>>,
}

impl ResourceMeta {
    fn fill(&self, m: &mut Map<String, Value>) {
        put(m, "title", self.title.clone().map(Value::String));
        put(
            m,
            "description",
            self.description.clone().map(Value::String),
        );
        put(m, "mimeType", self.mime_type.clone().map(Value::String));
        put(m, "icons", icons_json(&self.icons));
    }
}

macro_rules! meta_setters {
    () => {
        /// A human-readable title.
        pub fn title(mut self, title: impl Into<String>) -> Self {
            self.meta.title = Some(title.into());
            self
        }

        /// A description.
        pub fn description(mut self, description: impl Into<String>) -> Self {
            self.meta.description = Some(description.into());
            self
        }

        /// The MIME type.
        pub fn mime_type(mut self, mime: impl Into<String>) -> Self {
            self.meta.mime_type = Some(mime.into());
            self
        }

        /// Icons.
        pub fn icons(mut self, icons: Vec<Icon>) -> Self {
            self.meta.icons = Some(icons);
            self
        }
    };
}

/// A fixed resource and its read handler.
#[derive(Clone)]
pub struct Resource {
    pub(crate) uri: String,
    name: String,
    meta: ResourceMeta,
    pub(crate) handler: Option<HandlerFn<ResourceRead, Vec<ResourceContents>>>,
}

impl Resource {
    /// A resource at `uri` called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Resource {
            uri: uri.into(),
            name: name.into(),
            meta: ResourceMeta::default(),
            handler: None,
        }
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    meta_setters!();
    handler_setters!(ResourceRead, Vec<ResourceContents>);

    /// The `Resource` object of `resources/list`.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("uri".into(), Value::String(self.uri.clone()));
        m.insert("name".into(), Value::String(self.name.clone()));
        self.meta.fill(&mut m);
        Value::Object(m)
    }
}

/// A family of resources named by an RFC 6570 level-1 template, and its read handler.
#[derive(Clone)]
pub struct ResourceTemplate {
    pub(crate) template: UriTemplate,
    name: String,
    meta: ResourceMeta,
    pub(crate) handler: Option<HandlerFn<ResourceRead, Vec<ResourceContents>>>,
}

impl ResourceTemplate {
    /// A template such as `test://template/{id}/data`; errors when it is not level 1.
    pub fn new(uri_template: &str, name: impl Into<String>) -> Result<Self, TemplateError> {
        Ok(ResourceTemplate {
            template: UriTemplate::parse(uri_template)?,
            name: name.into(),
            meta: ResourceMeta::default(),
            handler: None,
        })
    }

    /// The template text.
    pub fn uri_template(&self) -> &str {
        self.template.as_str()
    }

    meta_setters!();
    handler_setters!(ResourceRead, Vec<ResourceContents>);

    /// The `ResourceTemplate` object of `resources/templates/list`.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert(
            "uriTemplate".into(),
            Value::String(self.template.as_str().to_owned()),
        );
        m.insert("name".into(), Value::String(self.name.clone()));
        self.meta.fill(&mut m);
        Value::Object(m)
    }
}

/// A `prompts/get` as the handler sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptRequest {
    /// The prompt's name.
    pub name: String,
    /// The arguments (every required one is present).
    pub arguments: BTreeMap<String, String>,
}

/// The result of `prompts/get`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GetPromptResult {
    /// A description of this rendering.
    pub description: Option<String>,
    /// The messages, verbatim (`{"role":"user","content":{...}}`).
    pub messages: Vec<Value>,
}

impl GetPromptResult {
    /// One user message with one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        GetPromptResult {
            description: None,
            messages: vec![json!({
                "role": "user",
                "content": {"type": "text", "text": text.into()}
            })],
        }
    }

    /// The wire form.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        put(
            &mut m,
            "description",
            self.description.clone().map(Value::String),
        );
        m.insert("messages".into(), Value::Array(self.messages.clone()));
        Value::Object(m)
    }
}

/// One declared prompt argument.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// A description.
    pub description: Option<String>,
    /// Whether `prompts/get` must supply it.
    pub required: bool,
}

/// A prompt: its definition, arguments and handler.
#[derive(Clone)]
pub struct Prompt {
    pub(crate) name: String,
    title: Option<String>,
    description: Option<String>,
    pub(crate) arguments: Vec<PromptArgument>,
    icons: Option<Vec<Icon>>,
    pub(crate) handler: Option<HandlerFn<PromptRequest, GetPromptResult>>,
}

impl Prompt {
    /// A prompt called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Prompt {
            name: name.into(),
            title: None,
            description: None,
            arguments: Vec::new(),
            icons: None,
            handler: None,
        }
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// A description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Declares an argument.
    pub fn argument(mut self, name: impl Into<String>, required: bool) -> Self {
        self.arguments.push(PromptArgument {
            name: name.into(),
            description: None,
            required,
        });
        self
    }

    /// Icons.
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = Some(icons);
        self
    }

    handler_setters!(PromptRequest, GetPromptResult);

    /// The `Prompt` object of `prompts/list`.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), Value::String(self.name.clone()));
        put(&mut m, "title", self.title.clone().map(Value::String));
        put(
            &mut m,
            "description",
            self.description.clone().map(Value::String),
        );
        if !self.arguments.is_empty() {
            let args = self.arguments.iter().map(|a| {
                let mut o = Map::new();
                o.insert("name".into(), Value::String(a.name.clone()));
                put(
                    &mut o,
                    "description",
                    a.description.clone().map(Value::String),
                );
                o.insert("required".into(), Value::Bool(a.required));
                Value::Object(o)
            });
            m.insert("arguments".into(), Value::Array(args.collect()));
        }
        put(&mut m, "icons", icons_json(&self.icons));
        Value::Object(m)
    }
}

/// A `completion/complete` request as the provider sees it (the params, verbatim:
/// `ref`, `argument`, `context`).
#[derive(Clone, Debug, PartialEq)]
pub struct CompleteRequest {
    /// The request params.
    pub params: Value,
}

/// A completion provider's answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Completion {
    /// Suggested values (at most 100 are sent; the spec's limit).
    pub values: Vec<String>,
    /// The total number of matches, when known.
    pub total: Option<u64>,
    /// Whether more values exist beyond these.
    pub has_more: Option<bool>,
}

impl Completion {
    /// The wire form (`{"completion": {...}}`), truncated to 100 values with `hasMore` set.
    pub fn to_json(&self) -> Value {
        let truncated = self.values.len() > 100;
        let values: Vec<&String> = self.values.iter().take(100).collect();
        let mut c = Map::new();
        c.insert("values".into(), json!(values));
        put(&mut c, "total", self.total.map(Value::from));
        let has_more = if truncated { Some(true) } else { self.has_more };
        put(&mut c, "hasMore", has_more.map(Value::Bool));
        json!({ "completion": c })
    }
}

/// The completion provider handler type.
pub type CompletionFn = HandlerFn<CompleteRequest, Completion>;

/// Wraps an async completion provider.
pub fn completion_handler<F, Fut>(f: F) -> CompletionFn
where
    F: Fn(CompleteRequest, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HandlerResult<Completion>> + Send + 'static,
{
    boxed(f)
}
