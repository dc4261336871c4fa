//! `serve --http ADDR`: the reference fixture on the Streamable HTTP adapter at `/mcp`. Prints
//! `listening on http://HOST:PORT/mcp` on stderr once bound (so port 0 works for tests) and
//! shuts down gracefully on SIGINT or SIGTERM.

use std::net::SocketAddr;
use std::sync::Arc;

use mcp_sansio::config::Config;
use mcp_sansio_http::server::{HttpServer, HttpServerOptions};
use smol::stream::StreamExt;

use crate::fixture;
use crate::Failure;

/// Serves the fixture over HTTP on `addr` until SIGINT/SIGTERM.
pub(crate) fn serve_http(addr: &str) -> Result<(), Failure> {
    let addr: SocketAddr = addr
        .parse()
        .map_err(|e| Failure::Usage(format!("--http wants IP:PORT, got {addr:?}: {e}")))?;
    let mut config = Config::default();
    fixture::page_size_from_env(&mut config);
    let sleep: fixture::Sleep = Arc::new(|duration| {
        Box::pin(async move {
            smol::Timer::after(duration).await;
        })
    });
    let server = HttpServer::bind(addr, HttpServerOptions::default(), move |now| {
        fixture::fixture_server(config.clone(), sleep.clone(), now)
    })
    .map_err(|e| Failure::Failed(format!("cannot listen on {addr}: {e}")))?;
    let stop = server.shutdown_handle();
    let signals =
        async_signal::Signals::new([async_signal::Signal::Int, async_signal::Signal::Term])
            .map_err(|e| Failure::Failed(format!("cannot watch signals: {e}")))?;
    std::thread::spawn(move || {
        smol::block_on(async move {
            let mut signals = signals;
            let _ = signals.next().await;
            stop.shutdown();
        })
    });
    eprintln!("listening on {}", server.url());
    let report = server
        .run()
        .map_err(|e| Failure::Failed(format!("serving failed: {e}")))?;
    if report.abandoned_connections > 0 {
        eprintln!(
            "mcp-sansio: {} connection(s) still open at the drain timeout were dropped",
            report.abandoned_connections
        );
    }
    Ok(())
}
