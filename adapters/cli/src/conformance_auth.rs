//! The `auth/*` client scenarios of the conformance suite (0.1.16): the OAuth settings each
//! scenario needs (from `MCP_CONFORMANCE_CONTEXT` where the suite hands out credentials), then
//! `initialize`, `tools/list` and `tools/call test-tool` through the authorizing HTTP client.
//! Every OAuth decision is the core flow's; this only maps the context onto `AuthConfig`.

use mcp_sansio::auth::{
    AuthConfig, ClientAuthMethod, ClientCredentials, CrossAppAccess, JwtSigningKey, Secret,
};
use mcp_sansio_http::client::ClientAuthorization;
use serde_json::Value;

use crate::Failure;

/// The `auth/*` scenarios this client runs.
pub(crate) const AUTH_SCENARIOS: [&str; 22] = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/cross-app-access-complete-flow",
];

/// The client ID metadata document URL the suite expects (`auth/basic-cimd`).
const CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";

/// Where the suite's authorization servers redirect to (never followed: the no-browser step
/// reads the code from `Location`).
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// The OAuth settings of `scenario` against `url`.
pub(crate) fn authorization(scenario: &str, url: &str) -> Result<ClientAuthorization, Failure> {
    let mut config = AuthConfig::new(url, REDIRECT_URI);
    config.client_name = "mcp-sansio conformance client".into();
    config.client_metadata_url = Some(CIMD_URL.into());
    let context = context()?;
    let text = |key: &str| -> Result<String, Failure> {
        context
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| Failure::Failed(format!("MCP_CONFORMANCE_CONTEXT lacks `{key}`")))
    };
    match scenario {
        "auth/pre-registration" | "auth/client-credentials-basic" => {
            config.pre_registered = Some(ClientCredentials {
                client_id: text("client_id")?,
                client_secret: Some(Secret::new(text("client_secret")?)),
                auth_method: ClientAuthMethod::ClientSecretBasic,
            });
            config.client_credentials_grant = scenario == "auth/client-credentials-basic";
        }
        "auth/client-credentials-jwt" => {
            let pem = text("private_key_pem")?;
            config.signing_key = Some(
                JwtSigningKey::from_pkcs8_pem(&pem).map_err(|e| Failure::Failed(e.to_string()))?,
            );
            config.pre_registered = Some(ClientCredentials {
                client_id: text("client_id")?,
                client_secret: None,
                auth_method: ClientAuthMethod::PrivateKeyJwt,
            });
            config.client_credentials_grant = true;
        }
        "auth/cross-app-access-complete-flow" => {
            config.pre_registered = Some(ClientCredentials {
                client_id: text("client_id")?,
                client_secret: Some(Secret::new(text("client_secret")?)),
                auth_method: ClientAuthMethod::ClientSecretBasic,
            });
            config.cross_app = Some(CrossAppAccess {
                idp_token_endpoint: text("idp_token_endpoint")?,
                idp_client_id: text("idp_client_id")?,
                idp_client_secret: None,
                id_token: Secret::new(text("idp_id_token")?),
            });
        }
        _ => {}
    }
    Ok(ClientAuthorization::new(config))
}

/// `MCP_CONFORMANCE_CONTEXT` as a JSON object (empty when unset).
fn context() -> Result<serde_json::Map<String, Value>, Failure> {
    let Ok(raw) = std::env::var("MCP_CONFORMANCE_CONTEXT") else {
        return Ok(serde_json::Map::new());
    };
    match serde_json::from_str(&raw) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(Failure::Failed(
            "MCP_CONFORMANCE_CONTEXT is not a JSON object".into(),
        )),
    }
}
