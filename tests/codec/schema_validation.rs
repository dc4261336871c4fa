//! Every request, result and notification the model can build, wrapped in its JSON-RPC
//! envelope and validated against the official MCP schema of every revision that has the
//! method (draft-07 `definitions` up to 2025-06-18, 2020-12 `$defs` in 2025-11-25).
//!
//! The schemas are copied into `tests/schema/<version>/schema.json` (or read from
//! `$MCP_SCHEMA_DIR`). A missing file fails the test: it must not pass vacuously.

use mcp_sansio::jsonrpc::{self, RawJson, RequestId};
use mcp_sansio::model::*;
use mcp_sansio::testing::{MethodDirection, MethodInfo, MethodKind, METHODS};
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::schema_defs::{direction_of, schema_dir, DefValidators};

/// A file the schema directory must hold.
const SCHEMA_PROBE: &str = "2025-11-25/schema.json";

use ProtocolVersion::{V2024_11_05 as V1, V2025_03_26 as V2, V2025_06_18 as V3, V2025_11_25 as V4};

/// One revision's schema and the validators built from it so far.
struct Schema {
    version: ProtocolVersion,
    root: Value,
    defs_key: &'static str,
    validators: DefValidators,
    validated: usize,
}

impl Schema {
    fn load(version: ProtocolVersion) -> Schema {
        let path = schema_dir(SCHEMA_PROBE)
            .join(version.schema_dir())
            .join("schema.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let root: Value = serde_json::from_str(&text).unwrap();
        let defs_key = if root.get("$defs").is_some() {
            "$defs"
        } else {
            "definitions"
        };
        Schema {
            version,
            root,
            defs_key,
            validators: DefValidators::default(),
            validated: 0,
        }
    }

    /// Whether `instance` matches definition `def`.
    fn check(&mut self, def: &str, instance: &Value) -> Result<(), String> {
        let (root, defs_key) = (&self.root, self.defs_key);
        assert!(
            root[defs_key].get(def).is_some(),
            "{} has no definition {def}",
            self.version
        );
        self.validators.check(root, defs_key, def, instance)
    }

    fn expect_valid(&mut self, def: &str, instance: &Value) {
        if let Err(e) = self.check(def, instance) {
            panic!("{} {def}: {instance}\n  {e}", self.version);
        }
        self.validated += 1;
    }

    fn expect_invalid(&mut self, def: &str, instance: &Value) {
        assert!(
            self.check(def, instance).is_err(),
            "{} {def} accepted {instance}",
            self.version
        );
    }

    fn result_envelope(&self) -> &'static str {
        if self.version >= V4 {
            "JSONRPCResultResponse"
        } else {
            "JSONRPCResponse"
        }
    }
}

fn raw<T: Serialize>(value: &T) -> RawJson {
    RawJson::from_serialize(value).unwrap()
}

fn obj(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        _ => unreachable!(),
    }
}

fn meta() -> Option<Map<String, Value>> {
    Some(obj(
        json!({"progressToken": "p-1", "vendor.example/trace": "abc"}),
    ))
}

// ---- representative payloads, built with the typed structs, per revision ----

fn text(v: ProtocolVersion) -> TextContent {
    TextContent {
        text: "hello".into(),
        annotations: Some(Annotations {
            audience: Some(vec![Role::User, Role::Assistant]),
            priority: Some(serde_json::Number::from_f64(0.5).unwrap()),
            last_modified: (v >= V3).then(|| "2025-01-01T00:00:00Z".into()),
            extra: Map::new(),
        }),
        meta: if v >= V3 { meta() } else { None },
        extra: Map::new(),
    }
}

fn media() -> MediaContent {
    MediaContent {
        data: "AAEC".into(),
        mime_type: "image/png".into(),
        ..Default::default()
    }
}

fn resource(v: ProtocolVersion) -> Resource {
    Resource {
        uri: "file:///project/readme.md".into(),
        name: "readme".into(),
        title: (v >= V3).then(|| "Read me".into()),
        description: Some("the readme".into()),
        mime_type: Some("text/markdown".into()),
        size: Some(42),
        annotations: Some(Annotations {
            priority: Some(1.into()),
            ..Default::default()
        }),
        icons: (v >= V4).then(|| {
            vec![Icon {
                src: "https://example.com/i.png".into(),
                ..Default::default()
            }]
        }),
        meta: if v >= V3 { meta() } else { None },
        extra: Map::new(),
    }
}

fn content_blocks(v: ProtocolVersion) -> Vec<ContentBlock> {
    let mut blocks = vec![
        ContentBlock::Text(text(v)),
        ContentBlock::Image(media()),
        ContentBlock::Resource(EmbeddedResource {
            resource: ResourceContents::text("file:///a.txt", "abc"),
            annotations: None,
            meta: None,
            extra: Map::new(),
        }),
        ContentBlock::Resource(EmbeddedResource {
            resource: ResourceContents::blob("file:///a.bin", "AAEC"),
            annotations: None,
            meta: None,
            extra: Map::new(),
        }),
    ];
    if v >= V2 {
        blocks.push(ContentBlock::Audio(MediaContent {
            mime_type: "audio/wav".into(),
            ..media()
        }));
    }
    if v >= V3 {
        blocks.push(ContentBlock::ResourceLink(resource(v)));
    }
    blocks
}

fn tool(v: ProtocolVersion) -> Tool {
    let mut tool = Tool::new("add", r#"{"type":"object","properties":{"b":{"type":"number"},"a":{"type":"number"}},"required":["a","b"]}"#).unwrap();
    tool.description = Some("adds two numbers".into());
    if v >= V2 {
        tool.annotations = Some(ToolAnnotations {
            read_only_hint: Some(true),
            ..Default::default()
        });
    }
    if v >= V3 {
        tool.title = Some("Add".into());
        tool.output_schema = Some(
            RawJson::from_text(r#"{"type":"object","properties":{"sum":{"type":"number"}}}"#)
                .unwrap(),
        );
        tool.meta = meta();
    }
    if v >= V4 {
        tool.execution = Some(ToolExecution {
            task_support: Some(TaskSupport::Optional),
            extra: Map::new(),
        });
    }
    tool
}

fn task() -> Task {
    Task {
        task_id: "task-1".into(),
        status: TaskStatus::Working,
        status_message: Some("running".into()),
        created_at: "2025-11-25T10:00:00Z".into(),
        last_updated_at: "2025-11-25T10:00:01Z".into(),
        ttl: Some(60_000),
        poll_interval: Some(1000),
        extra: Map::new(),
    }
}

fn sampling_message(v: ProtocolVersion) -> Vec<SamplingMessage> {
    let mut messages = vec![SamplingMessage {
        role: Role::User,
        content: SamplingContentList::One(SamplingContent::Text(text(v))),
        meta: None,
        extra: Map::new(),
    }];
    if v >= V4 {
        messages.push(SamplingMessage {
            role: Role::Assistant,
            content: SamplingContentList::Many(vec![SamplingContent::ToolUse(ToolUseContent {
                id: "use-1".into(),
                name: "add".into(),
                input: obj(json!({"a": 1, "b": 2})),
                ..Default::default()
            })]),
            meta: None,
            extra: Map::new(),
        });
        messages.push(SamplingMessage {
            role: Role::User,
            content: SamplingContentList::Many(vec![SamplingContent::ToolResult(
                ToolResultContent {
                    tool_use_id: "use-1".into(),
                    content: vec![ContentBlock::text("3")],
                    structured_content: Some(obj(json!({"sum": 3}))),
                    is_error: Some(false),
                    ..Default::default()
                },
            )]),
            meta: None,
            extra: Map::new(),
        });
    }
    messages
}

fn form_schema() -> RawJson {
    RawJson::from_text(r#"{"type":"object","properties":{"name":{"type":"string","title":"Name"},"age":{"type":"integer","minimum":0},"ok":{"type":"boolean"}},"required":["name"]}"#).unwrap()
}

type Params = Vec<Option<RawJson>>;
type Results = Vec<(&'static str, RawJson)>;

fn paginated() -> Params {
    vec![
        None,
        Some(raw(&json!({"cursor": "page-2", "_meta": meta()}))),
    ]
}

fn empty_result() -> Results {
    vec![
        ("EmptyResult", raw(&json!({}))),
        ("EmptyResult", raw(&json!({"_meta": meta()}))),
    ]
}

/// Params examples of `method` in `v` (requests and notifications).
fn params_for(method: &str, v: ProtocolVersion) -> Params {
    match method {
        jsonrpc::INITIALIZE => vec![Some(raw(&InitializeParams {
            protocol_version: v.as_str().into(),
            capabilities: serde_json::from_value(
                json!({"roots": {"listChanged": true}, "sampling": {}}),
            )
            .unwrap(),
            client_info: Implementation::new("client", "1.0"),
            meta: None,
            extra: Map::new(),
        }))],
        jsonrpc::PING | jsonrpc::ROOTS_LIST => vec![None, Some(raw(&json!({"_meta": meta()})))],
        jsonrpc::NOTIFICATIONS_INITIALIZED
        | jsonrpc::NOTIFICATIONS_RESOURCES_LIST_CHANGED
        | jsonrpc::NOTIFICATIONS_TOOLS_LIST_CHANGED
        | jsonrpc::NOTIFICATIONS_PROMPTS_LIST_CHANGED
        | jsonrpc::NOTIFICATIONS_ROOTS_LIST_CHANGED => {
            vec![None, Some(raw(&json!({"_meta": {"k": 1}})))]
        }
        jsonrpc::TOOLS_LIST
        | jsonrpc::RESOURCES_LIST
        | jsonrpc::RESOURCES_TEMPLATES_LIST
        | jsonrpc::PROMPTS_LIST
        | jsonrpc::TASKS_LIST => paginated(),
        jsonrpc::TOOLS_CALL => vec![Some(raw(&CallToolParams {
            name: "add".into(),
            arguments: Some(obj(json!({"a": 1, "b": 2}))),
            task: (v >= V4).then(|| TaskMetadata {
                ttl: Some(60_000),
                extra: Map::new(),
            }),
            meta: meta(),
            extra: Map::new(),
        }))],
        jsonrpc::RESOURCES_READ
        | jsonrpc::RESOURCES_SUBSCRIBE
        | jsonrpc::RESOURCES_UNSUBSCRIBE
        | jsonrpc::NOTIFICATIONS_RESOURCES_UPDATED => {
            vec![Some(raw(&json!({"uri": "file:///project/readme.md"})))]
        }
        jsonrpc::PROMPTS_GET => vec![Some(raw(&GetPromptParams {
            name: "review".into(),
            arguments: Some(obj(json!({"code": "fn main() {}"}))),
            meta: meta(),
            extra: Map::new(),
        }))],
        jsonrpc::COMPLETION_COMPLETE => {
            let context = (v >= V3).then(|| CompletionContext {
                arguments: Some(obj(json!({"language": "rust"}))),
                extra: Map::new(),
            });
            let prompt = CompleteParams {
                reference: CompletionReference::Prompt(PromptReference {
                    name: "review".into(),
                    ..Default::default()
                }),
                argument: CompletionArgument {
                    name: "code".into(),
                    value: "fn".into(),
                    extra: Map::new(),
                },
                context,
                meta: None,
                extra: Map::new(),
            };
            let resource = CompleteParams {
                reference: CompletionReference::Resource(ResourceTemplateReference {
                    uri: "file:///{path}".into(),
                    extra: Map::new(),
                }),
                ..prompt.clone()
            };
            vec![Some(raw(&prompt)), Some(raw(&resource))]
        }
        jsonrpc::LOGGING_SET_LEVEL => vec![Some(raw(&SetLevelParams {
            level: LoggingLevel::Warning,
            meta: None,
            extra: Map::new(),
        }))],
        jsonrpc::NOTIFICATIONS_MESSAGE => vec![Some(raw(&LoggingMessageParams {
            level: LoggingLevel::Error,
            logger: Some("db".into()),
            data: json!({"error": "gone", "code": 3}),
            meta: None,
            extra: Map::new(),
        }))],
        jsonrpc::SAMPLING_CREATE_MESSAGE => vec![Some(raw(&CreateMessageParams {
            messages: sampling_message(v),
            model_preferences: Some(ModelPreferences {
                hints: Some(vec![ModelHint {
                    name: Some("claude".into()),
                    extra: Map::new(),
                }]),
                cost_priority: Some(serde_json::Number::from_f64(0.3).unwrap()),
                speed_priority: Some(1.into()),
                intelligence_priority: None,
                extra: Map::new(),
            }),
            system_prompt: Some("be brief".into()),
            include_context: Some(IncludeContext::None),
            temperature: Some(serde_json::Number::from_f64(0.7).unwrap()),
            max_tokens: 100,
            stop_sequences: Some(vec!["END".into()]),
            metadata: Some(obj(json!({"provider": {"x": 1}}))),
            tools: (v >= V4).then(|| vec![tool(v)]),
            tool_choice: (v >= V4).then(|| ToolChoice {
                mode: Some(ToolChoiceMode::Auto),
                extra: Map::new(),
            }),
            task: None,
            meta: meta(),
            extra: Map::new(),
        }))],
        jsonrpc::ELICITATION_CREATE => {
            let mut out = vec![Some(raw(&ElicitParams::form(
                "Who are you?",
                form_schema(),
            )))];
            if v >= V4 {
                out.push(Some(raw(&ElicitParams::url(
                    "Sign in",
                    "https://example.com/auth?s=1",
                    "elic-1",
                ))));
            }
            out
        }
        jsonrpc::NOTIFICATIONS_ELICITATION_COMPLETE => {
            vec![Some(raw(&ElicitationCompleteParams {
                elicitation_id: "elic-1".into(),
                ..Default::default()
            }))]
        }
        jsonrpc::NOTIFICATIONS_CANCELLED => vec![Some(raw(&CancelledParams {
            request_id: Some(RequestId::number(7)),
            reason: Some("user abort".into()),
            ..Default::default()
        }))],
        jsonrpc::NOTIFICATIONS_PROGRESS => vec![Some(raw(&ProgressParams {
            progress_token: RequestId::string("p-1"),
            progress: 50.into(),
            total: Some(100.into()),
            message: (v >= V2).then(|| "half way".into()),
            meta: None,
            extra: Map::new(),
        }))],
        jsonrpc::TASKS_GET | jsonrpc::TASKS_RESULT | jsonrpc::TASKS_CANCEL => {
            vec![Some(raw(&json!({"taskId": "task-1"})))]
        }
        jsonrpc::NOTIFICATIONS_TASKS_STATUS => vec![Some(raw(&TaskResult {
            task: task(),
            meta: meta(),
        }))],
        other => panic!("no params example for {other}"),
    }
}

/// Result examples of request `method` in `v`, with the definition each must match.
fn results_for(method: &str, v: ProtocolVersion) -> Results {
    match method {
        jsonrpc::INITIALIZE => vec![(
            "InitializeResult",
            raw(&InitializeResult {
                protocol_version: v.as_str().into(),
                capabilities: serde_json::from_value(
                    json!({"tools": {"listChanged": true}, "logging": {}}),
                )
                .unwrap(),
                server_info: Implementation::new("server", "1.0"),
                instructions: Some("use the tools".into()),
                meta: None,
                extra: Map::new(),
            }),
        )],
        jsonrpc::PING
        | jsonrpc::RESOURCES_SUBSCRIBE
        | jsonrpc::RESOURCES_UNSUBSCRIBE
        | jsonrpc::LOGGING_SET_LEVEL => empty_result(),
        jsonrpc::TOOLS_LIST => vec![(
            "ListToolsResult",
            raw(&ListToolsResult {
                tools: vec![tool(v)],
                next_cursor: Some("page-2".into()),
                meta: meta(),
                extra: Map::new(),
            }),
        )],
        jsonrpc::TOOLS_CALL => {
            let mut out = vec![(
                "CallToolResult",
                raw(&CallToolResult {
                    content: content_blocks(v),
                    structured_content: (v >= V3).then(|| json!({"sum": 3})),
                    is_error: Some(false),
                    meta: meta(),
                    extra: Map::new(),
                }),
            )];
            if v >= V4 {
                out.push((
                    "CreateTaskResult",
                    raw(&CreateTaskResult {
                        task: task(),
                        meta: None,
                        extra: Map::new(),
                    }),
                ));
            }
            out
        }
        jsonrpc::RESOURCES_LIST => vec![(
            "ListResourcesResult",
            raw(&ListResourcesResult {
                resources: vec![resource(v)],
                next_cursor: None,
                meta: None,
                extra: Map::new(),
            }),
        )],
        jsonrpc::RESOURCES_TEMPLATES_LIST => vec![(
            "ListResourceTemplatesResult",
            raw(&ListResourceTemplatesResult {
                resource_templates: vec![ResourceTemplate {
                    uri_template: "file:///{path}".into(),
                    name: "files".into(),
                    title: (v >= V3).then(|| "Files".into()),
                    mime_type: Some("text/plain".into()),
                    ..Default::default()
                }],
                ..Default::default()
            }),
        )],
        jsonrpc::RESOURCES_READ => vec![(
            "ReadResourceResult",
            raw(&ReadResourceResult {
                contents: vec![
                    ResourceContents::text("file:///a.txt", "abc"),
                    ResourceContents::blob("file:///a.bin", "AAEC"),
                ],
                ..Default::default()
            }),
        )],
        jsonrpc::PROMPTS_LIST => vec![(
            "ListPromptsResult",
            raw(&ListPromptsResult {
                prompts: vec![Prompt {
                    name: "review".into(),
                    description: Some("review code".into()),
                    arguments: Some(vec![PromptArgument {
                        name: "code".into(),
                        required: Some(true),
                        ..Default::default()
                    }]),
                    ..Default::default()
                }],
                next_cursor: Some("n".into()),
                ..Default::default()
            }),
        )],
        jsonrpc::PROMPTS_GET => vec![(
            "GetPromptResult",
            raw(&GetPromptResult {
                description: Some("review".into()),
                messages: content_blocks(v)
                    .into_iter()
                    .map(|content| PromptMessage {
                        role: Role::User,
                        content,
                        extra: Map::new(),
                    })
                    .collect(),
                ..Default::default()
            }),
        )],
        jsonrpc::COMPLETION_COMPLETE => vec![(
            "CompleteResult",
            raw(&CompleteResult {
                completion: Completion {
                    values: vec!["fn".into(), "for".into()],
                    total: Some(2),
                    has_more: Some(false),
                    extra: Map::new(),
                },
                ..Default::default()
            }),
        )],
        jsonrpc::SAMPLING_CREATE_MESSAGE => {
            let mut out = vec![(
                "CreateMessageResult",
                raw(&CreateMessageResult {
                    role: Role::Assistant,
                    content: SamplingContentList::One(SamplingContent::text("hi")),
                    model: "model-1".into(),
                    stop_reason: Some("endTurn".into()),
                    meta: None,
                    extra: Map::new(),
                }),
            )];
            if v >= V4 {
                out.push((
                    "CreateMessageResult",
                    raw(&CreateMessageResult {
                        role: Role::Assistant,
                        content: SamplingContentList::Many(vec![SamplingContent::ToolUse(
                            ToolUseContent {
                                id: "use-2".into(),
                                name: "add".into(),
                                input: obj(json!({"a": 2, "b": 2})),
                                ..Default::default()
                            },
                        )]),
                        model: "model-1".into(),
                        stop_reason: Some("toolUse".into()),
                        meta: None,
                        extra: Map::new(),
                    }),
                ));
            }
            out
        }
        jsonrpc::ELICITATION_CREATE => vec![
            (
                "ElicitResult",
                raw(&ElicitResult {
                    action: ElicitAction::Accept,
                    content: Some(obj(json!({"name": "Ann", "age": 30, "ok": true}))),
                    meta: None,
                    extra: Map::new(),
                }),
            ),
            (
                "ElicitResult",
                raw(&ElicitResult {
                    action: ElicitAction::Decline,
                    content: None,
                    meta: None,
                    extra: Map::new(),
                }),
            ),
        ],
        jsonrpc::ROOTS_LIST => vec![(
            "ListRootsResult",
            raw(&ListRootsResult {
                roots: vec![Root {
                    uri: "file:///project".into(),
                    name: Some("project".into()),
                    ..Default::default()
                }],
                ..Default::default()
            }),
        )],
        jsonrpc::TASKS_GET => vec![(
            "GetTaskResult",
            raw(&TaskResult {
                task: task(),
                meta: None,
            }),
        )],
        jsonrpc::TASKS_CANCEL => vec![(
            "CancelTaskResult",
            raw(&TaskResult {
                task: Task {
                    status: TaskStatus::Cancelled,
                    ttl: None,
                    ..task()
                },
                meta: meta(),
            }),
        )],
        jsonrpc::TASKS_RESULT => vec![(
            "GetTaskPayloadResult",
            raw(&CallToolResult {
                content: vec![ContentBlock::text("3")],
                ..Default::default()
            }),
        )],
        jsonrpc::TASKS_LIST => vec![(
            "ListTasksResult",
            raw(&ListTasksResult {
                tasks: vec![task()],
                next_cursor: Some("n".into()),
                ..Default::default()
            }),
        )],
        other => panic!("no result example for {other}"),
    }
}

/// The schema definition of a method's request or notification envelope.
fn message_def(method: &str) -> &'static str {
    match method {
        jsonrpc::INITIALIZE => "InitializeRequest",
        jsonrpc::PING => "PingRequest",
        jsonrpc::TOOLS_LIST => "ListToolsRequest",
        jsonrpc::TOOLS_CALL => "CallToolRequest",
        jsonrpc::RESOURCES_LIST => "ListResourcesRequest",
        jsonrpc::RESOURCES_TEMPLATES_LIST => "ListResourceTemplatesRequest",
        jsonrpc::RESOURCES_READ => "ReadResourceRequest",
        jsonrpc::RESOURCES_SUBSCRIBE => "SubscribeRequest",
        jsonrpc::RESOURCES_UNSUBSCRIBE => "UnsubscribeRequest",
        jsonrpc::PROMPTS_LIST => "ListPromptsRequest",
        jsonrpc::PROMPTS_GET => "GetPromptRequest",
        jsonrpc::COMPLETION_COMPLETE => "CompleteRequest",
        jsonrpc::LOGGING_SET_LEVEL => "SetLevelRequest",
        jsonrpc::SAMPLING_CREATE_MESSAGE => "CreateMessageRequest",
        jsonrpc::ELICITATION_CREATE => "ElicitRequest",
        jsonrpc::ROOTS_LIST => "ListRootsRequest",
        jsonrpc::TASKS_GET => "GetTaskRequest",
        jsonrpc::TASKS_RESULT => "GetTaskPayloadRequest",
        jsonrpc::TASKS_LIST => "ListTasksRequest",
        jsonrpc::TASKS_CANCEL => "CancelTaskRequest",
        jsonrpc::NOTIFICATIONS_INITIALIZED => "InitializedNotification",
        jsonrpc::NOTIFICATIONS_CANCELLED => "CancelledNotification",
        jsonrpc::NOTIFICATIONS_PROGRESS => "ProgressNotification",
        jsonrpc::NOTIFICATIONS_MESSAGE => "LoggingMessageNotification",
        jsonrpc::NOTIFICATIONS_RESOURCES_UPDATED => "ResourceUpdatedNotification",
        jsonrpc::NOTIFICATIONS_RESOURCES_LIST_CHANGED => "ResourceListChangedNotification",
        jsonrpc::NOTIFICATIONS_TOOLS_LIST_CHANGED => "ToolListChangedNotification",
        jsonrpc::NOTIFICATIONS_PROMPTS_LIST_CHANGED => "PromptListChangedNotification",
        jsonrpc::NOTIFICATIONS_ROOTS_LIST_CHANGED => "RootsListChangedNotification",
        jsonrpc::NOTIFICATIONS_ELICITATION_COMPLETE => "ElicitationCompleteNotification",
        jsonrpc::NOTIFICATIONS_TASKS_STATUS => "TaskStatusNotification",
        // 2026-07-28 (checked against its schema in tests/stateless_schema.rs).
        jsonrpc::SERVER_DISCOVER => "DiscoverRequest",
        jsonrpc::SUBSCRIPTIONS_LISTEN => "SubscriptionsListenRequest",
        jsonrpc::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED => {
            "SubscriptionsAcknowledgedNotification"
        }
        other => panic!("no schema definition for {other}"),
    }
}

fn to_value(buf: &[u8]) -> Value {
    serde_json::from_slice(buf).unwrap()
}

/// Decodes `value` with the typed struct for `def` and encodes it again; must be lossless.
fn typed_round_trip(def: &str, value: &Value) {
    fn again<T: serde::de::DeserializeOwned + Serialize>(value: &Value) -> Value {
        let typed: T = serde_json::from_value(value.clone()).unwrap();
        serde_json::to_value(&typed).unwrap()
    }
    let back = match def {
        "InitializeRequest" => again::<InitializeParams>(value),
        "InitializeResult" => again::<InitializeResult>(value),
        "EmptyResult" | "PingRequest" | "ListRootsRequest" => again::<Map<String, Value>>(value),
        "ListToolsRequest"
        | "ListResourcesRequest"
        | "ListResourceTemplatesRequest"
        | "ListPromptsRequest"
        | "ListTasksRequest" => again::<Map<String, Value>>(value),
        "CallToolRequest" => again::<CallToolParams>(value),
        "CallToolResult" | "GetTaskPayloadResult" => again::<CallToolResult>(value),
        "CreateTaskResult" => again::<CreateTaskResult>(value),
        "ListToolsResult" => again::<ListToolsResult>(value),
        "ReadResourceRequest"
        | "SubscribeRequest"
        | "UnsubscribeRequest"
        | "ResourceUpdatedNotification" => again::<Map<String, Value>>(value),
        "ListResourcesResult" => again::<ListResourcesResult>(value),
        "ListResourceTemplatesResult" => again::<ListResourceTemplatesResult>(value),
        "ReadResourceResult" => again::<ReadResourceResult>(value),
        "ListPromptsResult" => again::<ListPromptsResult>(value),
        "GetPromptRequest" => again::<GetPromptParams>(value),
        "GetPromptResult" => again::<GetPromptResult>(value),
        "CompleteRequest" => again::<CompleteParams>(value),
        "CompleteResult" => again::<CompleteResult>(value),
        "SetLevelRequest" => again::<SetLevelParams>(value),
        "LoggingMessageNotification" => again::<LoggingMessageParams>(value),
        "CreateMessageRequest" => again::<CreateMessageParams>(value),
        "CreateMessageResult" => again::<CreateMessageResult>(value),
        "ElicitRequest" => again::<ElicitParams>(value),
        "ElicitResult" => again::<ElicitResult>(value),
        "ElicitationCompleteNotification" => again::<ElicitationCompleteParams>(value),
        "ListRootsResult" => again::<ListRootsResult>(value),
        "CancelledNotification" => again::<CancelledParams>(value),
        "ProgressNotification" => again::<ProgressParams>(value),
        "GetTaskRequest" | "GetTaskPayloadRequest" | "CancelTaskRequest" => {
            again::<Map<String, Value>>(value)
        }
        "GetTaskResult" | "CancelTaskResult" | "TaskStatusNotification" => {
            again::<TaskResult>(value)
        }
        "ListTasksResult" => again::<ListTasksResult>(value),
        _ if def.ends_with("ListChangedNotification") || def == "InitializedNotification" => {
            again::<Map<String, Value>>(value)
        }
        other => panic!("no typed view for {other}"),
    };
    assert_eq!(&back, value, "{def}");
}

fn validate_method(schema: &mut Schema, info: &MethodInfo) {
    let v = schema.version;
    let def = message_def(info.name);
    let id = RequestId::number(1);
    for params in params_for(info.name, v) {
        let mut buf = Vec::new();
        match info.kind {
            MethodKind::Request => {
                jsonrpc::encode_request(&mut buf, &id, info.name, params.as_ref())
            }
            MethodKind::Notification => {
                jsonrpc::encode_notification(&mut buf, info.name, params.as_ref())
            }
        }
        let message = to_value(&buf);
        schema.expect_valid(def, &message);
        let envelope = match info.kind {
            MethodKind::Request => "JSONRPCRequest",
            MethodKind::Notification => "JSONRPCNotification",
        };
        schema.expect_valid(envelope, &message);
        // The envelope carries the serialised params unchanged.
        if let Some(params) = &params {
            assert_eq!(to_value(params.as_bytes()), message["params"]);
            typed_round_trip(def, &message["params"]);
        }
    }
    if info.kind == MethodKind::Request {
        for (result_def, result) in results_for(info.name, v) {
            let mut buf = Vec::new();
            jsonrpc::encode_result(&mut buf, &RequestId::string("r-1"), &result);
            let message = to_value(&buf);
            let envelope = schema.result_envelope();
            schema.expect_valid(envelope, &message);
            schema.expect_valid(result_def, &message["result"]);
            typed_round_trip(result_def, &message["result"]);
        }
    }
}

#[test]
fn every_message_validates_against_every_revision_that_has_it() {
    let mut report = Vec::new();
    for v in [V1, V2, V3, V4] {
        let mut schema = Schema::load(v);
        for info in METHODS.iter().filter(|i| i.exists_in(v)) {
            validate_method(&mut schema, info);
        }
        assert!(
            schema.validated > 100,
            "{v}: only {} examples",
            schema.validated
        );
        report.push(format!("{v}: {} validated examples", schema.validated));
    }
    println!("{}", report.join("\n"));
}

#[test]
fn schema_rejects_broken_messages() {
    for v in [V1, V2, V3, V4] {
        let mut schema = Schema::load(v);
        // A result missing a required member.
        let mut call = serde_json::to_value(CallToolResult {
            content: content_blocks(v),
            ..Default::default()
        })
        .unwrap();
        schema.expect_valid("CallToolResult", &call);
        call.as_object_mut().unwrap().remove("content");
        schema.expect_invalid("CallToolResult", &call);
        // A tool without its input schema.
        let mut list = serde_json::to_value(ListToolsResult {
            tools: vec![tool(v)],
            ..Default::default()
        })
        .unwrap();
        list["tools"][0]
            .as_object_mut()
            .unwrap()
            .remove("inputSchema");
        schema.expect_invalid("ListToolsResult", &list);
        // A request whose params lack a required member.
        let mut buf = Vec::new();
        let params = RawJson::from_text(r#"{"arguments":{}}"#).unwrap();
        jsonrpc::encode_request(
            &mut buf,
            &RequestId::number(1),
            jsonrpc::TOOLS_CALL,
            Some(&params),
        );
        schema.expect_invalid("CallToolRequest", &to_value(&buf));
        // A progress notification whose token is neither a string nor an integer.
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": {"a": 1}, "progress": 1}});
        schema.expect_invalid("ProgressNotification", &progress);
        // A content type the revision does not know.
        let audio = json!({"content": [{"type": "audio", "data": "", "mimeType": "audio/wav"}]});
        let link = json!({"content": [{"type": "resource_link", "uri": "file:///a", "name": "a"}]});
        if v < V2 {
            schema.expect_invalid("CallToolResult", &audio);
        } else {
            schema.expect_valid("CallToolResult", &audio);
        }
        if v < V3 {
            schema.expect_invalid("CallToolResult", &link);
        } else {
            schema.expect_valid("CallToolResult", &link);
        }
        // A sampling result with several blocks exists only from 2025-11-25.
        let many =
            json!({"role": "assistant", "model": "m", "content": [{"type": "text", "text": "a"}]});
        if v < V4 {
            schema.expect_invalid("CreateMessageResult", &many);
        } else {
            schema.expect_valid("CreateMessageResult", &many);
        }
    }
}

#[test]
fn every_method_of_the_table_has_a_schema_definition_where_it_exists() {
    for v in [V1, V2, V3, V4] {
        let schema = Schema::load(v);
        for info in METHODS {
            let present = schema.root[schema.defs_key]
                .get(message_def(info.name))
                .is_some();
            assert_eq!(present, info.exists_in(v), "{} in {v}", info.name);
        }
    }
}

/// The definitions listed in a union such as `ClientRequest`.
fn union_members(schema: &Schema, union: &str) -> Vec<String> {
    let prefix = format!("#/{}/", schema.defs_key);
    schema.root[schema.defs_key][union]["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["$ref"]
                .as_str()
                .unwrap()
                .trim_start_matches(&prefix)
                .to_owned()
        })
        .collect()
}

#[test]
fn method_directions_and_kinds_match_the_schema_unions() {
    for v in [V1, V2, V3, V4] {
        let schema = Schema::load(v);
        let from_client = [
            union_members(&schema, "ClientRequest"),
            union_members(&schema, "ClientNotification"),
        ]
        .concat();
        let from_server = [
            union_members(&schema, "ServerRequest"),
            union_members(&schema, "ServerNotification"),
        ]
        .concat();
        let mut seen = 0;
        for info in METHODS.iter().filter(|i| i.exists_in(v)) {
            let def = message_def(info.name);
            let direction = direction_of(def, &from_client, &from_server)
                .unwrap_or_else(|| panic!("{def} is in no union of {v}"));
            assert_eq!(info.direction, direction, "{} in {v}", info.name);
            let is_request = def.ends_with("Request");
            assert_eq!(
                is_request,
                info.kind == MethodKind::Request,
                "{} in {v}",
                info.name
            );
            seen += 1;
        }
        // Every union member is a method of the table.
        assert_eq!(
            from_client.len() + from_server.len(),
            seen + METHODS
                .iter()
                .filter(|i| i.exists_in(v) && i.direction == MethodDirection::Either)
                .count(),
            "{v}"
        );
    }
}
