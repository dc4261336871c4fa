//! SEP-990 cross-app access (enterprise-managed authorization): the client trades the
//! enterprise IdP's ID token for an ID-JAG (identity assertion authorization grant) at the
//! IdP with an RFC 8693 token exchange, then presents that grant at the MCP authorization
//! server with the RFC 7523 `jwt-bearer` grant. No user redirect happens.

use serde::Deserialize;

use super::metadata::parse_json;
use super::secret::Secret;
use super::AuthError;

/// RFC 8693 grant type.
pub(crate) const GRANT_TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// RFC 7523 grant type.
pub(crate) const GRANT_JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// The subject token type of an OpenID Connect ID token.
pub(crate) const TOKEN_TYPE_ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
/// The requested token type: an identity assertion authorization grant.
pub(crate) const TOKEN_TYPE_ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// What the client holds from its enterprise identity provider.
#[derive(Debug, Clone)]
pub struct CrossAppAccess {
    /// The IdP's token endpoint (where the exchange happens).
    pub idp_token_endpoint: String,
    /// This client's identifier at the IdP.
    pub idp_client_id: String,
    /// This client's secret at the IdP, if it is confidential there (sent as Basic).
    pub idp_client_secret: Option<Secret>,
    /// The user's ID token from the IdP.
    pub id_token: Secret,
}

#[derive(Deserialize)]
struct ExchangeBody {
    access_token: String,
    #[serde(default)]
    issued_token_type: Option<String>,
}

/// Reads the IdP's token-exchange answer: the ID-JAG (in `access_token`; `token_type` is
/// `N_A`). A different `issued_token_type` is refused.
pub(crate) fn parse_exchange_response(body: &[u8]) -> Result<Secret, AuthError> {
    let reply: ExchangeBody = parse_json(body, "token exchange response")?;
    if let Some(kind) = reply.issued_token_type.as_deref() {
        if kind != TOKEN_TYPE_ID_JAG {
            return Err(AuthError::BadTokenResponse(format!(
                "token exchange issued {kind}, not an ID-JAG"
            )));
        }
    }
    if reply.access_token.is_empty() {
        return Err(AuthError::BadTokenResponse(
            "token exchange gave an empty grant".into(),
        ));
    }
    Ok(Secret::new(reply.access_token))
}
