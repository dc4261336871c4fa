//! `x-mcp-header` annotations on the server (2026-07-28, SEP-2243): checking a tool's
//! annotations when it is registered, and the annotations of a registered tool, for the HTTP
//! transport to check a call's `Mcp-Param-{Name}` headers against the body.

use serde_json::Value;

use crate::app::client::stateless::{header_params, InvalidHeaderAnnotation};
use crate::app::server::Server;
use crate::stateless::{param_headers, ParamHeader};

/// Depth below a top-level property searched for misplaced annotations.
const MAX_NESTED_DEPTH: usize = 32;

/// Checks a tool's annotations by the rules a 2026-07-28 client applies before it calls the
/// tool (a client drops a tool that breaks them): every `x-mcp-header` is a non-empty string of
/// visible ASCII without `:`, on a top-level property of type `string`, `integer` or
/// `boolean`, not repeated (case-insensitively), and none sits below a top-level property.
pub fn check_header_annotations(input_schema: &Value) -> Result<(), InvalidHeaderAnnotation> {
    header_params(input_schema)?;
    let Some(properties) = input_schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (property, schema) in properties {
        let below = match schema {
            Value::Object(members) => members
                .iter()
                .filter(|(k, _)| k.as_str() != "x-mcp-header")
                .any(|(_, v)| has_annotation(v, 0)),
            _ => false,
        };
        if below {
            return Err(InvalidHeaderAnnotation::Nested(property.clone()));
        }
    }
    Ok(())
}

/// Whether any object inside `value` has an `x-mcp-header` member (bounded depth; deeper
/// counts as found, so a pathological schema is refused rather than accepted unchecked).
fn has_annotation(value: &Value, depth: usize) -> bool {
    if depth > MAX_NESTED_DEPTH {
        return true;
    }
    match value {
        Value::Object(members) => {
            members.contains_key("x-mcp-header")
                || members.values().any(|v| has_annotation(v, depth + 1))
        }
        Value::Array(items) => items.iter().any(|v| has_annotation(v, depth + 1)),
        _ => false,
    }
}

impl Server {
    /// The `Mcp-Param-*` headers a `tools/call` of tool `name` must carry (empty for an
    /// unknown tool or one without annotations).
    #[must_use]
    pub fn tool_param_headers(&self, name: &str) -> Vec<ParamHeader> {
        self.registry
            .tools
            .get(name)
            .map(|tool| param_headers(tool.input_schema.document()))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;
