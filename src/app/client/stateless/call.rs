//! One logical 2026-07-28 call as a state machine: each attempt gets a new JSON-RPC id; an
//! input-required result asks the application for inputs and retries with `inputResponses`
//! and the byte-exact `requestState` (none when the server sent none), for a bounded number of
//! rounds; an unsupported-version error (-32022) whose `supported` list names a stateless
//! version we speak switches to it and retries once.

use serde_json::{Map, Value};

use super::reply::{Reply, ReplyError};
use super::{ClientError, StatelessClient};
use crate::jsonrpc::code;
use crate::model::stateless::{InputRequests, InputResponses, UnsupportedVersionData};
use crate::model::ProtocolVersion;

/// Input rounds one call may take before it fails (a server asking forever must not keep us).
pub const MAX_INPUT_ROUNDS: u32 = 16;

/// What to do next with a call.
#[derive(Debug)]
pub(crate) enum CallStep {
    /// Send the next attempt.
    Send,
    /// Answer these inputs (the registered handlers, as a job), hand them to
    /// [`StatelessCall::provide_inputs`], then send the next attempt.
    Inputs(InputRequests),
    /// The final result (`resultType`, `ttlMs`, `cacheScope` kept as data).
    Done(Value),
    /// The call failed.
    Failed(ClientError),
}

/// One logical request across its attempts.
#[derive(Debug)]
pub(crate) struct StatelessCall {
    pub(super) method: String,
    /// The caller's params, without `inputResponses`/`requestState` (added per attempt).
    pub(super) params: Map<String, Value>,
    /// The id of the attempt in flight.
    pub(super) current_id: Option<i64>,
    /// Answers and state for the next attempt.
    pub(super) retry_inputs: Option<InputResponses>,
    pub(super) retry_state: Option<String>,
    /// State received with the last input-required result, kept until the inputs come.
    pending_state: Option<String>,
    rounds: u32,
    version_retried: bool,
}

impl StatelessCall {
    pub(super) fn new(method: &str, params: Option<Value>) -> Self {
        let mut params = match params {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        };
        params.remove("inputResponses");
        params.remove("requestState");
        StatelessCall {
            method: method.to_owned(),
            params,
            current_id: None,
            retry_inputs: None,
            retry_state: None,
            pending_state: None,
            rounds: 0,
            version_retried: false,
        }
    }

    /// The method of this call.
    pub(crate) fn method(&self) -> &str {
        &self.method
    }

    /// The application's answers to the inputs of the last [`CallStep::Inputs`]; the next
    /// attempt carries them and the state received with them.
    pub(crate) fn provide_inputs(&mut self, responses: InputResponses) {
        self.retry_inputs = Some(responses);
        self.retry_state = self.pending_state.take();
    }

    /// Sorts the reply to the attempt in flight into the next step.
    pub(super) fn handle_reply(
        &mut self,
        client: &mut StatelessClient,
        reply: Result<Reply, ReplyError>,
    ) -> CallStep {
        // Inputs and state belong to one attempt only.
        self.retry_inputs = None;
        self.retry_state = None;
        match reply {
            Ok(Reply::Complete(result)) => CallStep::Done(result),
            Ok(Reply::InputRequired {
                requests,
                request_state,
            }) => {
                self.rounds += 1;
                if self.rounds > client.max_input_rounds {
                    return CallStep::Failed(ClientError::TooManyRounds(self.rounds - 1));
                }
                self.pending_state = request_state;
                CallStep::Inputs(requests)
            }
            Ok(Reply::Error(error)) if error.code == code::UNSUPPORTED_PROTOCOL_VERSION => {
                match self.version_to_retry(client, &error) {
                    Some(version) => {
                        self.version_retried = true;
                        client.version = version;
                        CallStep::Send
                    }
                    None => CallStep::Failed(ClientError::Rpc(error)),
                }
            }
            Ok(Reply::Error(error)) => CallStep::Failed(ClientError::Rpc(error)),
            Err(ReplyError::NoResponse) => CallStep::Failed(ClientError::InvalidResult(
                "the reply held no response to the request".into(),
            )),
            Err(ReplyError::Malformed(why)) => CallStep::Failed(ClientError::InvalidResult(why)),
        }
    }

    /// The stateless version to retry with after -32022: the first of `data.supported` that
    /// this client speaks, once per call.
    fn version_to_retry(
        &self,
        client: &StatelessClient,
        error: &crate::jsonrpc::ErrorObject,
    ) -> Option<String> {
        if self.version_retried {
            return None;
        }
        let data: UnsupportedVersionData = serde_json::from_str(error.data.as_ref()?.get()).ok()?;
        data.supported.into_iter().find(|v| {
            ProtocolVersion::parse(v).is_some_and(|p| !p.is_stateful())
                && client.supported_versions.iter().any(|s| s == v)
        })
    }
}
