//! ES256 JSON Web Tokens for `private_key_jwt` client authentication (RFC 7523 §2.2, RFC
//! 7521): the client signs a short-lived assertion with `iss` = `sub` = its `client_id` and
//! `aud` = the authorization server. The key, the wall-clock time and the `jti` bytes come
//! from the caller; ECDSA signing is deterministic (RFC 6979), so nothing here draws randomness.

use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use p256::pkcs8::DecodePrivateKey;
use serde_json::json;

use super::secret::Secret;
use super::AuthError;
use crate::encoding::base64url;

/// The `client_assertion_type` of a JWT client assertion (RFC 7523 §2.2).
pub const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// How long a client assertion is valid, in seconds.
pub const ASSERTION_LIFETIME: u64 = 300;

/// A P-256 private key for ES256 signatures. `Debug` never prints it.
#[derive(Clone)]
pub struct JwtSigningKey(SigningKey);

impl JwtSigningKey {
    /// Reads a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`) P-256 key.
    pub fn from_pkcs8_pem(pem: &str) -> Result<Self, AuthError> {
        SigningKey::from_pkcs8_pem(pem)
            .map(Self)
            .map_err(|_| AuthError::BadKey("not a PKCS#8 PEM P-256 private key".into()))
    }

    /// A key from its 32-byte scalar (tests, keys kept elsewhere).
    pub fn from_bytes(scalar: &[u8; 32]) -> Result<Self, AuthError> {
        SigningKey::from_slice(scalar)
            .map(Self)
            .map_err(|_| AuthError::BadKey("not a valid P-256 scalar".into()))
    }

    /// The SEC1 uncompressed public point (0x04 || x || y), for verifiers.
    #[must_use]
    pub fn public_key_sec1(&self) -> Vec<u8> {
        self.0
            .verifying_key()
            .to_encoded_point(false)
            .as_bytes()
            .to_vec()
    }

    /// Signs `header.claims` as a compact JWS (`alg` must say ES256 in `header`).
    #[must_use]
    pub fn sign_compact(&self, header: &serde_json::Value, claims: &serde_json::Value) -> String {
        let input = format!(
            "{}.{}",
            base64url(header.to_string().as_bytes()),
            base64url(claims.to_string().as_bytes())
        );
        let signature: Signature = self.0.sign(input.as_bytes());
        format!("{input}.{}", base64url(&signature.to_bytes()))
    }
}

impl std::fmt::Debug for JwtSigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JwtSigningKey([redacted])")
    }
}

/// The signed client assertion of `client_id` for `audience` (the authorization server's
/// issuer), issued at `unix_now`, valid [`ASSERTION_LIFETIME`] seconds, with `jti` from the
/// caller's random bytes.
#[must_use]
pub fn client_assertion(
    key: &JwtSigningKey,
    client_id: &str,
    audience: &str,
    unix_now: u64,
    jti: &[u8],
) -> Secret {
    let header = json!({"alg": "ES256", "typ": "JWT"});
    let claims = json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": unix_now,
        "exp": unix_now.saturating_add(ASSERTION_LIFETIME),
        "jti": base64url(jti),
    });
    Secret::new(key.sign_compact(&header, &claims))
}
