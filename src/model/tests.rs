//! Round-trip tests: every model type decodes representative JSON (with unknown members and
//! `_meta`) and encodes back to an equal value.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use super::*;

/// Decodes `value` as `T`, encodes it again and checks nothing was lost or added.
fn round_trip<T: Serialize + DeserializeOwned>(value: Value) -> T {
    let text = value.to_string();
    let typed: T = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{} failed to decode {text}: {e}",
            std::any::type_name::<T>()
        )
    });
    let back = serde_json::to_value(&typed).unwrap();
    assert_eq!(back, value, "{}", std::any::type_name::<T>());
    typed
}

fn meta() -> Value {
    json!({"progressToken": 7, "vendor/x": {"a": 1}})
}

fn text_block() -> Value {
    json!({"type": "text", "text": "hi", "annotations": {"audience": ["user"], "priority": 0.5,
        "lastModified": "2025-01-01T00:00:00Z", "x-a": 1}, "_meta": meta(), "x-unknown": true})
}

fn task() -> Value {
    json!({"taskId": "t1", "status": "input_required", "statusMessage": "waiting",
        "createdAt": "2025-11-25T00:00:00Z", "lastUpdatedAt": "2025-11-25T00:00:01Z",
        "ttl": null, "pollInterval": 500, "x-unknown": 1})
}

fn tool() -> Value {
    json!({"name": "add", "title": "Add", "description": "adds",
        "inputSchema": {"type": "object", "properties": {"z": {"type": "number"}, "a": {}}, "required": ["z"]},
        "outputSchema": {"type": "object"},
        "annotations": {"title": "A", "readOnlyHint": true, "destructiveHint": false,
            "idempotentHint": true, "openWorldHint": false, "x": 1},
        "icons": [{"src": "https://x/i.png", "mimeType": "image/png", "sizes": ["48x48"]}],
        "execution": {"taskSupport": "optional"}, "_meta": meta(), "x-unknown": [1]})
}

#[test]
fn common_types_round_trip() {
    let p: GetPromptParams = round_trip(json!({"name": "n", "_meta": meta(), "x": 1}));
    assert_eq!(
        progress_token(p.meta.as_ref()),
        Some(crate::jsonrpc::RequestId::number(7))
    );
    round_trip::<Annotations>(json!({"audience": ["user", "assistant"], "priority": 1}));
    round_trip::<Role>(json!("assistant"));
    assert!(serde_json::from_value::<Role>(json!("system")).is_err());
}

#[test]
fn content_blocks_round_trip() {
    let b: ContentBlock = round_trip(text_block());
    assert!(matches!(b, ContentBlock::Text(ref t) if t.text == "hi"));
    round_trip::<ContentBlock>(
        json!({"type": "image", "data": "AA==", "mimeType": "image/png", "x": 1}),
    );
    let a: ContentBlock =
        round_trip(json!({"type": "audio", "data": "AA==", "mimeType": "audio/wav"}));
    assert!(matches!(a, ContentBlock::Audio(_)));
    round_trip::<ContentBlock>(
        json!({"type": "resource_link", "uri": "file:///a", "name": "a",
        "mimeType": "text/plain", "size": 3, "_meta": meta(), "x": 1}),
    );
    let e: ContentBlock = round_trip(json!({"type": "resource", "resource":
        {"uri": "file:///a", "text": "abc", "mimeType": "text/plain", "_meta": meta(), "x": 1}}));
    assert!(
        matches!(e, ContentBlock::Resource(ref r) if r.resource.text.as_deref() == Some("abc"))
    );
    round_trip::<ContentBlock>(
        json!({"type": "resource", "resource": {"uri": "file:///b", "blob": "AA=="}}),
    );
    assert!(serde_json::from_value::<ContentBlock>(json!({"type": "nope"})).is_err());
    let u: SamplingContent = round_trip(json!({"type": "tool_use", "id": "u1", "name": "add",
        "input": {"b": 1, "a": 2}, "_meta": meta(), "x": 1}));
    assert!(matches!(u, SamplingContent::ToolUse(_)));
    round_trip::<SamplingContent>(json!({"type": "tool_result", "toolUseId": "u1",
        "content": [text_block()], "structuredContent": {"n": 3}, "isError": false, "x": 1}));
    let many: SamplingContentList =
        round_trip(json!([text_block(), {"type": "image", "data": "", "mimeType": "image/png"}]));
    assert!(matches!(many, SamplingContentList::Many(ref v) if v.len() == 2));
    let one: SamplingContentList = round_trip(text_block());
    assert!(matches!(one, SamplingContentList::One(_)));
}

#[test]
fn tools_round_trip_and_keep_schemas_verbatim() {
    round_trip::<ListToolsResult>(
        json!({"tools": [tool()], "nextCursor": "n", "_meta": meta(), "x": 1}),
    );
    // Member order inside the schema survives even though the list has flattened extras.
    let text = r#"{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"z":{"type":"number"},"a":{}},"required":["z"]},"x":1}],"y":2}"#;
    let list: ListToolsResult = serde_json::from_str(text).unwrap();
    assert_eq!(
        serde_json::to_value(&list).unwrap(),
        serde_json::from_str::<Value>(text).unwrap()
    );
    assert_eq!(
        list.tools[0].input_schema.get(),
        r#"{"type":"object","properties":{"z":{"type":"number"},"a":{}},"required":["z"]}"#
    );
    let direct: Tool =
        serde_json::from_str(r#"{"name":"t","inputSchema":{"z" : 1, "a":2}}"#).unwrap();
    assert_eq!(direct.input_schema.get(), r#"{"z" : 1, "a":2}"#);
    round_trip::<CallToolParams>(
        json!({"name": "add", "arguments": {"z": 1}, "task": {"ttl": 60000, "x": 1},
        "_meta": meta(), "x": 1}),
    );
    round_trip::<CallToolResult>(
        json!({"content": [text_block()], "structuredContent": {"sum": 3},
        "isError": false, "_meta": meta(), "x": 1}),
    );
    round_trip::<ToolExecution>(json!({"taskSupport": "required"}));
}

#[test]
fn resources_round_trip() {
    let r = json!({"uri": "file:///a", "name": "a", "title": "A", "description": "d", "mimeType": "text/plain",
        "size": 10, "annotations": {"priority": 0.1}, "icons": [{"src": "data:,"}], "_meta": meta(), "x": 1});
    round_trip::<ListResourcesResult>(
        json!({"resources": [r], "nextCursor": "2", "_meta": meta(), "x": 1}),
    );
    round_trip::<ListResourceTemplatesResult>(
        json!({"resourceTemplates": [{"uriTemplate": "file:///{p}",
        "name": "files", "title": "F", "mimeType": "text/plain", "x": 1}], "_meta": meta()}),
    );
    round_trip::<ReadResourceResult>(json!({"contents": [{"uri": "file:///a", "text": "t"},
        {"uri": "file:///b", "blob": "AA==", "mimeType": "application/octet-stream"}], "x": 1}));
}

#[test]
fn prompts_round_trip() {
    round_trip::<ListPromptsResult>(
        json!({"prompts": [{"name": "p", "title": "P", "description": "d",
        "arguments": [{"name": "a", "title": "A", "description": "x", "required": true, "x": 1}],
        "icons": [{"src": "data:,"}], "_meta": meta(), "x": 1}], "nextCursor": "n"}),
    );
    round_trip::<GetPromptParams>(
        json!({"name": "p", "arguments": {"a": "1"}, "_meta": meta(), "x": 1}),
    );
    round_trip::<GetPromptResult>(
        json!({"description": "d", "messages": [{"role": "user", "content": text_block(), "x": 1}],
        "_meta": meta(), "x": 1}),
    );
}

#[test]
fn completion_round_trips() {
    let p: CompleteParams = round_trip(
        json!({"ref": {"type": "ref/prompt", "name": "p", "title": "P", "x": 1},
        "argument": {"name": "a", "value": "v", "x": 1}, "context": {"arguments": {"b": "c"}, "x": 1},
        "_meta": meta(), "x": 1}),
    );
    assert!(matches!(p.reference, CompletionReference::Prompt(_)));
    let r: CompleteParams = round_trip(
        json!({"ref": {"type": "ref/resource", "uri": "file:///{p}"},
        "argument": {"name": "p", "value": ""}}),
    );
    assert!(matches!(r.reference, CompletionReference::Resource(_)));
    round_trip::<CompleteResult>(
        json!({"completion": {"values": ["a"], "total": 1, "hasMore": false, "x": 1},
        "_meta": meta(), "x": 1}),
    );
}

#[test]
fn logging_round_trips_and_levels_are_ordered() {
    let names = [
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    ];
    let levels: Vec<LoggingLevel> = names.iter().map(|n| round_trip(json!(n))).collect();
    assert!(levels.windows(2).all(|w| w[0] < w[1]));
    round_trip::<SetLevelParams>(json!({"level": "warning", "_meta": meta(), "x": 1}));
    round_trip::<LoggingMessageParams>(
        json!({"level": "error", "logger": "db", "data": {"k": [1]},
        "_meta": meta(), "x": 1}),
    );
}

#[test]
fn sampling_round_trips() {
    round_trip::<CreateMessageParams>(json!({
        "messages": [{"role": "user", "content": text_block(), "x": 1},
                     {"role": "assistant", "content": [{"type": "tool_use", "id": "u", "name": "add", "input": {}}],
                      "_meta": meta()}],
        "modelPreferences": {"hints": [{"name": "claude", "x": 1}], "costPriority": 0.3,
            "speedPriority": 1, "intelligencePriority": 0.9, "x": 1},
        "systemPrompt": "s", "includeContext": "thisServer", "temperature": 0.7, "maxTokens": 100,
        "stopSequences": ["\n"], "metadata": {"k": "v"}, "tools": [tool()],
        "toolChoice": {"mode": "auto", "x": 1}, "task": {"ttl": 1}, "_meta": meta(), "x": 1}));
    round_trip::<CreateMessageResult>(json!({"role": "assistant", "content": text_block(),
        "model": "m", "stopReason": "endTurn", "_meta": meta(), "x": 1}));
}

#[test]
fn elicitation_round_trips_and_fills_defaults() {
    let form: ElicitParams =
        round_trip(json!({"message": "m", "requestedSchema": {"type": "object",
        "properties": {"name": {"type": "string", "default": "Ann"}, "age": {"type": "integer"}}},
        "_meta": meta(), "x": 1}));
    assert_eq!(form.mode(), ElicitMode::Form);
    let url: ElicitParams = round_trip(json!({"mode": "url", "message": "m", "url": "https://x",
        "elicitationId": "e1", "x": 1}));
    assert_eq!(url.mode(), ElicitMode::Url);
    round_trip::<ElicitResult>(
        json!({"action": "accept", "content": {"a": "b", "n": 1, "l": ["x"]},
        "_meta": meta(), "x": 1}),
    );
    round_trip::<ElicitResult>(json!({"action": "cancel"}));
    round_trip::<ElicitationCompleteParams>(
        json!({"elicitationId": "e1", "_meta": meta(), "x": 1}),
    );

    let schema = form.requested_schema.unwrap();
    let mut content = serde_json::Map::new();
    assert_eq!(fill_schema_defaults(&schema, &mut content), 1);
    assert_eq!(Value::Object(content.clone()), json!({"name": "Ann"}));
    content.insert("name".into(), json!("Bob"));
    assert_eq!(fill_schema_defaults(&schema, &mut content), 0);
    assert_eq!(content["name"], json!("Bob"));
    let not_object = crate::jsonrpc::RawJson::from_text("[1]").unwrap();
    assert_eq!(fill_schema_defaults(&not_object, &mut content), 0);
}

#[test]
fn roots_and_notifications_round_trip() {
    round_trip::<ListRootsResult>(
        json!({"roots": [{"uri": "file:///r", "name": "r", "_meta": meta(), "x": 1}],
        "_meta": meta(), "x": 1}),
    );
    round_trip::<CancelledParams>(
        json!({"requestId": "7", "reason": "r", "_meta": meta(), "x": 1}),
    );
    let c: CancelledParams = round_trip(json!({"requestId": 7}));
    assert_eq!(c.request_id, Some(crate::jsonrpc::RequestId::number(7)));
    round_trip::<CancelledParams>(json!({}));
    let p: ProgressParams = round_trip(
        json!({"progressToken": "tok", "progress": 50, "total": 100.5,
        "message": "half", "_meta": meta(), "x": 1}),
    );
    assert!(p.progress_token.is_string());
}

#[test]
fn tasks_round_trip() {
    let t: Task = round_trip(task());
    assert!(!t.status.is_terminal());
    round_trip::<CreateTaskResult>(json!({"task": task(), "_meta": meta(), "x": 1}));
    let r: TaskResult = round_trip({
        let mut v = task();
        v["_meta"] = meta();
        v
    });
    assert_eq!(r.task.task_id, "t1");
    assert!(r.meta.is_some());
    round_trip::<ListTasksResult>(
        json!({"tasks": [task()], "nextCursor": "n", "_meta": meta(), "x": 1}),
    );
    round_trip::<TaskMetadata>(json!({"ttl": 5, "x": 1}));
    for s in [
        "working",
        "input_required",
        "completed",
        "failed",
        "cancelled",
    ] {
        round_trip::<TaskStatus>(json!(s));
    }
}

#[test]
fn lifecycle_round_trips() {
    round_trip::<InitializeParams>(json!({"protocolVersion": "2025-11-25",
        "capabilities": {"roots": {"listChanged": true}, "sampling": {"tools": {}}, "elicitation": {"url": {}},
            "tasks": {"list": {}}, "x": 1},
        "clientInfo": {"name": "c", "version": "1", "title": "C", "x": 1}, "_meta": meta(), "x": 1}));
    round_trip::<InitializeResult>(json!({"protocolVersion": "2025-06-18",
        "capabilities": {"tools": {"listChanged": true}, "logging": {}, "completions": {}},
        "serverInfo": {"name": "s", "version": "1"}, "instructions": "i", "_meta": meta(), "x": 1}));
}

#[test]
fn content_kinds_know_their_first_revision() {
    use ProtocolVersion::*;
    let audio: ContentBlock =
        serde_json::from_value(json!({"type": "audio", "data": "", "mimeType": "audio/wav"}))
            .unwrap();
    assert_eq!(audio.since(), V2025_03_26);
    assert_eq!(ContentBlock::text("a").since(), V2024_11_05);
    let many = SamplingContentList::Many(vec![SamplingContent::text("a")]);
    assert_eq!(many.since(), V2025_11_25);
    assert_eq!(
        SamplingContentList::One(SamplingContent::text("a")).since(),
        V2024_11_05
    );
}
