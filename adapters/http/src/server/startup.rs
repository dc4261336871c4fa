//! The start of an instance with a store: before it serves, it reads from the store the key
//! its event ids are signed with (and what the application asks for with
//! `HttpServer::on_store_ready`) and subscribes to its bus channels (the other instances take
//! an instance without subscribers for one that is gone). Connections that arrive meanwhile
//! wait in the listen backlog; when a step fails (the store does not answer), every request
//! gets `503` with `Retry-After` and a JSON-RPC error, and the steps are tried again after
//! 100 ms, doubling up to 5 s; the instance serves normally once they succeed.

use std::convert::Infallible;
use std::future::Future;
use std::net::{TcpListener, TcpStream};
use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE, RETRY_AFTER};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use mcp_sansio::http::Body;
use mcp_sansio_store::StoreError;
use smol::channel::Receiver;
use smol::{Async, LocalExecutor, Timer};

use super::io::ConnTimer;
use super::ConnLimits;
use crate::tcp_io::TcpIo;

/// The first wait before reading the store again.
const FIRST_DELAY: Duration = Duration::from_millis(100);
/// The longest wait between two reads.
const LAST_DELAY: Duration = Duration::from_secs(5);
/// The longest a refused request's body is read (so the answer is not cut by a reset).
const BODY_WAIT: Duration = Duration::from_secs(5);

/// Where refused connections come from and how they are bounded.
pub(super) struct Door<'a> {
    pub(super) listener: &'a Async<TcpListener>,
    pub(super) stop: &'a Receiver<()>,
    pub(super) executor: &'a Rc<LocalExecutor<'static>>,
    pub(super) limits: Rc<ConnLimits>,
    pub(super) max_connections: usize,
    pub(super) max_body: usize,
}

/// What `load` gives once it succeeds, answering `503` meanwhile; `None` when shutdown was
/// asked for first.
pub(super) async fn until_ready<T, Fut>(door: &Door<'_>, mut load: impl FnMut() -> Fut) -> Option<T>
where
    Fut: Future<Output = Result<T, StoreError>>,
{
    let open = Rc::new(());
    let mut delay = FIRST_DELAY;
    // The first read refuses nothing: with the store up, the connections that arrive
    // meanwhile wait in the listen backlog and are served once it is done.
    let first = smol::future::or(async { Some(load().await) }, async {
        let _ = door.stop.recv().await;
        None
    });
    let mut tried = first.await;
    loop {
        match tried {
            None => return None,
            Some(Ok(ready)) => return Some(ready),
            Some(Err(_)) => {}
        }
        let waited = smol::future::or(
            async {
                Timer::after(delay).await;
                true
            },
            async {
                refuse(door, &open, delay).await;
                false
            },
        )
        .await;
        if !waited {
            return None;
        }
        delay = (delay * 2).min(LAST_DELAY);
        tried = smol::future::or(async { Some(load().await) }, async {
            refuse(door, &open, delay).await;
            None
        })
        .await;
    }
}

/// Accepts connections and answers each request `503` until shutdown is asked for. `open`
/// counts the refusing connections (one reference each): at `max_connections` none is
/// accepted until one ends.
async fn refuse(door: &Door<'_>, open: &Rc<()>, retry_after: Duration) {
    loop {
        if Rc::strong_count(open) > door.max_connections {
            let stopped = smol::future::or(
                async {
                    Timer::after(Duration::from_millis(10)).await;
                    false
                },
                async {
                    let _ = door.stop.recv().await;
                    true
                },
            )
            .await;
            if stopped {
                return;
            }
            continue;
        }
        let accepted = smol::future::or(async { Some(door.listener.accept().await) }, async {
            let _ = door.stop.recv().await;
            None
        })
        .await;
        match accepted {
            None => return,
            Some(Ok((stream, _))) => {
                let refused = refuse_connection(
                    stream,
                    door.limits.clone(),
                    door.max_body,
                    retry_after,
                    open.clone(),
                );
                door.executor.spawn(refused).detach();
            }
            // Out of descriptors or a reset before accept: back off a little.
            Some(Err(_)) => {
                Timer::after(Duration::from_millis(10)).await;
            }
        }
    }
}

/// Answers the one request of `stream` with `503` and closes it.
async fn refuse_connection(
    stream: Async<TcpStream>,
    limits: Rc<ConnLimits>,
    max_body: usize,
    retry_after: Duration,
    _open: Rc<()>,
) {
    let _ = stream.get_ref().set_nodelay(true);
    let io = TcpIo::accepted(stream, limits.write);
    let secs = retry_after.as_secs_f64().ceil().max(1.0) as u64;
    let service = service_fn(move |req: Request<Incoming>| async move {
        // The body is read (bounded) so that closing does not reset the answer away.
        let body = Limited::new(req.into_body(), max_body).collect();
        let read = smol::future::or(
            async { body.await.ok().map(|whole| whole.to_bytes()) },
            async {
                Timer::after(BODY_WAIT).await;
                None
            },
        )
        .await;
        Ok::<_, Infallible>(unavailable(&read.unwrap_or_default(), secs))
    });
    let _ = http1::Builder::new()
        .timer(ConnTimer::default())
        .header_read_timeout(limits.header_read)
        .keep_alive(false)
        .serve_connection(io, service)
        .await;
}

/// `503` with `Retry-After: secs` and the JSON-RPC error a failing store gets, for the
/// request whose body is `body`.
fn unavailable(body: &[u8], secs: u64) -> Response<Full<Bytes>> {
    let refusal = super::refusal::unavailable(body);
    let json = match refusal.body {
        Body::Full(bytes) => bytes,
        _ => Bytes::new(),
    };
    let mut resp = Response::new(Full::new(json));
    *resp.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    let headers = resp.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(RETRY_AFTER, HeaderValue::from(secs));
    resp
}
