//! The checks between a server's sampling or elicitation request and its handler, in the
//! policy's order (sampling: rate, depth, hook, tokens; elicitation: rate, hook), and the
//! answers refusals get.

use std::time::Instant;

use crate::jsonrpc::{ErrorObject, RawJson, RequestId};
use crate::model::{CreateMessageParams, ElicitAction, ElicitParams, ElicitResult};

use super::lineage::{Lineages, Place};
use super::policy::{
    Decision, ElicitationPolicy, Limit, RequestLineage, SamplingPolicy, USER_REJECTED,
};
use super::rate::TokenBucket;

/// The policies of one client and their state.
#[derive(Debug, Default)]
pub(crate) struct Admission {
    sampling: Option<(SamplingPolicy, Option<TokenBucket>)>,
    elicitation: Option<(ElicitationPolicy, Option<TokenBucket>)>,
    pub(crate) lineages: Lineages,
}

/// Why a request does not reach its handler: the answer the server gets instead.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// A JSON-RPC error.
    Error(ErrorObject),
    /// A result (an elicitation declined by the hook).
    Answer(RawJson),
}

impl Admission {
    pub(crate) fn new(
        sampling: Option<SamplingPolicy>,
        elicitation: Option<ElicitationPolicy>,
    ) -> Self {
        let bucket = |rate: Option<_>| rate.map(TokenBucket::new);
        Admission {
            sampling: sampling.map(|p| {
                let b = bucket(p.rate);
                (p, b)
            }),
            elicitation: elicitation.map(|p| {
                let b = bucket(p.rate);
                (p, b)
            }),
            lineages: Lineages::default(),
        }
    }

    /// Sampling request `id`: the params the handler gets (maybe edited) and where the
    /// request stands, or the error the server gets.
    pub(crate) fn sampling(
        &mut self,
        now: Instant,
        id: &RequestId,
        params: CreateMessageParams,
    ) -> Result<(CreateMessageParams, Place), Refusal> {
        let place = self.lineages.place_of_new();
        let Some((policy, bucket)) = &mut self.sampling else {
            return Ok((params, place));
        };
        if let Some(bucket) = bucket {
            if !bucket.try_take(now) {
                return Err(refuse(Limit::Rate, SAMPLING, "too many sampling requests"));
            }
        }
        if place.depth > policy.max_depth {
            let reason = format!("nested {} deep (at most {})", place.depth, policy.max_depth);
            return Err(refuse(Limit::Depth, SAMPLING, &reason));
        }
        let params = match &policy.hook {
            None => params,
            Some(hook) => match hook(&params, &lineage(id, &place)) {
                Decision::Approve => params,
                Decision::Edit(edited) => edited,
                Decision::Refuse(reason) => return Err(refuse(Limit::Hook, SAMPLING, &reason)),
            },
        };
        if let (Some(budget), Some(root)) = (policy.max_tokens_per_call, &place.root) {
            if !self.lineages.charge(root, params.max_tokens, budget) {
                let reason = format!("the tool call's budget of {budget} tokens is spent");
                return Err(refuse(Limit::Tokens, SAMPLING, &reason));
            }
        }
        Ok((params, place))
    }

    /// Elicitation request `id`: the params the handler gets (maybe edited), or the answer
    /// the server gets.
    pub(crate) fn elicitation(
        &mut self,
        now: Instant,
        id: &RequestId,
        params: ElicitParams,
    ) -> Result<ElicitParams, Refusal> {
        let Some((policy, bucket)) = &mut self.elicitation else {
            return Ok(params);
        };
        if let Some(bucket) = bucket {
            if !bucket.try_take(now) {
                return Err(refuse(Limit::Rate, ELICITATION, "too many requests"));
            }
        }
        let Some(hook) = &policy.hook else {
            return Ok(params);
        };
        match hook(&params, &lineage(id, &self.lineages.place_of_new())) {
            Decision::Approve => Ok(params),
            Decision::Edit(edited) => Ok(edited),
            Decision::Refuse(_) => Err(declined()),
        }
    }
}

fn lineage(id: &RequestId, place: &Place) -> RequestLineage {
    RequestLineage {
        id: id.clone(),
        depth: place.depth,
        tool_call: place.root.clone(),
    }
}

/// The start of a refused sampling request's error message (the spec's wording).
const SAMPLING: &str = "User rejected sampling request";
/// The start of a refused elicitation request's error message.
const ELICITATION: &str = "Client refused elicitation request";

/// Error [`USER_REJECTED`] with `data.limit` naming the limit.
fn refuse(limit: Limit, what: &str, reason: &str) -> Refusal {
    let data = serde_json::json!({"limit": limit.as_str()});
    let error = ErrorObject::new(USER_REJECTED, format!("{what}: {reason}"));
    Refusal::Error(match RawJson::from_serialize(&data) {
        Ok(data) => error.with_data(data),
        Err(_) => error,
    })
}

/// The result `{"action": "decline"}`.
fn declined() -> Refusal {
    let result = ElicitResult {
        action: ElicitAction::Decline,
        content: None,
        meta: None,
        extra: Default::default(),
    };
    match RawJson::from_serialize(&result) {
        Ok(raw) => Refusal::Answer(raw),
        Err(e) => Refusal::Error(ErrorObject::internal(e.to_string())),
    }
}
