//! Helpers for elicitation handlers: accepting a form with the requested schema's defaults.

use serde_json::{Map, Value};

use crate::model::{fill_schema_defaults, ElicitAction, ElicitMode, ElicitParams, ElicitResult};

/// Accepts a form-mode elicitation with `content`, completed by the `default` of every
/// property of the requested schema that `content` lacks (values given are kept). A URL-mode
/// request cannot be answered with values, so it is declined.
pub fn accept_with_defaults(
    params: &ElicitParams,
    mut content: Map<String, Value>,
) -> ElicitResult {
    if params.mode() == ElicitMode::Url {
        return ElicitResult {
            action: ElicitAction::Decline,
            content: None,
            meta: None,
            extra: Default::default(),
        };
    }
    if let Some(schema) = &params.requested_schema {
        fill_schema_defaults(schema, &mut content);
    }
    ElicitResult {
        action: ElicitAction::Accept,
        content: Some(content),
        meta: None,
        extra: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::RawJson;
    use serde_json::json;

    #[test]
    fn fills_missing_defaults_and_keeps_given_values() {
        let schema = RawJson::from_text(
            r#"{"type":"object","properties":{"name":{"type":"string","default":"Ada"},
                "age":{"type":"integer","default":36},"note":{"type":"string"}}}"#,
        )
        .unwrap();
        let params = ElicitParams::form("who?", schema);
        let mut given = Map::new();
        given.insert("age".into(), json!(7));
        let result = accept_with_defaults(&params, given);
        assert_eq!(result.action, ElicitAction::Accept);
        assert_eq!(
            Value::Object(result.content.unwrap()),
            json!({"age": 7, "name": "Ada"})
        );
    }

    #[test]
    fn declines_url_mode() {
        let params = ElicitParams::url("go", "https://example.com", "e1");
        let result = accept_with_defaults(&params, Map::new());
        assert_eq!(result.action, ElicitAction::Decline);
        assert!(result.content.is_none());
    }
}
