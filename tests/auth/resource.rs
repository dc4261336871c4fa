//! The protected-resource policy (`auth::ProtectedResource`): every rule of the decision a
//! protected MCP server makes per request, checked through the public API and read back with
//! the client-side challenge parser, plus "never panics on any Authorization header".

use mcp_sansio::auth::{BearerChallenge, ProtectedResource, Secret, TokenInfo, TokenValidation};
use mcp_sansio::http::{HttpMethod, HttpRequestHead, HttpResponse};

const RESOURCE: &str = "https://mcp.example/mcp";
const PRM: &str = "https://mcp.example/.well-known/oauth-protected-resource/mcp";

fn files() -> ProtectedResource {
    ProtectedResource::new(RESOURCE, ["https://as.example"])
        .expect("valid")
        .scopes_supported(["files:read", "files:write", "admin"])
        .required_scopes(["files:read"])
        .method_scopes("resources/subscribe", ["files:watch"])
        .tool_scopes("delete_file", ["files:write"])
}

fn post(auth: Option<&str>) -> HttpRequestHead {
    let head = HttpRequestHead::new(HttpMethod::Post, "/mcp");
    match auth {
        Some(value) => head.header("Authorization", value),
        None => head,
    }
}

fn token(scopes: &[&str], audience: &[&str]) -> TokenValidation {
    TokenValidation::Valid(TokenInfo {
        subject: "alice".into(),
        scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
        audience: audience.iter().map(|s| (*s).to_owned()).collect(),
    })
}

fn refused(decision: Result<TokenInfo, HttpResponse>) -> (HttpResponse, BearerChallenge) {
    let Err(resp) = decision else {
        panic!("expected a refusal, got {decision:?}");
    };
    let challenge =
        BearerChallenge::find(resp.get("www-authenticate")).expect("a Bearer challenge");
    assert_eq!(challenge.resource_metadata.as_deref(), Some(PRM));
    (resp, challenge)
}

const LIST: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
const DELETE: &[u8] =
    br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete_file","arguments":{}}}"#;

#[test]
fn no_token_is_401_without_error_and_with_the_required_scope() {
    let mut called = false;
    let (resp, challenge) = refused(files().decide(&post(None), LIST, |_| {
        called = true;
        TokenValidation::Invalid
    }));
    assert!(!called, "nothing to validate");
    assert_eq!(resp.status, 401);
    assert_eq!(challenge.error, None);
    assert_eq!(challenge.scope.as_deref(), Some("files:read"));
}

#[test]
fn another_scheme_counts_as_no_token() {
    let (resp, challenge) = refused(files().decide(&post(Some("Basic YTpi")), LIST, |_| {
        token(&["files:read"], &[RESOURCE])
    }));
    assert_eq!(resp.status, 401);
    assert_eq!(challenge.error, None);
}

#[test]
fn the_callback_sees_the_token_and_a_valid_one_is_allowed() {
    let mut seen = None;
    let decision = files().decide(&post(Some("bearer tok-1")), LIST, |t: &Secret| {
        seen = Some(t.expose().to_owned());
        token(&["files:read"], &[RESOURCE])
    });
    assert_eq!(seen.as_deref(), Some("tok-1"));
    let Ok(info) = decision else {
        panic!("refused: {decision:?}");
    };
    assert_eq!(info.subject, "alice");
}

#[test]
fn invalid_and_expired_tokens_are_401_invalid_token() {
    for verdict in [TokenValidation::Invalid, TokenValidation::Expired] {
        let (resp, challenge) =
            refused(files().decide(&post(Some("Bearer t")), LIST, |_| verdict.clone()));
        assert_eq!(resp.status, 401);
        assert_eq!(challenge.error.as_deref(), Some("invalid_token"));
        assert_eq!(challenge.scope.as_deref(), Some("files:read"));
    }
}

#[test]
fn a_token_for_another_resource_is_401_invalid_token() {
    for audience in [
        &[][..],
        &["https://other.example/mcp"][..],
        &["https://mcp.example/mcp/other"][..],
        &["https://mcp.example"][..],
        &["http://mcp.example/mcp"][..],
    ] {
        let (resp, challenge) = refused(files().decide(&post(Some("Bearer t")), LIST, |_| {
            token(&["files:read", "files:write"], audience)
        }));
        assert_eq!(resp.status, 401, "{audience:?}");
        assert_eq!(challenge.error.as_deref(), Some("invalid_token"));
        assert!(challenge
            .error_description
            .is_some_and(|d| d.contains("not issued for this resource")));
    }
}

#[test]
fn the_audience_is_compared_canonically() {
    for audience in ["https://MCP.example/mcp/", "https://mcp.example/mcp"] {
        let decision = files().decide(&post(Some("Bearer t")), LIST, |_| {
            token(&["files:read"], &["https://x.example", audience])
        });
        assert!(decision.is_ok(), "{audience}");
    }
}

#[test]
fn a_missing_base_scope_is_403_with_the_scope_list() {
    let (resp, challenge) = refused(files().decide(&post(Some("Bearer t")), LIST, |_| {
        token(&["other"], &[RESOURCE])
    }));
    assert_eq!(resp.status, 403);
    assert_eq!(challenge.error.as_deref(), Some("insufficient_scope"));
    assert_eq!(challenge.scope.as_deref(), Some("other files:read"));
}

#[test]
fn a_tool_scope_is_needed_only_for_that_tool() {
    let reader = || token(&["files:read"], &[RESOURCE]);
    assert!(files()
        .decide(&post(Some("Bearer t")), LIST, |_| reader())
        .is_ok());
    let (resp, challenge) = refused(files().decide(&post(Some("Bearer t")), DELETE, |_| reader()));
    assert_eq!(resp.status, 403);
    assert_eq!(challenge.error.as_deref(), Some("insufficient_scope"));
    assert_eq!(challenge.scope.as_deref(), Some("files:read files:write"));
    assert!(challenge
        .error_description
        .is_some_and(|d| d.contains("files:write")));
    let writer = token(&["files:read", "files:write"], &[RESOURCE]);
    assert!(files()
        .decide(&post(Some("Bearer t")), DELETE, |_| writer)
        .is_ok());
}

#[test]
fn method_scopes_apply_inside_a_batch() {
    let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},
        {"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"file:///a"}}]"#;
    let (resp, challenge) = refused(files().decide(&post(Some("Bearer t")), batch, |_| {
        token(&["files:read"], &[RESOURCE])
    }));
    assert_eq!(resp.status, 403);
    assert_eq!(challenge.scope.as_deref(), Some("files:read files:watch"));
}

#[test]
fn an_unreadable_body_needs_every_configured_scope() {
    let scopes = files().scopes_for(b"{not json");
    assert_eq!(scopes, ["files:read", "files:watch", "files:write"]);
    assert_eq!(files().scopes_for(b""), ["files:read"]);
    let plain = ProtectedResource::new(RESOURCE, ["https://as.example"]).expect("valid");
    assert!(plain.scopes_for(b"{not json").is_empty());
}

#[test]
fn malformed_credentials_are_400_invalid_request() {
    for head in [
        post(Some("Bearer")),
        post(Some("Bearer two words")),
        post(Some("Bearer a")).header("Authorization", "Bearer a"),
        HttpRequestHead::new(HttpMethod::Post, "/mcp?access_token=t"),
    ] {
        let (resp, challenge) =
            refused(files().decide(&head, LIST, |_| token(&["files:read"], &[RESOURCE])));
        assert_eq!(resp.status, 400, "{head:?}");
        assert_eq!(challenge.error.as_deref(), Some("invalid_request"));
    }
}

#[test]
fn tokens_never_show_in_debug_output() {
    let head = post(Some("Bearer sup3r-s3cret"));
    let decision = files().decide(&head, LIST, |t| {
        assert!(!format!("{t:?}").contains("sup3r"));
        TokenValidation::Invalid
    });
    assert!(!format!("{decision:?}").contains("sup3r"));
}

proptest::proptest! {
    #[test]
    fn never_panics_on_any_authorization_header(
        values in proptest::collection::vec("\\PC{0,80}", 0..3),
        target in "/mcp(\\?\\PC{0,40})?",
        body in proptest::collection::vec(proptest::num::u8::ANY, 0..64),
    ) {
        let head = values.iter().fold(
            HttpRequestHead::new(HttpMethod::Post, target),
            |head, v| head.header("authorization", v.clone()),
        );
        match files().decide(&head, &body, |_| token(&["files:read"], &[RESOURCE])) {
            Ok(_) => proptest::prop_assert_eq!(values.len(), 1),
            Err(resp) => {
                proptest::prop_assert!([400, 401, 403].contains(&resp.status));
                let challenge = BearerChallenge::find(resp.get("www-authenticate"));
                proptest::prop_assert!(challenge.is_some());
            }
        }
    }

    #[test]
    fn any_b64token_is_handed_to_the_callback(token_text in "[A-Za-z0-9._~+/-]{1,60}=*") {
        let head = post(Some(&format!("Bearer {token_text}")));
        let mut seen = None;
        let _ = files().decide(&head, LIST, |t| {
            seen = Some(t.expose().to_owned());
            TokenValidation::Invalid
        });
        proptest::prop_assert_eq!(seen, Some(token_text));
    }
}
