//! Performs one request the core asked for and streams its response back to the loop as
//! inputs (head, body chunks, end or failure). Nothing here decides anything about MCP.

use std::rc::Rc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Body as _;
use hyper::header::HeaderValue;
use hyper::HeaderMap;
use mcp_sansio::http::{ExchangeId, HttpClientRequest, HttpMethod};

use super::authorize::{send_authorized, Authorizer};
use super::fields::FieldCache;
use super::inflight::Inputs;
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
    /// The fields the core asks for, converted once.
    fields: FieldCache,
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
            fields: FieldCache::default(),
        }
    }

    /// The request the core asked for, with `Host` and `authorization` added.
    fn request(
        &self,
        method: &hyper::Method,
        request: &HttpClientRequest,
        authorization: Option<&str>,
    ) -> Result<hyper::Request<Full<Bytes>>, String> {
        let mut out = hyper::Request::new(Full::new(request.body.clone()));
        *out.method_mut() = method.clone();
        *out.uri_mut() = match &self.uri {
            Some(uri) => uri.clone(),
            None => self
                .path
                .parse()
                .map_err(|e| format!("invalid request: {e}"))?,
        };
        let headers = out.headers_mut();
        headers.reserve(request.headers.len() + 2);
        let host = match &self.host {
            Some(host) => host.clone(),
            None => HeaderValue::from_str(&self.authority)
                .map_err(|e| format!("invalid request: {e}"))?,
        };
        headers.insert(hyper::header::HOST, host);
        for (name, value) in &request.headers {
            let (name, value) = self.fields.get(name, value)?;
            headers.append(name, value);
        }
        if let Some(auth) = authorization {
            let (name, value) = self.fields.get("authorization", auth)?;
            headers.append(name, value);
        }
        Ok(out)
    }
}

/// Runs `request` and reports its response to `inputs`.
pub(crate) async fn run(
    pool: Rc<Pool>,
    target: Rc<Target>,
    request: HttpClientRequest,
    inputs: Rc<Inputs>,
) {
    let id = request.id;
    if let Err(reason) = perform(&pool, &target, request, &inputs).await {
        inputs.send(Input::Failed { id, reason }).await;
    }
}

async fn perform(
    pool: &Pool,
    target: &Target,
    request: HttpClientRequest,
    inputs: &Inputs,
) -> Result<(), String> {
    let id = request.id;
    let method = match request.method {
        HttpMethod::Post => hyper::Method::POST,
        HttpMethod::Get => hyper::Method::GET,
        HttpMethod::Delete => hyper::Method::DELETE,
        HttpMethod::Other => return Err("unsupported method".into()),
    };
    let make = |authorization: Option<&str>| target.request(&method, &request, authorization);
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
        inputs
            .send(Input::Whole {
                id,
                status,
                headers,
                body: whole,
            })
            .await;
        return Ok(());
    }
    inputs
        .send(Input::Head {
            id,
            status,
            headers,
        })
        .await;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| format!("response body broke: {e}"))?;
        if let Ok(chunk) = frame.into_data() {
            inputs.send(Input::Body { id, chunk }).await;
        }
    }
    pool.checkin(sender);
    inputs.send(Input::End { id }).await;
    Ok(())
}
