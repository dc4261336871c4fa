//! Prompts (with declared arguments) and the completion provider.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::context::RequestContext;
use super::types::{boxed, handler_setters, put, Handler, HandlerFn};
use crate::jsonrpc::ErrorObject;
use crate::model::{self, Completion, GetPromptResult, Icon, PromptArgument};
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

/// A prompt to register: its wire definition ([`model::Prompt`]) and its handler.
#[derive(Clone)]
pub struct Prompt {
    pub(crate) def: model::Prompt,
    pub(crate) handler: Option<Handler<PromptRequest, GetPromptResult>>,
}

impl Prompt {
    /// A prompt called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Prompt::from_definition(model::Prompt {
            name: name.into(),
            ..model::Prompt::default()
        })
    }

    /// A prompt from its wire definition (as a client lists it, or as a proxy relays it).
    pub fn from_definition(def: model::Prompt) -> Self {
        Prompt { def, handler: None }
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// The definition `prompts/list` shows.
    pub fn definition(&self) -> &model::Prompt {
        &self.def
    }

    /// The declared arguments.
    pub(crate) fn arguments(&self) -> &[PromptArgument] {
        self.def.arguments.as_deref().unwrap_or_default()
    }

    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.def.title = Some(title.into());
        self
    }

    /// A description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.def.description = Some(description.into());
        self
    }

    /// Declares an argument.
    pub fn argument(mut self, name: impl Into<String>, required: bool) -> Self {
        self.def
            .arguments
            .get_or_insert_with(Vec::new)
            .push(PromptArgument {
                name: name.into(),
                required: Some(required),
                ..PromptArgument::default()
            });
        self
    }

    /// Icons.
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.def.icons = Some(icons);
        self
    }

    handler_setters!(PromptRequest, GetPromptResult);
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
    Fut: Future<Output = Result<Completion, ErrorObject>> + Send + 'static,
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
        let v = serde_json::to_value(tool.definition()).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["name", "inputSchema", "outputSchema", "icons"]);
        assert_eq!(v["inputSchema"], schema);
        let text = serde_json::to_string(&v).unwrap();
        assert!(text.contains(r#""properties":{"b":{},"a":{}}"#), "{text}");
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
