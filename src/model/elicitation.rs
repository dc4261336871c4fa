//! Elicitation (2025-06-18): params and result of `elicitation/create`, the params of
//! `notifications/elicitation/complete` (2025-11-25), and filling a form's schema defaults.
//!
//! Form mode (`mode` absent or `"form"`) carries a `requestedSchema`, kept verbatim. URL mode
//! (`mode: "url"`, 2025-11-25) carries `url` and `elicitationId` instead.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::TaskMetadata;
use crate::jsonrpc::RawJson;

/// The kind of elicitation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ElicitMode {
    /// A form described by `requestedSchema`.
    Form,
    /// An out-of-band interaction at `url` (2025-11-25).
    Url,
}

mcp_object! {
    /// Params of `elicitation/create`, in form or URL mode.
    ///
    /// One struct rather than an enum so that a request round-trips exactly whatever members it
    /// has; [`ElicitParams::mode`] says which mode applies.
    #[derive(Default)]
    pub struct ElicitParams {
        /// `"form"` or `"url"`; absent means form (the only mode before 2025-11-25).
        #[serde(rename = "mode", default, skip_serializing_if = "Option::is_none")]
        pub mode_field: Option<ElicitMode>,
        /// What is being asked, for the user.
        pub message: String,
        /// Form mode: a restricted JSON Schema of the wanted object, verbatim.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub requested_schema: Option<RawJson>,
        /// URL mode: where the user should go.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub url: Option<String>,
        /// URL mode: the id that `notifications/elicitation/complete` refers to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub elicitation_id: Option<String>,
        /// Run as a task (2025-11-25).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub task: Option<TaskMetadata>,
    }
    meta: "Request metadata."
}

impl ElicitParams {
    /// Form-mode params; `mode` is left out so the request is valid in every revision.
    pub fn form(message: impl Into<String>, requested_schema: RawJson) -> Self {
        ElicitParams {
            message: message.into(),
            requested_schema: Some(requested_schema),
            ..Default::default()
        }
    }

    /// URL-mode params (2025-11-25).
    pub fn url(
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Self {
        ElicitParams {
            mode_field: Some(ElicitMode::Url),
            message: message.into(),
            url: Some(url.into()),
            elicitation_id: Some(elicitation_id.into()),
            ..Default::default()
        }
    }

    /// The mode in effect (absent means form).
    pub fn mode(&self) -> ElicitMode {
        self.mode_field.unwrap_or(ElicitMode::Form)
    }
}

/// The user's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ElicitAction {
    /// Submitted (form mode: `content` holds the values).
    Accept,
    /// Explicitly refused.
    Decline,
    /// Dismissed.
    Cancel,
}

mcp_object! {
    /// Result of `elicitation/create`.
    pub struct ElicitResult {
        /// What the user did.
        pub action: ElicitAction,
        /// The submitted values (form mode, `accept` only).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub content: Option<Map<String, Value>>,
    }
    meta: "Result metadata."
}

mcp_object! {
    /// Params of `notifications/elicitation/complete` (2025-11-25).
    #[derive(Default)]
    pub struct ElicitationCompleteParams {
        /// The `elicitationId` of the URL-mode request that finished.
        pub elicitation_id: String,
    }
    meta: "Metadata."
}

/// Fills `content` with the `default` of every property of `requested_schema` that `content`
/// lacks. Values already present are never overwritten. A schema that is not an object with
/// `properties` leaves `content` unchanged. Returns how many members were added.
pub fn fill_schema_defaults(requested_schema: &RawJson, content: &mut Map<String, Value>) -> usize {
    let Ok(Value::Object(schema)) = requested_schema.to_value() else {
        return 0;
    };
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return 0;
    };
    let mut added = 0;
    for (name, property) in properties {
        let Some(default) = property.get("default") else {
            continue;
        };
        if !content.contains_key(name) {
            content.insert(name.clone(), default.clone());
            added += 1;
        }
    }
    added
}
