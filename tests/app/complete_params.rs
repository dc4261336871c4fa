//! `completion/complete` params are checked before the completion provider runs: a `ref` to a
//! registered prompt or resource (a fixed URI, a URI a template matches, or the template's
//! own text), an `argument` with string `name` and `value`, `context.arguments` an object of
//! strings; anything else is `-32602` with the request id, on both front ends.

use std::time::Instant;

use mcp_sansio::app::server::*;
use mcp_sansio::model::Implementation;
use mcp_sansio::testing::ServerRig;
use serde_json::{json, Value};

fn builder() -> ServerBuilder {
    let prompt = Prompt::new("greet")
        .argument("name", true)
        .handler(|_, _| async move { Ok(GetPromptResult::user_text("hi")) });
    let resource = Resource::new("test://fixed", "fixed").sync_handler(|_, _| Ok(Vec::new()));
    let template = ResourceTemplate::new("test://template/{id}/data", "templated")
        .expect("template")
        .sync_handler(|_, _| Ok(Vec::new()));
    Server::builder(Implementation::new("complete", "1"))
        .prompt(prompt)
        .resource(resource)
        .resource_template(template)
        .completion(completion_handler(|req, _ctx| async move {
            let value = req.params["argument"]["value"].as_str().unwrap_or("?");
            Ok(Completion {
                values: vec![format!("{value}!")],
                ..Default::default()
            })
        }))
}

fn sessionless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
    })
}

fn complete(rig: &mut ServerRig, id: u32, mut params: Value, meta: Option<&Value>) -> Value {
    if let Some(meta) = meta {
        params["_meta"] = meta.clone();
    }
    rig.call(
        &json!({"jsonrpc": "2.0", "id": id, "method": "completion/complete", "params": params}),
    )
}

fn checks(rig: &mut ServerRig, meta: Option<&Value>) {
    let prompt = json!({"type": "ref/prompt", "name": "greet"});
    let argument = json!({"name": "name", "value": "al"});
    let valid = [
        json!({"ref": prompt, "argument": argument}),
        json!({"ref": prompt, "argument": argument, "context": {"arguments": {"x": "1"}}}),
        json!({"ref": prompt, "argument": argument, "context": {}}),
        json!({"ref": {"type": "ref/resource", "uri": "test://fixed"}, "argument": argument}),
        json!({"ref": {"type": "ref/resource", "uri": "test://template/{id}/data"},
               "argument": {"name": "id", "value": "al"}}),
        json!({"ref": {"type": "ref/resource", "uri": "test://template/7/data"},
               "argument": {"name": "id", "value": "al"}}),
    ];
    for (id, params) in (1..).zip(valid) {
        let reply = complete(rig, id, params.clone(), meta);
        assert_eq!(
            reply["result"]["completion"]["values"],
            json!(["al!"]),
            "{params}: {reply}"
        );
    }
    let invalid = [
        (json!({}), "ref must be an object"),
        (
            json!({"ref": "greet", "argument": argument}),
            "ref must be an object",
        ),
        (
            json!({"ref": {"name": "greet"}, "argument": argument}),
            "ref.type",
        ),
        (
            json!({"ref": {"type": "ref/tool", "name": "greet"}, "argument": argument}),
            "ref.type",
        ),
        (
            json!({"ref": {"type": "ref/prompt"}, "argument": argument}),
            "ref.name",
        ),
        (
            json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": argument}),
            "unknown prompt: nope",
        ),
        (
            json!({"ref": {"type": "ref/resource", "uri": 3}, "argument": argument}),
            "ref.uri",
        ),
        (
            json!({"ref": {"type": "ref/resource", "uri": "test://other"}, "argument": argument}),
            "unknown resource: test://other",
        ),
        (json!({"ref": prompt}), "argument must be an object"),
        (
            json!({"ref": prompt, "argument": {"value": "a"}}),
            "argument.name",
        ),
        (
            json!({"ref": prompt, "argument": {"name": "name", "value": 1}}),
            "argument.value",
        ),
        (
            json!({"ref": prompt, "argument": argument, "context": []}),
            "context must be an object",
        ),
        (
            json!({"ref": prompt, "argument": argument, "context": {"arguments": ["a"]}}),
            "context.arguments must be an object",
        ),
        (
            json!({"ref": prompt, "argument": argument, "context": {"arguments": {"x": 1}}}),
            "context.arguments.x must be a string",
        ),
    ];
    for (id, (params, wanted)) in (100..).zip(invalid) {
        let reply = complete(rig, id, params.clone(), meta);
        assert_eq!(reply["id"], id, "{reply}");
        assert_eq!(reply["error"]["code"], -32602, "{params}: {reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains(wanted), "{params}: {message}");
    }
}

#[test]
fn completion_params_are_checked_in_a_session() {
    checks(&mut crate::unreadable::session(builder()), None);
}

#[test]
fn completion_params_are_checked_sessionless() {
    let mut rig = ServerRig::new(builder(), Instant::now());
    checks(&mut rig, Some(&sessionless_meta()));
}
