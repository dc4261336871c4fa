//! Prompts (with declared arguments) and the completion provider.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::context::RequestContext;
use super::types::{boxed, handler_setters, icons_json, put, Handler, HandlerFn, HandlerResult};
use crate::model::{Completion, GetPromptResult, Icon, PromptArgument};
use std::future::Future;

/// A `prompts/get` as the handler sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptRequest {
    /// The prompt's name.
    pub name: String,
    /// The arguments (every required one is present).
    pub arguments: BTreeMap<String, String>,
}

/// The wire form of a prompt handler's answer.
pub(crate) fn prompt_json(result: &GetPromptResult) -> Value {
    // Cannot fail: every map in a `GetPromptResult` has string keys and no member has a
    // fallible `Serialize`.
    serde_json::to_value(result).unwrap_or_default()
}

/// A prompt: its definition, arguments and handler.
#[derive(Clone)]
pub struct Prompt {
    pub(crate) name: String,
    title: Option<String>,
    description: Option<String>,
    pub(crate) arguments: Vec<PromptArgument>,
    icons: Option<Vec<Icon>>,
    pub(crate) handler: Option<Handler<PromptRequest, GetPromptResult>>,
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
            required: Some(required),
            ..PromptArgument::default()
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
            // Cannot fail: a `PromptArgument` has string keys and no fallible `Serialize`.
            let args = self
                .arguments
                .iter()
                .map(|a| serde_json::to_value(a).unwrap_or_default());
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

/// The wire form of a completion provider's answer (`{"completion": {...}}`), truncated to
/// 100 values (the spec's limit) with `hasMore` set.
pub(crate) fn completion_json(completion: &Completion) -> Value {
    let truncated = completion.values.len() > 100;
    let values: Vec<&String> = completion.values.iter().take(100).collect();
    let mut c = Map::new();
    c.insert("values".into(), json!(values));
    put(&mut c, "total", completion.total.map(Value::from));
    let has_more = if truncated {
        Some(true)
    } else {
        completion.has_more
    };
    put(&mut c, "hasMore", has_more.map(Value::Bool));
    json!({ "completion": c })
}

/// The completion provider handler type.
pub(crate) type CompletionFn = HandlerFn<CompleteRequest, Completion>;

/// Wraps an async completion provider.
pub fn completion_handler<F, Fut>(f: F) -> CompletionFn
where
    F: Fn(CompleteRequest, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HandlerResult<Completion>> + Send + 'static,
{
    boxed(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::server::{ResourceContents, Tool};

    #[test]
    fn tool_json_keeps_the_input_schema_verbatim() {
        let schema = json!({"type": "object", "properties": {"b": {}, "a": {}}, "x-vendor": 1});
        let tool = Tool::new("t", schema.clone())
            .icons(vec![Icon {
                src: "https://example.com/i.png".into(),
                ..Default::default()
            }])
            .output_schema(json!({"type": "object"}));
        let v = tool.to_json();
        assert_eq!(v["inputSchema"], schema);
        assert_eq!(v["outputSchema"], json!({"type": "object"}));
        assert_eq!(v["icons"][0]["src"], "https://example.com/i.png");
        assert!(v.get("title").is_none() && v.get("annotations").is_none());
    }

    #[test]
    fn completion_is_capped_at_one_hundred_values() {
        let c = Completion {
            values: (0..150).map(|i| i.to_string()).collect(),
            total: Some(150),
            ..Default::default()
        };
        let v = completion_json(&c);
        assert_eq!(v["completion"]["values"].as_array().unwrap().len(), 100);
        assert_eq!(v["completion"]["hasMore"], true);
        assert_eq!(v["completion"]["total"], 150);
        let small = Completion {
            values: vec!["a".into()],
            ..Default::default()
        };
        assert!(completion_json(&small)["completion"]
            .get("hasMore")
            .is_none());
    }

    #[test]
    fn typed_prompt_results_keep_their_wire_form() {
        let wire = json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "x"}}]
        });
        let typed: GetPromptResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(prompt_json(&typed), wire);
        assert_eq!(prompt_json(&GetPromptResult::user_text("x")), wire);
    }

    #[test]
    fn resource_contents_text_and_blob() {
        let t = ResourceContents::text("u", "hi").mime_type("text/plain");
        assert_eq!(
            serde_json::to_value(&t).unwrap(),
            json!({"uri": "u", "mimeType": "text/plain", "text": "hi"})
        );
        assert_eq!(
            serde_json::to_value(ResourceContents::blob("u", "AAE=")).unwrap(),
            json!({"uri": "u", "blob": "AAE="})
        );
    }
}
