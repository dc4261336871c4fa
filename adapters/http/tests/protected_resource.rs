//! The HTTP server as an OAuth protected resource (`BearerAuth::protect`) over loopback:
//! its RFC 9728 metadata at both well-known URIs, 400/401/403 challenges on every transport
//! (Streamable HTTP, HTTP+SSE `/sse` + `/messages`), audience and per-tool scope checks; and
//! end to end, our sans-IO client `AuthFlow` discovering the metadata from a real 401,
//! registering, authorizing and stepping up scopes against a tiny in-test authorization
//! server, then calling tools with the tokens it obtained; and the official TypeScript SDK
//! client doing the same (protected/ts_client.mjs; skipped without the peers outside CI).

#[path = "protected/auth_server.rs"]
mod auth_server;
#[path = "../../../tests/interop/harness.rs"]
mod harness;
#[path = "protected/raw.rs"]
mod raw;

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use mcp_sansio::app::server::{CallToolResult, Server, Tool};
use mcp_sansio::auth::{
    AuthConfig, AuthEvent, AuthFlow, BearerChallenge, ProtectedResource, ProtectedResourceMetadata,
    Secret, TokenInfo, TokenValidation,
};
use mcp_sansio::model::Implementation;
use mcp_sansio_http::server::{
    BearerAuth, HttpServer, HttpServerOptions, RunReport, ShutdownHandle,
};
use serde_json::{json, Value};

use auth_server::{AuthServer, Issued};
use raw::{header, Reply};

const BOTH: &str = "application/json, text/event-stream";
const REDIRECT: &str = "http://127.0.0.1:9/callback";

fn app(now: Instant) -> Server {
    let schema = json!({"type": "object"});
    Server::builder(Implementation::new("protected-test", "1"))
        .tool(Tool::new("echo", schema.clone()).sync_handler(|_, _| Ok(CallToolResult::text("hi"))))
        .tool(
            Tool::new("admin_reset", schema)
                .sync_handler(|_, _| Ok(CallToolResult::text("reset done"))),
        )
        .build(now)
}

/// The protected MCP server, its resource and the token table its callback reads.
struct Protected {
    url: String,
    base: String,
    metadata_url: String,
    stop: ShutdownHandle,
    thread: Option<JoinHandle<RunReport>>,
}

impl Protected {
    fn start(issuer: &str, issued: Arc<Mutex<Issued>>) -> Protected {
        let mut server = HttpServer::bind(
            "127.0.0.1:0".parse().unwrap(),
            HttpServerOptions::default(),
            app,
        )
        .unwrap();
        let resource = ProtectedResource::new(&server.url(), [issuer])
            .unwrap()
            .scopes_supported(["mcp:basic", "mcp:admin"])
            .required_scopes(["mcp:basic"])
            .tool_scopes("admin_reset", ["mcp:admin"]);
        let metadata_url = resource.metadata_url().to_owned();
        server.set_auth(Some(BearerAuth::protect(
            resource,
            move |token: &Secret| match token.expose() {
                "expired" => TokenValidation::Expired,
                "foreign" => TokenValidation::Valid(TokenInfo {
                    subject: "mallory".into(),
                    scopes: vec!["mcp:basic".into(), "mcp:admin".into()],
                    audience: vec!["http://127.0.0.1:1/mcp".into()],
                }),
                t => issued
                    .lock()
                    .unwrap()
                    .tokens
                    .get(t)
                    .cloned()
                    .map_or(TokenValidation::Invalid, TokenValidation::Valid),
            },
        )));
        let url = server.url();
        let base = format!("http://{}", server.local_addr());
        let stop = server.shutdown_handle();
        let thread = std::thread::spawn(move || server.run().unwrap());
        Protected {
            url,
            base,
            metadata_url,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Protected {
    fn drop(&mut self) {
        self.stop.shutdown();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn mcp_post(url: &str, token: Option<&str>, session: Option<&str>, body: &Value) -> Reply {
    let mut headers = vec![
        ("Accept", BOTH.to_owned()),
        ("Content-Type", "application/json".to_owned()),
    ];
    if let Some(token) = token {
        headers.push(("Authorization", format!("Bearer {token}")));
    }
    if let Some(session) = session {
        headers.push(("Mcp-Session-Id", session.to_owned()));
        headers.push(("MCP-Protocol-Version", "2025-11-25".to_owned()));
    }
    raw::request("POST", url, &headers, body.to_string().as_bytes())
}

/// The JSON-RPC message of a JSON or SSE reply (the last `data:` line).
fn message(reply: &Reply) -> Value {
    let text = String::from_utf8_lossy(&reply.body);
    let json = if header(reply, "content-type").is_some_and(|c| c.starts_with("text/event-stream"))
    {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|d| !d.is_empty())
            .unwrap_or("")
            .to_owned()
    } else {
        text.into_owned()
    };
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

fn initialize() -> Value {
    json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})
}

fn call(id: u64, tool: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":{}}})
}

fn challenge(reply: &Reply) -> BearerChallenge {
    BearerChallenge::find(reply.header_values("www-authenticate")).expect("a Bearer challenge")
}

/// A token the authorization server issued directly, for the adapter tests.
fn grant(issued: &Mutex<Issued>, name: &str, scopes: &[&str], resource: &str) {
    issued.lock().unwrap().tokens.insert(
        name.into(),
        TokenInfo {
            subject: "bob".into(),
            scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
            audience: vec![resource.into()],
        },
    );
}

/// Initializes a session with `token`; returns its id.
fn open_session(server: &Protected, token: &str) -> String {
    let reply = mcp_post(&server.url, Some(token), None, &initialize());
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let session = header(&reply, "mcp-session-id")
        .expect("session id")
        .to_owned();
    let initialized = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    assert_eq!(
        mcp_post(&server.url, Some(token), Some(&session), &initialized).status,
        202
    );
    session
}

#[test]
fn the_metadata_is_served_at_both_well_known_uris() {
    let auth = AuthServer::start();
    let server = Protected::start(&auth.issuer, auth.issued.clone());
    assert_eq!(
        server.metadata_url,
        format!("{}/.well-known/oauth-protected-resource/mcp", server.base)
    );
    for url in [
        server.metadata_url.clone(),
        format!("{}/.well-known/oauth-protected-resource", server.base),
    ] {
        let reply = raw::request("GET", &url, &[], b"");
        assert_eq!(reply.status, 200, "{url}");
        assert_eq!(header(&reply, "content-type"), Some("application/json"));
        let doc = ProtectedResourceMetadata::parse(&reply.body).expect("valid PRM");
        assert_eq!(doc.resource, server.url);
        assert_eq!(doc.authorization_servers, [auth.issuer.as_str()]);
        assert_eq!(
            doc.scopes_supported,
            Some(vec!["mcp:basic".into(), "mcp:admin".into()])
        );
        assert_eq!(doc.bearer_methods_supported, Some(vec!["header".into()]));
    }
    let post = raw::request("POST", &server.metadata_url, &[], b"{}");
    assert_eq!(post.status, 405);
    let other = raw::request(
        "GET",
        &format!("{}/.well-known/oauth-protected-resource/other", server.base),
        &[],
        b"",
    );
    assert_eq!(other.status, 404);
}

#[test]
fn every_transport_answers_401_with_the_metadata_pointer() {
    let auth = AuthServer::start();
    let server = Protected::start(&auth.issuer, auth.issued.clone());
    let replies = [
        mcp_post(&server.url, None, None, &initialize()),
        raw::request(
            "GET",
            &server.url,
            &[("Accept", "text/event-stream".into())],
            b"",
        ),
        raw::request(
            "GET",
            &format!("{}/sse", server.base),
            &[("Accept", "text/event-stream".into())],
            b"",
        ),
        raw::request(
            "POST",
            &format!("{}/messages?sessionId=abc", server.base),
            &[("Content-Type", "application/json".into())],
            b"{}",
        ),
    ];
    for reply in replies {
        assert_eq!(reply.status, 401);
        let c = challenge(&reply);
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some(server.metadata_url.as_str())
        );
        assert_eq!(c.scope.as_deref(), Some("mcp:basic"));
        assert_eq!(c.error, None);
    }
}

/// A request path, its extra headers, and the status and error code expected.
type Case = (&'static str, Vec<(&'static str, String)>, u16, &'static str);

#[test]
fn bad_foreign_and_expired_tokens_are_refused() {
    let auth = AuthServer::start();
    let server = Protected::start(&auth.issuer, auth.issued.clone());
    grant(&auth.issued, "good", &["mcp:basic"], &server.url);
    let cases: [Case; 5] = [
        (
            "/mcp",
            vec![
                ("Authorization", "Bearer good".into()),
                ("Authorization", "Bearer good".into()),
            ],
            400,
            "invalid_request",
        ),
        ("/mcp?access_token=good", vec![], 400, "invalid_request"),
        (
            "/mcp",
            vec![("Authorization", "Bearer foreign".into())],
            401,
            "invalid_token",
        ),
        (
            "/mcp",
            vec![("Authorization", "Bearer expired".into())],
            401,
            "invalid_token",
        ),
        (
            "/mcp",
            vec![("Authorization", "Bearer unknown".into())],
            401,
            "invalid_token",
        ),
    ];
    for (path, mut headers, status, error) in cases {
        headers.push(("Accept", BOTH.into()));
        headers.push(("Content-Type", "application/json".into()));
        let reply = raw::request(
            "POST",
            &format!("{}{path}", server.base),
            &headers,
            initialize().to_string().as_bytes(),
        );
        assert_eq!(reply.status, status, "{path} {headers:?}");
        assert_eq!(challenge(&reply).error.as_deref(), Some(error));
    }
    // The same request with the good token is served.
    assert_eq!(
        mcp_post(&server.url, Some("good"), None, &initialize()).status,
        200
    );
}

#[test]
fn a_tool_scope_is_enforced_per_call_and_on_sse_transport_too() {
    let auth = AuthServer::start();
    let server = Protected::start(&auth.issuer, auth.issued.clone());
    grant(&auth.issued, "basic", &["mcp:basic"], &server.url);
    grant(
        &auth.issued,
        "admin",
        &["mcp:basic", "mcp:admin"],
        &server.url,
    );
    let session = open_session(&server, "basic");
    let echo = mcp_post(&server.url, Some("basic"), Some(&session), &call(2, "echo"));
    assert_eq!(echo.status, 200);
    assert_eq!(message(&echo)["result"]["content"][0]["text"], "hi");
    let reset = mcp_post(
        &server.url,
        Some("basic"),
        Some(&session),
        &call(3, "admin_reset"),
    );
    assert_eq!(reset.status, 403);
    let c = challenge(&reset);
    assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
    assert_eq!(c.scope.as_deref(), Some("mcp:basic mcp:admin"));
    assert_eq!(
        c.resource_metadata.as_deref(),
        Some(server.metadata_url.as_str())
    );
    // A token with the scope is served on the same session (tokens are checked per request).
    let reset = mcp_post(
        &server.url,
        Some("admin"),
        Some(&session),
        &call(4, "admin_reset"),
    );
    assert_eq!(reset.status, 200);
    assert_eq!(
        message(&reset)["result"]["content"][0]["text"],
        "reset done"
    );
    // The HTTP+SSE stream opens with a valid token.
    let sse = raw::head_only(
        "GET",
        &format!("{}/sse", server.base),
        &[
            ("Accept", "text/event-stream".into()),
            ("Authorization", "Bearer basic".into()),
        ],
    );
    assert_eq!(sse.status, 200);
}

/// Drives `flow` from a challenge to a token: performs its requests, follows the
/// authorization URL (the AS approves at once) and returns the URLs requested.
fn authorize(flow: &mut AuthFlow, challenge: &Reply, entropy: u8) -> Vec<String> {
    let now = Instant::now();
    flow.handle_challenge(now, challenge, &[entropy; 48])
        .expect("challenge accepted");
    let mut urls = Vec::new();
    for _ in 0..32 {
        if let Some(req) = flow.poll_request() {
            urls.push(req.url_str().unwrap_or_default().to_owned());
            flow.handle_response(now, raw::perform(&req))
                .expect("response accepted");
            continue;
        }
        match flow.poll_event() {
            Some(AuthEvent::Authorize { url }) => {
                urls.push(url.clone());
                let redirect = raw::request("GET", &url, &[], b"");
                assert_eq!(redirect.status, 302);
                flow.handle_redirect(header(&redirect, "location").expect("location"))
                    .expect("redirect");
            }
            Some(AuthEvent::Registered(_)) => {}
            Some(AuthEvent::Authorized) => return urls,
            Some(AuthEvent::Failed(e)) => panic!("authorization failed: {e} after {urls:?}"),
            None => panic!("flow stalled after {urls:?}"),
        }
    }
    panic!("no token after 32 steps: {urls:?}");
}

#[test]
fn our_auth_flow_discovers_authorizes_and_steps_up_against_our_server() {
    let auth = AuthServer::start();
    let server = Protected::start(&auth.issuer, auth.issued.clone());
    let mut flow = AuthFlow::new(AuthConfig::new(server.url.clone(), REDIRECT));

    let refused = mcp_post(&server.url, None, None, &initialize());
    assert_eq!(refused.status, 401);
    let urls = authorize(&mut flow, &refused, 1);
    assert_eq!(
        urls[0], server.metadata_url,
        "PRM found from the 401's resource_metadata"
    );
    assert_eq!(
        urls[1],
        format!("{}/.well-known/oauth-authorization-server", auth.issuer)
    );
    let token = flow
        .access_token(Instant::now())
        .expect("token")
        .expose()
        .to_owned();
    assert_eq!(
        flow.token().and_then(|t| t.scope.as_deref()),
        Some("mcp:basic")
    );

    let session = open_session(&server, &token);
    let echo = mcp_post(&server.url, Some(&token), Some(&session), &call(2, "echo"));
    assert_eq!(message(&echo)["result"]["content"][0]["text"], "hi");

    // Step-up: the admin tool needs a scope the token lacks.
    let forbidden = mcp_post(
        &server.url,
        Some(&token),
        Some(&session),
        &call(3, "admin_reset"),
    );
    assert_eq!(forbidden.status, 403);
    authorize(&mut flow, &forbidden, 2);
    let stepped = flow
        .access_token(Instant::now())
        .expect("token")
        .expose()
        .to_owned();
    assert_ne!(stepped, token);
    let reset = mcp_post(
        &server.url,
        Some(&stepped),
        Some(&session),
        &call(3, "admin_reset"),
    );
    assert_eq!(reset.status, 200);
    assert_eq!(
        message(&reset)["result"]["content"][0]["text"],
        "reset done"
    );

    let issued = auth.issued.lock().unwrap();
    assert_eq!(issued.scopes, ["mcp:basic", "mcp:basic mcp:admin"]);
    // RFC 8707: both grants were bound to this server, which checks it on every request.
    assert!(issued
        .authorize_resources
        .iter()
        .chain(&issued.token_resources)
        .all(|r| r == &server.url));
    assert_eq!(issued.token_resources.len(), 2);
}

#[test]
fn the_typescript_sdk_client_authorizes_against_our_server() {
    if !harness::peers_ready() {
        return;
    }
    let node = std::env::var("MCP_NODE22").expect("MCP_NODE22");
    let auth = AuthServer::start();
    let server = Protected::start(&auth.issuer, auth.issued.clone());
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/protected/ts_client.mjs");
    let child = std::process::Command::new(node)
        .arg(script)
        .arg(&server.url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn node");
    let (success, output) = harness::finish(child, std::time::Duration::from_secs(60));
    assert!(success, "the TS client failed:\n{output}");
    let line: Value = serde_json::from_str(output.lines().last().unwrap_or("")).expect("json line");
    assert_eq!(line["text"], "hi");
    assert_eq!(line["scope"], "mcp:basic");
    let issued = auth.issued.lock().unwrap();
    // The SDK found the metadata from the 401, and bound its grant to this server (RFC 8707).
    assert_eq!(issued.authorize_resources, [server.url.as_str()]);
    assert_eq!(issued.token_resources, [server.url.as_str()]);
}
