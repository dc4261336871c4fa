//! The `data` of the three error codes 2026-07-28 adds, and builders for the full error
//! objects with the messages the specification's examples use.

use serde::{Deserialize, Serialize};

use crate::jsonrpc::{code, ErrorObject, RawJson};
use crate::model::{ClientCapabilities, Extra};

/// `data` of -32022 `UnsupportedProtocolVersion`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnsupportedVersionData {
    /// Every version the server supports.
    pub supported: Vec<String>,
    /// The version the request asked for.
    pub requested: String,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extra,
}

mcp_object! {
    /// `data` of -32021 `MissingRequiredClientCapability`.
    pub struct MissingCapabilityData {
        /// The capabilities the request needs and the client did not declare.
        pub required_capabilities: ClientCapabilities,
    }
}

fn with_data<T: Serialize>(error: ErrorObject, data: &T) -> ErrorObject {
    match RawJson::from_serialize(data) {
        Ok(raw) => error.with_data(raw),
        Err(_) => error,
    }
}

/// -32022 with `data: {supported, requested}`.
pub fn unsupported_version_error(supported: &[String], requested: &str) -> ErrorObject {
    let data = UnsupportedVersionData {
        supported: supported.to_vec(),
        requested: requested.to_owned(),
        extra: Extra::new(),
    };
    with_data(
        ErrorObject::new(
            code::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
        ),
        &data,
    )
}

/// -32021 with `data: {requiredCapabilities}`; `what` names the missing capabilities in the
/// message (e.g. `"elicitation"`).
pub fn missing_capability_error(required: ClientCapabilities, what: &str) -> ErrorObject {
    let data = MissingCapabilityData {
        required_capabilities: required,
        extra: Extra::new(),
    };
    with_data(
        ErrorObject::new(
            code::MISSING_REQUIRED_CLIENT_CAPABILITY,
            format!("Server requires the {what} capability for this request"),
        ),
        &data,
    )
}

/// -32020: the HTTP header `header` says `header_value` where the body says `body_value`.
pub fn header_mismatch_error(header: &str, header_value: &str, body_value: &str) -> ErrorObject {
    ErrorObject::new(
        code::HEADER_MISMATCH,
        format!(
            "Header mismatch: {header} header value '{header_value}' does not match body value '{body_value}'"
        ),
    )
}
