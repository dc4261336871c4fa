//! Typed tools and prompts: the input schema (a prompt's argument list) derived from a Rust
//! type with `schemars` (JSON Schema 2020-12, nested types under `$defs`), the handler given
//! the arguments parsed into that type, and for tools an optional output type that sets
//! `outputSchema` and fills `structuredContent` (with its JSON text as the text block).
//!
//! Arguments are first checked against the derived schema like any tool's (a mismatch is an
//! `isError` result naming the paths); arguments that pass the schema but do not parse into
//! the type are refused with `-32602`.

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use super::context::RequestContext;
use super::prompt::{Prompt, PromptRequest};
use super::tool::{Tool, ToolCall};
use crate::jsonrpc::ErrorObject;
use crate::model::PromptArgument;
use crate::model::{CallToolResult, GetPromptResult};

/// The JSON Schema (2020-12) of what `T` deserializes from.
pub fn input_schema_for<T: JsonSchema>() -> Value {
    SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// The JSON Schema (2020-12) of what `T` serializes to.
pub fn output_schema_for<T: JsonSchema>() -> Value {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// A tool being built whose arguments are an `A` and whose handler answers an `O` (a
/// [`CallToolResult`] when no output type is set). Made by [`Tool::typed`]; setting the
/// handler gives the [`Tool`].
pub struct TypedTool<A, O = CallToolResult> {
    tool: Tool,
    types: PhantomData<fn(A) -> O>,
}

/// What a typed tool's handler answers, and how that becomes the call's result: a
/// [`CallToolResult`] as it is, or the value of an output type ([`Structured`]).
pub trait ToolOutput {
    /// What the handler returns.
    type Answer;
    /// The call's result.
    fn into_result(answer: Self::Answer) -> Result<CallToolResult, ErrorObject>;
}

impl ToolOutput for CallToolResult {
    type Answer = CallToolResult;
    fn into_result(answer: CallToolResult) -> Result<CallToolResult, ErrorObject> {
        Ok(answer)
    }
}

/// The output of a tool with an output type `P` (set by [`TypedTool::output`]): the handler
/// returns a `P`, whose JSON is the `structuredContent` and the text of the one text block.
pub struct Structured<P>(PhantomData<fn() -> P>);

impl<P: Serialize> ToolOutput for Structured<P> {
    type Answer = P;
    fn into_result(answer: P) -> Result<CallToolResult, ErrorObject> {
        serde_json::to_value(&answer)
            .map(CallToolResult::structured)
            .map_err(|e| ErrorObject::internal(format!("unserialisable tool output: {e}")))
    }
}

impl Tool {
    /// A tool named `name` whose input schema is derived from `A` and whose handler gets the
    /// arguments parsed into an `A`.
    pub fn typed<A: JsonSchema + DeserializeOwned>(name: impl Into<String>) -> TypedTool<A> {
        TypedTool {
            tool: Tool::new(name, input_schema_for::<A>()),
            types: PhantomData,
        }
    }
}

impl<A, O> TypedTool<A, O>
where
    A: DeserializeOwned + Send + 'static,
    O: ToolOutput + 'static,
{
    /// A human-readable title.
    pub fn title(self, title: impl Into<String>) -> Self {
        self.map(|t| t.title(title))
    }

    /// A description for the model.
    pub fn description(self, description: impl Into<String>) -> Self {
        self.map(|t| t.description(description))
    }

    /// Behaviour hints (`readOnlyHint`, `destructiveHint`, …).
    pub fn annotations(self, annotations: crate::model::ToolAnnotations) -> Self {
        self.map(|t| t.annotations(annotations))
    }

    /// Whether calls may run as tasks (see [`Tool::task_support`]).
    pub fn task_support(self, support: crate::tasks::TaskSupport) -> Self {
        self.map(|t| t.task_support(support))
    }

    /// The handler answers a `P`: `outputSchema` is derived from it, and each answer is
    /// returned as `structuredContent` (and as JSON text in the result's text block). A
    /// failure the model should see is then an `Err` (a JSON-RPC error); keep the
    /// [`CallToolResult`] answer for tools that report failures as `isError` results.
    pub fn output<P: JsonSchema + Serialize>(self) -> TypedTool<A, Structured<P>> {
        TypedTool {
            tool: self.tool.output_schema(output_schema_for::<P>()),
            types: PhantomData,
        }
    }

    /// Sets a sync handler taking the parsed arguments; gives the tool.
    pub fn sync_handler<F>(self, f: F) -> Tool
    where
        F: Fn(A, &RequestContext) -> Result<O::Answer, ErrorObject> + Send + Sync + 'static,
    {
        self.tool.sync_handler(move |call: ToolCall, ctx| {
            O::into_result(f(call.arguments.parse::<A>()?, ctx)?)
        })
    }

    /// Sets an async handler taking the parsed arguments; gives the tool.
    pub fn handler<F, Fut>(self, f: F) -> Tool
    where
        F: Fn(A, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O::Answer, ErrorObject>> + Send + 'static,
    {
        let f = Arc::new(f);
        self.tool.handler(move |call: ToolCall, ctx| {
            let parsed = call.arguments.parse::<A>();
            let f = Arc::clone(&f);
            async move { O::into_result(f(parsed?, ctx).await?) }
        })
    }

    fn map(self, f: impl FnOnce(Tool) -> Tool) -> Self {
        TypedTool {
            tool: f(self.tool),
            types: PhantomData,
        }
    }
}

/// A prompt being built whose arguments are an `A`. Made by [`Prompt::typed`]; setting the
/// handler gives the [`Prompt`].
pub struct TypedPrompt<A> {
    prompt: Prompt,
    types: PhantomData<fn(A)>,
}

impl Prompt {
    /// A prompt named `name` whose arguments are the properties of `A` (a struct of string
    /// fields; each field's doc comment is the argument's description, and the fields that
    /// are not `Option`s are required), parsed into an `A` for the handler.
    pub fn typed<A: JsonSchema + DeserializeOwned>(name: impl Into<String>) -> TypedPrompt<A> {
        let mut prompt = Prompt::new(name);
        let arguments = prompt_arguments(&input_schema_for::<A>());
        prompt.def.arguments = Some(arguments).filter(|a| !a.is_empty());
        TypedPrompt {
            prompt,
            types: PhantomData,
        }
    }
}

/// The prompt arguments an object schema declares.
fn prompt_arguments(schema: &Value) -> Vec<PromptArgument> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| PromptArgument {
            name: name.clone(),
            description: property
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
            required: Some(required.contains(&name.as_str())),
            ..PromptArgument::default()
        })
        .collect()
}

/// The prompt's string arguments parsed into an `A`; a mismatch is `-32602`.
fn parse_prompt_arguments<A: DeserializeOwned>(request: &PromptRequest) -> Result<A, ErrorObject> {
    let map: Map<String, Value> = request
        .arguments
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    serde_json::from_value(Value::Object(map))
        .map_err(|e| ErrorObject::invalid_params(format!("invalid prompt arguments: {e}")))
}

impl<A: DeserializeOwned + Send + 'static> TypedPrompt<A> {
    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.prompt = self.prompt.title(title);
        self
    }

    /// A description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.prompt = self.prompt.description(description);
        self
    }

    /// Sets a sync handler taking the parsed arguments; gives the prompt.
    pub fn sync_handler<F>(self, f: F) -> Prompt
    where
        F: Fn(A, &RequestContext) -> Result<GetPromptResult, ErrorObject> + Send + Sync + 'static,
    {
        self.prompt
            .sync_handler(move |request, ctx| f(parse_prompt_arguments(&request)?, ctx))
    }

    /// Sets an async handler taking the parsed arguments; gives the prompt.
    pub fn handler<F, Fut>(self, f: F) -> Prompt
    where
        F: Fn(A, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, ErrorObject>> + Send + 'static,
    {
        let f = Arc::new(f);
        self.prompt.handler(move |request, ctx| {
            let parsed = parse_prompt_arguments::<A>(&request);
            let f = Arc::clone(&f);
            async move { f(parsed?, ctx).await }
        })
    }
}
