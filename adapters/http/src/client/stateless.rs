//! The 2026-07-28 client over HTTP: each attempt the core builds is one POST with the core's
//! headers; the whole response body (bounded) goes back to the core, which reads it as JSON or
//! SSE and decides what follows. Thin: no header, retry or era decision here. With OAuth in the
//! options, each POST goes through the shared authorizer (Bearer, 401/403 → flow → one resend).

use std::future::Future;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use mcp_sansio::app::client::stateless::{
    reply_from_http_body, ListenEvent, ListenReader, Reply, ReplyError, StatelessClientError,
    StatelessRequest, StatelessTransport,
};
use smol::LocalExecutor;

use super::authorize::send_authorized;
use super::endpoint_url::{endpoint_parts, parse_endpoint};
use super::exchange::Target;
use super::pool::{Pool, Sender};
use super::HttpClientOptions;

/// The largest response body read for one attempt.
pub const MAX_STATELESS_BODY: usize = 16 * 1024 * 1024;

/// Sends 2026-07-28 requests to one Streamable HTTP endpoint.
pub struct StatelessHttpTransport {
    pool: Pool,
    target: Target,
    timeout: Duration,
}

/// Runs `app` with a transport to the endpoint at `url` (`http://host:port/path`) on a
/// single-threaded executor; `timeout` bounds each attempt. Of `options`, the static
/// `bearer_token` or the OAuth `authorization` applies to every POST (the rest is for the
/// stateful transport).
pub fn block_on_stateless_http<F, Fut, T>(
    url: &str,
    options: &HttpClientOptions,
    timeout: Duration,
    app: F,
) -> io::Result<T>
where
    F: FnOnce(StatelessHttpTransport) -> Fut,
    Fut: Future<Output = T>,
{
    let (addr, authority, path) = endpoint_parts(&parse_endpoint(url)?);
    let executor = Rc::new(LocalExecutor::new());
    let transport = StatelessHttpTransport {
        pool: Pool::new(addr, 8, executor.clone()),
        target: Target::new(authority, path, options),
        timeout,
    };
    Ok(smol::block_on(executor.run(app(transport))))
}

impl StatelessHttpTransport {
    /// Bounds each following attempt.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// Opens a listen stream with `request` (from `StatelessClient::listen_request`): one POST
    /// whose response stays open; the response headers must come within the timeout. Drop
    /// the stream to close it (closing the response is the cancellation on HTTP).
    pub async fn listen(
        &self,
        request: &StatelessRequest,
    ) -> Result<HttpListenStream, StatelessClientError> {
        let timeout = self.timeout;
        let sent = smol::future::or(self.send(request), async move {
            smol::Timer::after(timeout).await;
            Err(format!("no answer within {timeout:?}"))
        })
        .await;
        // The connection serves this stream alone: its sender is not returned to the pool.
        let (_sender, status, content_type, body) =
            sent.map_err(StatelessClientError::Transport)?;
        let json = content_type
            .as_deref()
            .is_some_and(|c| c.to_ascii_lowercase().contains("json"));
        let sse = content_type
            .as_deref()
            .is_some_and(|c| c.to_ascii_lowercase().contains("text/event-stream"));
        // A JSON body is an answer at any status (an error); a stream only on success.
        let streaming = sse && (200..300).contains(&status);
        if !(json || streaming) {
            return Err(StatelessClientError::Http { status });
        }
        Ok(HttpListenStream {
            reader: ListenReader::new(request.id, content_type.as_deref()),
            body,
            ended: false,
        })
    }

    /// One POST; the status, content type and the body still to read.
    async fn send(
        &self,
        request: &StatelessRequest,
    ) -> Result<(Sender, u16, Option<String>, Incoming), String> {
        let make = |authorization: Option<&str>| {
            let mut builder = hyper::Request::builder()
                .method(hyper::Method::POST)
                .uri(self.target.path.as_str())
                .header(hyper::header::HOST, self.target.authority.as_str())
                .header(hyper::header::CONTENT_TYPE, "application/json")
                .header(hyper::header::ACCEPT, "application/json, text/event-stream");
            for (name, value) in &request.headers {
                builder = builder.header(name.as_str(), value.as_str());
            }
            if let Some(auth) = authorization {
                builder = builder.header(hyper::header::AUTHORIZATION, auth);
            }
            builder
                .body(Full::new(Bytes::from(request.body.clone())))
                .map_err(|e| format!("invalid request: {e}"))
        };
        let (sender, response) = send_authorized(&self.pool, &self.target, make).await?;
        let (parts, body) = response.into_parts();
        let content_type = parts
            .headers
            .get(hyper::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        Ok((sender, parts.status.as_u16(), content_type, body))
    }

    /// One POST; the status, content type and whole body.
    async fn post(
        &self,
        request: &StatelessRequest,
    ) -> Result<(u16, Option<String>, Bytes), String> {
        let (sender, status, content_type, body) = self.send(request).await?;
        let body = Limited::new(body, MAX_STATELESS_BODY)
            .collect()
            .await
            .map_err(|e| format!("response body: {e}"))?
            .to_bytes();
        self.pool.checkin(sender);
        Ok((status, content_type, body))
    }
}

impl StatelessTransport for StatelessHttpTransport {
    async fn exchange(
        &mut self,
        request: &StatelessRequest,
    ) -> Result<Result<Reply, ReplyError>, StatelessClientError> {
        let timeout = self.timeout;
        let outcome = smol::future::or(self.post(request), async move {
            smol::Timer::after(timeout).await;
            Err(format!("no answer within {timeout:?}"))
        })
        .await;
        let (status, content_type, body) = outcome.map_err(StatelessClientError::Transport)?;
        let reply = reply_from_http_body(content_type.as_deref(), &body, request.id);
        match reply {
            // A status without a JSON-RPC answer (404/405 pages, 5xx) is the transport's word.
            Err(_) if !(200..300).contains(&status) => Err(StatelessClientError::Http { status }),
            other => Ok(other),
        }
    }
}

/// An open `subscriptions/listen` response: its events as they arrive (the core's
/// [`ListenReader`] reads the body). Dropping it closes the connection, which cancels the
/// subscription.
pub struct HttpListenStream {
    reader: ListenReader,
    body: Incoming,
    ended: bool,
}

impl HttpListenStream {
    /// The next event; `None` once the stream ended and every event was taken. Waits as long
    /// as the server keeps the stream open (bound it with a timer).
    pub async fn next_event(&mut self) -> Result<Option<ListenEvent>, StatelessClientError> {
        // Bounded by the body: each pass consumes a frame or ends.
        loop {
            if let Some(event) = self.reader.poll_event() {
                return Ok(Some(event));
            }
            if self.ended {
                return Ok(None);
            }
            match self.body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.reader.handle_body(&data);
                    }
                }
                Some(Err(e)) => {
                    self.ended = true;
                    return Err(StatelessClientError::Transport(format!(
                        "listen stream: {e}"
                    )));
                }
                None => {
                    self.ended = true;
                    self.reader.handle_end();
                }
            }
        }
    }
}
