//! Tools: the definition (inputSchema verbatim), the call a handler sees, and its result.

use std::sync::Arc;

use bytes::Bytes;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Map, Value};

use super::arguments::ToolArguments;
use super::context::RequestContext;
use super::types::{handler_setters, icons_json, put, Handler};
use crate::app::server::schema::{InvalidSchema, Schema};
use crate::jsonrpc::{write_json_string, ErrorObject, RawJson};
use crate::model::Icon;
use crate::tasks::TaskSupport;

/// A `tools/call` invocation as the handler sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The tool's name.
    pub name: String,
    /// The arguments (an object; `{}` when the client sent none), already validated against
    /// the tool's inputSchema: a map through `Deref` (`call.arguments.get("text")`), or
    /// parsed into a type of the handler's with [`ToolArguments::parse`].
    pub arguments: ToolArguments,
}

/// One content block of a tool result.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolContent {
    /// A text block without annotations (`{"type":"text","text":...}`), written to the wire
    /// straight from the string.
    Text(String),
    /// Any block, verbatim (images, audio, resource links, embedded resources, annotated
    /// text, …).
    Json(Value),
}

impl ToolContent {
    /// The block's wire form as a `Value`.
    pub fn to_json(&self) -> Value {
        match self {
            ToolContent::Text(text) => json!({"type": "text", "text": text}),
            ToolContent::Json(block) => block.clone(),
        }
    }
}

impl From<Value> for ToolContent {
    fn from(block: Value) -> Self {
        ToolContent::Json(block)
    }
}

impl Serialize for ToolContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ToolContent::Text(text) => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", text)?;
                map.end()
            }
            ToolContent::Json(block) => block.serialize(serializer),
        }
    }
}

/// The result of a tool call (`CallToolResult`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CallToolResult {
    /// Content blocks (a text block typed, any other verbatim).
    pub content: Vec<ToolContent>,
    /// Structured output (checked against the tool's outputSchema when it has one).
    pub structured_content: Option<Value>,
    /// Whether the tool failed (the model should see it; not a protocol error).
    pub is_error: bool,
}

impl CallToolResult {
    /// One text block.
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![ToolContent::Text(text.into())],
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

    /// The wire form as JSON text, written straight from the fields (the same text as
    /// `to_json` gives, without building that `Value` first).
    pub fn to_raw_json(&self) -> Result<RawJson, ErrorObject> {
        if let Some(text) = self.texts_only_json() {
            return Ok(text);
        }
        RawJson::from_serialize(&Wire(self)).map_err(|e| ErrorObject::internal(e.to_string()))
    }

    /// The common result, text blocks only and no structured content, written by hand (the
    /// text serde writes for it, without serde's per-member calls); `None` for any other.
    fn texts_only_json(&self) -> Option<RawJson> {
        if self.structured_content.is_some() {
            return None;
        }
        let mut len = 32;
        for block in &self.content {
            let ToolContent::Text(text) = block else {
                return None;
            };
            // Room for the block's members and a few escapes.
            len += text.len() + 40;
        }
        let mut out = Vec::with_capacity(len);
        out.extend_from_slice(b"{\"content\":[");
        for (i, block) in self.content.iter().enumerate() {
            if let ToolContent::Text(text) = block {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(b"{\"type\":\"text\",\"text\":");
                write_json_string(&mut out, text);
                out.push(b'}');
            }
        }
        out.push(b']');
        if self.is_error {
            out.extend_from_slice(b",\"isError\":true");
        }
        out.push(b'}');
        // Valid JSON on one line by construction: literals around escaped strings.
        Some(RawJson::from_validated_one_line(Bytes::from(out)))
    }

    /// The wire form.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        let content = self.content.iter().map(ToolContent::to_json).collect();
        m.insert("content".into(), Value::Array(content));
        put(&mut m, "structuredContent", self.structured_content.clone());
        if self.is_error {
            m.insert("isError".into(), Value::Bool(true));
        }
        Value::Object(m)
    }
}

/// A result's wire form, members in `to_json`'s order.
struct Wire<'a>(&'a CallToolResult);

impl Serialize for Wire<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        let len = 1 + usize::from(r.structured_content.is_some()) + usize::from(r.is_error);
        let mut map = serializer.serialize_map(Some(len))?;
        map.serialize_entry("content", &r.content)?;
        if let Some(structured) = &r.structured_content {
            map.serialize_entry("structuredContent", structured)?;
        }
        if r.is_error {
            map.serialize_entry("isError", &true)?;
        }
        map.end()
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
    pub(crate) handler: Option<Handler<ToolCall, CallToolResult>>,
    pub(crate) task_support: TaskSupport,
}

impl Tool {
    /// A tool named `name` whose arguments must match `input_schema` (a JSON Schema object,
    /// compiled now). A schema that does not compile is refused by `ServerBuilder::try_build`
    /// and `ServerHandle::add_tool`; under the unchecked `build`, every call of the tool is
    /// answered with an `isError` result giving the reason.
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
            task_support: TaskSupport::Forbidden,
        }
    }

    /// Like [`Tool::new`], refusing an `input_schema` that does not compile, with the reason.
    pub fn try_new(name: impl Into<String>, input_schema: Value) -> Result<Self, InvalidSchema> {
        let tool = Tool::new(name, input_schema);
        match tool.input_schema.error() {
            Some(e) => Err(e.clone()),
            None => Ok(tool),
        }
    }

    /// Why the input or the output schema does not compile (the first that does not).
    pub fn schema_error(&self) -> Option<&InvalidSchema> {
        let output = self.output_schema.as_deref().and_then(Schema::error);
        self.input_schema.error().or(output)
    }

    /// The tool with its schemas compiled with `format` assertions on or off.
    pub(crate) fn with_formats(mut self, formats: bool) -> Self {
        fn recompile(schema: Arc<Schema>, formats: bool) -> Arc<Schema> {
            Arc::new(Arc::unwrap_or_clone(schema).formats(formats))
        }
        self.input_schema = recompile(self.input_schema, formats);
        self.output_schema = self.output_schema.map(|s| recompile(s, formats));
        self
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

    /// A schema the result's `structuredContent` must match (compiled now; one that does not
    /// compile is refused by `ServerBuilder::try_build` and `ServerHandle::add_tool`).
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

    /// Whether calls may run as tasks (2026-07-28 tasks extension; needs
    /// `ServerBuilder::tasks`): see docs/stateless.md.
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = support;
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

impl From<crate::model::CallToolResult> for CallToolResult {
    /// Converts the typed model result (content blocks encoded as they go on the wire).
    fn from(r: crate::model::CallToolResult) -> Self {
        CallToolResult {
            content: r
                .content
                .iter()
                .filter_map(|b| serde_json::to_value(b).ok())
                .map(ToolContent::Json)
                .collect(),
            structured_content: r.structured_content.map(Value::Object),
            is_error: r.is_error.unwrap_or(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text written straight from the fields is the text of the `Value` wire form, for
    /// every combination of optional members.
    #[test]
    fn raw_wire_form_is_the_value_wire_form() {
        let structured = CallToolResult::structured(json!({"b": [1, 2.5, "x"], "a": null}));
        let mut both = CallToolResult::error("bad \"quote\"\n");
        both.structured_content = Some(json!({"z": 1}));
        let mut mixed = CallToolResult::text("a");
        mixed
            .content
            .push(json!({"type": "image", "data": "AA==", "mimeType": "image/png"}).into());
        // Text blocks only: written by hand, escapes and all.
        let mut texts = CallToolResult::error("tab\there, \"quoted\", back\\slash, \u{1}\u{1f}");
        texts.content.push(ToolContent::Text(String::new()));
        texts
            .content
            .push(ToolContent::Text("a longer block of plain text".into()));
        for result in [
            CallToolResult::default(),
            CallToolResult::text("héllo"),
            texts,
            mixed,
            CallToolResult::error("nope"),
            structured,
            both,
        ] {
            let raw = result.to_raw_json().expect("serialisable");
            assert_eq!(raw.get(), result.to_json().to_string());
        }
    }

    /// A typed text block is written as the object `to_json` gives.
    #[test]
    fn a_text_block_serialises_as_its_json_form() {
        let block = ToolContent::Text("say \"hi\"\n".into());
        let text = serde_json::to_string(&block).expect("serialisable");
        assert_eq!(text, block.to_json().to_string());
        assert_eq!(
            block.to_json(),
            json!({"type": "text", "text": "say \"hi\"\n"})
        );
    }
}
