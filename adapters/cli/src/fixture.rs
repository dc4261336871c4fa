//! The reference server: the conformance suite's "everything" fixture
//! (docs/fixture.md) plus the interop extras (`test_slow`, list paging from
//! `MCP_SANSIO_PAGE_SIZE`). It only builds a `Server`; any adapter (stdio, HTTP) can run it.
//! Timers come from the caller through [`Sleep`], so the fixture stays runtime-agnostic.
//!
//! Build the definitions once with [`fixture_factory`]; per session, make the server with
//! [`fixture_server`] (it shares the definitions), then spawn [`extras`] (the timed reference
//! extras: late additions at 2 s, watched-resource updates every 3 s) on the session's executor
//! when it starts; it ends by itself once the session closed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_sansio::app::server::{
    completion_handler, CallToolResult, Completion, GetPromptResult, Prompt, RequestContext,
    Resource, ResourceContents, ResourceTemplate, Server, ServerFactory, Tool,
};
use mcp_sansio::config::Config;
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::model::LoggingLevel;
use mcp_sansio::model::{ContentBlock, Implementation};
use mcp_sansio::runtime::Job;
use serde_json::{json, Value};

#[path = "fixture_extras.rs"]
mod late;
pub(crate) use late::extras;
pub(crate) use stateless::share_state_key;
pub(crate) use tasks::table as task_table;
#[path = "fixture_stateless.rs"]
mod stateless;
#[path = "fixture_tasks.rs"]
mod tasks;

/// A timer of the caller's runtime: a future that resolves after the given duration.
pub(crate) type Sleep = Arc<dyn Fn(Duration) -> Job + Send + Sync>;

/// The 1x1 PNG of the fixture, base64.
pub(crate) const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// The short WAV clip of the fixture, base64.
pub(crate) const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// The pause between the log messages and progress steps of the fixture tools.
const STEP: Duration = Duration::from_millis(50);

/// The page size the environment asks for (`MCP_SANSIO_PAGE_SIZE`; unset, `0` or unparsable
/// keep the configured one).
pub(crate) fn page_size_from_env(config: &mut Config) {
    let asked = std::env::var("MCP_SANSIO_PAGE_SIZE").ok();
    if let Some(size) = asked.and_then(|s| s.trim().parse::<usize>().ok()) {
        if size > 0 {
            config.page_size = size;
        }
    }
}

/// One server (one session) of the reference fixture, sharing the definitions of `factory`.
pub(crate) fn fixture_server(factory: &ServerFactory, now: Instant) -> Server {
    let mut server = factory.server(now);
    server.handle_wall_clock(now, stateless::unix_ms());
    server
}

/// Builds the reference server's definitions (tools, resources, prompts, templates,
/// completion), once for every session.
pub(crate) fn fixture_factory(config: Config, sleep: Sleep) -> ServerFactory {
    let mut builder = Server::builder(Implementation::new(
        "mcp-sansio-reference-fixture",
        env!("CARGO_PKG_VERSION"),
    ))
    .config(config);
    for tool in tools(sleep.clone())
        .into_iter()
        .chain(tasks::tools(sleep))
        .chain(stateless::input_required_tools())
        .chain(stateless::diagnostic_tools())
    {
        builder = builder.tool(tool);
    }
    for resource in resources() {
        builder = builder.resource(resource);
    }
    for prompt in prompts() {
        builder = builder.prompt(prompt);
    }
    builder
        .prompt(stateless::input_required_prompt())
        .request_state_key(stateless::state_key())
        .request_state_replay_guard(stateless::replay_guard())
        .tasks(tasks::table())
        .resource_template(template_data())
        .completion(completion_handler(|_req, _ctx| async {
            Ok(Completion {
                values: Vec::new(),
                total: Some(0),
                has_more: Some(false),
                ..Default::default()
            })
        }))
        .build_factory()
}

fn no_input() -> Value {
    json!({"type": "object", "properties": {}})
}

fn content(blocks: Vec<Value>) -> CallToolResult {
    CallToolResult {
        content: blocks.into_iter().map(ContentBlock::Json).collect(),
        ..Default::default()
    }
}

fn image() -> Value {
    json!({"type": "image", "data": PNG, "mimeType": "image/png"})
}

/// Sleeps `duration` unless the request is cancelled first; true when the full time passed.
async fn pause(sleep: &Sleep, ctx: &RequestContext, duration: Duration) -> bool {
    let slept = async {
        sleep(duration).await;
        true
    };
    let cancelled = async {
        ctx.cancelled().await;
        false
    };
    smol::future::or(cancelled, slept).await
}

fn static_tool(name: &str, description: &str, result: CallToolResult) -> Tool {
    Tool::new(name, no_input())
        .description(description)
        .sync_handler(move |_call, _ctx| Ok(result.clone()))
}

fn tools(sleep: Sleep) -> Vec<Tool> {
    let mut tools = vec![
        static_tool(
            "test_simple_text",
            "Returns a simple text response",
            CallToolResult::text("This is a simple text response for testing."),
        ),
        static_tool(
            "test_image_content",
            "Returns a 1x1 PNG image",
            content(vec![image()]),
        ),
        static_tool(
            "test_audio_content",
            "Returns a short WAV audio clip",
            content(vec![
                json!({"type": "audio", "data": WAV, "mimeType": "audio/wav"}),
            ]),
        ),
        static_tool(
            "test_embedded_resource",
            "Returns an embedded text resource",
            content(vec![json!({"type": "resource", "resource": {
                "uri": "test://embedded-resource", "mimeType": "text/plain",
                "text": "This is an embedded resource content."}})]),
        ),
        static_tool(
            "test_multiple_content_types",
            "Returns text, image and resource content",
            content(vec![
                json!({"type": "text", "text": "Multiple content types test:"}),
                image(),
                json!({"type": "resource", "resource": {
                    "uri": "test://mixed-content-resource", "mimeType": "application/json",
                    "text": "{\"test\":\"data\",\"value\":123}"}}),
            ]),
        ),
        static_tool(
            "test_error_handling",
            "Returns a tool error result",
            CallToolResult::error("This tool intentionally returns an error for testing"),
        ),
        Tool::new("json_schema_2020_12_tool", json_schema_2020_12())
            .description("Has a JSON Schema 2020-12 input schema")
            .sync_handler(|call, _ctx| {
                Ok(CallToolResult::text(format!(
                    "JSON Schema 2020-12 tool called with: {}",
                    Value::Object(call.arguments.into_map())
                )))
            }),
    ];
    tools.push(reconnection_tool(sleep.clone()));
    tools.extend(timed_tools(sleep));
    tools.extend(client_request_tools());
    tools
}

/// `test_reconnection` (SEP-1699): over HTTP on a 2025-11-25 session, ends its SSE response
/// stream right after the priming event, waits a moment, then answers; the client gets the
/// result by resuming with `Last-Event-ID`. Elsewhere the close is a no-op.
fn reconnection_tool(sleep: Sleep) -> Tool {
    Tool::new("test_reconnection", no_input())
        .description("Closes its SSE stream before the result (the client resumes)")
        .handler(move |_call, ctx| {
            let sleep = sleep.clone();
            async move {
                ctx.close_sse_stream();
                pause(&sleep, &ctx, 2 * STEP).await;
                Ok(CallToolResult::text("Reconnection test completed"))
            }
        })
}

/// The tools that wait: logging and progress with pauses, and `test_slow`.
fn timed_tools(sleep: Sleep) -> Vec<Tool> {
    let logging_sleep = sleep.clone();
    let progress_sleep = sleep.clone();
    vec![
        Tool::new("test_tool_with_logging", no_input())
            .description("Sends three log messages during execution")
            .handler(move |_call, ctx| {
                let sleep = logging_sleep.clone();
                async move {
                    let log = |text: &str| {
                        ctx.log(
                            LoggingLevel::Info,
                            Some("test_tool_with_logging"),
                            json!(text),
                        )
                    };
                    log("Tool execution started");
                    if pause(&sleep, &ctx, STEP).await {
                        log("Tool processing data");
                    }
                    if pause(&sleep, &ctx, STEP).await {
                        log("Tool execution completed");
                    }
                    Ok(CallToolResult::text(
                        "Tool with logging executed successfully",
                    ))
                }
            }),
        Tool::new("test_tool_with_progress", no_input())
            .description("Sends three progress notifications")
            .handler(move |_call, ctx| {
                let sleep = progress_sleep.clone();
                async move {
                    for step in [0.0, 50.0, 100.0] {
                        ctx.progress(step, Some(100.0), None);
                        if step < 100.0 && !pause(&sleep, &ctx, STEP).await {
                            break;
                        }
                    }
                    Ok(CallToolResult::text("Progress reported"))
                }
            }),
        Tool::new(
            "test_slow",
            json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}},
                   "required": ["ms"]}),
        )
        .description("Sleeps for `ms` milliseconds; stops early when cancelled")
        .handler(move |call, ctx| {
            let sleep = sleep.clone();
            async move {
                let ms = call
                    .arguments
                    .get("ms")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| {
                        ErrorObject::invalid_params(
                            "test_slow: `ms` must be a non-negative integer",
                        )
                    })?;
                if pause(&sleep, &ctx, Duration::from_millis(ms)).await {
                    Ok(CallToolResult::text(format!("Slept {ms} ms")))
                } else {
                    // The session suppresses the response of a cancelled request.
                    Ok(CallToolResult::error("Cancelled"))
                }
            }
        }),
    ]
}

/// The tools that ask the client something: sampling and the elicitations.
fn client_request_tools() -> Vec<Tool> {
    let string_arg = |name: &str| json!({"type": "object", "properties": {name: {"type": "string"}}, "required": [name]});
    vec![
        Tool::new("test_sampling", string_arg("prompt"))
            .description("Asks the client to sample an LLM completion")
            .handler(|call, ctx| async move {
                let prompt = call.arguments.get("prompt").cloned().unwrap_or(json!(""));
                let result = ctx
                    .sample(json!({
                        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                        "maxTokens": 100,
                    }))
                    .await;
                Ok(match result {
                    Ok(result) => CallToolResult::text(format!(
                        "LLM response: {}",
                        sampled_text(&result)
                    )),
                    Err(error) => CallToolResult::error(format!("Sampling failed: {error}")),
                })
            }),
        Tool::new("test_elicitation", string_arg("message"))
            .description("Asks the client to elicit user input")
            .handler(|call, ctx| async move {
                let message = call.arguments.get("message").cloned().unwrap_or(json!(""));
                let schema = json!({"type": "object",
                    "properties": {"response": {"type": "string", "description": "User's response"}},
                    "required": ["response"]});
                elicit(&ctx, message, schema, "User response").await
            }),
        Tool::new("test_elicitation_sep1034_defaults", no_input())
            .description("Elicits a form whose fields carry defaults")
            .handler(|_call, ctx| async move {
                let message = json!("Please review and update the form fields with defaults");
                elicit(&ctx, message, sep1034_schema(), "Elicitation completed").await
            }),
        Tool::new("test_elicitation_sep1330_enums", no_input())
            .description("Elicits a form with every enum shape")
            .handler(|_call, ctx| async move {
                let message = json!("Please select options from the enum fields");
                elicit(&ctx, message, sep1330_schema(), "Elicitation completed").await
            }),
    ]
}

/// The text of a `sampling/createMessage` result (its content may be one block or a list).
fn sampled_text(result: &Value) -> String {
    let content = match &result["content"] {
        Value::Array(blocks) => blocks.first().cloned().unwrap_or(Value::Null),
        block => block.clone(),
    };
    match content["text"].as_str() {
        Some(text) if content["type"] == "text" => text.to_owned(),
        _ => content.to_string(),
    }
}

async fn elicit(
    ctx: &RequestContext,
    message: Value,
    schema: Value,
    label: &str,
) -> Result<CallToolResult, ErrorObject> {
    let result = ctx
        .elicit(json!({"message": message, "requestedSchema": schema}))
        .await;
    Ok(match result {
        Ok(result) => {
            let action = result["action"].as_str().unwrap_or("unknown");
            let content = match &result["content"] {
                Value::Null => json!({}),
                other => other.clone(),
            };
            CallToolResult::text(format!("{label}: action={action}, content={content}"))
        }
        Err(error) => CallToolResult::error(format!("Elicitation failed: {error}")),
    })
}

/// SEP-1613's keywords plus SEP-2106's (an `$anchor` in `$defs`, `allOf`/`anyOf`,
/// `if`/`then`/`else`), which tools/list must pass through untouched.
fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {
            "street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false,
    })
}

fn sep1034_schema() -> Value {
    json!({"type": "object", "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {"type": "string", "description": "User status",
                   "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "description": "Verification status", "default": true},
    }, "required": []})
}

fn sep1330_schema() -> Value {
    let titled = |values: [(&str, &str); 3]| -> Value {
        values
            .iter()
            .map(|(value, title)| json!({"const": value, "title": title}))
            .collect()
    };
    json!({"type": "object", "properties": {
        "untitledSingle": {"type": "string", "description": "Select one option",
                           "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "description": "Select one titled option",
            "oneOf": titled([("value1", "First Option"), ("value2", "Second Option"),
                             ("value3", "Third Option")])},
        "legacyEnum": {"type": "string", "description": "Select one (legacy)",
                       "enum": ["opt1", "opt2", "opt3"],
                       "enumNames": ["Option One", "Option Two", "Option Three"]},
        "untitledMulti": {"type": "array", "description": "Select several options",
            "minItems": 1, "maxItems": 3,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {"type": "array", "description": "Select several titled options",
            "minItems": 1, "maxItems": 3,
            "items": {"anyOf": titled([("value1", "First Choice"), ("value2", "Second Choice"),
                                       ("value3", "Third Choice")])}},
    }, "required": []})
}

fn text_resource(uri: &str, name: &str, title: &str, description: &str, text: &str) -> Resource {
    let text = text.to_owned();
    Resource::new(uri, name)
        .title(title)
        .description(description)
        .mime_type("text/plain")
        .sync_handler(move |read, _ctx| {
            Ok(vec![
                ResourceContents::text(read.uri, text.clone()).mime_type("text/plain")
            ])
        })
}

fn resources() -> Vec<Resource> {
    vec![
        text_resource(
            "test://static-text",
            "static-text",
            "Static text",
            "A static text resource",
            "This is the content of the static text resource.",
        ),
        Resource::new("test://static-binary", "static-binary")
            .title("Static binary")
            .description("A static PNG resource")
            .mime_type("image/png")
            .sync_handler(|read, _ctx| {
                Ok(vec![
                    ResourceContents::blob(read.uri, PNG).mime_type("image/png")
                ])
            }),
        text_resource(
            "test://watched-resource",
            "watched-resource",
            "Watched resource",
            "A resource that can be subscribed to",
            "Watched resource content",
        ),
    ]
}

fn template_data() -> ResourceTemplate {
    ResourceTemplate::new("test://template/{id}/data", "template-data")
        .expect("a level-1 URI template")
        .title("Template data")
        .description("Data for an id")
        .mime_type("application/json")
        .sync_handler(|read, _ctx| {
            let id = read.variable("id").unwrap_or_default().to_owned();
            let text =
                json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
            Ok(vec![
                ResourceContents::text(read.uri, text.to_string()).mime_type("application/json")
            ])
        })
}

fn user(content: Value) -> Value {
    json!({"role": "user", "content": content})
}

/// A `prompts/get` result of these wire-form messages.
fn messages(messages: Vec<Value>) -> Result<GetPromptResult, ErrorObject> {
    serde_json::from_value(json!({ "messages": messages }))
        .map_err(|e| ErrorObject::internal(e.to_string()))
}

fn prompts() -> Vec<Prompt> {
    vec![
        Prompt::new("test_simple_prompt")
            .description("A prompt without arguments")
            .sync_handler(|_req, _ctx| {
                messages(vec![user(
                    json!({"type": "text", "text": "This is a simple prompt for testing."}),
                )])
            }),
        Prompt::new("test_prompt_with_arguments")
            .description("A prompt with two required arguments")
            .argument("arg1", true)
            .argument("arg2", true)
            .sync_handler(|req, _ctx| {
                let arg = |name: &str| req.arguments.get(name).cloned().unwrap_or_default();
                let text = format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    arg("arg1"),
                    arg("arg2")
                );
                messages(vec![user(json!({"type": "text", "text": text}))])
            }),
        Prompt::new("test_prompt_with_embedded_resource")
            .description("A prompt that embeds a resource")
            .argument("resourceUri", true)
            .sync_handler(|req, _ctx| {
                let uri = req.arguments.get("resourceUri").cloned().unwrap_or_default();
                messages(vec![
                    user(json!({"type": "resource", "resource": {"uri": uri,
                        "mimeType": "text/plain", "text": "Embedded resource content for testing."}})),
                    user(
                        json!({"type": "text", "text": "Please process the embedded resource above."}),
                    ),
                ])
            }),
        Prompt::new("test_prompt_with_image")
            .description("A prompt with an image")
            .sync_handler(|_req, _ctx| {
                messages(vec![
                    user(image()),
                    user(json!({"type": "text", "text": "Please analyze the image above."})),
                ])
            }),
    ]
}
