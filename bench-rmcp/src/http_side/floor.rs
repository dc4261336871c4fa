//! The floor: a bare hyper keep-alive POST echo. The server answers every request with its
//! own body (`application/json`); the client keeps one connection per request in flight, so
//! each exchange is one request write and one response read on a warm connection. Both sides
//! are hyper 1 on single-threaded smol executors with TCP_NODELAY, like our adapter.

use std::net::TcpListener;
use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::future::join_all;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper::header::{ACCEPT, CONTENT_TYPE, HOST};
use hyper::{Request, Response};
use smol::{Async, LocalExecutor};
use smol_hyper::rt::FuturesIo;

use super::{loopback, Call, ServerThread};

/// The request body the floor sends for `call`: the JSON-RPC message our client sends.
pub fn body(call: Call) -> Bytes {
    let message = match call {
        Call::Ping => serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}),
        Call::Echo => serde_json::json!({
            "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": crate::ECHO_TEXT}}
        }),
    };
    Bytes::from(message.to_string())
}

/// Starts the echo server.
pub fn spawn_server() -> ServerThread {
    let (listener, url) = loopback();
    let (stop_tx, stop_rx) = smol::channel::bounded::<()>(1);
    let thread = std::thread::spawn(move || serve(listener, stop_rx));
    ServerThread {
        url,
        stop: Some(Box::new(move || {
            stop_tx.close();
        })),
        thread: Some(thread),
    }
}

fn serve(listener: TcpListener, stop: smol::channel::Receiver<()>) {
    let executor = Rc::new(LocalExecutor::new());
    let spawner = executor.clone();
    // The accept loop is a task (polled when it has work), not the executor's main future
    // (polled on every wake-up of the thread), as in our server's `run`.
    let main = executor.spawn(async move {
        let executor = spawner;
        let listener = Async::new(listener).expect("non-blocking listener");
        loop {
            let accepted = smol::future::or(async { Some(listener.accept().await) }, async {
                let _ = stop.recv().await;
                None
            })
            .await;
            let Some(Ok((stream, _))) = accepted else {
                return;
            };
            let _ = stream.get_ref().set_nodelay(true);
            let service = hyper::service::service_fn(echo);
            executor
                .spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .keep_alive(true)
                        .serve_connection(FuturesIo::new(stream), service)
                        .await;
                })
                .detach();
        }
    });
    smol::block_on(executor.run(main));
}

async fn echo(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let body = request.into_body().collect().await?.to_bytes();
    let mut response = Response::new(Full::new(body));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, "application/json".parse().expect("value"));
    Ok(response)
}

/// `rounds` batches of `in_flight` concurrent POSTs of `body` to `server`, one kept-alive
/// connection per request in flight; every echo is checked. Returns the time of the batches.
pub fn sample(server: &ServerThread, body: &Bytes, in_flight: usize, rounds: u64) -> Duration {
    let executor = LocalExecutor::new();
    smol::block_on(executor.run(async {
        let mut senders = Vec::with_capacity(in_flight);
        for _ in 0..in_flight {
            senders.push(connect(&executor, server.addr()).await);
        }
        let started = Instant::now();
        for _ in 0..rounds {
            let exchanges = senders
                .iter_mut()
                .map(|sender| exchange(sender, server.addr(), body));
            let echoed = join_all(exchanges).await;
            assert!(echoed.into_iter().all(|ok| ok), "the floor lost an echo");
        }
        started.elapsed()
    }))
}

async fn connect(executor: &LocalExecutor<'_>, addr: &str) -> SendRequest<Full<Bytes>> {
    let stream = smol::net::TcpStream::connect(addr).await.expect("connect");
    stream.set_nodelay(true).expect("TCP_NODELAY");
    let (sender, connection) = hyper::client::conn::http1::handshake(FuturesIo::new(stream))
        .await
        .expect("handshake");
    executor
        .spawn(async move {
            let _ = connection.await;
        })
        .detach();
    sender
}

async fn exchange(sender: &mut SendRequest<Full<Bytes>>, addr: &str, body: &Bytes) -> bool {
    let request = Request::post("/mcp")
        .header(HOST, addr)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream")
        .body(Full::new(body.clone()))
        .expect("request");
    if sender.ready().await.is_err() {
        return false;
    }
    let Ok(response) = sender.send_request(request).await else {
        return false;
    };
    match response.into_body().collect().await {
        Ok(echoed) => echoed.to_bytes() == *body,
        Err(_) => false,
    }
}
