//! JSON-RPC error objects, the error codes MCP uses, and decode failures.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{FrameHead, HeadKind, RawJson, RequestId};

/// Error codes used by JSON-RPC 2.0 and MCP.
pub mod code {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist, or the capability behind it was not negotiated.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal error.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// MCP (2025-11-25 and earlier): resource not found.
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// MCP 2025-11-25: URL-mode elicitation required.
    pub const URL_ELICITATION_REQUIRED: i64 = -32042;
    /// MCP 2026-07-28: an HTTP header disagrees with the body.
    pub const HEADER_MISMATCH: i64 = -32020;
    /// MCP 2026-07-28: the client did not declare a capability the request needs.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// MCP 2026-07-28: the requested protocol version is not supported.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
    /// MCP sampling: the user rejected the request.
    pub const USER_REJECTED: i64 = -1;
}

/// The `error` member of a JSON-RPC error response.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code (see [`code`]).
    pub code: i64,
    /// One concise sentence describing the error.
    pub message: String,
    /// Additional information, kept verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<RawJson>,
}

impl ErrorObject {
    /// An error with a code and a message and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches `data`.
    pub fn with_data(mut self, data: RawJson) -> Self {
        self.data = Some(data);
        self
    }

    /// -32700.
    pub fn parse_error(message: impl Into<String>) -> Self {
        Self::new(code::PARSE_ERROR, message)
    }

    /// -32600.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_REQUEST, message)
    }

    /// -32601.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            code::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// -32602.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_PARAMS, message)
    }

    /// -32603.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(code::INTERNAL_ERROR, message)
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JSON-RPC error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for ErrorObject {}

/// Why a frame could not be decoded into a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DecodeErrorKind {
    /// Not valid JSON (or not UTF-8): answer -32700.
    Parse,
    /// Valid JSON but not a valid JSON-RPC request or notification: answer -32600.
    InvalidRequest,
    /// Valid JSON that looks like a response (no `method`) but is malformed. There is nobody to
    /// answer; the receiver drops and counts it.
    InvalidResponse,
}

/// A frame that is not a valid JSON-RPC message, with whatever could be recovered from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// What went wrong; read it through [`DecodeError::code`] and [`DecodeError::wants_reply`].
    pub(crate) kind: DecodeErrorKind,
    /// The request id, when the input was readable far enough to find a valid one.
    pub id: Option<RequestId>,
    /// A short, human-readable reason.
    pub detail: String,
}

impl DecodeError {
    #[cold]
    pub(crate) fn parse(detail: impl Into<String>) -> Self {
        DecodeError {
            kind: DecodeErrorKind::Parse,
            id: None,
            detail: detail.into(),
        }
    }

    #[cold]
    pub(crate) fn invalid(id: Option<RequestId>, detail: impl Into<String>) -> Self {
        DecodeError {
            kind: DecodeErrorKind::InvalidRequest,
            id,
            detail: detail.into(),
        }
    }

    #[cold]
    pub(crate) fn invalid_response(id: Option<RequestId>, detail: impl Into<String>) -> Self {
        DecodeError {
            kind: DecodeErrorKind::InvalidResponse,
            id,
            detail: detail.into(),
        }
    }

    /// The JSON-RPC error code that answers this failure.
    pub fn code(&self) -> i64 {
        match self.kind {
            DecodeErrorKind::Parse => code::PARSE_ERROR,
            DecodeErrorKind::InvalidRequest | DecodeErrorKind::InvalidResponse => {
                code::INVALID_REQUEST
            }
        }
    }

    /// Whether the peer should get an error response for this frame.
    ///
    /// Malformed responses are never answered: answering a response could start a loop.
    pub fn wants_reply(&self) -> bool {
        self.kind != DecodeErrorKind::InvalidResponse
    }

    /// The id of the request an unreadable `frame` (the bytes this error came from) answers:
    /// an invalid response's own id, or, for a frame that does not parse, the id its first
    /// bytes show when they show a response. `None` for anything else (a request, a frame
    /// whose id cannot be read, an item of a batch, given as an empty `frame`).
    pub(crate) fn response_id(&self, frame: &[u8]) -> Option<RequestId> {
        match self.kind {
            DecodeErrorKind::InvalidResponse => self.id.clone(),
            DecodeErrorKind::Parse if !frame.is_empty() => {
                let head = FrameHead::scan(frame);
                (head.kind == HeadKind::Response)
                    .then_some(head.id)
                    .flatten()
            }
            _ => None,
        }
    }

    /// Why a response that names a pending request failed it: it could not be read.
    #[cold]
    pub(crate) fn unreadable_response_reason(&self) -> String {
        format!("the response could not be read: {}", self.detail)
    }

    /// The error object to send back.
    pub fn to_error_object(&self) -> ErrorObject {
        let message = match self.kind {
            DecodeErrorKind::Parse => "Parse error",
            DecodeErrorKind::InvalidRequest | DecodeErrorKind::InvalidResponse => "Invalid Request",
        };
        ErrorObject::new(self.code(), format!("{message}: {}", self.detail))
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.detail)
    }
}

impl std::error::Error for DecodeError {}
