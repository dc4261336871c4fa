//! Performs one request the core asked for and streams its response back to the loop as
//! inputs (head, body chunks, end or failure). Nothing here decides anything about MCP.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::chunks::Chunks;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Body as _;
use hyper::header::HeaderValue;
use hyper::HeaderMap;
use mcp_sansio::http::{HttpMethod, HttpText};
use mcp_sansio::outgoing::{ExchangeId, OutgoingRequest};
use mcp_sansio::trace::Direction;
use mcp_sansio::url::HttpUrl;

use super::authorize::{send_authorized, Authorizer};
use super::fields::{FieldCache, HeadCache};
use super::inflight::Inputs;
use super::pool::Pool;
use super::HttpClientOptions;

/// The largest response body (of known length) handed to the loop in one input.
const WHOLE_BODY_MAX: u64 = 64 * 1024;

/// What an exchange reports to the loop.
pub(crate) enum Input {
    /// A whole response whose length was known (a JSON answer, a 202): head, body and end in
    /// one input, so the loop wakes once per exchange instead of three times.
    Whole {
        id: ExchangeId,
        status: u16,
        headers: HeaderMap,
        body: Bytes,
    },
    /// One step of a streamed response, or a failure.
    Streamed(Streamed),
}

/// What an exchange reports to the loop piece by piece: a response streamed (an SSE stream, a
/// body of unknown or large length) and failures. A kind apart from the whole answer, so the
/// loop's out-of-line path takes only these.
pub(crate) enum Streamed {
    /// Status and headers (a body follows).
    Head {
        id: ExchangeId,
        status: u16,
        headers: HeaderMap,
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
    /// Whole header maps, built once per set of fields.
    heads: HeadCache,
    /// The last `Content-Length` sent, with its length.
    last_length: RefCell<Option<(usize, HeaderValue)>>,
    /// Where exchanges are traced, when someone listens.
    trace: Option<crate::HttpTrace>,
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
            heads: HeadCache::default(),
            last_length: RefCell::new(None),
            trace: options.trace.clone(),
        }
    }

    /// The request the core asked for (its method, fields and body), with `Host` and
    /// `authorization` added; to `path` (a path and query on the endpoint's origin) when the
    /// request names its own URL, else to the endpoint.
    fn request(
        &self,
        method: &hyper::Method,
        path: Option<&hyper::Uri>,
        fields: &[(&'static str, HttpText)],
        body: Bytes,
        authorization: Option<&str>,
    ) -> Result<hyper::Request<Full<Bytes>>, String> {
        let length = body.len();
        let mut out = hyper::Request::new(Full::new(body));
        *out.method_mut() = method.clone();
        *out.uri_mut() = match (path, &self.uri) {
            (Some(uri), _) | (None, Some(uri)) => uri.clone(),
            (None, None) => self
                .path
                .parse()
                .map_err(|e| format!("invalid request: {e}"))?,
        };
        let mut headers = self.heads.get(fields, authorization, length > 0, || {
            self.header_map(fields, authorization, length > 0)
        })?;
        if let Some(value) = headers.get_mut(hyper::header::CONTENT_LENGTH) {
            *value = self.content_length(length);
        }
        *out.headers_mut() = headers;
        Ok(out)
    }

    /// `Content-Length: length`, reusing the last value when the length repeats (requests of
    /// one kind often have bodies of one length).
    fn content_length(&self, length: usize) -> HeaderValue {
        let mut last = self.last_length.borrow_mut();
        match &*last {
            Some((len, value)) if *len == length => value.clone(),
            _ => {
                let value = HeaderValue::from(length);
                *last = Some((length, value.clone()));
                value
            }
        }
    }

    /// `Host`, the core's fields, `authorization` and, for a request with a body, a
    /// `Content-Length` to be set per request, as a header map. (hyper would append the length
    /// itself: to a map cloned at its exact size that is a reallocation per request.)
    /// Out of line: a map is built once per set of fields, then kept.
    #[cold]
    #[inline(never)]
    fn header_map(
        &self,
        fields: &[(&'static str, HttpText)],
        authorization: Option<&str>,
        with_body: bool,
    ) -> Result<HeaderMap, String> {
        // Room to spare: a clone keeps the index size, and hyper looks up `Transfer-Encoding`
        // with the entry API, which grows a full map (a reallocation per request).
        let mut headers = HeaderMap::with_capacity(fields.len() + 8);
        let host = match &self.host {
            Some(host) => host.clone(),
            None => HeaderValue::from_str(&self.authority)
                .map_err(|e| format!("invalid request: {e}"))?,
        };
        headers.insert(hyper::header::HOST, host);
        for (name, value) in fields {
            let (name, value) = self.fields.get(name, value)?;
            headers.append(name, value);
        }
        if let Some(auth) = authorization {
            let (name, value) = self.fields.get("authorization", auth)?;
            headers.append(name, value);
        }
        if with_body {
            headers.insert(hyper::header::CONTENT_LENGTH, HeaderValue::from(0u64));
        }
        Ok(headers)
    }
}

/// The body of each attempt at one request. The first attempt takes it as it is: cloning
/// bytes that own their buffer allocates (the buffer becomes shared), and most requests are
/// sent once. Only with OAuth, whose challenge is answered by a second attempt, is a spare
/// copy kept for it.
struct Bodies {
    first: Cell<Option<Bytes>>,
    spare: Option<Bytes>,
}

impl Bodies {
    fn new(body: Bytes, retries: bool) -> Self {
        Bodies {
            spare: retries.then(|| body.clone()),
            first: Cell::new(Some(body)),
        }
    }

    /// The body for the next attempt (empty past the first without a spare: never asked).
    fn next(&self) -> Bytes {
        self.first
            .take()
            .or_else(|| self.spare.clone())
            .unwrap_or_default()
    }
}

/// Runs `request` and reports its response to `inputs`.
pub(crate) async fn run(
    pool: Rc<Pool>,
    target: Rc<Target>,
    request: OutgoingRequest,
    inputs: Rc<Inputs>,
) {
    let id = request.id;
    if let Err(reason) = perform(&pool, &target, request, &inputs).await {
        inputs
            .send(Input::Streamed(Streamed::Failed { id, reason }))
            .await;
    }
}

async fn perform(
    pool: &Pool,
    target: &Target,
    request: OutgoingRequest,
    inputs: &Inputs,
) -> Result<(), String> {
    let OutgoingRequest {
        id,
        method,
        url,
        headers: fields,
        named_headers,
        body,
    } = request;
    // A URL of its own (the HTTP+SSE transport's): the core resolved it on the endpoint's
    // origin, so the pool's server is the one; only its path and query are sent.
    let path = url.as_deref().map(path_of).transpose()?;
    let method = match method {
        HttpMethod::Post => hyper::Method::POST,
        HttpMethod::Get => hyper::Method::GET,
        HttpMethod::Delete => hyper::Method::DELETE,
        HttpMethod::Other => return Err("unsupported method".into()),
    };
    if let Some(trace) = &target.trace {
        let to = path.as_ref().map_or(target.path.as_str(), |p| p.path());
        trace.request_out(method.as_str(), to, &fields, &named_headers, &body);
    }
    let bodies = Bodies::new(body, target.authorizer.is_some());
    let make = |authorization: Option<&str>| {
        let mut out = target.request(
            &method,
            path.as_ref(),
            &fields,
            bodies.next(),
            authorization,
        )?;
        add_named(out.headers_mut(), &named_headers)?;
        Ok(out)
    };
    let (sender, response) = send_authorized(pool, target, make).await?;
    let (parts, mut body) = response.into_parts();
    let status = parts.status.as_u16();
    let headers = parts.headers;
    let mut tap = target.trace.as_ref().and_then(|trace| {
        trace.status(Direction::Recv, status, &headers);
        trace.body_tap(Direction::Recv, &headers, usize::MAX)
    });
    // A small body of known length is read whole here (bounded by WHOLE_BODY_MAX); anything
    // else streams chunk by chunk, so the core's limits see every byte as it comes.
    if body
        .size_hint()
        .exact()
        .is_some_and(|len| len <= WHOLE_BODY_MAX)
    {
        let whole = read_whole(&mut body).await?;
        if let Some(tap) = &mut tap {
            tap.chunk(&whole);
            tap.end();
        }
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
        .send(Input::Streamed(Streamed::Head {
            id,
            status,
            headers,
        }))
        .await;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(body_broke)?;
        if let Ok(chunk) = frame.into_data() {
            if let Some(tap) = &mut tap {
                tap.chunk(&chunk);
            }
            inputs
                .send(Input::Streamed(Streamed::Body { id, chunk }))
                .await;
        }
    }
    pool.checkin(sender);
    if let Some(tap) = &mut tap {
        tap.end();
    }
    inputs.send(Input::Streamed(Streamed::End { id })).await;
    Ok(())
}

/// Appends the fields whose names are not constants (not cached: they vary per request).
fn add_named(headers: &mut HeaderMap, named: &[(HttpText, HttpText)]) -> Result<(), String> {
    for (name, value) in named {
        let name = hyper::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| format!("invalid header name {name:?}: {e}"))?;
        let value = HeaderValue::from_str(value)
            .map_err(|e| format!("invalid value of header {name}: {e}"))?;
        headers.append(name, value);
    }
    Ok(())
}

/// The path and query of an absolute URL, as a request target.
fn path_of(url: &str) -> Result<hyper::Uri, String> {
    let bad = |e: &dyn std::fmt::Display| format!("bad URL {url}: {e}");
    let url = HttpUrl::parse(url).map_err(|e| bad(&e))?;
    url.path_and_query().parse().map_err(|e| bad(&e))
}

/// Why an exchange failed when its response body broke (out of line: rare).
#[cold]
#[inline(never)]
fn body_broke(error: impl std::fmt::Display) -> String {
    format!("response body broke: {error}")
}

/// The data of a body of known length up to [`WHOLE_BODY_MAX`]: its one chunk as is (a JSON
/// answer arrives in one), or the chunks joined. Trailers are ignored, as before.
async fn read_whole<B>(body: &mut B) -> Result<Bytes, String>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
    B::Error: std::fmt::Display,
{
    let mut chunks = Chunks::default();
    // Bounded: hyper ends the body at its declared length (at most WHOLE_BODY_MAX).
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(body_broke)?;
        if let Ok(chunk) = frame.into_data() {
            chunks.push(chunk);
        }
    }
    Ok(chunks.into_bytes())
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use futures_util::stream;
    use http_body_util::StreamBody;
    use hyper::body::Frame;

    use super::*;

    fn body_of(
        chunks: &[&'static str],
    ) -> StreamBody<impl futures_util::Stream<Item = Result<Frame<Bytes>, Infallible>>> {
        let frames: Vec<Result<Frame<Bytes>, Infallible>> = chunks
            .iter()
            .map(|c| Ok(Frame::data(Bytes::from_static(c.as_bytes()))))
            .collect();
        StreamBody::new(stream::iter(frames))
    }

    fn post(body: &'static str, session: &str) -> OutgoingRequest {
        OutgoingRequest {
            id: ExchangeId(1),
            method: HttpMethod::Post,
            url: None,
            headers: vec![
                ("Accept", HttpText::from_static("application/json")),
                ("Mcp-Session-Id", session.into()),
            ],
            named_headers: Vec::new(),
            body: Bytes::from_static(body.as_bytes()),
        }
    }

    /// Fields with names of their own (`Mcp-Param-*`) are added as sent; an invalid name or
    /// value fails the request instead of reaching the wire.
    #[test]
    fn named_fields_are_added_or_refused() {
        let mut headers = HeaderMap::new();
        let named = vec![
            (
                HttpText::from("Mcp-Param-Region"),
                HttpText::from("us west"),
            ),
            (HttpText::from("Mcp-Param-N"), HttpText::from("42")),
        ];
        add_named(&mut headers, &named).unwrap();
        assert_eq!(headers["mcp-param-region"], "us west");
        assert_eq!(headers["mcp-param-n"], "42");
        let bad_name = vec![(HttpText::from("A B"), HttpText::from("x"))];
        assert!(add_named(&mut headers, &bad_name).is_err());
        let bad_value = vec![(HttpText::from("Mcp-Param-X"), HttpText::from("a\nb"))];
        assert!(add_named(&mut headers, &bad_value).is_err());
        assert_eq!(headers.len(), 2);
    }

    /// Every request gets `Host`, the core's fields and, with a body, its own length, whether
    /// its map is built or a clone of a kept one; a request without a body gets no length.
    #[test]
    fn requests_carry_their_fields_and_their_own_length() {
        let target = Target::new(
            "127.0.0.1:9".into(),
            "/mcp".into(),
            &HttpClientOptions::default(),
        );
        let post_method = hyper::Method::POST;
        for (body, session) in [
            ("{}", "s1"),
            ("{\"a\":1}", "s1"),
            ("{}", "s1"),
            ("[1]", "s2"),
            ("{}", "s1"),
        ] {
            let request = post(body, session);
            let out = target
                .request(&post_method, None, &request.headers, request.body, None)
                .unwrap();
            let h = out.headers();
            assert_eq!(h["host"], "127.0.0.1:9");
            assert_eq!(h["accept"], "application/json");
            assert_eq!(h["mcp-session-id"], session);
            assert_eq!(
                h["content-length"],
                body.len().to_string().as_str(),
                "{body}"
            );
            assert_eq!(h.len(), 4);
            assert!(h.capacity() > h.len(), "room for hyper's entry lookup");
            assert_eq!(out.uri(), "/mcp");
        }
        let mut get = post("", "s1");
        get.method = HttpMethod::Get;
        let out = target
            .request(
                &hyper::Method::GET,
                None,
                &get.headers,
                get.body,
                Some("Bearer t"),
            )
            .unwrap();
        assert!(out.headers().get("content-length").is_none());
        assert_eq!(out.headers()["authorization"], "Bearer t");
    }

    /// The first attempt gets the body itself (not a clone); with retries every attempt
    /// gets the whole body.
    #[test]
    fn the_first_attempt_takes_the_body_and_retries_get_a_spare() {
        let body = Bytes::copy_from_slice(b"{\"jsonrpc\":\"2.0\"}");
        let once = Bodies::new(body.clone(), false);
        let first = once.next();
        assert_eq!(first.as_ptr(), body.as_ptr());
        assert_eq!(first, body);
        assert!(once.next().is_empty());
        let retried = Bodies::new(body.clone(), true);
        for _ in 0..3 {
            assert_eq!(retried.next(), body);
        }
    }

    /// One chunk comes back as is (the same bytes, not a copy); several are joined in order;
    /// none is an empty body.
    #[test]
    fn a_whole_body_is_its_chunk_or_the_chunks_joined() {
        let text: &'static str = "{\"a\":1}";
        let one = smol::block_on(read_whole(&mut body_of(&[text]))).unwrap();
        assert_eq!(one, text);
        assert_eq!(one.as_ptr(), text.as_ptr(), "one chunk is not copied");
        let many = smol::block_on(read_whole(&mut body_of(&["ab", "", "cd", "e"]))).unwrap();
        assert_eq!(many, "abcde");
        let none = smol::block_on(read_whole(&mut body_of(&[]))).unwrap();
        assert!(none.is_empty());
        let empty_first = smol::block_on(read_whole(&mut body_of(&["", "x"]))).unwrap();
        assert_eq!(empty_first, "x");
    }
}
