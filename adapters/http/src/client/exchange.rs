//! Performs one request the core asked for and streams its response back to the loop as
//! inputs (head, body chunks, end or failure). Nothing here decides anything about MCP.

use std::rc::Rc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Body as _;
use hyper::header::HeaderValue;
use hyper::HeaderMap;
use mcp_sansio::http::{ExchangeId, HttpClientRequest, HttpMethod};
use smol::channel::Sender;

use super::authorize::{send_authorized, Authorizer};
use super::pool::Pool;
use super::HttpClientOptions;

/// The largest response body (of known length) handed to the loop in one input.
const WHOLE_BODY_MAX: u64 = 64 * 1024;

/// What an exchange reports to the loop.
pub(crate) enum Input {
    /// Status and headers (a body follows).
    Head {
        id: ExchangeId,
        status: u16,
        headers: HeaderMap,
    },
    /// A whole response whose length was known (a JSON answer, a 202): head, body and end in
    /// one input, so the loop wakes once per exchange instead of three times.
    Whole {
        id: ExchangeId,
        status: u16,
        headers: HeaderMap,
        body: Bytes,
    },
    /// A body chunk.
    Body { id: ExchangeId, chunk: Bytes },
    /// The body ended.
    End { id: ExchangeId },
    /// The exchange failed.
    Failed { id: ExchangeId, reason: String },
}

/// Where requests go and what every request carries.
pub(crate) struct Target {
    /// `host:port`, the `Host` header.
    pub(crate) authority: String,
    /// The endpoint's path and query.
    pub(crate) path: String,
    /// `Authorization: Bearer ...`, when configured.
    pub(crate) authorization: Option<String>,
    /// The OAuth flow, when configured: its token replaces `authorization`.
    pub(crate) authorizer: Option<Rc<Authorizer>>,
    /// `path` parsed once (cloning it shares its bytes), so a request does not re-parse and
    /// copy it; `None` if it does not parse (each request then reports the error).
    uri: Option<hyper::Uri>,
    /// `authority` as a header value, checked once and shared by every request.
    host: Option<HeaderValue>,
}

impl Target {
    /// Where requests go, with the options' static bearer token or OAuth flow.
    pub(crate) fn new(authority: String, path: String, options: &HttpClientOptions) -> Self {
        Target {
            uri: path.parse().ok(),
            host: HeaderValue::from_str(&authority).ok(),
            authority,
            path,
            authorization: options.bearer_token.as_ref().map(|t| format!("Bearer {t}")),
            authorizer: options
                .authorization
                .as_ref()
                .map(|a| Rc::new(Authorizer::new(a))),
        }
    }
}

/// Runs `request` and reports its response to `inputs`.
pub(crate) async fn run(
    pool: Rc<Pool>,
    target: Rc<Target>,
    request: HttpClientRequest,
    inputs: Sender<Input>,
) {
    let id = request.id;
    if let Err(reason) = perform(&pool, &target, request, &inputs).await {
        let _ = inputs.send(Input::Failed { id, reason }).await;
    }
}

async fn perform(
    pool: &Pool,
    target: &Target,
    request: HttpClientRequest,
    inputs: &Sender<Input>,
) -> Result<(), String> {
    let id = request.id;
    let method = match request.method {
        HttpMethod::Post => hyper::Method::POST,
        HttpMethod::Get => hyper::Method::GET,
        HttpMethod::Delete => hyper::Method::DELETE,
        HttpMethod::Other => return Err("unsupported method".into()),
    };
    let make = |authorization: Option<&str>| {
        let builder = hyper::Request::builder().method(method.clone());
        let builder = match &target.uri {
            Some(uri) => builder.uri(uri.clone()),
            None => builder.uri(target.path.as_str()),
        };
        let mut builder = match &target.host {
            Some(host) => builder.header(hyper::header::HOST, host.clone()),
            None => builder.header(hyper::header::HOST, target.authority.as_str()),
        };
        for (name, value) in &request.headers {
            builder = builder.header(*name, value.as_str());
        }
        if let Some(auth) = authorization {
            builder = builder.header(hyper::header::AUTHORIZATION, auth);
        }
        builder
            .body(Full::new(request.body.clone()))
            .map_err(|e| format!("invalid request: {e}"))
    };
    let (sender, response) = send_authorized(pool, target, make).await?;
    let (parts, mut body) = response.into_parts();
    let status = parts.status.as_u16();
    let headers = parts.headers;
    // A small body of known length is read whole here (bounded by WHOLE_BODY_MAX); anything
    // else streams chunk by chunk, so the core's limits see every byte as it comes.
    if body
        .size_hint()
        .exact()
        .is_some_and(|len| len <= WHOLE_BODY_MAX)
    {
        let whole = body
            .collect()
            .await
            .map_err(|e| format!("response body broke: {e}"))?
            .to_bytes();
        pool.checkin(sender);
        let _ = inputs
            .send(Input::Whole {
                id,
                status,
                headers,
                body: whole,
            })
            .await;
        return Ok(());
    }
    if inputs
        .send(Input::Head {
            id,
            status,
            headers,
        })
        .await
        .is_err()
    {
        return Ok(());
    }
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| format!("response body broke: {e}"))?;
        if let Ok(chunk) = frame.into_data() {
            if inputs.send(Input::Body { id, chunk }).await.is_err() {
                return Ok(());
            }
        }
    }
    pool.checkin(sender);
    let _ = inputs.send(Input::End { id }).await;
    Ok(())
}
