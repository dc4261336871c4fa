//! The reference server's timed extras (docs/fixture.md, "Timed extras"):
//! `test_dynamic_tool`, `test://dynamic-resource` and `test_dynamic_prompt` registered 2 s after
//! the session starts (each registration sends its `list_changed`), and
//! `notifications/resources/updated` for `test://watched-resource` every 3 s to a subscribed
//! client. They are application code: one future per session, driven by the caller's timer and
//! acting through a `ServerHandle`, so the same code serves stdio and every HTTP session.

use std::time::Duration;

use mcp_sansio::app::server::{
    CallToolResult, GetPromptResult, Prompt, Resource, ResourceContents, ServerHandle, Tool,
};
use mcp_sansio::runtime::Job;
use serde_json::json;

use super::Sleep;

/// When the late tool, resource and prompt appear, counted from the session's start.
const LATE_ADDITIONS_AFTER: Duration = Duration::from_secs(2);
/// The period of `notifications/resources/updated` for the watched resource.
const WATCHED_UPDATE_EVERY: Duration = Duration::from_secs(3);
/// The resource whose updates subscribed clients hear about.
const WATCHED_URI: &str = "test://watched-resource";

/// The extras of one session, as a future to spawn next to it when the session starts (its
/// first poll is time zero). It ends by itself once the session has closed; dropping it earlier
/// stops it too.
pub(crate) fn extras(handle: ServerHandle, sleep: Sleep) -> Job {
    Box::pin(async move {
        sleep(LATE_ADDITIONS_AFTER).await;
        if handle.is_closed() {
            return;
        }
        // A fixed schema that compiles: nothing to report if it were refused.
        let _ = handle.add_tool(dynamic_tool());
        handle.add_resource(dynamic_resource());
        handle.add_prompt(dynamic_prompt());
        // The first update is due 3 s after the start, 1 s after the late additions.
        let mut wait = WATCHED_UPDATE_EVERY.saturating_sub(LATE_ADDITIONS_AFTER);
        loop {
            sleep(wait).await;
            if handle.is_closed() {
                return;
            }
            // Sent only if the client subscribed (the server checks its subscriptions).
            handle.notify_resource_updated(WATCHED_URI);
            wait = WATCHED_UPDATE_EVERY;
        }
    })
}

fn dynamic_tool() -> Tool {
    Tool::new(
        "test_dynamic_tool",
        json!({"type": "object", "properties": {}}),
    )
    .description("A tool registered 2 s after the session started")
    .sync_handler(|_call, _ctx| {
        Ok(CallToolResult::text(
            "This tool was added after the session started.",
        ))
    })
}

fn dynamic_resource() -> Resource {
    Resource::new("test://dynamic-resource", "dynamic-resource")
        .title("Dynamic resource")
        .description("A resource registered 2 s after the session started")
        .mime_type("text/plain")
        .sync_handler(|read, _ctx| {
            let text = "This resource was added after the session started.";
            Ok(vec![
                ResourceContents::text(read.uri, text).mime_type("text/plain")
            ])
        })
}

fn dynamic_prompt() -> Prompt {
    Prompt::new("test_dynamic_prompt")
        .description("A prompt registered 2 s after the session started")
        .sync_handler(|_req, _ctx| {
            Ok(GetPromptResult::user_text(
                "This prompt was added after the session started.",
            ))
        })
}
