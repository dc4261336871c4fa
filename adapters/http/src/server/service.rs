//! One HTTP request: protected-resource metadata, path and bearer checks, the body read up to
//! the endpoint's limit (then its scope check), then the core endpoint decides everything
//! else; its response is turned back into hyper's.

use std::cell::RefCell;
use std::convert::Infallible;
use std::future::{poll_fn, Future};
use std::net::IpAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::body::Incoming;
use smol::Timer;

use crate::chunks::Chunks;
use hyper::header::{
    HeaderMap, HeaderName, HeaderValue, InvalidHeaderValue, CACHE_CONTROL, CONNECTION,
    CONTENT_TYPE, HOST,
};
use hyper::http::request::Parts;
use hyper::{Request, Response, StatusCode, Version};
use mcp_sansio::http::{Body, HttpMethod, HttpRequestHead, HttpResponse, HttpText};

use super::auth::BearerAuth;
use super::body::{ResponseBody, StreamBody};
use super::shared::Shared;
use super::sharing::{Resumed, Sharing};
use super::staging::{self, Parked, Staging};
use super::MinRate;

/// What every request of one server needs.
pub(crate) struct Route {
    pub(crate) auth: Option<BearerAuth>,
    /// Where the exchanges are traced, when someone listens.
    pub(crate) trace: Option<crate::HttpTrace>,
    /// The endpoint's `max_body`: reading stops one byte past it (the endpoint answers 413).
    pub(crate) max_body: usize,
    /// How long a body may take.
    pub(crate) body_limits: BodyLimits,
    /// OS randomness for session ids, drawn in blocks.
    pub(crate) random: RefCell<RandomBlock>,
    /// Requests waiting for the endpoint's next batch.
    pub(crate) staging: Rc<RefCell<Staging>>,
    /// Sessions shared through a store (`HttpServerOptions::store`).
    pub(crate) sharing: Option<Rc<Sharing>>,
}

/// Bytes of OS randomness drawn per `getrandom` call.
const RANDOM_BLOCK: usize = 512;

/// The endpoint takes 16 random bytes with every request (it uses them when the request
/// creates a session). They are drawn from the OS a block at a time, one syscall per 32
/// requests instead of one per request; each request gets bytes no other request saw.
pub(crate) struct RandomBlock {
    bytes: [u8; RANDOM_BLOCK],
    used: usize,
}

impl Default for RandomBlock {
    fn default() -> Self {
        RandomBlock {
            bytes: [0; RANDOM_BLOCK],
            used: RANDOM_BLOCK,
        }
    }
}

impl RandomBlock {
    /// 16 bytes never handed out before.
    fn take(&mut self) -> Result<[u8; 16], getrandom::Error> {
        if self.used + 16 > RANDOM_BLOCK {
            getrandom::fill(&mut self.bytes)?;
            self.used = 0;
        }
        let mut out = [0u8; 16];
        out.copy_from_slice(&self.bytes[self.used..self.used + 16]);
        // Wiped, so the bytes stay in one place only.
        self.bytes[self.used..self.used + 16].fill(0);
        self.used += 16;
        Ok(out)
    }
}

/// Handles one request (traced when the server has a trace).
pub(crate) async fn handle(
    shared: Shared,
    route: &Route,
    peer: IpAddr,
    req: Request<Incoming>,
) -> Result<Response<ResponseBody>, Infallible> {
    let Some(trace) = &route.trace else {
        return handle_request(shared, route, peer, req, None).await;
    };
    let exchange = super::traced::Exchange::start(&req);
    let resp = handle_request(shared.clone(), route, peer, req, Some(&exchange)).await?;
    // A DELETE ends its session; an `initialize` may have evicted one.
    super::traced::ended_sessions(trace, &shared);
    Ok(super::traced::response(
        trace,
        exchange,
        resp,
        route.max_body,
    ))
}

/// Handles one request (`exchange`: its trace, when the server is traced).
async fn handle_request(
    shared: Shared,
    route: &Route,
    peer: IpAddr,
    req: Request<Incoming>,
    exchange: Option<&super::traced::Exchange>,
) -> Result<Response<ResponseBody>, Infallible> {
    let (parts, body) = req.into_parts();
    if !host_field_ok(&parts) {
        return Ok(plain(
            StatusCode::BAD_REQUEST,
            "Bad Request: an HTTP/1.1 request needs exactly one Host header",
        ));
    }
    if let Some(auth) = route
        .auth
        .as_ref()
        .filter(|a| a.serves_metadata(parts.uri.path()))
    {
        if let Some(resp) = auth.metadata_response(&request_head(&parts)) {
            return Ok(response(resp, &shared, emptied(parts.headers)));
        }
    }
    // The core router says which paths exist (Streamable, and the HTTP+SSE pair if mounted).
    let known = shared.try_with(|core| core.endpoint.serves(parts.uri.path()));
    if known != Some(true) {
        return Ok(plain(StatusCode::NOT_FOUND, "Not Found"));
    }
    let mut head = request_head(&parts);
    // Who sent it, for the endpoint's per-peer limit: the address, and the bearer subject
    // once the guard admitted a token.
    head.peer.addr = Some(peer);
    // The request's field map becomes the response's (see `response`); emptied now, so its
    // values (slices of hyper's read buffer) do not outlive the head's copy.
    let fields = emptied(parts.headers);
    let admitted = match route.auth.as_ref().map(|auth| auth.admit(&head)) {
        Some(Err(refusal)) => return Ok(response(refusal, &shared, fields)),
        Some(Ok(admitted)) => Some(admitted),
        None => None,
    };
    head.peer.subject = admitted
        .as_ref()
        .and_then(|a| a.subject().map(str::to_owned));
    // A body declared past the limit is refused by the endpoint on its first bytes (they carry
    // the request's id): only its first frame is read (at most 8 KiB of it), and the
    // connection closes after the 413.
    let declared = hyper::body::Body::size_hint(&body).exact();
    let oversized = declared.is_some_and(|n| n > route.max_body as u64);
    let limit = if oversized {
        DECLARED_OVERSIZED_PREFIX
    } else {
        route.max_body.saturating_add(1)
    };
    let body = match read_body(body, limit, oversized, &route.body_limits).await {
        Ok(body) => body,
        Err(BodyError::Read(_)) => {
            return Ok(plain(
                StatusCode::BAD_REQUEST,
                "Bad Request: unreadable body",
            ))
        }
        Err(BodyError::TimedOut) => {
            // Nothing was sent on this request yet: say why, and close (the rest of the
            // body is never read).
            let mut resp = plain(
                StatusCode::REQUEST_TIMEOUT,
                "Request Timeout: the body did not arrive in time",
            );
            resp.headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
            return Ok(resp);
        }
    };
    // Scopes depend on the JSON-RPC methods in the body; an oversized body is refused (413)
    // by the endpoint without being read, so it needs no scope check.
    if let (Some(auth), Some(admitted)) = (&route.auth, &admitted) {
        if !oversized && body.len() <= route.max_body {
            if let Err(refusal) = auth.authorize(admitted, &body) {
                return Ok(response(refusal, &shared, fields));
            }
        }
    }
    if let (Some(trace), Some(exchange)) = (&route.trace, exchange) {
        super::traced::request(trace, exchange, &head, &body);
    }
    let Ok(random) = route.random.borrow_mut().take() else {
        return Ok(plain(StatusCode::INTERNAL_SERVER_ERROR, "no OS randomness"));
    };
    // The store's futures are boxed: held inline they would make every request's future
    // (moved by hyper as it starts the service call) as large as theirs, with or without a
    // store.
    if let Some(sharing) = &route.sharing {
        if let Err(resp) = Box::pin(sharing.before(&shared, &head, &body)).await {
            return Ok(response(resp, &shared, fields));
        }
        match Box::pin(sharing.resume_elsewhere(&shared, &head)).await {
            Some(Resumed::Fed(head, feed)) => {
                let mut resp = response(head, &shared, fields);
                *resp.body_mut() = ResponseBody::Fed(Box::pin(feed));
                return Ok(resp);
            }
            Some(Resumed::Answer(answer)) => return Ok(response(answer, &shared, fields)),
            None => {}
        }
    }
    // With a store, the body stays at hand to name the request in a refusal after it.
    let kept = route.sharing.as_ref().map(|_| body.clone());
    let parked = Parked { head, body, random };
    let mut resp = staging::handle(&shared, &route.staging, parked).await;
    if let (Some(sharing), Some(body)) = (&route.sharing, kept) {
        // A streamed answer is already attached to its stream: it goes out as it is.
        let whole = !matches!(resp.body, Body::Stream(_));
        if let (Err(refusal), true) = (Box::pin(sharing.after(&shared, &body)).await, whole) {
            resp = refusal;
        }
    }
    Ok(response(resp, &shared, fields))
}

/// RFC 9112 §3.2: an HTTP/1.1 request has exactly one `Host` field (HTTP/1.0 may have none).
/// The endpoint's DNS-rebinding check reads that field, so it must not be missing or doubled.
fn host_field_ok(req: &Parts) -> bool {
    let mut hosts = req.headers.get_all(HOST).iter();
    match (hosts.next(), hosts.next()) {
        (Some(_), None) => true,
        (None, None) => req.version < Version::HTTP_11,
        _ => false,
    }
}

/// Method, path (with the query: the HTTP+SSE POST names its session there) and headers as the
/// endpoint takes them: the header text copied once into a buffer the fields share. A target
/// in absolute form (`POST http://host/mcp`) names the host itself: its authority stands in
/// for the `Host` field (RFC 9112, section 3.2.2), so the endpoint's DNS-rebinding check reads
/// the host the request is really for.
fn request_head(req: &Parts) -> HttpRequestHead {
    let target = req
        .uri
        .path_and_query()
        .map_or_else(|| req.uri.path(), |p| p.as_str());
    let authority = req.uri.authority().map(|a| a.as_str().as_bytes());
    let missing_host = authority.filter(|_| !req.headers.contains_key(HOST));
    HttpRequestHead::new(HttpMethod::parse(req.method.as_str()), target).with_fields(|| {
        req.headers
            .iter()
            .map(move |(name, value)| match authority {
                Some(authority) if name == HOST => (name.as_str(), authority),
                _ => (name.as_str(), value.as_bytes()),
            })
            .chain(missing_host.map(|authority| ("host", authority)))
    })
}

/// The most read of a body whose `Content-Length` is past `max_body` (its first frame):
/// enough for the endpoint to find the request's id for its 413.
const DECLARED_OVERSIZED_PREFIX: usize = 8 << 10;

/// How long a request body may take (see `HttpServerOptions::body_timeout` and
/// `body_min_rate`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BodyLimits {
    pub(crate) whole: Option<Duration>,
    pub(crate) min_rate: Option<MinRate>,
}

impl BodyLimits {
    /// When a body that started at `start` and has `read` bytes so far times out.
    fn deadline(&self, start: Instant, read: usize) -> Option<Instant> {
        let whole = self.whole.map(|d| start + d);
        let slow = self
            .min_rate
            .filter(|rate| rate.bytes_per_sec > 0)
            .map(|rate| {
                // The bytes read so far are the minimum rate's worth of this long.
                let earned = Duration::from_secs_f64(read as f64 / rate.bytes_per_sec as f64);
                start + earned.max(rate.grace)
            });
        match (whole, slow) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// Why a body was not read.
#[derive(Debug)]
enum BodyError<E> {
    /// The connection failed.
    Read(E),
    /// It took longer than its limits allow.
    TimedOut,
}

/// Reads the body, stopping once it exceeds `limit` bytes (what was read is returned, so the
/// endpoint sees the size and answers 413 itself), or failing once `limits` say it is too
/// slow; with `first_only`, it stops after the first frame (of a body that will be refused,
/// what has arrived is enough). A body that comes in one frame (any small POST) is hyper's own buffer, not copied;
/// only a body of several frames is joined. The clock starts, and a timer is armed, only
/// when a frame is not there at once: a body that came with its head costs no timer.
async fn read_body<B>(
    mut body: B,
    limit: usize,
    first_only: bool,
    limits: &BodyLimits,
) -> Result<Bytes, BodyError<B::Error>>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
{
    let mut chunks = Chunks::default();
    let mut start = None;
    let mut timer: Option<(Instant, Timer)> = None;
    loop {
        let read = chunks.len();
        let next = poll_fn(|cx| {
            if let Poll::Ready(frame) = Pin::new(&mut body).poll_frame(cx) {
                return Poll::Ready(Ok(frame));
            }
            let start = *start.get_or_insert_with(Instant::now);
            let Some(due) = limits.deadline(start, read) else {
                return Poll::Pending;
            };
            match &mut timer {
                Some((armed, timer)) if *armed != due => {
                    timer.set_at(due);
                    *armed = due;
                }
                Some(_) => {}
                None => timer = Some((due, Timer::at(due))),
            }
            let fired = timer
                .as_mut()
                .is_some_and(|(_, t)| Pin::new(t).poll(cx).is_ready());
            if fired || Instant::now() >= due {
                return Poll::Ready(Err(BodyError::TimedOut));
            }
            Poll::Pending
        })
        .await?;
        let Some(frame) = next else {
            break;
        };
        let Ok(mut data) = frame.map_err(BodyError::Read)?.into_data() else {
            continue;
        };
        data.truncate(limit - read);
        chunks.push(data);
        if first_only || chunks.len() >= limit {
            break;
        }
    }
    Ok(chunks.into_bytes())
}

/// A request's field map, emptied (its room kept) to carry the response's fields.
fn emptied(mut fields: HeaderMap) -> HeaderMap {
    fields.clear();
    fields
}

/// The endpoint's response as hyper's, its fields put in `fields` (an empty map: the
/// request's, see [`emptied`]). Hyper keeps a response's map, emptied, for the next request
/// on the connection to be parsed into; so a request's map, handed on to its response,
/// serves every exchange of a connection, with no map allocated (or grown) per request or
/// per response.
fn response(resp: HttpResponse, shared: &Shared, fields: HeaderMap) -> Response<ResponseBody> {
    debug_assert!(fields.is_empty());
    let body = match resp.body {
        Body::Empty => ResponseBody::Empty,
        Body::Full(bytes) => ResponseBody::Full(Some(bytes)),
        Body::Stream(id) => ResponseBody::Stream(StreamBody::new(id, shared.clone())),
    };
    let mut out = Response::new(body);
    *out.headers_mut() = fields;
    *out.status_mut() =
        StatusCode::from_u16(resp.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = out.headers_mut();
    headers.reserve(resp.headers.len());
    for (name, value) in resp.headers {
        if let (Some(name), Ok(value)) = (header_name(&name), header_value(value)) {
            headers.append(name, value);
        }
    }
    out
}

/// The endpoint's field names as hyper's: the ones it sends on every response matched
/// without parsing (they are mixed case, which `HeaderName::from_bytes` lower-cases first).
fn header_name(name: &str) -> Option<HeaderName> {
    Some(match name {
        "Content-Type" => CONTENT_TYPE,
        "Cache-Control" => CACHE_CONTROL,
        "Mcp-Session-Id" => HeaderName::from_static("mcp-session-id"),
        _ => return HeaderName::from_bytes(name.as_bytes()).ok(),
    })
}

/// The values the endpoint puts on most responses, checked once at compile time.
const APPLICATION_JSON: HeaderValue = HeaderValue::from_static("application/json");
const TEXT_EVENT_STREAM: HeaderValue = HeaderValue::from_static("text/event-stream");
const NO_CACHE: HeaderValue = HeaderValue::from_static("no-cache");

/// A value as hyper's, checked but not copied: a literal stays static (the common ones are
/// not checked again), an owned `String` becomes the header's buffer.
fn header_value(value: HttpText) -> Result<HeaderValue, InvalidHeaderValue> {
    let bytes = match value.as_static() {
        Some("application/json") => return Ok(APPLICATION_JSON),
        Some("text/event-stream") => return Ok(TEXT_EVENT_STREAM),
        Some("no-cache") => return Ok(NO_CACHE),
        Some(text) => Bytes::from_static(text.as_bytes()),
        None => Bytes::from(String::from(value)),
    };
    HeaderValue::from_maybe_shared(bytes)
}

/// A short text response made by the adapter itself (routing, auth, transport failures).
fn plain(status: StatusCode, text: &'static str) -> Response<ResponseBody> {
    let mut resp = Response::new(ResponseBody::Full(Some(Bytes::from_static(
        text.as_bytes(),
    ))));
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    resp
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::task::Context;

    use hyper::body::Frame;

    use super::*;

    /// A body that yields the given data frames, one per poll.
    struct Frames(VecDeque<&'static [u8]>);

    impl hyper::body::Body for Frames {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            let next = self.get_mut().0.pop_front();
            Poll::Ready(next.map(|data| Ok(Frame::data(Bytes::from_static(data)))))
        }
    }

    fn read(frames: &[&'static [u8]], limit: usize) -> Bytes {
        let body = Frames(frames.iter().copied().collect());
        smol::block_on(read_body(body, limit, false, &BodyLimits::default())).expect("infallible")
    }

    /// One frame is handed on as is; several are joined in order; reading stops at the limit
    /// with the frames cut there, whether the limit falls in the first frame or a later one.
    #[test]
    fn the_body_is_read_whole_up_to_the_limit() {
        static ONE: &[u8] = b"{\"a\":1}";
        let one = read(&[ONE], 100);
        assert_eq!(&one[..], ONE);
        assert_eq!(one.as_ptr(), ONE.as_ptr(), "one frame is not copied");
        assert_eq!(&read(&[b"ab", b"", b"cd", b"e"], 100)[..], b"abcde");
        assert_eq!(&read(&[b"", b"abc"], 100)[..], b"abc");
        assert_eq!(&read(&[b"abcdef"], 4)[..], b"abcd");
        assert_eq!(&read(&[b"ab", b"cdef", b"gh"], 4)[..], b"abcd");
        assert_eq!(&read(&[b"ab", b"cd", b"gh"], 4)[..], b"abcd");
        assert_eq!(&read(&[], 4)[..], b"");
    }

    /// A body's deadline is the earlier of its whole-body limit and the instant its bytes so
    /// far stop meeting the minimum rate (never before the grace ends); none without limits.
    #[test]
    fn a_body_times_out_at_the_earlier_of_its_deadline_and_its_rate() {
        let start = Instant::now();
        let s = Duration::from_secs;
        let rate = MinRate {
            bytes_per_sec: 100,
            grace: s(10),
        };
        let both = BodyLimits {
            whole: Some(s(60)),
            min_rate: Some(rate),
        };
        assert_eq!(both.deadline(start, 0), Some(start + s(10)), "the grace");
        assert_eq!(both.deadline(start, 2000), Some(start + s(20)), "earned");
        assert_eq!(both.deadline(start, 100_000), Some(start + s(60)), "whole");
        let off = MinRate {
            bytes_per_sec: 0,
            ..rate
        };
        let whole_only = BodyLimits {
            whole: Some(s(60)),
            min_rate: Some(off),
        };
        assert_eq!(whole_only.deadline(start, 0), Some(start + s(60)));
        assert_eq!(BodyLimits::default().deadline(start, 0), None);
    }
}
