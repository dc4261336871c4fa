//! `subscriptions/listen` (2026-07-28): one long-lived request whose response stream carries
//! the notifications the client opted into, first of all
//! `notifications/subscriptions/acknowledged`. It replaces `resources/subscribe` and the HTTP
//! GET stream; every notification on it is tagged with the listen request's id.

use serde::{Deserialize, Serialize};

use super::{set_subscription_id, subscription_id, ResultType};
use crate::jsonrpc::RequestId;
use crate::model::{Extra, Meta};

/// Which notifications a listen stream should carry (`SubscriptionFilter`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// Unknown members (future notification kinds).
    #[serde(flatten)]
    pub extra: Extra,
}

impl SubscriptionFilter {
    /// Whether the filter asks for nothing.
    pub fn is_empty(&self) -> bool {
        !self.tools_list_changed.unwrap_or(false)
            && !self.prompts_list_changed.unwrap_or(false)
            && !self.resources_list_changed.unwrap_or(false)
            && self
                .resource_subscriptions
                .as_ref()
                .is_none_or(|u| u.is_empty())
    }
}

/// Params of `subscriptions/listen`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ListenParams {
    /// What to listen to.
    pub notifications: SubscriptionFilter,
    /// Request metadata (the protocol fields).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extra,
}

mcp_object! {
    /// The result that closes a listen stream; `_meta` must carry the subscription id.
    pub struct ListenResult {
        /// `complete`.
        #[serde(default)]
        pub result_type: ResultType,
    }
    meta: "Result metadata, with `io.modelcontextprotocol/subscriptionId`."
}

impl ListenResult {
    /// The closing result of the listen request `id`.
    pub fn closed(id: &RequestId) -> Self {
        let mut meta = None;
        set_subscription_id(&mut meta, id);
        ListenResult {
            result_type: ResultType::Complete,
            meta,
            extra: Extra::new(),
        }
    }

    /// The subscription id from `_meta`.
    pub fn subscription_id(&self) -> Option<RequestId> {
        subscription_id(self.meta.as_ref())
    }
}
