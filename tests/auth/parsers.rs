//! The OAuth parsers of `mcp_sansio::auth`: `WWW-Authenticate` parsing, metadata documents,
//! discovery URL orders, scope selection, redirects, secrets and the encodings they use.

use mcp_sansio::auth::*;
use mcp_sansio::encoding::{
    base64_standard, base64_standard_decode, base64url, base64url_decode, percent_decode,
    percent_encode, sha256,
};
use mcp_sansio::url::resource_covers;

#[test]
fn bearer_challenge_reads_all_parameters_and_escapes() {
    let value = r#"Bearer realm="mcp", error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="https://x.test/.well-known/oauth-protected-resource/mcp", error_description="need \"write\"""#;
    let c = BearerChallenge::find([value]).expect("bearer");
    assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
    assert_eq!(c.scope.as_deref(), Some("mcp:basic mcp:write"));
    assert_eq!(
        c.resource_metadata.as_deref(),
        Some("https://x.test/.well-known/oauth-protected-resource/mcp")
    );
    assert_eq!(c.error_description.as_deref(), Some(r#"need "write""#));
}

#[test]
fn protected_resource_metadata_keeps_unknown_members() {
    let body = br#"{"resource":"https://x.test/mcp","authorization_servers":["https://as.test"],"scopes_supported":["a","b"],"x-vendor":{"k":1}}"#;
    let prm = ProtectedResourceMetadata::parse(body).expect("prm");
    assert_eq!(
        prm.scopes_supported.as_deref(),
        Some(&["a".into(), "b".into()][..])
    );
    assert_eq!(prm.extra["x-vendor"]["k"], 1);
    let round = serde_json::to_value(&prm).expect("serialize");
    assert_eq!(round["x-vendor"]["k"], 1);
}

#[test]
fn bad_metadata_is_refused() {
    let prm_cases: [&[u8]; 3] = [
        b"not json",
        br#"{"authorization_servers":["https://as.test"]}"#,
        br#"{"resource":"https://x.test","authorization_servers":[]}"#,
    ];
    for body in prm_cases {
        assert!(matches!(
            ProtectedResourceMetadata::parse(body),
            Err(AuthError::BadMetadata(_))
        ));
    }
    let as_cases: [&[u8]; 3] = [
        br#"{"issuer":"https://as.test","token_endpoint":"https://as.test/t","code_challenge_methods_supported":["S256"]}"#,
        br#"{"issuer":"https://as.test","authorization_endpoint":"https://as.test/a","token_endpoint":"https://as.test/t"}"#,
        br#"{"issuer":"https://as.test","authorization_endpoint":"https://as.test/a","token_endpoint":"https://as.test/t","code_challenge_methods_supported":["plain"]}"#,
    ];
    for body in as_cases {
        assert!(matches!(
            AuthorizationServerMetadata::parse(body),
            Err(AuthError::BadMetadata(_))
        ));
    }
}

#[test]
fn prm_urls_header_then_path_then_root() {
    assert_eq!(
        protected_resource_metadata_urls(
            "http://127.0.0.1:9/api/mcp/",
            Some("http://127.0.0.1:9/custom/prm")
        ),
        [
            "http://127.0.0.1:9/custom/prm",
            "http://127.0.0.1:9/.well-known/oauth-protected-resource/api/mcp",
            "http://127.0.0.1:9/.well-known/oauth-protected-resource",
        ]
    );
    assert_eq!(
        protected_resource_metadata_urls("https://X.test", Some("not a url")),
        ["https://x.test/.well-known/oauth-protected-resource"]
    );
    assert!(protected_resource_metadata_urls("file:///x", None).is_empty());
}

#[test]
fn as_metadata_urls_with_and_without_path() {
    assert_eq!(
        authorization_server_metadata_urls("https://as.test/tenant1/"),
        [
            "https://as.test/.well-known/oauth-authorization-server/tenant1",
            "https://as.test/.well-known/openid-configuration/tenant1",
            "https://as.test/tenant1/.well-known/openid-configuration",
        ]
    );
    assert_eq!(
        authorization_server_metadata_urls("https://as.test"),
        [
            "https://as.test/.well-known/oauth-authorization-server",
            "https://as.test/.well-known/openid-configuration",
        ]
    );
    assert_eq!(
        legacy_metadata_url("http://h:1/deep/mcp"),
        Some((
            "http://h:1/.well-known/oauth-authorization-server".into(),
            "http://h:1".into()
        ))
    );
}

#[test]
fn resource_check_is_origin_and_segment_prefix() {
    assert!(resource_covers("https://x.test/mcp", "https://X.test/mcp/"));
    assert!(resource_covers("https://x.test", "https://x.test/mcp"));
    assert!(!resource_covers("https://x.test/mc", "https://x.test/mcp"));
    assert!(!resource_covers(
        "https://evil.test/mcp",
        "https://x.test/mcp"
    ));
    assert!(!resource_covers("http://x.test/mcp", "https://x.test/mcp"));
    assert!(!resource_covers("garbage", "https://x.test/mcp"));
}

#[test]
fn scope_selection_challenge_then_prm_then_none() {
    let supported = vec!["a".to_owned(), "b".to_owned()];
    assert_eq!(
        select_scope(Some("x y"), Some(&supported)).as_deref(),
        Some("x y")
    );
    assert_eq!(select_scope(None, Some(&supported)).as_deref(), Some("a b"));
    assert_eq!(select_scope(Some(" "), Some(&[])), None);
    assert_eq!(select_scope(None, None), None);
}

#[test]
fn application_type_follows_the_redirect_uri() {
    for native in [
        "http://localhost:3000/callback",
        "http://LOCALHOST/cb",
        "http://127.0.0.1:8080/cb",
        "http://[::1]:9/cb",
        "com.example.app:/oauth",
        "myapp://callback",
    ] {
        assert_eq!(application_type(native), "native", "{native}");
    }
    for web in [
        "https://app.example.com/callback",
        "https://localhost.example.com/cb",
        "http://127.0.0.1.example.com/cb",
        "https://user@host.example/cb",
    ] {
        assert_eq!(application_type(web), "web", "{web}");
    }
}

#[test]
fn redirect_location_gives_code_and_state() {
    let (code, state) =
        parse_redirect("http://127.0.0.1/cb?code=a%2Bb&state=xyz#frag").expect("ok");
    assert_eq!(code.expose(), "a+b");
    assert_eq!(state.as_deref(), Some("xyz"));
    assert_eq!(
        parse_redirect("http://127.0.0.1/cb?error=access_denied&state=x").err(),
        Some(AuthError::AuthorizationDenied(r#""access_denied""#.into()))
    );
    // The error and its description (RFC 6749 section 4.1.2.1) are quoted: a hostile
    // authorization server can neither move a terminal's cursor nor flood a log.
    let denied = parse_redirect(&format!(
        "http://127.0.0.1/cb?error=access%0Ddenied&error_description=The%20user%20said%20no%1B%5B2J{}&state=x",
        "x".repeat(1000)
    ))
    .expect_err("denied");
    assert_eq!(
        denied,
        AuthError::AuthorizationDenied(format!(
            r#""access\rdenied": "The user said no\u{{1b}}[2J{}"... (1020 bytes)"#,
            "x".repeat(200 - 20)
        ))
    );
    assert!(parse_redirect("http://127.0.0.1/cb?state=x").is_err());
    // A redirect elsewhere (a login page) names where, quoted and escaped.
    assert_eq!(
        parse_redirect("https://login.example/\u{1b}[2J?next=1").err(),
        Some(AuthError::AuthorizationDenied(
            r#"the redirect to "https://login.example/\u{1b}[2J?next=1" carries no code"#.into()
        ))
    );
}

#[test]
fn secrets_never_appear_in_debug() {
    let token = parse_token_response(
        br#"{"access_token":"AT-123","token_type":"bearer","refresh_token":"RT-456","expires_in":10}"#,
    )
    .expect("token");
    let text = format!("{token:?} {:?}", Secret::new("hunter2"));
    for secret in ["AT-123", "RT-456", "hunter2"] {
        assert!(!text.contains(secret), "{text}");
    }
    assert_eq!(token.access_token.expose(), "AT-123");
    assert!(parse_token_response(br#"{"access_token":"x","token_type":"mac"}"#).is_err());
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn sha256_fips_180_vectors() {
    assert_eq!(
        hex(&sha256(b"abc")),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(
        hex(&sha256(b"")),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(
        hex(&sha256(
            b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
        )),
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    );
    assert_eq!(
        hex(&sha256(&[b'a'; 1_000_000])),
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
    );
}

#[test]
fn base64_rfc4648_vectors() {
    let cases = [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foobar", "Zm9vYmFy"),
    ];
    for (input, want) in cases {
        assert_eq!(base64_standard(input.as_bytes()), want);
        assert_eq!(base64url(input.as_bytes()), want.trim_end_matches('='));
    }
    assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
}

#[test]
fn base64_decoders_invert_the_encoders_and_refuse_malformed_text() {
    for input in ["", "f", "fo", "foo", "foob", "fooba", "foobar"] {
        let bytes = input.as_bytes();
        assert_eq!(
            base64_standard_decode(&base64_standard(bytes)).unwrap(),
            bytes
        );
        assert_eq!(base64url_decode(&base64url(bytes)).unwrap(), bytes);
    }
    assert_eq!(base64url_decode("-_8").unwrap(), [0xfb, 0xff]);
    // Wrong alphabet, bad length, padding where it may not be.
    // ... and a last symbol with unused low bits set ("Zg" is the one spelling of "f").
    for bad in ["Zm9v+", "Z", "Zm9vY", "Zm8=", "-_8=", "Zh", "Zm9", "-_9"] {
        assert_eq!(base64url_decode(bad), None, "{bad}");
    }
    for bad in [
        "Zm8", "Zg=", "Z===", "Zg==Zg==", "Zm-v", "Zm9v_A==", "Zh==", "Zm9=",
    ] {
        assert_eq!(base64_standard_decode(bad), None, "{bad}");
    }
}

#[test]
fn percent_round_trip() {
    let text = "a b&c=d/\u{e9}+%";
    assert_eq!(percent_decode(&percent_encode(text)), text);
    assert_eq!(percent_decode("%zz%4"), "%zz%4");
}

proptest::proptest! {
    /// No input makes a parser panic.
    #[test]
    fn parsers_never_panic(text in "\\PC{0,200}", bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
        let _ = BearerChallenge::find([text.as_str()]);
        let _ = parse_redirect(&text);
        let _ = mcp_sansio::url::HttpUrl::parse(&text);
        let _ = resource_covers(&text, "https://x.test/mcp");
        let _ = protected_resource_metadata_urls(&text, Some(&text));
        let _ = authorization_server_metadata_urls(&text);
        let _ = percent_decode(&text);
        let _ = ProtectedResourceMetadata::parse(&bytes);
        let _ = AuthorizationServerMetadata::parse(&bytes);
        let _ = parse_token_response(&bytes);
    }

    /// Quoted parameter values survive any content (escaped on the way in).
    #[test]
    fn quoted_scope_round_trips(scope in "[ -~]{0,60}") {
        let escaped = scope.replace('\\', "\\\\").replace('"', "\\\"");
        let header = format!("Bearer realm=\"r\", scope=\"{escaped}\"");
        let found = BearerChallenge::find([header.as_str()]).and_then(|c| c.scope);
        proptest::prop_assert_eq!(found.as_deref(), Some(scope.as_str()));
    }
}
