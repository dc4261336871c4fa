//! What the two server-side HTTP fuzz bodies (`http_endpoint`, `sse_transport_router`) share: the
//! limits one input byte picks, a POST body, sending a request and checking its response, the
//! bookkeeping of the bodies being pulled and the pull loop, and the time step. Each body keeps
//! only what is its own (the request shapes and what a stream must carry).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::ops::{self, Cursor};
use crate::app::server::Server;
use crate::http::sse_transport::Router;
use crate::http::{
    Body, Endpoint, EndpointConfig, HttpRequestHead, HttpResponse, StreamChunk, StreamId,
};
use crate::runtime::{first_poll, Job};

/// Bodies kept once they ended, before an ended one is forgotten.
const KEPT_PULLS: usize = 32;

/// The sans-IO HTTP server surface both bodies drive.
pub(super) trait HttpServer {
    /// Answers one request.
    fn handle_request(
        &mut self,
        now: Instant,
        head: &HttpRequestHead,
        body: Bytes,
        random: [u8; 16],
    ) -> HttpResponse;
    /// The next chunk of response body `conn`.
    fn poll_stream(&mut self, conn: StreamId, buf: &mut Vec<u8>) -> Option<StreamChunk>;
    /// Time passes.
    fn handle_timeout(&mut self, now: Instant);
    /// The next deadline.
    fn poll_timeout(&self) -> Option<Instant>;
    /// A handler job to run.
    fn poll_job(&mut self) -> Option<Job>;
}

/// `HttpServer` for a server type whose inherent methods have these names and signatures.
macro_rules! impl_http_server {
    ($server:ty) => {
        impl HttpServer for $server {
            fn handle_request(
                &mut self,
                now: Instant,
                head: &HttpRequestHead,
                body: Bytes,
                random: [u8; 16],
            ) -> HttpResponse {
                <$server>::handle_request(self, now, head, body, random)
            }
            fn poll_stream(&mut self, conn: StreamId, buf: &mut Vec<u8>) -> Option<StreamChunk> {
                <$server>::poll_stream(self, conn, buf)
            }
            fn handle_timeout(&mut self, now: Instant) {
                <$server>::handle_timeout(self, now);
            }
            fn poll_timeout(&self) -> Option<Instant> {
                <$server>::poll_timeout(self)
            }
            fn poll_job(&mut self) -> Option<Job> {
                <$server>::poll_job(self)
            }
        }
    };
}

impl_http_server!(Endpoint<Server>);
impl_http_server!(Router<Server>);

/// The limits both bodies take from config byte `b`: body size, session count, idle timeout.
pub(super) fn base_config(b: u8) -> EndpointConfig {
    EndpointConfig {
        max_body: if b & 1 == 0 { 4 << 20 } else { 96 },
        max_sessions: 1 + usize::from((b >> 1) % 3),
        idle_timeout: Duration::from_secs(if b & 8 == 0 { 1800 } else { 5 }),
        ..EndpointConfig::default()
    }
}

/// A POST body: the client's `initialize` or `initialized`, padding, or an arbitrary frame.
pub(super) fn post_body(c: &mut Cursor<'_>) -> Bytes {
    let [init, initialized] = ops::client_handshake();
    match c.below(6) {
        0 => init,
        1 => initialized,
        2 => Bytes::from(vec![b' '; 100]),
        _ => ops::frame(c),
    }
}

/// One response body being pulled: what its body checks keep (`kind`), and whether it ended.
pub(super) struct Pull<K> {
    pub(super) kind: K,
    pub(super) ended: bool,
}

/// The server, its clock and randomness, and the bodies being pulled.
pub(super) struct Wire<S, K> {
    pub(super) server: S,
    pub(super) now: Instant,
    pub(super) pulls: BTreeMap<StreamId, Pull<K>>,
    random: u8,
}

impl<S: HttpServer, K> Wire<S, K> {
    pub(super) fn new(server: S) -> Self {
        Wire {
            server,
            now: Instant::now(),
            pulls: BTreeMap::new(),
            random: 0,
        }
    }

    /// Sends one request and runs its jobs; the status is in range, a full body is one JSON
    /// object, and a streamed body gets a fresh id and is pulled with `kind(response)`.
    pub(super) fn request(
        &mut self,
        head: &HttpRequestHead,
        body: Bytes,
        kind: impl FnOnce(&HttpResponse, StreamId) -> K,
    ) -> HttpResponse {
        self.random = self.random.wrapping_add(1);
        let resp = self
            .server
            .handle_request(self.now, head, body, [self.random; 16]);
        self.run_jobs();
        assert!((200..600).contains(&resp.status));
        match &resp.body {
            Body::Full(bytes) => {
                let value: serde_json::Value =
                    serde_json::from_slice(bytes).expect("a full body is JSON");
                assert!(value.is_object(), "a full body is one JSON object");
            }
            Body::Empty => {}
            Body::Stream(conn) => {
                let pull = Pull {
                    kind: kind(&resp, *conn),
                    ended: false,
                };
                assert!(
                    self.pulls.insert(*conn, pull).is_none(),
                    "a stream id was reused"
                );
            }
        }
        resp
    }

    /// One of the bodies being pulled, picked by the input.
    pub(super) fn pick_conn(&self, c: &mut Cursor<'_>) -> Option<StreamId> {
        let conns: Vec<StreamId> = self.pulls.keys().copied().collect();
        (!conns.is_empty()).then(|| conns[c.below(conns.len())])
    }

    /// Pulls one body until it has nothing more now: no data after its end, each chunk as
    /// long as it says, `data` checks each chunk and `ended` sees the end.
    pub(super) fn pull(
        &mut self,
        c: &mut Cursor<'_>,
        mut data: impl FnMut(&mut K, &[u8]),
        ended: impl FnOnce(&K),
    ) {
        let Some(conn) = self.pick_conn(c) else {
            return;
        };
        let mut buf = Vec::new();
        for _ in 0..10_000 {
            buf.clear();
            let chunk = self.server.poll_stream(conn, &mut buf);
            let p = self.pulls.get_mut(&conn).expect("picked");
            match chunk {
                None => return,
                Some(StreamChunk::End) => {
                    p.ended = true;
                    ended(&p.kind);
                    if self.pulls.len() > KEPT_PULLS {
                        self.pulls.remove(&conn);
                    }
                    return;
                }
                Some(StreamChunk::Data { len }) => {
                    assert!(!p.ended, "data after the end of a body");
                    assert_eq!(len, buf.len());
                    data(&mut p.kind, &buf);
                }
            }
        }
    }

    /// Time jumps by an amount the input picks; no deadline at or before now survives.
    pub(super) fn advance(&mut self, c: &mut Cursor<'_>) {
        self.now += c.pick(ops::JUMPS);
        self.server.handle_timeout(self.now);
        self.run_jobs();
        if let Some(t) = self.server.poll_timeout() {
            assert!(
                t > self.now,
                "a deadline at or before now survived handle_timeout"
            );
        }
    }

    /// Runs every handler job the server has to its first poll.
    pub(super) fn run_jobs(&mut self) {
        while let Some(job) = self.server.poll_job() {
            let _ = first_poll(job);
        }
    }
}
