//! The flow's grants without a user redirect and its redirect checks: `client_credentials`
//! with a `private_key_jwt` assertion (signature and claims verified with the public key),
//! SEP-990 cross-app access (token exchange at the IdP, jwt-bearer at the authorization
//! server), RFC 9207 `iss` checks on the redirect, and the configured scope. Each failure
//! path ends in `AuthEvent::Failed` with the error that names it.

use std::time::Instant;

use mcp_sansio::auth::*;
use mcp_sansio::encoding::percent_decode;
use mcp_sansio::outgoing::{OutgoingRequest, ReceivedResponse};
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use serde_json::Value;

const SERVER: &str = "http://127.0.0.1:7000/mcp";
const AS: &str = "http://127.0.0.1:7001";
const IDP: &str = "http://127.0.0.1:7002";
const PRM_URL: &str = "http://127.0.0.1:7000/.well-known/oauth-protected-resource/mcp";

fn form_field(body: &[u8], name: &str) -> Option<String> {
    std::str::from_utf8(body).ok()?.split('&').find_map(|p| {
        let (n, v) = p.split_once('=')?;
        (percent_decode(n) == name).then(|| percent_decode(v))
    })
}

fn ok(body: &str) -> ReceivedResponse {
    ReceivedResponse {
        status: 200,
        headers: Vec::new(),
        body: body.as_bytes().to_vec(),
    }
}

fn as_metadata(extra: &str) -> String {
    format!(
        r#"{{"issuer":"{AS}","authorization_endpoint":"{AS}/authorize","token_endpoint":"{AS}/token","code_challenge_methods_supported":["S256"]{extra}}}"#
    )
}

fn challenge() -> ReceivedResponse {
    ReceivedResponse {
        status: 401,
        headers: vec![(
            "WWW-Authenticate".into(),
            format!(r#"Bearer resource_metadata="{PRM_URL}""#),
        )],
        body: Vec::new(),
    }
}

/// Discovery answers (PRM, AS metadata with `extra`), then `token` for any other request.
fn discovery(req: &OutgoingRequest, extra: &str) -> Option<ReceivedResponse> {
    if req.url_str().unwrap_or_default() == PRM_URL {
        return Some(ok(&format!(
            r#"{{"resource":"{SERVER}","authorization_servers":["{AS}"]}}"#
        )));
    }
    if req.url_str().unwrap_or_default() == format!("{AS}/.well-known/oauth-authorization-server") {
        return Some(ok(&as_metadata(extra)));
    }
    None
}

/// Drives `flow` until it stops asking, answering with `answer`; returns every request and
/// the events (Authorize events are answered with `redirect`, if given).
fn drive(
    flow: &mut AuthFlow,
    mut answer: impl FnMut(&OutgoingRequest) -> ReceivedResponse,
    redirect: Option<&dyn Fn(&str) -> String>,
) -> (Vec<OutgoingRequest>, Vec<AuthEvent>) {
    let now = Instant::now();
    let mut requests = Vec::new();
    let mut events = Vec::new();
    for _ in 0..32 {
        if let Some(req) = flow.poll_request() {
            let response = answer(&req);
            requests.push(req);
            flow.handle_response(now, response).unwrap();
            continue;
        }
        match flow.poll_event() {
            Some(AuthEvent::Authorize { url }) => {
                let Some(redirect) = redirect else {
                    events.push(AuthEvent::Authorize { url });
                    break;
                };
                flow.handle_redirect(&redirect(&url)).unwrap();
                events.push(AuthEvent::Authorize { url });
            }
            Some(event) => events.push(event),
            None => break,
        }
    }
    (requests, events)
}

fn test_key() -> JwtSigningKey {
    JwtSigningKey::from_bytes(&[7u8; 32]).unwrap()
}

fn jwt_config() -> AuthConfig {
    let mut config = AuthConfig::new(SERVER, "http://127.0.0.1:7999/cb");
    config.pre_registered = Some(ClientCredentials {
        client_id: "m2m-client".into(),
        client_secret: None,
        auth_method: ClientAuthMethod::PrivateKeyJwt,
    });
    config.client_credentials_grant = true;
    config
}

fn decode_segment(segment: &str) -> Value {
    let bytes = mcp_sansio::encoding::base64url_decode(segment).expect("base64url segment");
    serde_json::from_slice(&bytes).expect("JSON segment")
}

#[test]
fn private_key_jwt_assertion_is_signed_for_the_issuer_with_client_id_as_iss_and_sub() {
    let mut config = jwt_config();
    config.signing_key = Some(test_key());
    let mut flow = AuthFlow::new(config);
    flow.set_unix_time(1_800_000_000);
    flow.handle_challenge(Instant::now(), &challenge(), &[3; 48])
        .unwrap();
    let (requests, events) = drive(
        &mut flow,
        |req| discovery(req, "").unwrap_or_else(|| ok(r#"{"access_token":"cc-1"}"#)),
        None,
    );
    assert_eq!(events.last(), Some(&AuthEvent::Authorized), "{events:?}");
    let token = requests.last().unwrap();
    assert_eq!(token.url_str().unwrap_or_default(), format!("{AS}/token"));
    assert!(token.headers.iter().all(|(n, _)| *n != "authorization"));
    let field = |n| form_field(&token.body, n);
    assert_eq!(field("grant_type").as_deref(), Some("client_credentials"));
    assert_eq!(field("client_id").as_deref(), Some("m2m-client"));
    assert_eq!(
        field("client_assertion_type").as_deref(),
        Some(CLIENT_ASSERTION_TYPE)
    );
    let assertion = field("client_assertion").unwrap();
    let parts: Vec<&str> = assertion.split('.').collect();
    assert_eq!(parts.len(), 3);
    assert_eq!(decode_segment(parts[0])["alg"], "ES256");
    let claims = decode_segment(parts[1]);
    assert_eq!(claims["iss"], "m2m-client");
    assert_eq!(claims["sub"], "m2m-client");
    assert_eq!(claims["aud"], AS);
    assert_eq!(claims["iat"], 1_800_000_000u64);
    assert_eq!(claims["exp"], 1_800_000_300u64);
    assert!(claims["jti"].as_str().is_some_and(|j| !j.is_empty()));
    // The signature verifies with the key's public half over `header.claims`.
    let public = VerifyingKey::from_sec1_bytes(&test_key().public_key_sec1()).unwrap();
    let signature_bytes = mcp_sansio::encoding::base64url_decode(parts[2]).unwrap();
    let signature = Signature::from_slice(&signature_bytes).unwrap();
    let input = format!("{}.{}", parts[0], parts[1]);
    public.verify(input.as_bytes(), &signature).unwrap();
    let mut tampered = input.clone();
    tampered.push('x');
    assert!(public.verify(tampered.as_bytes(), &signature).is_err());
    assert_eq!(flow.access_token(Instant::now()).unwrap().expose(), "cc-1");
}

#[test]
fn two_assertions_differ_in_jti() {
    let key = test_key();
    let a = client_assertion(&key, "c", AS, 10, &[1, 2]);
    let b = client_assertion(&key, "c", AS, 10, &[1, 3]);
    assert_ne!(a, b);
    assert!(!format!("{a:?}").contains(a.expose()));
}

#[test]
fn private_key_jwt_without_a_key_fails_with_bad_key() {
    let mut flow = AuthFlow::new(jwt_config());
    flow.handle_challenge(Instant::now(), &challenge(), &[3; 48])
        .unwrap();
    let (requests, events) = drive(&mut flow, |req| discovery(req, "").unwrap(), None);
    assert!(requests
        .iter()
        .all(|r| !r.url_str().unwrap_or_default().ends_with("/token")));
    assert!(
        matches!(events.last(), Some(AuthEvent::Failed(AuthError::BadKey(_)))),
        "{events:?}"
    );
}

#[test]
fn a_key_that_is_not_pem_is_refused_and_never_printed() {
    let err = JwtSigningKey::from_pkcs8_pem(
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
    )
    .unwrap_err();
    assert!(matches!(err, AuthError::BadKey(_)));
    assert_eq!(format!("{:?}", test_key()), "JwtSigningKey([redacted])");
}

fn cross_app_config() -> AuthConfig {
    let mut config = AuthConfig::new(SERVER, "http://127.0.0.1:7999/cb");
    config.pre_registered = Some(ClientCredentials {
        client_id: "xaa-client".into(),
        client_secret: Some(Secret::new("xaa-secret")),
        auth_method: ClientAuthMethod::ClientSecretBasic,
    });
    config.cross_app = Some(CrossAppAccess {
        idp_token_endpoint: format!("{IDP}/token"),
        idp_client_id: "idp-client".into(),
        idp_client_secret: None,
        id_token: Secret::new("ID-TOKEN"),
    });
    config
}

#[test]
fn cross_app_access_exchanges_the_id_token_then_presents_the_grant() {
    let mut flow = AuthFlow::new(cross_app_config());
    flow.handle_challenge(Instant::now(), &challenge(), &[5; 48])
        .unwrap();
    let (requests, events) = drive(
        &mut flow,
        |req| {
            discovery(req, "").unwrap_or_else(|| {
                if req.url_str().unwrap_or_default().starts_with(IDP) {
                    ok(r#"{"access_token":"ID-JAG","issued_token_type":"urn:ietf:params:oauth:token-type:id-jag","token_type":"N_A"}"#)
                } else {
                    ok(r#"{"access_token":"AT-xaa","token_type":"Bearer"}"#)
                }
            })
        },
        None,
    );
    assert_eq!(events.last(), Some(&AuthEvent::Authorized), "{events:?}");
    assert!(!events
        .iter()
        .any(|e| matches!(e, AuthEvent::Authorize { .. })));
    let exchange = &requests[requests.len() - 2];
    assert_eq!(
        exchange.url_str().unwrap_or_default(),
        format!("{IDP}/token")
    );
    let field = |r: &OutgoingRequest, n| form_field(&r.body, n);
    assert_eq!(
        field(exchange, "grant_type").as_deref(),
        Some("urn:ietf:params:oauth:grant-type:token-exchange")
    );
    assert_eq!(
        field(exchange, "subject_token").as_deref(),
        Some("ID-TOKEN")
    );
    assert_eq!(
        field(exchange, "subject_token_type").as_deref(),
        Some("urn:ietf:params:oauth:token-type:id_token")
    );
    assert_eq!(
        field(exchange, "requested_token_type").as_deref(),
        Some("urn:ietf:params:oauth:token-type:id-jag")
    );
    assert_eq!(field(exchange, "audience").as_deref(), Some(AS));
    assert_eq!(field(exchange, "resource").as_deref(), Some(SERVER));
    assert_eq!(field(exchange, "client_id").as_deref(), Some("idp-client"));
    let bearer = requests.last().unwrap();
    assert_eq!(bearer.url_str().unwrap_or_default(), format!("{AS}/token"));
    assert_eq!(
        field(bearer, "grant_type").as_deref(),
        Some("urn:ietf:params:oauth:grant-type:jwt-bearer")
    );
    assert_eq!(field(bearer, "assertion").as_deref(), Some("ID-JAG"));
    assert!(bearer
        .headers
        .iter()
        .any(|(n, v)| *n == "authorization" && v.starts_with("Basic ")));
    assert_eq!(
        flow.access_token(Instant::now()).unwrap().expose(),
        "AT-xaa"
    );
}

#[test]
fn cross_app_access_fails_when_the_idp_refuses_or_issues_another_token_type() {
    for idp_answer in [
        ReceivedResponse {
            status: 400,
            body: br#"{"error":"invalid_grant"}"#.to_vec(),
            ..Default::default()
        },
        ok(
            r#"{"access_token":"X","issued_token_type":"urn:ietf:params:oauth:token-type:access_token"}"#,
        ),
    ] {
        let mut flow = AuthFlow::new(cross_app_config());
        flow.handle_challenge(Instant::now(), &challenge(), &[5; 48])
            .unwrap();
        let (requests, events) = drive(
            &mut flow,
            |req| discovery(req, "").unwrap_or_else(|| idp_answer.clone()),
            None,
        );
        assert!(requests
            .iter()
            .all(|r| r.url_str().unwrap_or_default() != format!("{AS}/token")));
        assert!(
            matches!(
                events.last(),
                Some(AuthEvent::Failed(AuthError::BadTokenResponse(_)))
            ),
            "{events:?}"
        );
        assert!(flow.access_token(Instant::now()).is_none());
    }
}

/// A code flow with DCR-free pre-registration whose redirect carries `iss` (or not).
fn code_flow_with_redirect(
    extra: &str,
    iss: Option<&str>,
) -> (Vec<OutgoingRequest>, Vec<AuthEvent>) {
    let mut config = AuthConfig::new(SERVER, "http://127.0.0.1:7999/cb");
    config.pre_registered = Some(ClientCredentials {
        client_id: "pre".into(),
        client_secret: None,
        auth_method: ClientAuthMethod::None,
    });
    let mut flow = AuthFlow::new(config);
    flow.handle_challenge(Instant::now(), &challenge(), &[9; 48])
        .unwrap();
    let iss = iss.map(str::to_owned);
    let redirect = move |url: &str| {
        let state = mcp_sansio::url::query_param(url, "state").unwrap();
        let mut location = format!("http://127.0.0.1:7999/cb?code=C1&state={state}");
        if let Some(iss) = &iss {
            location.push_str(&format!(
                "&iss={}",
                mcp_sansio::encoding::percent_encode(iss)
            ));
        }
        location
    };
    drive(
        &mut flow,
        |req| discovery(req, extra).unwrap_or_else(|| ok(r#"{"access_token":"AT"}"#)),
        Some(&redirect),
    )
}

#[test]
fn rfc9207_matching_iss_is_accepted() {
    let (requests, events) = code_flow_with_redirect(
        r#","authorization_response_iss_parameter_supported":true"#,
        Some(AS),
    );
    assert_eq!(events.last(), Some(&AuthEvent::Authorized), "{events:?}");
    assert!(requests
        .last()
        .unwrap()
        .url_str()
        .unwrap_or_default()
        .ends_with("/token"));
}

#[test]
fn rfc9207_another_issuer_in_the_redirect_fails_before_the_token_request() {
    let (requests, events) = code_flow_with_redirect("", Some("http://evil.example"));
    assert!(requests
        .iter()
        .all(|r| !r.url_str().unwrap_or_default().ends_with("/token")));
    assert!(
        matches!(
            events.last(),
            Some(AuthEvent::Failed(AuthError::IssuerMismatch { got: Some(g), .. })) if g == "http://evil.example"
        ),
        "{events:?}"
    );
}

#[test]
fn rfc9207_missing_iss_fails_only_when_the_server_promises_it() {
    let (_, events) = code_flow_with_redirect(
        r#","authorization_response_iss_parameter_supported":true"#,
        None,
    );
    assert!(
        matches!(
            events.last(),
            Some(AuthEvent::Failed(AuthError::IssuerMismatch {
                got: None,
                ..
            }))
        ),
        "{events:?}"
    );
    let (_, events) = code_flow_with_redirect("", None);
    assert_eq!(events.last(), Some(&AuthEvent::Authorized), "{events:?}");
}

#[test]
fn configured_scope_is_asked_for_when_the_challenge_names_none() {
    let mut config = AuthConfig::new(SERVER, "http://127.0.0.1:7999/cb");
    config.scope = Some("files:read".into());
    config.pre_registered = Some(ClientCredentials {
        client_id: "pre".into(),
        client_secret: None,
        auth_method: ClientAuthMethod::None,
    });
    let mut flow = AuthFlow::new(config);
    flow.handle_challenge(Instant::now(), &challenge(), &[9; 48])
        .unwrap();
    let (_, events) = drive(&mut flow, |req| discovery(req, "").unwrap(), None);
    let Some(AuthEvent::Authorize { url }) = events.last() else {
        panic!("{events:?}");
    };
    assert_eq!(
        mcp_sansio::url::query_param(url, "scope").as_deref(),
        Some("files:read")
    );
}
