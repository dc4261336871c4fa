//! Registration refuses tools whose `x-mcp-header` annotations a 2026-07-28 client would drop:
//! each kind of invalid annotation gets a `BuildError` naming the tool and the property, and
//! the same schemas are exactly the ones the client's `header_params` refuses (top level).

use std::time::Instant;

use serde_json::{json, Value};

use crate::app::client::stateless::{header_params, InvalidHeaderAnnotation};
use crate::app::server::{BuildError, CallToolResult, Server, Tool};
use crate::model::Implementation;

fn schema(property: Value) -> Value {
    json!({"type": "object", "properties": {"region": property}})
}

fn build(input_schema: Value) -> Result<Server, BuildError> {
    Server::builder(Implementation::new("t", "1"))
        .tool(
            Tool::new("ok", json!({"type": "object"}))
                .sync_handler(|_, _| Ok(CallToolResult::text("x"))),
        )
        .tool(
            Tool::new("annotated", input_schema).sync_handler(|_, _| Ok(CallToolResult::text("x"))),
        )
        .try_build(Instant::now())
}

fn refused(input_schema: Value) -> InvalidHeaderAnnotation {
    match build(input_schema) {
        Err(BuildError::InvalidHeaderAnnotation { tool, reason }) => {
            assert_eq!(tool, "annotated");
            reason
        }
        Err(other) => panic!("refused for another reason: {other}"),
        Ok(_) => panic!("accepted"),
    }
}

#[test]
fn valid_annotations_build() {
    for kind in ["string", "integer", "boolean"] {
        let s = schema(json!({"type": kind, "x-mcp-header": "Region"}));
        assert!(build(s).is_ok(), "{kind}");
    }
    let two = json!({"type": "object", "properties": {
        "a": {"type": "string", "x-mcp-header": "A-Name"},
        "b": {"type": "integer", "x-mcp-header": "B_2"},
        "c": {"type": "object", "properties": {"d": {"type": "string"}}},
    }});
    assert!(build(two).is_ok());
}

#[test]
fn each_invalid_kind_is_refused_with_its_reason() {
    use InvalidHeaderAnnotation::*;
    let r = "region".to_owned();
    let string_with = |header: Value| json!({"type": "string", "x-mcp-header": header});
    let cases = [
        (string_with(json!("")), NotANonEmptyString(r.clone())),
        (string_with(json!(5)), NotANonEmptyString(r.clone())),
        (string_with(json!("Re gion")), BadCharacter(r.clone())),
        (string_with(json!("Re:gion")), BadCharacter(r.clone())),
        (string_with(json!("Régión")), BadCharacter(r.clone())),
        (string_with(json!("Re\tgion")), BadCharacter(r.clone())),
        (string_with(json!("Re\u{7f}")), BadCharacter(r.clone())),
        (
            json!({"type": "object", "x-mcp-header": "Region"}),
            NotPrimitive(r.clone()),
        ),
        (
            json!({"type": "array", "x-mcp-header": "Region"}),
            NotPrimitive(r.clone()),
        ),
        (json!({"x-mcp-header": "Region"}), NotPrimitive(r.clone())),
        (
            json!({"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}}),
            Nested(r.clone()),
        ),
        (
            json!({"type": "array", "items": {"type": "string", "x-mcp-header": "Zone"}}),
            Nested(r.clone()),
        ),
    ];
    for (property, reason) in cases {
        let input = schema(property.clone());
        assert_eq!(refused(input.clone()), reason, "{property}");
        // The client refuses the same top-level mistakes (nested ones it cannot see).
        if !matches!(reason, Nested(_)) {
            assert!(header_params(&input).is_err(), "{property}");
        }
    }
    let duplicate = json!({"type": "object", "properties": {
        "a": {"type": "string", "x-mcp-header": "Region"},
        "b": {"type": "string", "x-mcp-header": "REGION"},
    }});
    assert_eq!(refused(duplicate), Duplicate("b".into()));
}

#[test]
fn the_error_names_tool_and_property() {
    let err = build(schema(json!({"type": "string", "x-mcp-header": "a b"})))
        .err()
        .unwrap();
    let text = err.to_string();
    assert!(text.contains("tool `annotated`"), "{text}");
    assert!(text.contains("property `region`"), "{text}");
}
