//! Why a stateless request was refused, and the JSON-RPC error and HTTP status each reason
//! gets under 2026-07-28.

use std::fmt;

use crate::jsonrpc::ErrorObject;
use crate::model::stateless::unsupported_version_error;

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
}

impl StatelessError {
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
        }
    }
}

impl fmt::Display for StatelessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_error_object().message)
    }
}

impl std::error::Error for StatelessError {}
