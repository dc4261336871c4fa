//! The client authorization flow (`AuthFlow`) driven against an in-memory authorization
//! server and resource: every discovery fallback, registration mode, failure path, step-up,
//! retry limit and refresh. The fake server checks what a real one would (PKCE, state,
//! resource, client auth) so a flow that sends the wrong thing fails here.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use mcp_sansio::auth::*;
use mcp_sansio::encoding::{base64url, percent_decode, sha256};
use mcp_sansio::outgoing::{OutgoingRequest, ReceivedResponse};
use mcp_sansio::url::query_param;

const SERVER: &str = "http://127.0.0.1:7000/mcp";
const REDIRECT: &str = "http://127.0.0.1:7999/callback";
const AS: &str = "http://127.0.0.1:7001";

/// An in-memory set of HTTP endpoints plus a fake authorization endpoint.
struct World {
    docs: HashMap<String, (u16, String)>,
    /// Every URL requested, in order.
    log: Vec<String>,
    /// Authorization URLs the user agent was sent to.
    authorizations: Vec<String>,
    /// PKCE challenge of the last authorization, checked at the token endpoint.
    challenge: Option<String>,
    token_requests: Vec<OutgoingRequest>,
    tokens_issued: u32,
    expires_in: u64,
}

fn prm(resource: &str, scopes: Option<&str>) -> String {
    let scopes = scopes.map_or(String::new(), |s| format!(r#","scopes_supported":{s}"#));
    format!(r#"{{"resource":"{resource}","authorization_servers":["{AS}"]{scopes}}}"#)
}

fn as_meta(issuer: &str, extra: &str) -> String {
    format!(
        r#"{{"issuer":"{issuer}","authorization_endpoint":"{AS}/authorize","token_endpoint":"{AS}/token","registration_endpoint":"{AS}/register","code_challenge_methods_supported":["S256"]{extra}}}"#
    )
}

fn form_field(body: &[u8], name: &str) -> Option<String> {
    std::str::from_utf8(body).ok()?.split('&').find_map(|p| {
        let (n, v) = p.split_once('=')?;
        (percent_decode(n) == name).then(|| percent_decode(v))
    })
}

impl World {
    fn new() -> Self {
        let mut world = Self {
            docs: HashMap::new(),
            log: Vec::new(),
            authorizations: Vec::new(),
            challenge: None,
            token_requests: Vec::new(),
            tokens_issued: 0,
            expires_in: 3600,
        };
        world.serve(
            "http://127.0.0.1:7000/.well-known/oauth-protected-resource/mcp",
            &prm(SERVER, None),
        );
        world.serve(
            &format!("{AS}/.well-known/oauth-authorization-server"),
            &as_meta(AS, ""),
        );
        world.docs.insert(
            format!("{AS}/register"),
            (
                201,
                r#"{"client_id":"dyn-1","token_endpoint_auth_method":"none"}"#.into(),
            ),
        );
        world
    }

    fn serve(&mut self, url: &str, body: &str) {
        self.docs.insert(url.to_owned(), (200, body.to_owned()));
    }

    /// Dynamic client registration at `{base}/register` answers with client id `d`.
    fn register_at(&mut self, base: &str) {
        self.docs.insert(
            format!("{base}/register"),
            (201, r#"{"client_id":"d"}"#.into()),
        );
    }

    fn answer(&mut self, req: &OutgoingRequest) -> ReceivedResponse {
        self.log.push(req.url_str().unwrap_or_default().to_owned());
        if req.url_str().unwrap_or_default().ends_with("/token") {
            return self.token(req);
        }
        let (status, body) = self
            .docs
            .get(req.url_str().unwrap_or_default())
            .cloned()
            .unwrap_or((404, String::new()));
        ReceivedResponse {
            status,
            headers: Vec::new(),
            body: body.into_bytes(),
        }
    }

    fn token(&mut self, req: &OutgoingRequest) -> ReceivedResponse {
        self.token_requests.push(req.clone());
        let grant = form_field(&req.body, "grant_type").unwrap_or_default();
        if grant == "authorization_code" {
            let verifier = form_field(&req.body, "code_verifier").unwrap_or_default();
            if Some(base64url(&sha256(verifier.as_bytes()))) != self.challenge {
                return ReceivedResponse {
                    status: 400,
                    body: br#"{"error":"invalid_grant"}"#.to_vec(),
                    ..Default::default()
                };
            }
        }
        self.tokens_issued += 1;
        let body = format!(
            r#"{{"access_token":"AT-{n}","token_type":"Bearer","expires_in":{e},"refresh_token":"RT-{n}"}}"#,
            n = self.tokens_issued,
            e = self.expires_in
        );
        ReceivedResponse {
            status: 200,
            headers: Vec::new(),
            body: body.into_bytes(),
        }
    }

    /// The user agent at the authorization endpoint: approves at once and redirects.
    fn authorize(&mut self, url: &str) -> String {
        self.authorizations.push(url.to_owned());
        self.challenge = query_param(url, "code_challenge");
        let state = query_param(url, "state").unwrap_or_default();
        format!(
            "{REDIRECT}?code=C{}&state={state}",
            self.authorizations.len()
        )
    }

    /// Drives the flow until it settles; returns the events seen.
    fn drive(&mut self, flow: &mut AuthFlow, now: Instant) -> Vec<AuthEvent> {
        let mut events = Vec::new();
        for _ in 0..50 {
            if let Some(req) = flow.poll_request() {
                let resp = self.answer(&req);
                flow.handle_response(now, resp).expect("response accepted");
                continue;
            }
            let Some(event) = flow.poll_event() else {
                return events;
            };
            if let AuthEvent::Authorize { url } = &event {
                let location = self.authorize(url);
                flow.handle_redirect(&location).expect("redirect accepted");
            }
            events.push(event);
        }
        panic!("flow did not settle");
    }
}

fn unauthorized(header: Option<&str>) -> ReceivedResponse {
    ReceivedResponse {
        status: 401,
        headers: header
            .map(|h| vec![("WWW-Authenticate".to_owned(), h.to_owned())])
            .unwrap_or_default(),
        body: Vec::new(),
    }
}

/// A flow for the default config that has just taken a bare 401 (random bytes `seed`), and
/// the time it took it.
fn challenged(seed: u8) -> (AuthFlow, Instant) {
    let now = Instant::now();
    let mut flow = AuthFlow::new(AuthConfig::new(SERVER, REDIRECT));
    flow.handle_challenge(now, &unauthorized(None), &[seed; 48])
        .expect("challenge");
    (flow, now)
}

/// Pre-registered credentials with `client_secret_basic`.
fn basic_client(client_id: &str, secret: &str) -> ClientCredentials {
    ClientCredentials {
        client_id: client_id.into(),
        client_secret: Some(Secret::new(secret)),
        auth_method: ClientAuthMethod::ClientSecretBasic,
    }
}

fn forbidden(scope: &str) -> ReceivedResponse {
    ReceivedResponse {
        status: 403,
        headers: vec![(
            "www-authenticate".to_owned(),
            format!(r#"Bearer error="insufficient_scope", scope="{scope}""#),
        )],
        body: Vec::new(),
    }
}

fn run(
    world: &mut World,
    config: AuthConfig,
    challenge: ReceivedResponse,
) -> (AuthFlow, Vec<AuthEvent>) {
    let now = Instant::now();
    let mut flow = AuthFlow::new(config);
    flow.handle_challenge(now, &challenge, &[7; 48])
        .expect("challenge");
    let events = world.drive(&mut flow, now);
    (flow, events)
}

/// [`run`] with the default configuration and a bare 401 (no `WWW-Authenticate`).
fn run_plain(world: &mut World) -> (AuthFlow, Vec<AuthEvent>) {
    run(world, AuthConfig::new(SERVER, REDIRECT), unauthorized(None))
}

fn authorized(events: &[AuthEvent]) -> bool {
    events.last() == Some(&AuthEvent::Authorized)
}

fn failure(events: &[AuthEvent]) -> Option<&AuthError> {
    match events.last() {
        Some(AuthEvent::Failed(e)) => Some(e),
        _ => None,
    }
}

#[test]
fn default_discovery_dcr_pkce_and_token() {
    let mut world = World::new();
    let (flow, events) = run(
        &mut world,
        AuthConfig::new(SERVER, REDIRECT),
        unauthorized(Some("Bearer")),
    );
    assert!(authorized(&events), "{events:?}");
    assert_eq!(
        world.log,
        [
            "http://127.0.0.1:7000/.well-known/oauth-protected-resource/mcp",
            "http://127.0.0.1:7001/.well-known/oauth-authorization-server",
            "http://127.0.0.1:7001/register",
            "http://127.0.0.1:7001/token",
        ]
    );
    assert_eq!(
        flow.access_token(Instant::now()).map(Secret::expose),
        Some("AT-1")
    );
    assert_eq!(flow.client().map(|c| c.client_id.as_str()), Some("dyn-1"));
    let auth_url = &world.authorizations[0];
    assert_eq!(query_param(auth_url, "resource").as_deref(), Some(SERVER));
    assert_eq!(query_param(auth_url, "client_id").as_deref(), Some("dyn-1"));
    assert_eq!(query_param(auth_url, "scope"), None);
    let token_body = &world.token_requests[0].body;
    assert_eq!(form_field(token_body, "resource").as_deref(), Some(SERVER));
    assert_eq!(form_field(token_body, "code").as_deref(), Some("C1"));
    assert_eq!(
        form_field(token_body, "redirect_uri").as_deref(),
        Some(REDIRECT)
    );
}

#[test]
fn prm_url_from_header_is_tried_first() {
    let mut world = World::new();
    let custom = "http://127.0.0.1:7000/custom/metadata";
    world.serve(custom, &prm(SERVER, Some(r#"["mcp:a","mcp:b"]"#)));
    let header = format!(r#"Bearer resource_metadata="{custom}""#);
    let (_, events) = run(
        &mut world,
        AuthConfig::new(SERVER, REDIRECT),
        unauthorized(Some(&header)),
    );
    assert!(authorized(&events));
    assert_eq!(world.log[0], custom);
    assert_eq!(
        query_param(&world.authorizations[0], "scope").as_deref(),
        Some("mcp:a mcp:b")
    );
}

#[test]
fn prm_falls_back_to_root_and_scope_comes_from_challenge() {
    let mut world = World::new();
    world.docs.clear();
    world.serve(
        "http://127.0.0.1:7000/.well-known/oauth-protected-resource",
        &prm("http://127.0.0.1:7000", Some(r#"["x"]"#)),
    );
    world.serve(
        &format!("{AS}/.well-known/oauth-authorization-server"),
        &as_meta(AS, ""),
    );
    world.register_at(AS);
    let (flow, events) = run(
        &mut world,
        AuthConfig::new(SERVER, REDIRECT),
        unauthorized(Some(r#"Bearer scope="from:header""#)),
    );
    assert!(authorized(&events), "{events:?}");
    assert_eq!(
        world.log[..2],
        [
            "http://127.0.0.1:7000/.well-known/oauth-protected-resource/mcp",
            "http://127.0.0.1:7000/.well-known/oauth-protected-resource",
        ]
    );
    assert_eq!(flow.resource(), Some("http://127.0.0.1:7000"));
    assert_eq!(
        query_param(&world.authorizations[0], "scope").as_deref(),
        Some("from:header")
    );
}

#[test]
fn as_metadata_falls_back_to_oidc_path_appended() {
    let mut world = World::new();
    let issuer = format!("{AS}/tenant1");
    world.docs.clear();
    world.serve(
        "http://127.0.0.1:7000/.well-known/oauth-protected-resource/mcp",
        &format!(r#"{{"resource":"{SERVER}","authorization_servers":["{issuer}"]}}"#),
    );
    world.serve(
        &format!("{issuer}/.well-known/openid-configuration"),
        &as_meta(&issuer, ""),
    );
    world.register_at(AS);
    let (_, events) = run_plain(&mut world);
    assert!(authorized(&events), "{events:?}");
    assert_eq!(
        world.log[1..4],
        [
            format!("{AS}/.well-known/oauth-authorization-server/tenant1"),
            format!("{AS}/.well-known/openid-configuration/tenant1"),
            format!("{AS}/tenant1/.well-known/openid-configuration"),
        ]
    );
}

#[test]
fn legacy_2025_03_26_metadata_at_server_root() {
    let mut world = World::new();
    world.docs.clear();
    let root = "http://127.0.0.1:7000";
    world.serve(
        &format!("{root}/.well-known/oauth-authorization-server"),
        &as_meta(root, ""),
    );
    world.register_at(AS);
    let (flow, events) = run_plain(&mut world);
    assert!(authorized(&events), "{events:?}");
    assert_eq!(
        world.log[2],
        format!("{root}/.well-known/oauth-authorization-server")
    );
    assert_eq!(flow.resource(), Some(SERVER));
}

#[test]
fn legacy_2025_03_26_default_endpoints() {
    let mut world = World::new();
    world.docs.clear();
    let root = "http://127.0.0.1:7000";
    world.register_at(root);
    let (mut flow, now) = challenged(1);
    let mut seen = Vec::new();
    for _ in 0..10 {
        match flow.poll_request() {
            Some(req) => {
                seen.push(req.url_str().unwrap_or_default().to_owned());
                let resp = world.answer(&req);
                flow.handle_response(now, resp).expect("ok");
            }
            None => break,
        }
    }
    assert_eq!(
        seen.last().map(String::as_str),
        Some("http://127.0.0.1:7000/register")
    );
    let Some(AuthEvent::Registered(_)) = flow.poll_event() else {
        panic!("registered")
    };
    let Some(AuthEvent::Authorize { url }) = flow.poll_event() else {
        panic!("authorize")
    };
    assert!(url.starts_with("http://127.0.0.1:7000/authorize?"), "{url}");
}

#[test]
fn resource_mismatch_is_refused_before_any_as_request() {
    let mut world = World::new();
    world.serve(
        "http://127.0.0.1:7000/.well-known/oauth-protected-resource/mcp",
        &prm("http://127.0.0.1:7000/other", None),
    );
    let (flow, events) = run_plain(&mut world);
    assert!(
        matches!(failure(&events), Some(AuthError::ResourceMismatch { .. })),
        "{events:?}"
    );
    assert_eq!(world.log.len(), 1);
    assert!(flow.access_token(Instant::now()).is_none());
}

#[test]
fn bad_metadata_and_missing_discovery_fail() {
    let mut world = World::new();
    world.serve(
        "http://127.0.0.1:7000/.well-known/oauth-protected-resource/mcp",
        "<html>",
    );
    let (_, events) = run_plain(&mut world);
    assert!(matches!(failure(&events), Some(AuthError::BadMetadata(_))));

    let mut world = World::new();
    world.serve(
        &format!("{AS}/.well-known/oauth-authorization-server"),
        &as_meta(AS, "").replace("S256", "plain"),
    );
    let (_, events) = run_plain(&mut world);
    assert!(
        matches!(failure(&events), Some(AuthError::BadMetadata(_))),
        "{events:?}"
    );

    let mut world = World::new();
    world
        .docs
        .remove(&format!("{AS}/.well-known/oauth-authorization-server"));
    let (_, events) = run_plain(&mut world);
    assert!(
        matches!(failure(&events), Some(AuthError::DiscoveryFailed(_))),
        "{events:?}"
    );
    assert_eq!(world.log.len(), 3);
}

#[test]
fn registration_failure_and_state_mismatch() {
    let mut world = World::new();
    world.docs.insert(
        format!("{AS}/register"),
        (400, r#"{"error":"invalid_client_metadata"}"#.into()),
    );
    let (_, events) = run_plain(&mut world);
    assert!(matches!(
        failure(&events),
        Some(AuthError::RegistrationFailed(_))
    ));

    let mut world = World::new();
    let (mut flow, now) = challenged(2);
    while let Some(req) = flow.poll_request() {
        let resp = world.answer(&req);
        flow.handle_response(now, resp).expect("ok");
    }
    assert!(matches!(flow.poll_event(), Some(AuthEvent::Registered(_))));
    assert!(matches!(
        flow.poll_event(),
        Some(AuthEvent::Authorize { .. })
    ));
    flow.handle_redirect(&format!("{REDIRECT}?code=C&state=forged"))
        .expect("accepted");
    assert_eq!(
        flow.poll_event(),
        Some(AuthEvent::Failed(AuthError::StateMismatch))
    );
    assert!(flow.poll_request().is_none());
}

#[test]
fn cimd_url_replaces_registration_when_supported() {
    let mut world = World::new();
    world.serve(
        &format!("{AS}/.well-known/oauth-authorization-server"),
        &as_meta(AS, r#","client_id_metadata_document_supported":true"#),
    );
    let mut config = AuthConfig::new(SERVER, REDIRECT);
    config.client_metadata_url = Some("https://client.test/meta.json".into());
    let (_, events) = run(&mut world, config, unauthorized(None));
    assert!(authorized(&events));
    assert!(world.log.iter().all(|u| !u.ends_with("/register")));
    assert!(events.contains(&AuthEvent::Registered(Registration::MetadataDocument)));
    assert_eq!(
        query_param(&world.authorizations[0], "client_id").as_deref(),
        Some("https://client.test/meta.json")
    );
}

#[test]
fn pre_registered_client_uses_basic_auth() {
    let mut world = World::new();
    let mut config = AuthConfig::new(SERVER, REDIRECT);
    config.pre_registered = Some(basic_client("pre", "pre-secret"));
    let (flow, events) = run(&mut world, config, unauthorized(None));
    assert!(authorized(&events));
    assert!(world.log.iter().all(|u| !u.ends_with("/register")));
    let req = &world.token_requests[0];
    assert!(req
        .headers
        .iter()
        .any(|(n, v)| *n == "authorization" && v.starts_with("Basic ")));
    let debug = format!("{flow:?} {config:?}", config = flow.client());
    for secret in ["pre-secret", "AT-1", "RT-1"] {
        assert!(!debug.contains(secret), "{secret} leaked");
    }
}

#[test]
fn dcr_asks_for_the_offered_auth_method() {
    let mut world = World::new();
    world.serve(
        &format!("{AS}/.well-known/oauth-authorization-server"),
        &as_meta(
            AS,
            r#","token_endpoint_auth_methods_supported":["client_secret_post"]"#,
        ),
    );
    world.docs.insert(
        format!("{AS}/register"),
        (
            201,
            r#"{"client_id":"d","client_secret":"dyn-secret"}"#.into(),
        ),
    );
    let (_, events) = run_plain(&mut world);
    assert!(authorized(&events));
    let body = &world.token_requests[0].body;
    assert_eq!(
        form_field(body, "client_secret").as_deref(),
        Some("dyn-secret")
    );
}

#[test]
fn step_up_reauthorizes_with_union_scope_without_rediscovery() {
    let mut world = World::new();
    let now = Instant::now();
    let mut flow = AuthFlow::new(AuthConfig::new(SERVER, REDIRECT));
    flow.handle_challenge(
        now,
        &unauthorized(Some(r#"Bearer scope="mcp:basic""#)),
        &[3; 48],
    )
    .expect("401");
    assert!(authorized(&world.drive(&mut flow, now)));
    let requests_before = world.log.len();
    flow.handle_challenge(now, &forbidden("mcp:basic mcp:write"), &[4; 48])
        .expect("403");
    assert!(authorized(&world.drive(&mut flow, now)));
    assert_eq!(
        world.log.len(),
        requests_before + 1,
        "only the token request"
    );
    assert_eq!(
        query_param(&world.authorizations[1], "scope").as_deref(),
        Some("mcp:basic mcp:write")
    );
    assert_ne!(
        query_param(&world.authorizations[0], "state"),
        query_param(&world.authorizations[1], "state")
    );
    assert_eq!(flow.access_token(now).map(Secret::expose), Some("AT-2"));
}

#[test]
fn scope_retry_limit_gives_up_after_three_authorizations() {
    let mut world = World::new();
    let (mut flow, now) = challenged(5);
    let mut last = world.drive(&mut flow, now);
    for round in 0..10u8 {
        if failure(&last).is_some() {
            break;
        }
        flow.handle_challenge(now, &forbidden("mcp:write"), &[round; 48])
            .expect("403");
        last = world.drive(&mut flow, now);
    }
    assert_eq!(failure(&last), Some(&AuthError::RetryLimit(3)));
    assert_eq!(world.authorizations.len(), 3);
}

#[test]
fn token_is_refreshed_before_expiry() {
    let mut world = World::new();
    world.expires_in = 60;
    let (mut flow, now) = challenged(6);
    assert!(authorized(&world.drive(&mut flow, now)));
    let deadline = flow.poll_timeout().expect("refresh deadline");
    assert_eq!(deadline, now + Duration::from_secs(30));
    flow.handle_timeout(now + Duration::from_secs(29));
    assert!(flow.poll_request().is_none(), "too early");
    assert!(
        flow.access_token(now + Duration::from_secs(61)).is_none(),
        "expired token hidden"
    );
    flow.handle_timeout(deadline);
    assert!(authorized(&world.drive(&mut flow, deadline)));
    let refresh = world.token_requests.last().expect("refresh request");
    assert_eq!(
        form_field(&refresh.body, "grant_type").as_deref(),
        Some("refresh_token")
    );
    assert_eq!(
        form_field(&refresh.body, "refresh_token").as_deref(),
        Some("RT-1")
    );
    assert_eq!(
        form_field(&refresh.body, "resource").as_deref(),
        Some(SERVER)
    );
    assert_eq!(
        flow.access_token(deadline).map(Secret::expose),
        Some("AT-2")
    );
    assert_eq!(world.authorizations.len(), 1, "no new user round trip");
}

#[test]
fn client_credentials_grant_skips_the_user() {
    let mut world = World::new();
    let mut config = AuthConfig::new(SERVER, REDIRECT);
    config.client_credentials_grant = true;
    config.pre_registered = Some(basic_client("m2m", "s"));
    let (_, events) = run(&mut world, config, unauthorized(None));
    assert!(authorized(&events));
    assert!(world.authorizations.is_empty());
    let body = &world.token_requests[0].body;
    assert_eq!(
        form_field(body, "grant_type").as_deref(),
        Some("client_credentials")
    );
}

#[test]
fn misuse_is_an_error_not_a_panic() {
    let mut flow = AuthFlow::new(AuthConfig::new(SERVER, REDIRECT));
    let now = Instant::now();
    assert!(flow
        .handle_response(now, ReceivedResponse::default())
        .is_err());
    assert!(flow.handle_redirect("http://x/?code=1").is_err());
    let ok = ReceivedResponse {
        status: 200,
        ..Default::default()
    };
    assert!(flow.handle_challenge(now, &ok, &[0; 48]).is_err());
    flow.handle_challenge(now, &unauthorized(None), &[0; 48])
        .expect("401");
    assert!(flow
        .handle_challenge(now, &unauthorized(None), &[0; 48])
        .is_err());
}

#[test]
fn metadata_naming_another_issuer_is_refused_before_registration() {
    let mut world = World::new();
    world.serve(
        &format!("{AS}/.well-known/oauth-authorization-server"),
        &as_meta("http://127.0.0.1:7666", ""),
    );
    let (flow, events) = run_plain(&mut world);
    assert!(
        matches!(failure(&events), Some(AuthError::BadMetadata(m)) if m.contains("7666")),
        "{events:?}"
    );
    // Nothing of the mismatched metadata was used: no registration, no authorization.
    assert!(!world.log.iter().any(|u| u.ends_with("/register")));
    assert!(world.authorizations.is_empty());
    assert!(flow.access_token(Instant::now()).is_none());
}

#[test]
fn a_401_rediscovers_and_a_moved_resource_registers_with_the_new_server() {
    const NEW_AS: &str = "http://127.0.0.1:7002";
    let mut world = World::new();
    world.expires_in = 3600;
    let (mut flow, now) = challenged(7);
    assert!(authorized(&world.drive(&mut flow, now)));

    // The same server again: rediscovered, then its refresh token is used; no second
    // registration, no new authorization.
    let before = world.log.len();
    flow.handle_challenge(now, &unauthorized(None), &[8; 48])
        .expect("challenge");
    assert!(authorized(&world.drive(&mut flow, now)));
    let again: Vec<_> = world.log[before..].to_vec();
    assert!(
        !again.iter().any(|u| u.ends_with("/register")),
        "re-registered with the same server: {again:?}"
    );
    assert_eq!(world.authorizations.len(), 1);
    let refresh = world.token_requests.last().expect("token request");
    assert_eq!(
        form_field(&refresh.body, "grant_type").as_deref(),
        Some("refresh_token")
    );

    // The resource moves to another authorization server (SEP-2352).
    world.serve(
        "http://127.0.0.1:7000/.well-known/oauth-protected-resource/mcp",
        &prm(SERVER, None).replace(AS, NEW_AS),
    );
    world.serve(
        &format!("{NEW_AS}/.well-known/oauth-authorization-server"),
        &as_meta(NEW_AS, "").replace(&format!("{AS}/"), &format!("{NEW_AS}/")),
    );
    world.docs.insert(
        format!("{NEW_AS}/register"),
        (
            201,
            r#"{"client_id":"dyn-new","token_endpoint_auth_method":"none"}"#.into(),
        ),
    );
    let before = world.log.len();
    flow.handle_challenge(now, &unauthorized(None), &[9; 48])
        .expect("challenge");
    let events = world.drive(&mut flow, now);
    assert!(authorized(&events), "{events:?}");
    let moved: Vec<_> = world.log[before..].to_vec();
    assert!(
        moved.contains(&format!("{NEW_AS}/register")),
        "no registration at the new server: {moved:?}"
    );
    assert_eq!(flow.client().map(|c| c.client_id.as_str()), Some("dyn-new"));
    let last = world.authorizations.last().expect("authorized");
    assert_eq!(query_param(last, "client_id").as_deref(), Some("dyn-new"));
    // The old server's refresh token went nowhere: the new one got an authorization code.
    assert!(!moved.contains(&format!("{AS}/token")), "{moved:?}");
}

#[test]
fn a_401_whose_challenge_cannot_be_read_is_quoted_when_discovery_without_it_fails() {
    // No metadata anywhere: discovery falls back to the default endpoints, whose registration
    // is refused. The error names the header it could not read first, quoted and escaped.
    let mut world = World::new();
    world.docs.clear();
    let header = format!("\u{1b}[2J{{{{ ~~ {}", "x".repeat(400));
    let (_, events) = run(
        &mut world,
        AuthConfig::new(SERVER, REDIRECT),
        unauthorized(Some(&header)),
    );
    let Some(AuthError::UnreadableChallenge {
        header: quoted,
        then,
    }) = failure(&events)
    else {
        panic!("{events:?}")
    };
    assert!(quoted.starts_with(r#""\u{1b}[2J{{ ~~ xxx"#), "{quoted}");
    assert!(
        quoted.ends_with(&format!("... ({} bytes)", header.len())),
        "{quoted}"
    );
    assert!(
        matches!(**then, AuthError::RegistrationFailed(_)),
        "{then:?}"
    );
    let message = failure(&events).unwrap().to_string();
    assert!(
        message.starts_with("the server's WWW-Authenticate header could not be read"),
        "{message}"
    );
    assert!(
        message.contains("client registration failed: status 404"),
        "{message}"
    );
    assert!(!message.contains('\u{1b}'), "{message}");

    // The same header in front of a server whose metadata is found: nothing to report.
    let mut world = World::new();
    let (_, events) = run(
        &mut world,
        AuthConfig::new(SERVER, REDIRECT),
        unauthorized(Some(&header)),
    );
    assert!(authorized(&events), "{events:?}");

    // A readable Bearer challenge is not named when discovery fails.
    let mut world = World::new();
    world.docs.clear();
    let (_, events) = run(
        &mut world,
        AuthConfig::new(SERVER, REDIRECT),
        unauthorized(Some(r#"Bearer scope="a""#)),
    );
    assert!(
        matches!(failure(&events), Some(AuthError::RegistrationFailed(_))),
        "{events:?}"
    );
}

#[test]
fn a_redirected_registration_quotes_the_location() {
    let mut world = World::new();
    let (mut flow, now) = challenged(3);
    for _ in 0..10 {
        let Some(req) = flow.poll_request() else {
            break;
        };
        let resp = if req.url_str().is_some_and(|u| u.ends_with("/register")) {
            ReceivedResponse {
                status: 302,
                headers: vec![(
                    "Location".to_owned(),
                    "https://login.example/\r\nX: y".to_owned(),
                )],
                body: Vec::new(),
            }
        } else {
            world.answer(&req)
        };
        flow.handle_response(now, resp).expect("ok");
    }
    let Some(AuthEvent::Failed(error)) = flow.poll_event() else {
        panic!("failed")
    };
    assert_eq!(
        error.to_string(),
        r#"client registration failed: status 302, a redirect to "https://login.example/\r\nX: y" (not followed)"#
    );
}
