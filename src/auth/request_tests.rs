//! The request builders of the authorization flow: PKCE vectors, the authorization URL, the
//! token request of each grant and client authentication method, and the RFC 7591
//! registration request.

use crate::auth::pkce::Pkce;
use crate::auth::request::{
    authorization_url, registration_request, token_request, AuthorizationParams, ClientAuthMethod,
    ClientCredentials, Grant, RegistrationParams,
};
use crate::auth::secret::Secret;
use crate::encoding::{base64_standard, percent_decode};
use crate::url::query_param;

/// RFC 7636 appendix B.
#[test]
fn pkce_s256_matches_rfc7636_appendix_b() {
    let octets: [u8; 32] = [
        116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212, 37,
        77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121,
    ];
    let pkce = Pkce::from_random(&octets);
    assert_eq!(
        pkce.verifier.expose(),
        "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    );
    assert_eq!(
        pkce.challenge,
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    );
    assert_eq!(
        Pkce::from_verifier("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk").challenge,
        pkce.challenge
    );
    assert!(!format!("{pkce:?}").contains("dBjft"));
}

#[test]
fn authorization_url_carries_pkce_state_scope_and_resource() {
    let pkce = Pkce::from_verifier("v".repeat(43).as_str());
    let url = authorization_url(
        "https://as.test/authorize?tenant=1",
        &AuthorizationParams {
            client_id: "cid",
            redirect_uri: "http://127.0.0.1:3000/cb",
            pkce: &pkce,
            state: "st",
            scope: Some("mcp:basic mcp:write"),
            resource: "https://x.test/mcp",
        },
    );
    let q = |n| query_param(&url, n);
    assert_eq!(q("tenant").as_deref(), Some("1"));
    assert_eq!(q("response_type").as_deref(), Some("code"));
    assert_eq!(q("client_id").as_deref(), Some("cid"));
    assert_eq!(
        q("redirect_uri").as_deref(),
        Some("http://127.0.0.1:3000/cb")
    );
    assert_eq!(q("code_challenge"), Some(pkce.challenge.clone()));
    assert_eq!(q("code_challenge_method").as_deref(), Some("S256"));
    assert_eq!(q("state").as_deref(), Some("st"));
    assert_eq!(q("scope").as_deref(), Some("mcp:basic mcp:write"));
    assert_eq!(q("resource").as_deref(), Some("https://x.test/mcp"));
}

fn form(body: &[u8]) -> Vec<(String, String)> {
    std::str::from_utf8(body)
        .expect("utf8")
        .split('&')
        .map(|p| {
            let (n, v) = p.split_once('=').expect("pair");
            (percent_decode(n), percent_decode(v))
        })
        .collect()
}

fn field(body: &[u8], name: &str) -> Option<String> {
    form(body)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
}

#[test]
fn token_request_client_auth_methods() {
    let code = Secret::new("the-code");
    let verifier = Secret::new("the-verifier");
    let grant = Grant::AuthorizationCode {
        code: &code,
        verifier: &verifier,
        redirect_uri: "http://127.0.0.1/cb",
    };
    let mut client = ClientCredentials {
        client_id: "id:1".into(),
        client_secret: Some(Secret::new("s&cret")),
        auth_method: ClientAuthMethod::ClientSecretBasic,
    };
    let basic = token_request(
        "https://as.test/token",
        &grant,
        &client,
        Some("https://x.test/mcp"),
    );
    assert_eq!(basic.method, crate::http::HttpMethod::Post);
    let auth = basic
        .headers
        .iter()
        .find(|(n, _)| *n == "authorization")
        .expect("basic");
    assert_eq!(
        auth.1.as_str(),
        format!("Basic {}", base64_standard(b"id%3A1:s%26cret"))
    );
    assert_eq!(
        field(&basic.body, "grant_type").as_deref(),
        Some("authorization_code")
    );
    assert_eq!(field(&basic.body, "code").as_deref(), Some("the-code"));
    assert_eq!(
        field(&basic.body, "code_verifier").as_deref(),
        Some("the-verifier")
    );
    assert_eq!(
        field(&basic.body, "resource").as_deref(),
        Some("https://x.test/mcp")
    );
    assert_eq!(field(&basic.body, "client_secret"), None);

    client.auth_method = ClientAuthMethod::ClientSecretPost;
    let post = token_request("https://as.test/token", &grant, &client, None);
    assert!(post.headers.iter().all(|(n, _)| *n != "authorization"));
    assert_eq!(field(&post.body, "client_id").as_deref(), Some("id:1"));
    assert_eq!(
        field(&post.body, "client_secret").as_deref(),
        Some("s&cret")
    );
    assert_eq!(field(&post.body, "resource"), None);

    client.auth_method = ClientAuthMethod::None;
    let refresh = Secret::new("r1");
    let none = token_body(&Grant::RefreshToken(&refresh), &client);
    assert_eq!(field(&none, "grant_type").as_deref(), Some("refresh_token"));
    assert_eq!(field(&none, "refresh_token").as_deref(), Some("r1"));
    assert_eq!(field(&none, "client_id").as_deref(), Some("id:1"));
    assert_eq!(field(&none, "client_secret"), None);

    let cc = token_body(&Grant::ClientCredentials { scope: Some("a b") }, &client);
    assert_eq!(
        field(&cc, "grant_type").as_deref(),
        Some("client_credentials")
    );
    assert_eq!(field(&cc, "scope").as_deref(), Some("a b"));
}

/// The form body of a token request for `grant` without a resource.
fn token_body(grant: &Grant, client: &ClientCredentials) -> Vec<u8> {
    token_request("https://as.test/token", grant, client, None)
        .body
        .to_vec()
}

#[test]
fn registration_request_is_rfc7591_json() {
    let req = registration_request(
        "https://as.test/register",
        &RegistrationParams {
            client_name: "c",
            redirect_uri: "http://127.0.0.1/cb",
            auth_method: ClientAuthMethod::None,
            scope: Some("a"),
        },
    );
    let doc: serde_json::Value = serde_json::from_slice(&req.body).expect("json");
    assert_eq!(doc["redirect_uris"][0], "http://127.0.0.1/cb");
    assert_eq!(doc["token_endpoint_auth_method"], "none");
    assert_eq!(doc["grant_types"][0], "authorization_code");
    assert_eq!(doc["response_types"][0], "code");
    assert_eq!(doc["scope"], "a");
    // SEP-837: a loopback redirect registers a native application.
    assert_eq!(doc["application_type"], "native");
}
