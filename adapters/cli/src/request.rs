//! Turns a parsed client operation into the MCP request it stands for: method and params.

use mcp_sansio::jsonrpc;
use serde_json::{json, Map, Value};

use crate::args::{ClientOp, CompleteArgument, CompleteOp, PromptsOp, ResourcesOp, ToolsOp};

/// One MCP request to send. List operations follow `nextCursor` until the last page.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlannedRequest {
    pub(crate) method: &'static str,
    pub(crate) params: Option<Value>,
    /// True for the `*/list` methods: the client fetches every page.
    pub(crate) paginated: bool,
}

impl PlannedRequest {
    fn new(method: &'static str, params: Option<Value>) -> Self {
        Self {
            method,
            params,
            paginated: false,
        }
    }

    fn list(method: &'static str) -> Self {
        Self {
            method,
            params: None,
            paginated: true,
        }
    }
}

pub(crate) fn plan(op: &ClientOp) -> PlannedRequest {
    match op {
        ClientOp::Tools(ToolsOp::List) => PlannedRequest::list(jsonrpc::TOOLS_LIST),
        ClientOp::Tools(ToolsOp::Call { name, args }) => PlannedRequest::new(
            jsonrpc::TOOLS_CALL,
            Some(with_arguments(json!({ "name": name }), args)),
        ),
        ClientOp::Resources(ResourcesOp::List) => PlannedRequest::list(jsonrpc::RESOURCES_LIST),
        ClientOp::Resources(ResourcesOp::Read { uri }) => {
            PlannedRequest::new(jsonrpc::RESOURCES_READ, Some(json!({ "uri": uri })))
        }
        ClientOp::Resources(ResourcesOp::Templates) => {
            PlannedRequest::list(jsonrpc::RESOURCES_TEMPLATES_LIST)
        }
        ClientOp::Prompts(PromptsOp::List) => PlannedRequest::list(jsonrpc::PROMPTS_LIST),
        ClientOp::Prompts(PromptsOp::Get { name, args }) => PlannedRequest::new(
            jsonrpc::PROMPTS_GET,
            Some(with_arguments(json!({ "name": name }), args)),
        ),
        ClientOp::Complete(CompleteOp::Prompt { name, argument }) => {
            complete(json!({ "type": "ref/prompt", "name": name }), argument)
        }
        ClientOp::Complete(CompleteOp::Resource {
            uri_template,
            argument,
        }) => complete(
            json!({ "type": "ref/resource", "uri": uri_template }),
            argument,
        ),
        ClientOp::Ping => PlannedRequest::new(jsonrpc::PING, None),
        ClientOp::SetLevel { level } => PlannedRequest::new(
            jsonrpc::LOGGING_SET_LEVEL,
            Some(json!({ "level": level.as_str() })),
        ),
    }
}

fn with_arguments(mut params: Value, args: &Option<Map<String, Value>>) -> Value {
    if let (Some(args), Value::Object(map)) = (args, &mut params) {
        map.insert("arguments".into(), Value::Object(args.clone()));
    }
    params
}

fn complete(reference: Value, argument: &CompleteArgument) -> PlannedRequest {
    let mut params = json!({
        "ref": reference,
        "argument": { "name": argument.argument_name, "value": argument.value },
    });
    if let (Some(context), Value::Object(map)) = (&argument.context, &mut params) {
        map.insert("context".into(), json!({ "arguments": context }));
    }
    PlannedRequest::new(jsonrpc::COMPLETION_COMPLETE, Some(params))
}
