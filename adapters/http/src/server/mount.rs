//! What the server mounts: the core [`Router`] with the Streamable HTTP endpoint on
//! `HttpServerOptions::path` and, unless turned off, the HTTP+SSE pair (2024-11-05) on
//! its own two paths, both built from the same `EndpointConfig` (one Host/Origin policy, one
//! set of limits, one idle expiry), as the 2025-03-26 backwards-compatibility section suggests.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use mcp_sansio::app::server::Server;
use mcp_sansio::http::sse_transport::{Router, RouterPaths};

use super::HttpServerOptions;

/// The paths of the HTTP+SSE transport.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseTransportMount {
    /// GET here opens a session; its first event names the message URL. Default `/sse`.
    pub sse_path: String,
    /// POST here (`?sessionId=...`) carries the client's messages. Default `/messages`.
    pub messages_path: String,
}

impl Default for SseTransportMount {
    fn default() -> Self {
        let paths = RouterPaths::default();
        SseTransportMount {
            sse_path: paths.sse,
            messages_path: paths.messages,
        }
    }
}

/// The factory every session of either transport is built with.
pub(crate) type Factory = Box<dyn FnMut(Instant) -> Server + Send>;

/// The router for `options`, whose sessions come from `factory` and wake the driver by `wake`.
pub(crate) fn router(
    options: &HttpServerOptions,
    factory: Factory,
    wake: Arc<dyn Fn() + Send + Sync>,
) -> Router<Server> {
    // Both endpoints hold a clone of the session factory; the application's is one closure.
    let shared = Arc::new(Mutex::new(factory));
    let make = move |now| {
        let mut build = shared.lock().unwrap_or_else(PoisonError::into_inner);
        let mut server = build(now);
        server.set_waker(wake.clone());
        server
    };
    let sse_transport = options.sse_transport.clone().unwrap_or_default();
    let paths = RouterPaths {
        streamable: options.path.clone(),
        sse: sse_transport.sse_path,
        messages: sse_transport.messages_path,
    };
    let router = Router::new(options.endpoint.clone(), paths, make);
    if options.sse_transport.is_some() {
        router
    } else {
        router.without_sse_transport()
    }
}
