//! Stateless request validation for 2026-07-28: pure functions that check a decoded
//! request's per-request `_meta` against what a server supports, say which JSON-RPC error
//! (and HTTP status) a bad request gets, and build the `server/discover` result.
//!
//! Nothing here keeps state between requests: the revision forbids relying on earlier
//! requests, so every check reads only the request and the server's [`ServerProfile`].

mod capabilities;
mod discover;
mod error;
mod listen_change;
mod param_header;
mod replay;
mod request_state;
mod validate;

pub(crate) use capabilities::missing_capabilities_error;
pub use capabilities::{capability_name, missing_capabilities, required_capabilities_object};
pub use discover::{discover_response, ServerProfile, MAX_SUPPORTED_VERSIONS};
pub(crate) use error::StatelessError;
pub use listen_change::ListenChange;
pub use param_header::{param_headers, ParamHeader};
pub use replay::ReplayGuard;
pub use request_state::{
    request_binding, single_use_name, RequestStateKey, StateError, MAX_REQUEST_STATE,
};
pub(crate) use validate::{validate_meta, validate_request};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod validate_props;
