//! Params of the generic notifications: `notifications/cancelled` and
//! `notifications/progress`. The `list_changed` notifications and `notifications/initialized`
//! carry no params beyond `_meta`.

use serde_json::Number;

use crate::jsonrpc::RequestId;

mcp_object! {
    /// Params of `notifications/cancelled`.
    ///
    /// `requestId` is required up to 2025-06-18 and optional in 2025-11-25 (a task is cancelled
    /// with `tasks/cancel` instead).
    #[derive(Default)]
    pub struct CancelledParams {
        /// The request to cancel.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub request_id: Option<RequestId>,
        /// Why.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub reason: Option<String>,
    }
    meta: "Metadata."
}

mcp_object! {
    /// Params of `notifications/progress`.
    ///
    /// `message` appears in 2025-03-26. Numbers are kept exactly as written.
    pub struct ProgressParams {
        /// The token from the request's `_meta.progressToken`.
        pub progress_token: RequestId,
        /// Progress so far; increases with each notification.
        pub progress: Number,
        /// The total, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub total: Option<Number>,
        /// A human-readable status (2025-03-26).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub message: Option<String>,
    }
    meta: "Metadata."
}
