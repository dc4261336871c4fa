//! The changes a `subscriptions/listen` stream carries (2026-07-28), as one machine hands
//! them to the others: on HTTP every stateless exchange is its own machine, so a change made
//! while serving one exchange travels to the machines that hold listen streams.

use serde::{Deserialize, Serialize};

use crate::jsonrpc as m;
use crate::model::stateless::SubscriptionFilter;

/// A change a listen stream may carry: what one machine hands to the others. Its serde form
/// (`{"change":"toolsListChanged"}`, `{"change":"resourceUpdated","uri":…}`) is what server
/// instances sharing a store send each other.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "camelCase")]
pub enum ListenChange {
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated` for this URI.
    ResourceUpdated {
        /// The resource that changed.
        uri: String,
    },
}

impl ListenChange {
    /// The list-changed event a notification method names, if it is one.
    pub(crate) fn from_list_changed(method: &str) -> Option<Self> {
        match method {
            m::NOTIFICATIONS_TOOLS_LIST_CHANGED => Some(ListenChange::ToolsListChanged),
            m::NOTIFICATIONS_PROMPTS_LIST_CHANGED => Some(ListenChange::PromptsListChanged),
            m::NOTIFICATIONS_RESOURCES_LIST_CHANGED => Some(ListenChange::ResourcesListChanged),
            _ => None,
        }
    }

    pub(crate) fn method(&self) -> &'static str {
        match self {
            ListenChange::ToolsListChanged => m::NOTIFICATIONS_TOOLS_LIST_CHANGED,
            ListenChange::PromptsListChanged => m::NOTIFICATIONS_PROMPTS_LIST_CHANGED,
            ListenChange::ResourcesListChanged => m::NOTIFICATIONS_RESOURCES_LIST_CHANGED,
            ListenChange::ResourceUpdated { .. } => m::NOTIFICATIONS_RESOURCES_UPDATED,
        }
    }

    /// Whether a stream with the agreed `filter` carries this event.
    pub(crate) fn wanted_by(&self, filter: &SubscriptionFilter) -> bool {
        match self {
            ListenChange::ToolsListChanged => filter.tools_list_changed == Some(true),
            ListenChange::PromptsListChanged => filter.prompts_list_changed == Some(true),
            ListenChange::ResourcesListChanged => filter.resources_list_changed == Some(true),
            ListenChange::ResourceUpdated { uri } => filter
                .resource_subscriptions
                .as_ref()
                .is_some_and(|uris| uris.iter().any(|u| u == uri)),
        }
    }
}
