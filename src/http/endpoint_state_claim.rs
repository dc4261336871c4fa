//! The single-use claim of a `requestState` shared by several instances: with
//! `EndpointConfig::shared_state_guard` and an `instance_id` set, a 2026-07-28 request that
//! carries a state names its claim ([`StateClaim`]) before it is served. The driver makes it
//! in the shared store (set if absent, with the state's remaining lifetime); a claim another
//! instance made first gets the refusal the claim carries, as a second redemption on one
//! instance does. The servers' own replay guard still runs after it.

use std::time::Duration;

use bytes::Bytes;
use memchr::memmem;

use super::Endpoint;
use crate::http::admission::KnownFields;
use crate::http::machine::{ExchangeMachine, SessionMachine};
use crate::http::reply::rpc_error_with_id;
use crate::http::types::{HttpRequestHead, HttpResponse};
use crate::http::HttpMethod;
use crate::jsonrpc::{decode, Incoming, Message, RequestId};
use crate::stateless::{single_use_name, StateError};

/// The longest a claim lasts: a state stating a later expiry is claimed this long.
const MAX_CLAIM: Duration = Duration::from_secs(24 * 3600);

/// The claim of one `requestState`, to make in the shared store before serving the request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateClaim {
    /// What names the state in the store: `state.` and the hex of the SHA-256 of its tag.
    pub token: String,
    /// How long the claim must last: until the state expires.
    pub ttl: Duration,
    id: RequestId,
}

impl StateClaim {
    /// The answer when another redemption claimed the state first: 400 with -32602
    /// ("already used") and the request's id.
    pub fn refusal(&self) -> HttpResponse {
        rpc_error_with_id(400, Some(&self.id), &StateError::Replayed.to_error_object())
    }
}

impl<M: SessionMachine + ExchangeMachine> Endpoint<M> {
    /// The claim the 2026-07-28 request `head` + `body` needs made in the shared store before
    /// it is handed to [`Endpoint::handle_request`], at `now_ms` (Unix ms). `None` unless
    /// `shared_state_guard` and `instance_id` are set and the request carries a
    /// `requestState` that may be valid (not malformed, not expired): everything else is
    /// served, and refused if need be, as usual.
    pub fn request_state_claim(
        &self,
        head: &HttpRequestHead,
        body: &Bytes,
        now_ms: u64,
    ) -> Option<StateClaim> {
        if !self.config.shared_state_guard || self.config.instance_id.is_none() {
            return None;
        }
        if head.method != HttpMethod::Post || !Self::is_stateless(&KnownFields::of(head)) {
            return None;
        }
        memmem::find(body, b"requestState")?;
        let Ok(Incoming::Single(Message::Request(request))) = decode(body) else {
            return None;
        };
        let params: serde_json::Value = request.params.as_ref()?.parse().ok()?;
        let token = params.get("requestState")?.as_str()?;
        let (digest, expires_at_ms) = single_use_name(token)?;
        let left = expires_at_ms.checked_sub(now_ms).filter(|&ms| ms > 0)?;
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        Some(StateClaim {
            token: format!("state.{hex}"),
            ttl: Duration::from_millis(left).min(MAX_CLAIM),
            id: request.id,
        })
    }
}
