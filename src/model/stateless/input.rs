//! Input-required results (multi-round-trip requests): in 2026-07-28 a server no longer sends
//! `elicitation/create`, `sampling/createMessage` or `roots/list` requests; it answers
//! `tools/call`, `prompts/get` or `resources/read` with an [`InputRequiredResult`], and the
//! client retries the call with a new id carrying `inputResponses` and the echoed
//! `requestState`.
//!
//! `requestState` is opaque here: integrity protection belongs to the server layer that
//! mints it (the core has no key and draws no randomness).

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ResultType;
use crate::jsonrpc as m;
use crate::model::{ClientCapabilityKey, CreateMessageParams, ElicitParams, Extra};

/// One embedded request the server needs answered: `{method, params}` with method
/// `elicitation/create`, `sampling/createMessage` or `roots/list`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InputRequest {
    /// The embedded method.
    pub method: String,
    /// Its params, verbatim (absent for `roots/list`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Which embedded request an [`InputRequest`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InputKind {
    /// `elicitation/create`.
    Elicitation,
    /// `sampling/createMessage`.
    Sampling,
    /// `roots/list`.
    Roots,
}

impl InputKind {
    /// The client capability the client must have declared for the server to ask this.
    pub const fn required_capability(self) -> ClientCapabilityKey {
        match self {
            InputKind::Elicitation => ClientCapabilityKey::Elicitation,
            InputKind::Sampling => ClientCapabilityKey::Sampling,
            InputKind::Roots => ClientCapabilityKey::Roots,
        }
    }

    /// The embedded method name.
    pub const fn method(self) -> &'static str {
        match self {
            InputKind::Elicitation => m::ELICITATION_CREATE,
            InputKind::Sampling => m::SAMPLING_CREATE_MESSAGE,
            InputKind::Roots => m::ROOTS_LIST,
        }
    }
}

impl InputRequest {
    fn with(kind: InputKind, params: Option<Value>) -> Self {
        InputRequest {
            method: kind.method().to_owned(),
            params,
            extra: Extra::new(),
        }
    }

    /// An embedded `elicitation/create`.
    pub fn elicit(params: &ElicitParams) -> Result<Self, serde_json::Error> {
        Ok(Self::with(
            InputKind::Elicitation,
            Some(serde_json::to_value(params)?),
        ))
    }

    /// An embedded `sampling/createMessage`.
    pub fn sample(params: &CreateMessageParams) -> Result<Self, serde_json::Error> {
        Ok(Self::with(
            InputKind::Sampling,
            Some(serde_json::to_value(params)?),
        ))
    }

    /// An embedded `roots/list`.
    pub fn list_roots() -> Self {
        Self::with(InputKind::Roots, None)
    }

    /// Which embedded request this is; `None` for a method the revision does not embed.
    pub fn kind(&self) -> Option<InputKind> {
        [
            InputKind::Elicitation,
            InputKind::Sampling,
            InputKind::Roots,
        ]
        .into_iter()
        .find(|k| k.method() == self.method)
    }

    /// The params as elicitation params, when this is an `elicitation/create`.
    pub fn elicit_params(&self) -> Option<Result<ElicitParams, serde_json::Error>> {
        self.typed_params(InputKind::Elicitation)
    }

    /// The params as sampling params, when this is a `sampling/createMessage`.
    pub fn sample_params(&self) -> Option<Result<CreateMessageParams, serde_json::Error>> {
        self.typed_params(InputKind::Sampling)
    }

    fn typed_params<T: DeserializeOwned>(
        &self,
        kind: InputKind,
    ) -> Option<Result<T, serde_json::Error>> {
        if self.kind() != Some(kind) {
            return None;
        }
        let params = self.params.clone().unwrap_or(Value::Null);
        Some(serde_json::from_value(params))
    }
}

/// `inputRequests`: embedded requests by a key the server chooses.
pub(crate) type InputRequests = BTreeMap<String, InputRequest>;

/// `inputResponses`: the client's answers (an `ElicitResult`, `CreateMessageResult` or
/// `ListRootsResult`) under the keys of the matching `inputRequests`, verbatim.
pub(crate) type InputResponses = BTreeMap<String, Value>;

/// The answer to `key` in `responses`, typed (`ElicitResult`, `CreateMessageResult`,
/// `ListRootsResult`); `None` when the client sent none.
pub fn input_response<T: DeserializeOwned>(
    responses: &InputResponses,
    key: &str,
) -> Option<Result<T, serde_json::Error>> {
    responses
        .get(key)
        .map(|v| serde_json::from_value(v.clone()))
}

mcp_object! {
    /// A result saying the server needs input before it can finish (`resultType:
    /// "input_required"`).
    pub struct InputRequiredResult {
        /// Always [`ResultType::InputRequired`] when built here.
        pub result_type: ResultType,
        /// What the client must answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub input_requests: Option<InputRequests>,
        /// Opaque server state the client echoes on the retry.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub request_state: Option<String>,
    }
    meta: "Result metadata."
}

impl InputRequiredResult {
    /// An input-required result asking `input_requests`, with optional opaque state.
    pub fn new(input_requests: InputRequests, request_state: Option<String>) -> Self {
        InputRequiredResult {
            result_type: ResultType::InputRequired,
            input_requests: Some(input_requests),
            request_state,
            meta: None,
            extra: Extra::new(),
        }
    }

    /// The client capabilities the embedded requests need, without repeats, in input order.
    pub fn required_capabilities(&self) -> Vec<ClientCapabilityKey> {
        let mut keys = Vec::new();
        for request in self.input_requests.iter().flat_map(|r| r.values()) {
            if let Some(key) = request.kind().map(InputKind::required_capability) {
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
        }
        keys
    }
}

/// The members a retried `tools/call`, `prompts/get` or `resources/read` adds to its params
/// (`InputResponseRequestParams`). Reads them out of any such params and ignores the rest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputResponseFields {
    /// The answers, keyed like the `inputRequests` they answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The `requestState` echoed from the input-required result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl InputResponseFields {
    /// Whether the params carry neither member (a first attempt, not a retry).
    pub fn is_empty(&self) -> bool {
        self.input_responses.is_none() && self.request_state.is_none()
    }
}
