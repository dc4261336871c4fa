//! `serve --http ADDR`: the reference fixture on the HTTP adapter: Streamable HTTP at `/mcp`,
//! the HTTP+SSE pair (2024-11-05) at `/sse` + `/messages`. Prints
//! `listening on http://HOST:PORT/mcp` then `HTTP+SSE on http://HOST:PORT/sse` on stderr once
//! bound (so port 0 works for tests), then `max connections N` (the effective cap), and shuts
//! down gracefully on SIGINT or SIGTERM. The connection cap and timeouts come from the flags
//! of `serve_limits.rs`. The fixture's definitions are built once; every HTTP session gets its
//! own server sharing them and its own timed extras (late additions, watched-resource
//! updates), which end with it.
//! With `--auth-issuer` the server is an OAuth protected resource (see `serve_auth.rs`).
//! At start the open-file limit is raised to its hard limit and the connection cap lowered to
//! fit under it (`fd_limit.rs`).

use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

use mcp_sansio::runtime::Job;

use mcp_sansio::config::Config;
use mcp_sansio_http::server::{HttpServer, HttpServerOptions};
use smol::stream::StreamExt;
use smol::LocalExecutor;

use crate::fixture;
use crate::serve_auth::ServeAuthArgs;
use crate::serve_limits::ServeLimitArgs;
use crate::serve_store::ServeStoreArgs;
use crate::Failure;

/// Lowers the connection cap to what the open-file limit `soft_limit` allows (saying so on
/// stderr when it must).
fn fit_to_fd_limit(options: &mut HttpServerOptions, soft_limit: Option<u64>) {
    if let Some(soft) = soft_limit {
        let fit = crate::fd_limit::connections_that_fit(soft).max(1);
        if fit < options.max_connections {
            eprintln!(
                "mcp-sansio: the open-file limit is {soft}: serving at most {fit} connections \
                 (not {})",
                options.max_connections
            );
            options.max_connections = fit;
        }
    }
}

/// Serves the fixture over HTTP on `addr` until SIGINT/SIGTERM.
pub(crate) fn serve_http(
    addr: &str,
    auth: &ServeAuthArgs,
    limits: &ServeLimitArgs,
    trace: &crate::client_trace::TraceArgs,
    store: &ServeStoreArgs,
) -> Result<(), Failure> {
    let addr: SocketAddr = addr
        .parse()
        .map_err(|e| Failure::Usage(format!("--http wants IP:PORT, got {addr:?}: {e}")))?;
    let mut config = Config {
        max_frame_len: crate::max_frame(),
        ..Config::default()
    };
    fixture::page_size_from_env(&mut config);
    let mut options = HttpServerOptions::default();
    options.endpoint.max_body = crate::max_frame();
    let sleep: fixture::Sleep = Arc::new(|duration| {
        Box::pin(async move {
            smol::Timer::after(duration).await;
        })
    });
    // The factory runs inside the endpoint (it must be Send); it hands each session's extras
    // to a task on the serving executor. One entry per session, drained at once.
    let (extras_tx, extras_rx) = smol::channel::unbounded::<Job>();
    limits.apply(&mut options)?;
    options.trace = trace.http(true)?;
    store.apply(&mut options)?;
    fit_to_fd_limit(&mut options, crate::fd_limit::raise_to_hard());
    let max_connections = options.max_connections;
    // Built for the first session, so after the server read what it shares through the
    // store (the requestState key the definitions use).
    let factory = std::sync::OnceLock::new();
    let definitions = sleep.clone();
    let mut server = HttpServer::bind(addr, options, move |now| {
        let factory =
            factory.get_or_init(|| fixture::fixture_factory(config.clone(), definitions.clone()));
        let server = fixture::fixture_server(factory, now);
        let _ = extras_tx.try_send(fixture::extras(server.handle(), sleep.clone()));
        server
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
    if let Some(sse) = server.sse_url() {
        eprintln!("HTTP+SSE on {sse}");
    }
    eprintln!("max connections {max_connections}");
    // After the URL lines (tests and scripts read the first line for the URL).
    server.set_auth(auth.bearer_auth(&server.url())?);
    server.on_store_ready(crate::serve_store::state_key_ready());
    let executor = Rc::new(LocalExecutor::new());
    let spawner = executor.clone();
    executor
        .spawn(async move {
            while let Ok(extras) = extras_rx.recv().await {
                spawner.spawn(extras).detach();
            }
        })
        .detach();
    let report = smol::block_on(executor.run(server.run_on(executor.clone())))
        .map_err(|e| Failure::Failed(format!("serving failed: {e}")))?;
    if report.abandoned_connections > 0 {
        eprintln!(
            "mcp-sansio: {} connection(s) still open at the drain timeout were dropped",
            report.abandoned_connections
        );
    }
    Ok(())
}
