//! A tiny OAuth 2.1 authorization server for the end-to-end test, on hyper over a loopback
//! socket: RFC 8414 metadata, RFC 7591 registration, an authorization endpoint that approves
//! at once (302 to the redirect URI with code and state), and a token endpoint that checks
//! PKCE S256, the redirect URI and the RFC 8707 resource before issuing a bearer token. The
//! tokens it issues are what the protected MCP server's validation callback looks up.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use mcp_sansio::auth::TokenInfo;
use mcp_sansio::encoding::{base64url, percent_decode, sha256};
use mcp_sansio::url::{query_param, with_query};
use serde_json::json;
use smol::Async;
use smol_hyper::rt::FuturesIo;

/// An authorization code waiting for its token request.
struct Pending {
    challenge: String,
    redirect_uri: String,
    scope: String,
    resource: String,
}

/// What the authorization server issued and saw.
#[derive(Default)]
pub struct Issued {
    /// Access token → what it grants (the resource server's view).
    pub tokens: HashMap<String, TokenInfo>,
    /// The `resource` of every authorization request, in order.
    pub authorize_resources: Vec<String>,
    /// The `resource` of every token request, in order.
    pub token_resources: Vec<String>,
    /// The `scope` of every authorization request, in order.
    pub scopes: Vec<String>,
    codes: HashMap<String, Pending>,
    next: u32,
}

/// The running server.
pub struct AuthServer {
    /// Its issuer URL (`http://127.0.0.1:PORT`).
    pub issuer: String,
    /// Shared with the protected server's validation callback.
    pub issued: Arc<Mutex<Issued>>,
    stop: smol::channel::Sender<()>,
    thread: Option<JoinHandle<()>>,
}

impl AuthServer {
    /// Binds 127.0.0.1:0 and serves on a thread until dropped.
    pub fn start() -> AuthServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let issued = Arc::new(Mutex::new(Issued::default()));
        let (stop, stopped) = smol::channel::bounded::<()>(1);
        let (state, base) = (issued.clone(), issuer.clone());
        let thread = std::thread::spawn(move || {
            let listener = Async::new(listener).expect("async listener");
            let executor = smol::LocalExecutor::new();
            smol::block_on(executor.run(async {
                loop {
                    let accepted =
                        smol::future::or(async { Some(listener.accept().await) }, async {
                            let _ = stopped.recv().await;
                            None
                        })
                        .await;
                    let Some(Ok((stream, _))) = accepted else {
                        break;
                    };
                    let (state, base) = (state.clone(), base.clone());
                    let service = service_fn(move |req| {
                        let (state, base) = (state.clone(), base.clone());
                        async move { Ok::<_, Infallible>(handle(req, &base, &state).await) }
                    });
                    executor
                        .spawn(async move {
                            let _ = hyper::server::conn::http1::Builder::new()
                                .serve_connection(FuturesIo::new(stream), service)
                                .await;
                        })
                        .detach();
                }
            }));
        });
        AuthServer {
            issuer,
            issued,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        let _ = self.stop.try_send(());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn reply(status: u16, body: serde_json::Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap()
}

fn form_field(body: &[u8], name: &str) -> Option<String> {
    std::str::from_utf8(body).ok()?.split('&').find_map(|pair| {
        let (n, v) = pair.split_once('=')?;
        (percent_decode(n) == name).then(|| percent_decode(v))
    })
}

async fn handle(
    req: Request<Incoming>,
    base: &str,
    state: &Mutex<Issued>,
) -> Response<Full<Bytes>> {
    let path = req.uri().path().to_owned();
    let url = format!("{base}{}", req.uri());
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let mut issued = state.lock().unwrap();
    match path.as_str() {
        "/.well-known/oauth-authorization-server" => reply(
            200,
            json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "registration_endpoint": format!("{base}/register"),
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
            }),
        ),
        "/register" => {
            // RFC 7591 §3.2.1: the answer echoes the registered metadata plus the client id.
            issued.next += 1;
            let mut doc = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .filter(serde_json::Value::is_object)
                .unwrap_or(json!({}));
            doc["client_id"] = json!(format!("client-{}", issued.next));
            doc["token_endpoint_auth_method"] = json!("none");
            reply(201, doc)
        }
        "/authorize" => authorize(&url, &mut issued),
        "/token" => token(&body, &mut issued),
        _ => reply(404, json!({"error": "not_found"})),
    }
}

fn authorize(url: &str, issued: &mut Issued) -> Response<Full<Bytes>> {
    let param = |name| query_param(url, name);
    let (Some(redirect_uri), Some(challenge), Some(resource)) = (
        param("redirect_uri"),
        param("code_challenge"),
        param("resource"),
    ) else {
        return reply(400, json!({"error": "invalid_request"}));
    };
    if param("code_challenge_method").as_deref() != Some("S256")
        || param("response_type").as_deref() != Some("code")
    {
        return reply(400, json!({"error": "invalid_request"}));
    }
    let scope = param("scope").unwrap_or_default();
    issued.authorize_resources.push(resource.clone());
    issued.scopes.push(scope.clone());
    issued.next += 1;
    let code = format!("code-{}", issued.next);
    let mut location = with_query(&redirect_uri, &format!("code={code}"));
    if let Some(state) = param("state") {
        location = with_query(&location, &format!("state={state}"));
    }
    issued.codes.insert(
        code,
        Pending {
            challenge,
            redirect_uri,
            scope,
            resource,
        },
    );
    Response::builder()
        .status(302)
        .header("location", location)
        .body(Full::new(Bytes::new()))
        .unwrap()
}

fn token(body: &[u8], issued: &mut Issued) -> Response<Full<Bytes>> {
    let field = |name| form_field(body, name);
    let Some(pending) = field("code").and_then(|code| issued.codes.remove(&code)) else {
        return reply(400, json!({"error": "invalid_grant"}));
    };
    let verifier = field("code_verifier").unwrap_or_default();
    let resource = field("resource").unwrap_or_default();
    issued.token_resources.push(resource.clone());
    if base64url(&sha256(verifier.as_bytes())) != pending.challenge
        || field("redirect_uri").as_deref() != Some(pending.redirect_uri.as_str())
        || resource != pending.resource
    {
        return reply(400, json!({"error": "invalid_grant"}));
    }
    issued.next += 1;
    let access = format!("access-{}", issued.next);
    issued.tokens.insert(
        access.clone(),
        TokenInfo {
            subject: "alice".into(),
            scopes: pending
                .scope
                .split_whitespace()
                .map(str::to_owned)
                .collect(),
            audience: vec![resource],
        },
    );
    reply(
        200,
        json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600, "scope": pending.scope}),
    )
}
