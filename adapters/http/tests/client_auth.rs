//! The HTTP client's OAuth settings never print a secret: the static bearer token, a
//! pre-registered client secret, a cross-app ID token and a signing key all show as
//! `[redacted]` in `Debug` output (the end-to-end flow runs in
//! adapters/cli/tests/conformance/client_auth.rs against the conformance suite).

use mcp_sansio::auth::{
    AuthConfig, ClientAuthMethod, ClientCredentials, CrossAppAccess, JwtSigningKey, Secret,
};
use mcp_sansio_http::client::{AuthorizeFuture, ClientAuthorization, CodeStep, HttpClientOptions};

#[test]
fn options_debug_shows_no_token_secret_or_key() {
    let mut config = AuthConfig::new("http://127.0.0.1:1/mcp", "http://127.0.0.1:2/cb");
    config.pre_registered = Some(ClientCredentials {
        client_id: "visible-client-id".into(),
        client_secret: Some(Secret::new("client-secret-value")),
        auth_method: ClientAuthMethod::ClientSecretBasic,
    });
    config.cross_app = Some(CrossAppAccess {
        idp_token_endpoint: "http://127.0.0.1:3/token".into(),
        idp_client_id: "idp".into(),
        idp_client_secret: Some(Secret::new("idp-secret-value")),
        id_token: Secret::new("id-token-value"),
    });
    config.signing_key = Some(JwtSigningKey::from_bytes(&[9; 32]).unwrap());
    let mut authorization = ClientAuthorization::new(config);
    authorization.code_step = CodeStep::Custom(std::sync::Arc::new(|_| -> AuthorizeFuture {
        Box::pin(async { Err("no browser".to_owned()) })
    }));
    let options = HttpClientOptions {
        bearer_token: Some("static-bearer-value".into()),
        authorization: Some(authorization),
        ..HttpClientOptions::default()
    };
    let text = format!("{options:?}");
    for secret in [
        "static-bearer-value",
        "client-secret-value",
        "idp-secret-value",
        "id-token-value",
    ] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
    // The redaction is visible, and what is not secret still prints.
    assert!(text.contains("[redacted]"), "{text}");
    assert!(text.contains("visible-client-id"), "{text}");
    assert!(text.contains("Custom(..)"), "{text}");
}
