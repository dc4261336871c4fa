//! Tools: the definition (inputSchema verbatim), the call a handler sees, and its result's
//! wire text.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

use super::arguments::ToolArguments;
use super::context::RequestContext;
use super::types::{handler_setters, Handler};
use crate::app::server::schema::{InvalidSchema, Schema};
use crate::jsonrpc::{ErrorObject, RawJson};
use crate::model::{self, write_texts_only, CallToolResult, Extra, Icon, ToolAnnotations};
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

/// A tool result's wire form as JSON text: the common text-only result written by hand, any
/// other through serde (the same text either way).
pub(crate) fn result_json(result: &CallToolResult) -> Result<RawJson, ErrorObject> {
    if let Some(text) = write_texts_only(result) {
        // Valid JSON on one line by construction: literals around escaped strings.
        return Ok(RawJson::from_validated_one_line(Bytes::from(text)));
    }
    RawJson::from_serialize(result).map_err(|e| ErrorObject::internal(e.to_string()))
}

/// A tool to register: its wire definition ([`model::Tool`]), its schemas compiled for
/// checking calls and results, and its handler.
#[derive(Clone)]
pub struct Tool {
    pub(crate) def: model::Tool,
    pub(crate) input_schema: Arc<Schema>,
    pub(crate) output_schema: Option<Arc<Schema>>,
    pub(crate) handler: Option<Handler<ToolCall, CallToolResult>>,
    pub(crate) task_support: TaskSupport,
}

impl Tool {
    /// A tool named `name` whose arguments must match `input_schema` (a JSON Schema object,
    /// compiled now). A schema that does not compile is refused by `ServerBuilder::try_build`
    /// and `ServerHandle::add_tool`; under the unchecked `build`, every call of the tool is
    /// answered with an `isError` result giving the reason.
    pub fn new(name: impl Into<String>, input_schema: Value) -> Self {
        let def = model::Tool {
            name: name.into(),
            title: None,
            description: None,
            input_schema: raw(&input_schema),
            output_schema: None,
            annotations: None,
            icons: None,
            execution: None,
            meta: None,
            extra: Extra::new(),
        };
        Tool {
            def,
            input_schema: Arc::new(Schema::new(input_schema)),
            output_schema: None,
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

    /// A tool from its wire definition (as a client lists it, or as a proxy relays it): the
    /// schemas are compiled now, as by [`Tool::new`] and [`Tool::output_schema`].
    pub fn from_definition(def: model::Tool) -> Self {
        let compile = |text: &RawJson| {
            let document = serde_json::from_str(text.get()).unwrap_or(Value::Null);
            Arc::new(Schema::new(document))
        };
        Tool {
            input_schema: compile(&def.input_schema),
            output_schema: def.output_schema.as_ref().map(compile),
            def,
            handler: None,
            task_support: TaskSupport::Forbidden,
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
        &self.def.name
    }

    /// The definition `tools/list` shows.
    pub fn definition(&self) -> &model::Tool {
        &self.def
    }

    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.def.title = Some(title.into());
        self
    }

    /// A description for the model.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.def.description = Some(description.into());
        self
    }

    /// A schema the result's `structuredContent` must match (compiled now; one that does not
    /// compile is refused by `ServerBuilder::try_build` and `ServerHandle::add_tool`).
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.def.output_schema = Some(raw(&schema));
        self.output_schema = Some(Arc::new(Schema::new(schema)));
        self
    }

    /// Behaviour hints (`readOnlyHint`, `destructiveHint`, …).
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.def.annotations = Some(annotations);
        self
    }

    /// Icons.
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.def.icons = Some(icons);
        self
    }

    /// Whether calls may run as tasks (2026-07-28 tasks extension; needs
    /// `ServerBuilder::tasks`): see docs/stateless.md.
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = support;
        self
    }

    handler_setters!(ToolCall, CallToolResult);
}

/// A schema's wire text (any JSON value serialises).
fn raw(schema: &Value) -> RawJson {
    RawJson::from_serialize(schema).unwrap_or_else(|_| RawJson::null())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ContentBlock, TextContent};
    use serde_json::json;

    /// The text written straight from the fields is serde's text, for every combination of
    /// optional members, and a pass-through block is written verbatim.
    #[test]
    fn raw_wire_form_is_the_serde_wire_form() {
        let structured = CallToolResult::structured(json!({"b": [1, 2.5, "x"], "a": null}));
        let mut both = CallToolResult::error("bad \"quote\"\n");
        both.structured_content = Some(json!({"z": 1}));
        let mut mixed = CallToolResult::text("a");
        let image = json!({"type": "image", "data": "AA==", "mimeType": "image/png"});
        mixed.content.push(ContentBlock::Json(image.clone()));
        // Text blocks only: written by hand, escapes and all.
        let mut texts = CallToolResult::error("tab\there, \"quoted\", back\\slash, \u{1}\u{1f}");
        texts.content.push(ContentBlock::text(""));
        texts
            .content
            .push(ContentBlock::text("a longer block of plain text"));
        let mut annotated = CallToolResult::text("x");
        annotated.content[0] = ContentBlock::Text(TextContent {
            text: "x".into(),
            meta: json!({"k": 1}).as_object().cloned(),
            ..Default::default()
        });
        let mut not_failed = CallToolResult::text("ok");
        not_failed.is_error = Some(false);
        for result in [
            CallToolResult::default(),
            CallToolResult::text("héllo"),
            texts,
            mixed.clone(),
            CallToolResult::error("nope"),
            structured,
            both,
            annotated,
            not_failed,
        ] {
            let raw = result_json(&result).expect("serialisable");
            assert_eq!(raw.get(), serde_json::to_string(&result).unwrap());
        }
        let wire: Value = serde_json::from_str(result_json(&mixed).unwrap().get()).unwrap();
        assert_eq!(wire["content"][1], image);
        assert_eq!(wire["content"][0], json!({"type": "text", "text": "a"}));
    }

    /// A tool given as its wire definition lists that definition as it is, and its schemas
    /// are compiled: one that does not compile is reported.
    #[test]
    fn a_tool_from_its_definition_lists_it_and_compiles_its_schemas() {
        let text = r#"{"name":"t","title":"T","inputSchema":{"type":"object","properties":{"z":{},"a":{}}},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}"#;
        let def: model::Tool = serde_json::from_str(text).unwrap();
        let tool = Tool::from_definition(def.clone());
        assert_eq!(tool.definition(), &def);
        assert_eq!(serde_json::to_string(tool.definition()).unwrap(), text);
        assert!(tool.schema_error().is_none());
        assert!(tool.output_schema.is_some());
        let bad = model::Tool::new("b", r#"{"type": 7}"#).unwrap();
        assert!(Tool::from_definition(bad).schema_error().is_some());
    }

    /// Structured output is the value and its text, an object or (2026-07-28) any value.
    #[test]
    fn structured_results_carry_the_value_and_its_text() {
        let r = CallToolResult::structured(json!({"n": 1}));
        assert_eq!(r.structured_content, Some(json!({"n": 1})));
        assert_eq!(r.content, vec![ContentBlock::text("{\"n\":1}")]);
        let r = CallToolResult::structured(json!([1, 2]));
        assert_eq!(r.structured_content, Some(json!([1, 2])));
        assert_eq!(r.content, vec![ContentBlock::text("[1,2]")]);
        assert_eq!(CallToolResult::error("x").is_error, Some(true));
        assert_eq!(CallToolResult::text("x").is_error, None);
    }
}
