//! The HTTP headers a 2026-07-28 request carries (SEP-2243): `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name` for the three named methods, and `Mcp-Param-<Name>` mirrored from
//! `x-mcp-header` annotations of a tool's input schema. Pure functions: the transport only
//! copies the pairs onto the request.

use serde_json::{Map, Value};

use crate::encoding::base64_standard;
use crate::stateless::ParamHeader;

/// Header names an annotation may give at most per tool (a schema with more is refused).
pub const MAX_HEADER_PARAMS: usize = 64;

/// Longest annotated header name accepted (the part after `Mcp-Param-`).
pub const MAX_HEADER_NAME: usize = 128;

/// Why a tool's `x-mcp-header` annotations are invalid (the client must not call it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InvalidHeaderAnnotation {
    /// The annotation is not a string, or is empty.
    NotANonEmptyString(String),
    /// The name has a character outside visible ASCII (space, colon, control, non-ASCII).
    BadCharacter(String),
    /// The annotated property is not a string, integer or boolean.
    NotPrimitive(String),
    /// Two properties name the same header (compared case-insensitively).
    Duplicate(String),
    /// More annotations than [`MAX_HEADER_PARAMS`] or a name longer than [`MAX_HEADER_NAME`].
    TooMany,
    /// An annotation below a top-level property (only top-level arguments can be mirrored;
    /// found by the server's registration check, which names the top-level property).
    Nested(String),
}

impl std::fmt::Display for InvalidHeaderAnnotation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotANonEmptyString(p) => {
                write!(f, "property `{p}`: x-mcp-header must be a non-empty string")
            }
            Self::BadCharacter(p) => write!(
                f,
                "property `{p}`: x-mcp-header may hold only visible ASCII without `:` \
                 (no space, control or non-ASCII character)"
            ),
            Self::NotPrimitive(p) => write!(
                f,
                "property `{p}`: x-mcp-header needs a property of type string, integer or boolean"
            ),
            Self::Duplicate(p) => write!(
                f,
                "property `{p}`: its x-mcp-header repeats another's (compared case-insensitively)"
            ),
            Self::TooMany => write!(
                f,
                "more than {MAX_HEADER_PARAMS} x-mcp-header annotations, or a name over \
                 {MAX_HEADER_NAME} bytes"
            ),
            Self::Nested(p) => write!(
                f,
                "property `{p}`: x-mcp-header is allowed on top-level properties only"
            ),
        }
    }
}

/// The annotated arguments of a tool, from its `inputSchema`: `Ok(vec![])` when none, `Err`
/// when an annotation is invalid (the tool is then dropped from the listing).
pub fn header_params(input_schema: &Value) -> Result<Vec<ParamHeader>, InvalidHeaderAnnotation> {
    let Some(properties) = input_schema.get("properties").and_then(Value::as_object) else {
        return Ok(Vec::new());
    };
    let mut found: Vec<ParamHeader> = Vec::new();
    for (param, schema) in properties {
        let Some(annotation) = schema.get("x-mcp-header") else {
            continue;
        };
        let header = match annotation.as_str() {
            Some(name) if !name.is_empty() => name,
            _ => return Err(InvalidHeaderAnnotation::NotANonEmptyString(param.clone())),
        };
        if found.len() >= MAX_HEADER_PARAMS || header.len() > MAX_HEADER_NAME {
            return Err(InvalidHeaderAnnotation::TooMany);
        }
        // A header field name is a token: visible ASCII without separators; `:` and space
        // would break the header line itself.
        if !header.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
            return Err(InvalidHeaderAnnotation::BadCharacter(param.clone()));
        }
        if !matches!(
            schema.get("type").and_then(Value::as_str),
            Some("string" | "integer" | "boolean")
        ) {
            return Err(InvalidHeaderAnnotation::NotPrimitive(param.clone()));
        }
        if found.iter().any(|p| p.header.eq_ignore_ascii_case(header)) {
            return Err(InvalidHeaderAnnotation::Duplicate(param.clone()));
        }
        found.push(ParamHeader {
            property: param.clone(),
            header: header.to_owned(),
        });
    }
    Ok(found)
}

/// The text of an argument in its `Mcp-Param-*` header: strings as they are unless they need
/// Base64 (`=?base64?…?=`), integers and booleans as JSON text; `None` for null or any other
/// JSON type (the header is then omitted).
pub fn header_value(value: &Value) -> Option<String> {
    match value {
        Value::String(text) if needs_base64(text) => {
            Some(format!("=?base64?{}?=", base64_standard(text.as_bytes())))
        }
        Value::String(text) => Some(text.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        // An integer-typed argument given as 3.0 still reads as an integer to the server.
        Value::Number(n) => n
            .as_f64()
            .filter(|f| f.fract() == 0.0)
            .map(|f| format!("{f:.0}")),
        _ => None,
    }
}

/// Whether a header value must be Base64-wrapped: anything outside visible ASCII and space
/// (non-ASCII, controls, CR/LF, tab), or leading/trailing whitespace (which HTTP trims).
pub fn needs_base64(text: &str) -> bool {
    text.bytes().any(|b| !(0x20..=0x7e).contains(&b))
        || text.starts_with(' ')
        || text.ends_with(' ')
}

/// Every header of one 2026-07-28 POST: protocol version, method, `Mcp-Name` for
/// `tools/call`/`resources/read`/`prompts/get` and the task methods (`taskId`), and the annotated arguments of a tool call.
pub fn request_headers(
    version: &str,
    method: &str,
    params: &Map<String, Value>,
    tool_params: &[ParamHeader],
) -> Vec<(String, String)> {
    let mut headers = vec![
        ("MCP-Protocol-Version".to_owned(), version.to_owned()),
        ("Mcp-Method".to_owned(), method.to_owned()),
    ];
    let name_field = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        m if crate::tasks::is_task_method(m) => Some("taskId"),
        _ => None,
    };
    if let Some(name) = name_field
        .and_then(|f| params.get(f))
        .and_then(Value::as_str)
    {
        let value = if needs_base64(name) {
            format!("=?base64?{}?=", base64_standard(name.as_bytes()))
        } else {
            name.to_owned()
        };
        headers.push(("Mcp-Name".to_owned(), value));
    }
    if method == "tools/call" {
        let arguments = params.get("arguments").and_then(Value::as_object);
        for p in tool_params {
            let value = arguments
                .and_then(|a| a.get(&p.property))
                .and_then(header_value);
            if let Some(value) = value {
                headers.push((format!("Mcp-Param-{}", p.header), value));
            }
        }
    }
    headers
}
