//! PKCE (RFC 7636) with the S256 method: the verifier comes from caller-supplied random bytes,
//! the challenge is BASE64URL(SHA-256(verifier)).

use super::secret::Secret;
use crate::encoding::{base64url, sha256};

/// A PKCE verifier and its S256 challenge.
#[derive(Debug, Clone)]
pub(crate) struct Pkce {
    /// The code verifier, sent only with the token request.
    pub verifier: Secret,
    /// The S256 code challenge, sent in the authorization URL.
    pub challenge: String,
}

impl Pkce {
    /// Builds the verifier from 32 random bytes (base64url gives the 43 characters RFC 7636
    /// asks for at minimum) and derives the challenge.
    #[must_use]
    pub(crate) fn from_random(random: &[u8; 32]) -> Self {
        Self::from_verifier(&base64url(random))
    }

    /// Derives the S256 challenge of an existing verifier.
    #[must_use]
    pub(crate) fn from_verifier(verifier: &str) -> Self {
        Self {
            verifier: Secret::new(verifier),
            challenge: base64url(&sha256(verifier.as_bytes())),
        }
    }
}

/// The only code challenge method this crate uses.
pub(crate) const METHOD_S256: &str = "S256";
