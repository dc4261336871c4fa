//! Shared building blocks: `_meta`, progress tokens, roles and annotations.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use crate::jsonrpc::RequestId;

/// The `_meta` object of params and results: free-form, kept as is.
pub(crate) type Meta = Map<String, Value>;

/// The `progressToken` member of a request's `_meta`, when present and well-formed.
pub fn progress_token(meta: Option<&Meta>) -> Option<RequestId> {
    let token = meta?.get("progressToken")?;
    serde_json::from_value(token.clone()).ok()
}

/// Who a message is from or for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant (the model).
    Assistant,
}

mcp_object! {
    /// Hints for the client on how to use or show an object.
    ///
    /// 2024-11-05 nests `audience` and `priority` in an inline `annotations` object; 2025-03-26
    /// names it `Annotations`; `lastModified` appears in 2025-06-18.
    #[derive(Default)]
    pub struct Annotations {
        /// Who the object is meant for.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub audience: Option<Vec<Role>>,
        /// Importance from 0 (optional) to 1 (required), kept exactly as written.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub priority: Option<Number>,
        /// ISO 8601 time of the last change (2025-06-18).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub last_modified: Option<String>,
    }
}
