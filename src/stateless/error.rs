//! Why a stateless request was refused, and the JSON-RPC error and HTTP status each reason
//! gets under 2026-07-28.

use std::fmt;

use crate::jsonrpc::{code, ErrorObject};
use crate::model::stateless::{missing_capability_error, unsupported_version_error};
use crate::model::ClientCapabilities;

/// A refused stateless request.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum StatelessError {
    /// Params or `_meta` malformed, or a required `_meta` field missing (-32602, HTTP 400).
    InvalidParams(String),
    /// The requested protocol version is not one the server serves statelessly (-32022,
    /// HTTP 400). `supported` is the full list the server advertises.
    UnsupportedVersion {
        /// The version the request named.
        requested: String,
        /// Every version the server supports.
        supported: Vec<String>,
    },
    /// The method does not exist in the revision, or the server did not declare the
    /// capability behind it (-32601, HTTP 404).
    MethodNotFound(String),
    /// The request needs client capabilities it did not declare (-32021, HTTP 400). Only
    /// [`super::ValidatedRequest::require`] refuses with it.
    #[cfg_attr(not(any(test, feature = "fuzzing")), allow(dead_code))]
    MissingClientCapability {
        /// The missing capabilities, as a capabilities object (boxed: it is large and rare).
        required: Box<ClientCapabilities>,
        /// Their names, for the message (e.g. `"elicitation"`).
        names: String,
    },
}

impl StatelessError {
    /// The JSON-RPC error code.
    #[cfg_attr(not(any(test, feature = "fuzzing")), allow(dead_code))]
    pub(crate) fn code(&self) -> i64 {
        match self {
            StatelessError::InvalidParams(_) => code::INVALID_PARAMS,
            StatelessError::UnsupportedVersion { .. } => code::UNSUPPORTED_PROTOCOL_VERSION,
            StatelessError::MethodNotFound(_) => code::METHOD_NOT_FOUND,
            StatelessError::MissingClientCapability { .. } => {
                code::MISSING_REQUIRED_CLIENT_CAPABILITY
            }
        }
    }

    /// The HTTP status the Streamable HTTP transport answers with (400, or 404 for an
    /// unknown method).
    pub(crate) fn http_status(&self) -> u16 {
        match self {
            StatelessError::MethodNotFound(_) => 404,
            _ => 400,
        }
    }

    /// The error object of the JSON-RPC error response.
    pub(crate) fn to_error_object(&self) -> ErrorObject {
        match self {
            StatelessError::InvalidParams(why) => ErrorObject::invalid_params(why.clone()),
            StatelessError::UnsupportedVersion {
                requested,
                supported,
            } => unsupported_version_error(supported, requested),
            StatelessError::MethodNotFound(method) => ErrorObject::method_not_found(method),
            StatelessError::MissingClientCapability { required, names } => {
                missing_capability_error((**required).clone(), names)
            }
        }
    }
}

impl fmt::Display for StatelessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_error_object().message)
    }
}

impl std::error::Error for StatelessError {}
