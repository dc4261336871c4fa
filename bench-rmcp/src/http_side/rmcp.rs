//! rmcp's side: its Streamable HTTP server (`StreamableHttpService`, default config: sessions,
//! SSE responses) with the echo [`EchoServer`], served with hyper on a current-thread tokio
//! runtime (TCP_NODELAY on accepted sockets); and its Streamable HTTP client
//! (`StreamableHttpClientTransport::from_uri`: reqwest, which rmcp builds without idle
//! connection pooling) on a current-thread runtime.

use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{
    StreamableHttpClientTransport, StreamableHttpServerConfig, StreamableHttpService,
};
use rmcp::ServiceExt;
use tokio::runtime::Runtime;

use super::{loopback, Call, ServerThread};
use crate::rmcp_side::{echo_calls, echo_params, pings, Client, EchoServer};

/// Starts rmcp's server.
pub fn spawn_server() -> ServerThread {
    let (listener, url) = loopback();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        let runtime = current_thread();
        runtime.block_on(serve(listener, stop_rx));
    });
    ServerThread {
        url,
        stop: Some(Box::new(move || {
            let _ = stop_tx.send(());
        })),
        thread: Some(thread),
    }
}

/// A current-thread tokio runtime with IO and time.
pub fn current_thread() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

async fn serve(listener: std::net::TcpListener, stop: tokio::sync::oneshot::Receiver<()>) {
    listener.set_nonblocking(true).expect("non-blocking");
    let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
    let service = StreamableHttpService::new(
        || Ok(EchoServer),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let mut stop = std::pin::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => return,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                let service = TowerToHyperService::new(service.clone());
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .keep_alive(true)
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        }
    }
}

/// rmcp's client connected to `server` (handshake done), to run on `runtime`.
pub fn connect(runtime: &Runtime, server: &ServerThread) -> Client {
    let url = server.url().to_owned();
    runtime.block_on(async {
        // Spawns its worker task: inside the runtime.
        let transport = StreamableHttpClientTransport::from_uri(url);
        Arc::new(().serve(transport).await.expect("rmcp handshake"))
    })
}

/// `rounds` batches of `in_flight` concurrent calls on `client`, each checked. Returns the
/// time of the batches.
pub fn sample(
    runtime: &Runtime,
    client: &Client,
    call: Call,
    in_flight: usize,
    rounds: u64,
) -> Duration {
    let params = echo_params();
    runtime.block_on(async {
        let started = Instant::now();
        for _ in 0..rounds {
            let done = match call {
                Call::Ping => pings(client, in_flight).await,
                Call::Echo => echo_calls(client, in_flight, &params).await,
            };
            assert_eq!(done, in_flight, "rmcp: calls failed");
        }
        started.elapsed()
    })
}
