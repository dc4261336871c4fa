//! `x-mcp-header` annotations of a tool's input schema (2026-07-28, SEP-2243): which
//! arguments a client mirrors into `Mcp-Param-{Name}` headers, as the server hands them to
//! the HTTP transport to check against the body.

use serde_json::Value;

/// Annotated properties one tool may declare at most (a schema with more is cut short).
const MAX_PARAM_HEADERS: usize = 32;

/// One `x-mcp-header` annotation: header `Mcp-Param-{header}` mirrors argument `property`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamHeader {
    /// The annotated name (the header is `Mcp-Param-` followed by it).
    pub header: String,
    /// The top-level argument the header mirrors.
    pub property: String,
}

/// The annotations of an input schema: top-level `properties` whose `x-mcp-header` is a
/// non-empty string (the only place the annotation is reachable).
#[must_use]
pub fn param_headers(input_schema: &Value) -> Vec<ParamHeader> {
    let Some(properties) = input_schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .filter_map(|(property, schema)| {
            let header = schema.get("x-mcp-header")?.as_str()?;
            (!header.is_empty()).then(|| ParamHeader {
                header: header.to_owned(),
                property: property.clone(),
            })
        })
        .take(MAX_PARAM_HEADERS)
        .collect()
}
