//! What the host decides about the server's `sampling/createMessage` and `elicitation/create`
//! requests before the handler sees them: [`SamplingPolicy`] (approval hook, rate limit,
//! nesting depth, tokens per tool call) and [`ElicitationPolicy`] (hook, rate limit). The
//! checks themselves are in admission.rs.

use std::fmt;
use std::sync::Arc;

use crate::jsonrpc::RequestId;
use crate::model::{CreateMessageParams, ElicitParams};

use super::rate::RateLimit;

/// The JSON-RPC error code a refused sampling request is answered with: the spec's
/// "User rejected sampling request" (also used for a rate-limited elicitation).
pub const USER_REJECTED: i64 = -1;

/// What an approval hook decided about one request.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision<P> {
    /// Hand the request to the handler as it is.
    Approve,
    /// Hand these params to the handler instead (for sampling: other messages, model
    /// preferences, max tokens or tools).
    Edit(P),
    /// Do not run the handler. Sampling: the server gets error [`USER_REJECTED`] with this
    /// reason; elicitation: it gets the action `decline`.
    Refuse(String),
}

/// Which limit refused a request: `data.limit` of the error the server gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// The rate limit.
    Rate,
    /// The nesting depth.
    Depth,
    /// The token budget of the tool call the request belongs to.
    Tokens,
    /// The approval hook.
    Hook,
}

impl Limit {
    /// The name in `data.limit`: `rate`, `depth`, `tokens` or `hook`.
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::Rate => "rate",
            Limit::Depth => "depth",
            Limit::Tokens => "tokens",
            Limit::Hook => "hook",
        }
    }
}

/// Where a server request stands, for the hook: see docs/app-api.md for what counts as
/// nesting.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestLineage {
    /// The server's request id.
    pub id: RequestId,
    /// 1 for a request made during a top-level tool call (or outside any), one more for each
    /// sampling request it is nested in.
    pub depth: u32,
    /// Our top-level `tools/call` it is attributed to, if any.
    pub tool_call: Option<RequestId>,
}

/// An approval hook: sees the request and its lineage, decides. It runs inside the state
/// machine, so the driver waits while it runs (a hook asking a person blocks the loop until
/// they answer).
pub(crate) type HookFn<P> = Arc<dyn Fn(&P, &RequestLineage) -> Decision<P> + Send + Sync + 'static>;

/// The host's control over `sampling/createMessage`. Checks in order: rate limit, depth,
/// hook, token budget; the first that refuses answers the server with error
/// [`USER_REJECTED`] and `data.limit` naming it ([`Limit`]).
#[derive(Clone)]
pub struct SamplingPolicy {
    pub(crate) hook: Option<HookFn<CreateMessageParams>>,
    pub(crate) rate: Option<RateLimit>,
    pub(crate) max_depth: u32,
    pub(crate) max_tokens_per_call: Option<u64>,
}

impl Default for SamplingPolicy {
    /// No hook (approve), 60 per minute with a burst of 20, depth 3, no token budget.
    fn default() -> Self {
        SamplingPolicy {
            hook: None,
            rate: Some(RateLimit::default()),
            max_depth: 3,
            max_tokens_per_call: None,
        }
    }
}

impl SamplingPolicy {
    /// The defaults (see [`Default`]).
    pub fn new() -> Self {
        SamplingPolicy::default()
    }

    /// The approval hook.
    pub fn hook<F>(mut self, f: F) -> Self
    where
        F: Fn(&CreateMessageParams, &RequestLineage) -> Decision<CreateMessageParams>
            + Send
            + Sync
            + 'static,
    {
        self.hook = Some(Arc::new(f));
        self
    }

    /// The rate limit for this server (`None`: unlimited).
    pub fn rate(mut self, rate: Option<RateLimit>) -> Self {
        self.rate = rate;
        self
    }

    /// The deepest nesting allowed (1: no sampling request inside another one's tool call).
    pub fn max_depth(mut self, depth: u32) -> Self {
        self.max_depth = depth;
        self
    }

    /// The `maxTokens` all approved requests of one top-level tool call may add up to
    /// (`None`: no budget). Counted after the hook, with its edits.
    pub fn max_tokens_per_call(mut self, tokens: Option<u64>) -> Self {
        self.max_tokens_per_call = tokens;
        self
    }
}

impl fmt::Debug for SamplingPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SamplingPolicy")
            .field("hook", &self.hook.is_some())
            .field("rate", &self.rate)
            .field("max_depth", &self.max_depth)
            .field("max_tokens_per_call", &self.max_tokens_per_call)
            .finish()
    }
}

/// The host's control over `elicitation/create`: a rate limit (refused with error
/// [`USER_REJECTED`], `data.limit` `rate`) then a hook (refused with the action `decline`).
#[derive(Clone)]
pub struct ElicitationPolicy {
    pub(crate) hook: Option<HookFn<ElicitParams>>,
    pub(crate) rate: Option<RateLimit>,
}

impl Default for ElicitationPolicy {
    /// No hook, 60 per minute with a burst of 20.
    fn default() -> Self {
        ElicitationPolicy {
            hook: None,
            rate: Some(RateLimit::default()),
        }
    }
}

impl ElicitationPolicy {
    /// The defaults (see [`Default`]).
    pub fn new() -> Self {
        ElicitationPolicy::default()
    }

    /// The approval hook.
    pub fn hook<F>(mut self, f: F) -> Self
    where
        F: Fn(&ElicitParams, &RequestLineage) -> Decision<ElicitParams> + Send + Sync + 'static,
    {
        self.hook = Some(Arc::new(f));
        self
    }

    /// The rate limit for this server (`None`: unlimited).
    pub fn rate(mut self, rate: Option<RateLimit>) -> Self {
        self.rate = rate;
        self
    }
}

impl fmt::Debug for ElicitationPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ElicitationPolicy")
            .field("hook", &self.hook.is_some())
            .field("rate", &self.rate)
            .finish()
    }
}
