//! The HTTP+SSE transport of 2024-11-05 as HTTP-shaped values: the server endpoint
//! (SSE GET + message POST), a router serving it beside Streamable HTTP, and the client side
//! with the 2025-03-26 auto-detection. See docs/http.md ("HTTP+SSE").

mod client;
mod client_types;
mod detect;
mod response_fields;
mod router;
mod server;
mod session;

pub use client::SseTransportClient;
pub use client_types::{TransportCloseReason, TransportKind};
pub(crate) use detect::transmit_kind;
pub use detect::AutoClient;
pub(crate) use detect::StreamableHandoff;
pub use router::{Router, RouterPaths};
pub use server::{SseTransportEndpoint, SESSION_PARAM, SSE_TRANSPORT_STREAM_BIT};
