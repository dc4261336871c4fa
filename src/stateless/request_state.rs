//! The `requestState` of input-required results, minted and checked by the server: the
//! answers gathered in earlier rounds, bound to the request they belong to and to an expiry,
//! integrity-protected with HMAC-SHA-256 under a key the application supplies.
//!
//! Wire form: `base64url(payload JSON) "." base64url(tag)`, the tag computed over the encoded
//! payload text. The client must treat it as opaque; the server treats it as attacker input:
//! a wrong tag (tampered, or minted under another key), a lapsed expiry, or a binding to
//! another request (method, name/uri, arguments) is refused before any field is used. Time
//! comes in as an argument (Unix milliseconds); the core reads no clock and draws no
//! randomness.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::encoding::{base64url, base64url_decode, sha256};
use crate::encoding::{hmac_sha256, hmac_sha256_verify};
use crate::jsonrpc::ErrorObject;

/// The longest `requestState` accepted or minted, in bytes; past it the state is refused (and a
/// server whose answers outgrow it asks again instead of minting one).
pub const MAX_REQUEST_STATE: usize = 64 * 1024;

/// The application's key and how long minted states stay valid.
#[derive(Clone, PartialEq, Eq)]
pub struct RequestStateKey {
    key: Vec<u8>,
    ttl_ms: u64,
}

impl fmt::Debug for RequestStateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the key.
        f.debug_struct("RequestStateKey")
            .field("ttl_ms", &self.ttl_ms)
            .finish_non_exhaustive()
    }
}

impl RequestStateKey {
    /// A key (32 random bytes from the application is the intended use) and a lifetime.
    pub fn new(key: impl Into<Vec<u8>>, ttl_ms: u64) -> Self {
        RequestStateKey {
            key: key.into(),
            ttl_ms,
        }
    }

    /// How long a minted state stays valid, in milliseconds.
    pub fn ttl_ms(&self) -> u64 {
        self.ttl_ms
    }

    /// Mints the state for `binding` carrying `answers`, valid until `now_ms + ttl`. `None`
    /// when it would exceed [`MAX_REQUEST_STATE`].
    pub fn mint(&self, binding: &str, answers: &Map<String, Value>, now_ms: u64) -> Option<String> {
        let payload = StatePayload {
            version: 1,
            binding: binding.to_owned(),
            expires_at_ms: now_ms.saturating_add(self.ttl_ms),
            answers: answers.clone(),
        };
        let json = serde_json::to_vec(&payload).ok()?;
        let body = base64url(&json);
        let tag = base64url(&hmac_sha256(&self.key, body.as_bytes()));
        let token = format!("{body}.{tag}");
        (token.len() <= MAX_REQUEST_STATE).then_some(token)
    }

    /// Checks `token` against the key, `binding` and `now_ms`, and returns the answers it
    /// carries.
    pub fn verify(
        &self,
        token: &str,
        binding: &str,
        now_ms: u64,
    ) -> Result<Map<String, Value>, StateError> {
        self.verify_expiring(token, binding, now_ms)
            .map(|verified| verified.answers)
    }

    /// [`verify`](Self::verify), also giving when the state expires and its MAC, which a
    /// [`ReplayGuard`](super::ReplayGuard) keeps a redemption under. Both parts must be
    /// canonical base64url (see [`base64url_decode`]), so one state has one spelling.
    pub fn verify_expiring(
        &self,
        token: &str,
        binding: &str,
        now_ms: u64,
    ) -> Result<VerifiedState, StateError> {
        if token.len() > MAX_REQUEST_STATE {
            return Err(StateError::Malformed);
        }
        let (body, tag) = token.split_once('.').ok_or(StateError::Malformed)?;
        let tag = base64url_decode(tag).ok_or(StateError::Malformed)?;
        if !hmac_sha256_verify(&self.key, body.as_bytes(), &tag) {
            return Err(StateError::BadSignature);
        }
        // A verified tag is the 32-byte MAC itself.
        let mac: [u8; 32] = tag.try_into().map_err(|_| StateError::BadSignature)?;
        let json = base64url_decode(body).ok_or(StateError::Malformed)?;
        let payload: StatePayload =
            serde_json::from_slice(&json).map_err(|_| StateError::Malformed)?;
        if payload.version != 1 {
            return Err(StateError::Malformed);
        }
        if payload.binding != binding {
            return Err(StateError::WrongRequest);
        }
        if now_ms >= payload.expires_at_ms {
            return Err(StateError::Expired);
        }
        Ok(VerifiedState {
            answers: payload.answers,
            expires_at_ms: payload.expires_at_ms,
            mac,
        })
    }
}

/// What names `token` for single use across server instances, read without the key: the
/// SHA-256 of its tag (what a [`ReplayGuard`](super::ReplayGuard) keeps a redemption under)
/// and the expiry its payload states (Unix ms). `None` when it cannot be a minted state (the
/// server refuses it anyway). Unverified: a claim made on it only ever refuses this same
/// state again.
pub fn single_use_name(token: &str) -> Option<([u8; 32], u64)> {
    if token.len() > MAX_REQUEST_STATE {
        return None;
    }
    let (body, tag) = token.split_once('.')?;
    let tag = base64url_decode(tag).filter(|tag| tag.len() == 32)?;
    let payload: StatePayload = serde_json::from_slice(&base64url_decode(body)?).ok()?;
    Some((sha256(&tag), payload.expires_at_ms))
}

/// A `requestState` that passed [`RequestStateKey::verify_expiring`].
#[derive(Clone, Debug, PartialEq)]
pub struct VerifiedState {
    /// The answers it carries.
    pub answers: Map<String, Value>,
    /// When it expires (Unix ms).
    pub expires_at_ms: u64,
    /// Its HMAC-SHA-256 tag, decoded: what names the state for single use, whatever its
    /// spelling.
    pub mac: [u8; 32],
}

/// What the token carries.
#[derive(Serialize, Deserialize)]
struct StatePayload {
    #[serde(rename = "v")]
    version: u32,
    #[serde(rename = "b")]
    binding: String,
    #[serde(rename = "e")]
    expires_at_ms: u64,
    #[serde(rename = "a")]
    answers: Map<String, Value>,
}

/// Why a `requestState` was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateError {
    /// Not a state this server mints (bad shape, encoding or JSON, or too long).
    Malformed,
    /// The tag does not match: tampered, or minted under another key.
    BadSignature,
    /// Its lifetime has lapsed.
    Expired,
    /// Minted for another request (method, name/uri or arguments differ).
    WrongRequest,
    /// The server has no key, so it never mints one and accepts none.
    Unexpected,
    /// Already redeemed once (a [`ReplayGuard`](super::ReplayGuard) is in use).
    Replayed,
    /// The [`ReplayGuard`](super::ReplayGuard) holds as many unexpired redemptions as it may.
    ReplayStoreFull,
}

impl StateError {
    /// The JSON-RPC error the retry gets (-32602: the params carry a bad `requestState`).
    pub fn to_error_object(self) -> ErrorObject {
        ErrorObject::invalid_params(self.to_string())
    }
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StateError::Malformed => "Invalid requestState: malformed",
            StateError::BadSignature => "Invalid requestState: integrity check failed",
            StateError::Expired => "Invalid requestState: expired",
            StateError::WrongRequest => "Invalid requestState: issued for another request",
            StateError::Unexpected => "Invalid requestState: this server issues none",
            StateError::Replayed => "Invalid requestState: already used",
            StateError::ReplayStoreFull => "Invalid requestState: too many redemptions in flight",
        })
    }
}

impl std::error::Error for StateError {}

/// What a `requestState` is bound to: `method`, and a SHA-256 of the params without `_meta`,
/// `inputResponses` and `requestState` (objects with sorted keys, so member order does not
/// matter), hex-encoded.
pub fn request_binding(method: &str, params: &Map<String, Value>) -> String {
    let mut salient = Map::new();
    for (k, v) in params {
        if !matches!(k.as_str(), "_meta" | "inputResponses" | "requestState") {
            salient.insert(k.clone(), v.clone());
        }
    }
    let mut text = method.as_bytes().to_vec();
    text.push(0);
    write_canonical(&Value::Object(salient), &mut text);
    sha256(&text).iter().map(|b| format!("{b:02x}")).collect()
}

/// `value` as JSON with object members sorted by key, at every depth.
fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push(b'{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(Value::String(k.clone()).to_string().as_bytes());
                out.push(b':');
                write_canonical(&map[k], out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(v, out);
            }
            out.push(b']');
        }
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
}
