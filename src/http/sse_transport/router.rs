//! One server speaking both HTTP transports at once, as the 2025-03-26 backwards-compatibility
//! section suggests: Streamable HTTP on its endpoint path and the HTTP+SSE pair (SSE GET + message
//! POST) on theirs. The router only dispatches by path; each endpoint keeps its own sessions.

use std::time::Instant;

use bytes::Bytes;

use super::server::{SseTransportEndpoint, SSE_TRANSPORT_STREAM_BIT};
use crate::http::config::EndpointConfig;
use crate::http::endpoint::Endpoint;
use crate::http::machine::{ExchangeMachine, SessionMachine};
use crate::http::reply::error;
use crate::http::streams::StreamChunk;
use crate::http::types::{HttpRequestHead, HttpResponse, StreamId};
use crate::http::HttpMethod;
use crate::runtime::Job;

/// The three paths the router serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouterPaths {
    /// The Streamable HTTP endpoint. Default `/mcp`.
    pub streamable: String,
    /// The HTTP+SSE endpoint (GET). Default `/sse`.
    pub sse: String,
    /// The HTTP+SSE message endpoint (POST). Default `/messages`.
    pub messages: String,
}

impl Default for RouterPaths {
    fn default() -> Self {
        RouterPaths {
            streamable: "/mcp".into(),
            sse: "/sse".into(),
            messages: "/messages".into(),
        }
    }
}

/// Which endpoint a request or stream belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// The Streamable HTTP endpoint.
    Streamable,
    /// The HTTP+SSE endpoint.
    SseTransport,
}

/// A Streamable [`Endpoint`] and a [`SseTransportEndpoint`] behind one request entry point.
/// Stream ids of the two never collide (HTTP+SSE ids carry [`SSE_TRANSPORT_STREAM_BIT`]).
pub struct Router<M> {
    streamable: Endpoint<M>,
    sse_transport: SseTransportEndpoint<M>,
    paths: RouterPaths,
    /// Off: the HTTP+SSE paths are unknown (404), only Streamable HTTP is served.
    sse_transport_enabled: bool,
}

impl<M: SessionMachine + ExchangeMachine> Router<M> {
    /// Both endpoints with the same limits and policy (`config`), each building its sessions
    /// with a clone of `factory`. The session cap applies to each transport separately.
    pub fn new<F>(config: EndpointConfig, paths: RouterPaths, factory: F) -> Self
    where
        F: FnMut(Instant) -> M + Clone + Send + 'static,
    {
        let sse_transport =
            SseTransportEndpoint::new(config.clone(), paths.messages.clone(), factory.clone());
        Router {
            streamable: Endpoint::new(config, factory),
            sse_transport,
            paths,
            sse_transport_enabled: true,
        }
    }

    /// Both endpoints as built by the caller (e.g. with their own keep-alive or limits). The
    /// message path is the HTTP+SSE endpoint's [`SseTransportEndpoint::messages_path`],
    /// whatever `paths.messages` says.
    pub fn from_parts(
        streamable: Endpoint<M>,
        sse_transport: SseTransportEndpoint<M>,
        mut paths: RouterPaths,
    ) -> Self {
        paths.messages = sse_transport.messages_path().to_owned();
        Router {
            streamable,
            sse_transport,
            paths,
            sse_transport_enabled: true,
        }
    }

    /// Serves Streamable HTTP only: the HTTP+SSE paths answer 404 like any unknown path.
    pub fn without_sse_transport(mut self) -> Self {
        self.sse_transport_enabled = false;
        self
    }

    /// The paths served (the HTTP+SSE ones only when [`Router::sse_transport_enabled`]).
    pub fn paths(&self) -> &RouterPaths {
        &self.paths
    }

    /// Whether the HTTP+SSE pair is served.
    pub fn sse_transport_enabled(&self) -> bool {
        self.sse_transport_enabled
    }

    /// The Streamable endpoint (sessions, stats, `close_stream`).
    pub fn streamable(&mut self) -> &mut Endpoint<M> {
        &mut self.streamable
    }

    /// The HTTP+SSE endpoint (sessions, stats).
    pub fn sse_transport(&mut self) -> &mut SseTransportEndpoint<M> {
        &mut self.sse_transport
    }

    /// Whether `path` (query string allowed) is one the router serves: the Streamable
    /// endpoint's, or one of the HTTP+SSE pair when [`Router::sse_transport_enabled`].
    pub fn serves(&self, path: &str) -> bool {
        self.route(path).is_some()
    }

    /// Which endpoint serves `path` (query string allowed), if any.
    pub(crate) fn route(&self, path: &str) -> Option<Route> {
        let path = path.split(['?', '#']).next().unwrap_or("");
        if path == self.paths.streamable {
            Some(Route::Streamable)
        } else if self.sse_transport_enabled
            && (path == self.paths.sse || path == self.paths.messages)
        {
            Some(Route::SseTransport)
        } else {
            None
        }
    }

    /// One HTTP request, dispatched by path: 404 for an unknown path, 405 for a GET on the
    /// message path or anything but GET on the SSE path.
    pub fn handle_request(
        &mut self,
        now: Instant,
        head: &HttpRequestHead,
        body: Bytes,
        random: [u8; 16],
    ) -> HttpResponse {
        let bare = head.path.split(['?', '#']).next().unwrap_or("");
        match self.route(&head.path) {
            Some(Route::Streamable) => self.streamable.handle_request(now, head, body, random),
            Some(Route::SseTransport) => {
                let wanted = if bare == self.paths.sse {
                    HttpMethod::Get
                } else {
                    HttpMethod::Post
                };
                if head.method != wanted {
                    let allow = if wanted == HttpMethod::Get {
                        "GET"
                    } else {
                        "POST"
                    };
                    return error(405, "Method Not Allowed").with_header("Allow", allow);
                }
                self.sse_transport.handle_request(now, head, body, random)
            }
            None => error(404, "Not Found"),
        }
    }

    /// Which endpoint produced stream `conn`.
    pub(crate) fn stream_route(conn: StreamId) -> Route {
        if conn.0 & SSE_TRANSPORT_STREAM_BIT != 0 {
            Route::SseTransport
        } else {
            Route::Streamable
        }
    }

    /// Pulls the next bytes of response body `conn` from whichever endpoint owns it.
    #[must_use]
    pub fn poll_stream(&mut self, conn: StreamId, buf: &mut Vec<u8>) -> Option<StreamChunk> {
        match Self::stream_route(conn) {
            Route::SseTransport => self.sse_transport.poll_stream(conn, buf),
            Route::Streamable => self.streamable.poll_stream(conn, buf),
        }
    }

    /// Whether [`Router::poll_stream`] would hand out nothing for response `conn` now (see
    /// [`Endpoint::stream_quiet`]); always `false` for the HTTP+SSE transport's streams.
    #[must_use]
    pub fn stream_quiet(&self, conn: StreamId) -> bool {
        match Self::stream_route(conn) {
            Route::SseTransport => false,
            Route::Streamable => self.streamable.stream_quiet(conn),
        }
    }

    /// Appends the Streamable HTTP response streams whose output can have changed since the
    /// last call; `false` when the list is incomplete (see [`Endpoint::touched_streams`]).
    /// The HTTP+SSE transport's streams are never listed: [`Router::stream_tracked`] says which
    /// streams this covers.
    pub fn touched_streams(&mut self, out: &mut Vec<StreamId>) -> bool {
        self.streamable.touched_streams(out)
    }

    /// Whether [`Router::touched_streams`] reports the changes of response `conn`: `true`
    /// for the Streamable HTTP endpoint's streams, `false` for the HTTP+SSE transport's, which
    /// a driver checks after every input.
    #[must_use]
    pub fn stream_tracked(&self, conn: StreamId) -> bool {
        matches!(Self::stream_route(conn), Route::Streamable)
    }

    /// Announces a list change or resource update to every open 2026-07-28 listen stream
    /// (see [`Endpoint::announce_listen_change`]; the HTTP+SSE transport has none).
    pub fn announce_listen_change(&mut self, event: &crate::stateless::ListenChange) -> usize {
        self.streamable.announce_listen_change(event)
    }

    /// The client went away from response `conn`.
    pub fn stream_closed(&mut self, conn: StreamId) {
        match Self::stream_route(conn) {
            Route::SseTransport => self.sse_transport.stream_closed(conn),
            Route::Streamable => self.streamable.stream_closed(conn),
        }
    }

    /// The server is shutting down: both endpoints answer the requests still being handled
    /// with `-32603` and end their streams (see [`Endpoint::begin_shutdown`] and
    /// [`SseTransportEndpoint::begin_shutdown`]). Returns how many requests were answered.
    pub fn begin_shutdown(&mut self, now: Instant) -> usize {
        self.streamable.begin_shutdown(now) + self.sse_transport.begin_shutdown(now)
    }

    /// Fires timers and expires idle sessions of both endpoints.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.streamable.handle_timeout(now);
        self.sse_transport.handle_timeout(now);
    }

    /// The earliest deadline of either endpoint.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        [
            self.streamable.poll_timeout(),
            self.sse_transport.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// A pending handler future of either endpoint.
    #[must_use]
    pub fn poll_job(&mut self) -> Option<Job> {
        self.streamable
            .poll_job()
            .or_else(|| self.sse_transport.poll_job())
    }
}
