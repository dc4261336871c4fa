//! OAuth for every client transport, at the level of "perform one HTTP request": attaches
//! `Authorization: Bearer` from the core's [`AuthFlow`], and when the MCP server answers 401
//! (or 403 `insufficient_scope`) drives the flow to a token (performing its requests,
//! supplying time and random bytes, obtaining the code through a [`CodeStep`]), then retries
//! the request once. Streamable HTTP, HTTP+SSE and any later transport share it because it
//! sits below them. Every decision (discovery, scope, step-up, refresh) is the core's.

use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use mcp_sansio::auth::{AuthConfig, AuthEvent, AuthFlow, BearerChallenge};
use mcp_sansio::outgoing::ReceivedResponse;
use smol::lock::Mutex;

use super::auth_http::{fetch, header_text, no_browser_redirect};
use super::exchange::Target;
use super::pool::{Pool, Sender};

/// The largest 401/403 body read before authorizing (it is only kept for the flow).
const MAX_CHALLENGE_BODY: usize = 64 * 1024;

/// The future of an application's authorization step: the redirect URL the user agent was
/// sent to (with `code` and `state`), or why there is none.
pub type AuthorizeFuture = Pin<Box<dyn Future<Output = Result<String, String>>>>;

/// How the authorization code is obtained once the flow has an authorization URL.
#[derive(Clone)]
pub enum CodeStep {
    /// GET the authorization URL without following redirects and read `Location` (for
    /// authorization servers that redirect at once: tests, machine setups).
    NoBrowser,
    /// The application's step: open `url` in a browser, wait for the redirect, return it.
    Custom(Arc<dyn Fn(String) -> AuthorizeFuture + Send + Sync>),
}

impl fmt::Debug for CodeStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoBrowser => f.write_str("NoBrowser"),
            Self::Custom(_) => f.write_str("Custom(..)"),
        }
    }
}

/// OAuth settings of an HTTP client: the core flow's configuration and the code step.
#[derive(Clone, Debug)]
pub struct ClientAuthorization {
    /// The flow's settings (server URL, redirect URI, credentials, ...). Its secrets print as
    /// `[redacted]`.
    pub config: AuthConfig,
    /// How the code is obtained.
    pub code_step: CodeStep,
    /// Each request to the authorization server (and the code step) gets at most this long.
    pub request_timeout: Duration,
}

impl ClientAuthorization {
    /// `config` with the no-browser step and a 30 s request timeout.
    #[must_use]
    pub fn new(config: AuthConfig) -> Self {
        ClientAuthorization {
            config,
            code_step: CodeStep::NoBrowser,
            request_timeout: Duration::from_secs(30),
        }
    }
}

/// One client's authorization state, shared by its exchanges (one flow runs at a time).
pub(crate) struct Authorizer {
    flow: RefCell<AuthFlow>,
    running: Mutex<()>,
    step: CodeStep,
    timeout: Duration,
}

impl Authorizer {
    pub(crate) fn new(settings: &ClientAuthorization) -> Self {
        Authorizer {
            flow: RefCell::new(AuthFlow::new(settings.config.clone())),
            running: Mutex::new(()),
            step: settings.code_step.clone(),
            timeout: settings.request_timeout,
        }
    }

    /// The `Authorization` value to send now, refreshing the token first when it is due.
    async fn header(&self) -> Option<String> {
        let due = {
            let flow = self.flow.borrow();
            flow.poll_timeout().is_some_and(|at| Instant::now() >= at)
        };
        if due {
            let _running = self.running.lock().await;
            self.flow.borrow_mut().handle_timeout(Instant::now());
            // A failed refresh leaves no token; the next 401 authorizes again.
            let _ = self.drive().await;
        }
        self.current()
    }

    fn current(&self) -> Option<String> {
        let flow = self.flow.borrow();
        flow.access_token(Instant::now())
            .map(|t| format!("Bearer {}", t.expose()))
    }

    /// Runs the flow for `challenge` unless another exchange already replaced the token
    /// `used` was built with.
    async fn handle_challenge(
        &self,
        used: Option<&str>,
        challenge: &ReceivedResponse,
    ) -> Result<(), String> {
        let _running = self.running.lock().await;
        let current = self.current();
        if current.is_some() && current.as_deref() != used {
            return Ok(());
        }
        let mut entropy = [0u8; 48];
        getrandom::fill(&mut entropy).map_err(|e| format!("no random bytes: {e}"))?;
        {
            let mut flow = self.flow.borrow_mut();
            flow.set_unix_time(unix_now());
            flow.handle_challenge(Instant::now(), challenge, &entropy)
                .map_err(|e| e.to_string())?;
        }
        self.drive().await
    }

    /// Performs the flow's requests and steps until it reports a token or a failure.
    async fn drive(&self) -> Result<(), String> {
        // Each round trip is one metadata, registration, token or authorization step.
        for _ in 0..64 {
            let request = self.flow.borrow_mut().poll_request();
            if let Some(request) = request {
                let response = fetch(&request, self.timeout)
                    .await
                    .unwrap_or_else(|reason| {
                        // No answer counts as a failed request: discovery tries the next URL.
                        ReceivedResponse {
                            status: 0,
                            headers: Vec::new(),
                            body: reason.into_bytes(),
                        }
                    });
                let mut flow = self.flow.borrow_mut();
                flow.set_unix_time(unix_now());
                flow.handle_response(Instant::now(), response)
                    .map_err(|e| e.to_string())?;
                continue;
            }
            let event = self.flow.borrow_mut().poll_event();
            match event {
                Some(AuthEvent::Authorize { url }) => {
                    let location = match &self.step {
                        CodeStep::NoBrowser => no_browser_redirect(&url, self.timeout).await,
                        CodeStep::Custom(step) => step(url).await,
                    };
                    // A failed step ends this attempt; the next challenge starts over.
                    let location = location
                        .unwrap_or_else(|_| "http://localhost/?error=access_denied".to_owned());
                    self.flow
                        .borrow_mut()
                        .handle_redirect(&location)
                        .map_err(|e| e.to_string())?;
                }
                Some(AuthEvent::Registered(_)) => {}
                Some(AuthEvent::Authorized) => return Ok(()),
                Some(AuthEvent::Failed(e)) => return Err(e.to_string()),
                None => return Err("the authorization flow stopped without a token".into()),
            }
        }
        Err("the authorization flow took too many steps".into())
    }

    fn succeeded(&self) {
        self.flow.borrow_mut().reset_attempts();
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Whether `response` asks for (more) authorization: any 401, or a 403 whose Bearer
/// challenge says `insufficient_scope`.
fn is_challenge(response: &hyper::Response<Incoming>) -> bool {
    match response.status().as_u16() {
        401 => true,
        403 => {
            let values = response
                .headers()
                .get_all(hyper::header::WWW_AUTHENTICATE)
                .iter()
                .filter_map(|v| v.to_str().ok());
            BearerChallenge::find(values)
                .is_some_and(|c| c.error.as_deref() == Some("insufficient_scope"))
        }
        _ => false,
    }
}

/// Sends the request `make` builds (given the `Authorization` value) on a pooled connection.
/// With an authorizer, a challenge runs the flow and the request is sent once more; the
/// second answer is returned whatever it is.
pub(crate) async fn send_authorized(
    pool: &Pool,
    target: &Target,
    make: impl Fn(Option<&str>) -> Result<hyper::Request<Full<Bytes>>, String>,
) -> Result<(Sender, hyper::Response<Incoming>), String> {
    let Some(authorizer) = &target.authorizer else {
        return send_once(pool, make(target.authorization.as_deref())?).await;
    };
    // The flow's futures are large; boxed here, they stay out of the future every exchange
    // allocates (a request without OAuth never pays for them).
    Box::pin(send_with_flow(pool, authorizer, &make)).await
}

/// [`send_authorized`] with the OAuth flow.
async fn send_with_flow(
    pool: &Pool,
    authorizer: &Authorizer,
    make: &impl Fn(Option<&str>) -> Result<hyper::Request<Full<Bytes>>, String>,
) -> Result<(Sender, hyper::Response<Incoming>), String> {
    let used = authorizer.header().await;
    let (sender, response) = send_once(pool, make(used.as_deref())?).await?;
    if !is_challenge(&response) {
        return Ok((sender, response));
    }
    let challenge = read_challenge(response).await?;
    pool.checkin(sender);
    authorizer
        .handle_challenge(used.as_deref(), &challenge)
        .await
        .map_err(|e| format!("authorization failed: {e}"))?;
    let header = authorizer.current();
    let (sender, response) = send_once(pool, make(header.as_deref())?).await?;
    if response.status().is_success() {
        authorizer.succeeded();
    }
    Ok((sender, response))
}

async fn send_once(
    pool: &Pool,
    request: hyper::Request<Full<Bytes>>,
) -> Result<(Sender, hyper::Response<Incoming>), String> {
    let mut sender = pool.checkout().await?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| format!("request failed: {e}"))?;
    Ok((sender, response))
}

async fn read_challenge(response: hyper::Response<Incoming>) -> Result<ReceivedResponse, String> {
    let (parts, body) = response.into_parts();
    let body = Limited::new(body, MAX_CHALLENGE_BODY)
        .collect()
        .await
        .map_err(|e| format!("challenge body: {e}"))?
        .to_bytes();
    Ok(ReceivedResponse {
        status: parts.status.as_u16(),
        headers: parts
            .headers
            .iter()
            .map(|(n, v)| (n.as_str().to_owned(), header_text(v)))
            .collect(),
        body: body.to_vec(),
    })
}
