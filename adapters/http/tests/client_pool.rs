//! The hyper adapter of the HTTP client over real loopback TCP, against a small scripted
//! Streamable HTTP responder (JSON answers, a delay on `tools/call` so calls overlap, GET 405):
//! N calls in flight use N keep-alive connections and a second wave reuses them; the bearer
//! token rides on every request; the session is DELETEd at the end.

use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use mcp_sansio::app::client::Client;
use mcp_sansio::model::Implementation;
use mcp_sansio_http::client::{connect_http_client, HttpClientOptions};
use serde_json::{json, Value};
use smol_hyper::rt::FuturesIo;

#[derive(Default)]
struct Seen {
    connections: AtomicUsize,
    requests: Mutex<Vec<(String, Option<String>)>>,
}

async fn answer(
    req: Request<Incoming>,
    seen: Arc<Seen>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let method = req.method().as_str().to_owned();
    let auth = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    seen.requests.lock().unwrap().push((method.clone(), auth));
    let body = req.into_body().collect().await?.to_bytes();
    let reply = |status: u16, body: Option<Value>| {
        let mut builder = Response::builder()
            .status(status)
            .header("mcp-session-id", "pool-test");
        if body.is_some() {
            builder = builder.header("content-type", "application/json");
        }
        let bytes = body.map(|b| Bytes::from(b.to_string())).unwrap_or_default();
        Ok(builder.body(Full::new(bytes)).unwrap())
    };
    match method.as_str() {
        "GET" => return reply(405, None),
        "DELETE" => return reply(200, None),
        _ => {}
    }
    let message: Value = serde_json::from_slice(&body).unwrap();
    let id = message["id"].clone();
    match message["method"].as_str() {
        Some("initialize") => reply(
            200,
            Some(json!({"jsonrpc":"2.0","id":id,"result":{
            "protocolVersion":"2025-11-25","capabilities":{"tools":{}},
            "serverInfo":{"name":"pool-test","version":"1"}}})),
        ),
        Some("tools/call") => {
            smol::Timer::after(Duration::from_millis(50)).await;
            let n = message["params"]["arguments"]["n"].clone();
            reply(
                200,
                Some(json!({"jsonrpc":"2.0","id":id,"result":{
                "content":[{"type":"text","text":n.to_string()}]}})),
            )
        }
        _ if id.is_null() => reply(202, None),
        _ => reply(200, Some(json!({"jsonrpc":"2.0","id":id,"result":{}}))),
    }
}

/// Serves on a loopback port in a background thread; returns the URL.
fn serve(seen: Arc<Seen>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let executor = smol::LocalExecutor::new();
        smol::block_on(executor.run(async {
            let listener = smol::net::TcpListener::try_from(listener).unwrap();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                seen.connections.fetch_add(1, Ordering::SeqCst);
                let seen = seen.clone();
                let service = hyper::service::service_fn(move |req| answer(req, seen.clone()));
                executor
                    .spawn(async move {
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(FuturesIo::new(stream), service)
                            .await;
                    })
                    .detach();
            }
        }));
    });
    url
}

#[test]
fn calls_in_flight_use_one_connection_each_and_later_calls_reuse_them() {
    let seen = Arc::new(Seen::default());
    let url = serve(seen.clone());
    let options = HttpClientOptions {
        bearer_token: Some("secret-token".into()),
        ..HttpClientOptions::default()
    };
    let builder = Client::builder(Implementation::new("pool", "1"));
    let client = connect_http_client(&url, builder, options).unwrap();
    let handle = client.handle();
    let probe = seen.clone();
    let (outcome, report) = client
        .block_on(async move {
            handle.initialize().await?;
            let mut waves = Vec::new();
            for wave in 0..2 {
                let calls = (0..8).map(|i| handle.call_tool("t", json!({"n": wave * 8 + i})));
                let results = futures_lite_join(calls.collect()).await;
                for (i, result) in results.into_iter().enumerate() {
                    let text = serde_json::to_value(&result?.content[0]).unwrap();
                    assert_eq!(text["text"], (wave * 8 + i).to_string());
                }
                waves.push(probe.connections.load(Ordering::SeqCst));
            }
            Ok::<_, mcp_sansio::app::client::ClientError>(waves)
        })
        .unwrap();
    let waves = outcome.unwrap();
    // 8 overlapping calls need 8 connections (plus the standalone GET's); the second wave
    // finds them idle and opens none.
    assert!(waves[0] >= 8, "{waves:?}");
    assert_eq!(
        waves[1], waves[0],
        "the second wave reused the pooled connections"
    );
    assert_eq!(report.connections_opened as usize, waves[0]);
    assert!(report.closed, "DELETE answered");
    let requests = seen.requests.lock().unwrap();
    assert!(requests.iter().any(|(m, _)| m == "DELETE"));
    assert!(requests.iter().any(|(m, _)| m == "GET"));
    for (method, auth) in requests.iter() {
        assert_eq!(auth.as_deref(), Some("Bearer secret-token"), "{method}");
    }
}

/// Awaits every future, polling them all each time (so their requests are in flight at once).
async fn futures_lite_join<F: std::future::Future>(futures: Vec<F>) -> Vec<F::Output> {
    use std::task::Poll;
    let mut pinned: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut out: Vec<Option<F::Output>> = pinned.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (slot, future) in out.iter_mut().zip(pinned.iter_mut()) {
            if slot.is_none() {
                match future.as_mut().poll(cx) {
                    Poll::Ready(value) => *slot = Some(value),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    out.into_iter().flatten().collect()
}

/// Not a test: prints loopback round trips per second of `ping` through the whole client
/// (handle -> Client -> HttpClient -> hyper pool) against the scripted responder, 1 and 64 in
/// flight, next to the floor: a bare hyper keep-alive POST loop on one connection to the same
/// responder. Run: `cargo test --release -p mcp-sansio-http --test client_pool -- --ignored
/// --nocapture`.
#[test]
#[ignore]
fn measure_ping_round_trips() {
    const ROUNDS: usize = 2000;
    let url = serve(Arc::new(Seen::default()));
    // Floor: one connection, sequential POSTs, nothing else (same single-threaded executor
    // setup as the client).
    let local = smol::LocalExecutor::new();
    let floor = smol::block_on(local.run(async {
        let addr = url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_owned();
        let stream = smol::net::TcpStream::connect(addr.as_str()).await.unwrap();
        stream.set_nodelay(true).unwrap();
        let (mut sender, conn) = hyper::client::conn::http1::handshake(FuturesIo::new(stream))
            .await
            .unwrap();
        let conn = local.spawn(async move {
            let _ = conn.await;
        });
        let body = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        let started = std::time::Instant::now();
        for _ in 0..ROUNDS {
            let req = Request::post("/mcp")
                .header("host", addr.as_str())
                .header("content-type", "application/json")
                .body(Full::new(body.clone()))
                .unwrap();
            sender.ready().await.unwrap();
            let resp = sender.send_request(req).await.unwrap();
            resp.into_body().collect().await.unwrap();
        }
        let rate = ROUNDS as f64 / started.elapsed().as_secs_f64();
        drop(sender);
        let _ = conn.cancel().await;
        rate
    }));
    for in_flight in [1usize, 64] {
        let builder = Client::builder(Implementation::new("measure", "1"));
        let client = connect_http_client(&url, builder, HttpClientOptions::default()).unwrap();
        let handle = client.handle();
        let (rate, _) = client
            .block_on(async move {
                handle.initialize().await.unwrap();
                let started = std::time::Instant::now();
                for _ in 0..ROUNDS / in_flight {
                    let pings = (0..in_flight).map(|_| handle.ping()).collect();
                    for result in futures_lite_join(pings).await {
                        result.unwrap();
                    }
                }
                (ROUNDS / in_flight * in_flight) as f64 / started.elapsed().as_secs_f64()
            })
            .unwrap();
        println!(
            "ping round trips, {in_flight} in flight: {rate:.0}/s (floor, 1 in flight: {floor:.0}/s; ratio {:.2})",
            rate / floor
        );
    }
}
