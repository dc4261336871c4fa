//! Streamable HTTP as HTTP-shaped values: no HTTP parser and no sockets. An integrator mounts
//! [`Endpoint`] in any HTTP server: it hands in method, path, headers and body, and gets back a
//! status, headers and either a full body or a stream id whose bytes it pulls with
//! [`Endpoint::poll_stream`]. See docs/http.md.

mod admission;
mod body_budget;
mod chunk_queue;
pub mod client;
mod config;
mod endpoint;
mod event_id;
mod headers;
mod listen_relay;
mod listen_slots;
mod machine;
mod peer;
mod quote;
mod replay;
mod reply;
mod session_table;
pub mod sse_transport;
mod stream_log;
mod streams;
mod types;

pub use crate::http_shape::{HttpMethod, HttpText};
pub use crate::outgoing::{Action, ExchangeId, OutgoingRequest};
pub use client::{HttpClient, HttpClientConfig, TransportEvent};
pub use config::{EndpointConfig, EndpointStats, ResponseMode};
pub use endpoint::{Endpoint, SessionChange, StateClaim, TaskRequest};
pub use event_id::{EventId, EventKey};
pub use headers::{accepts, accepts_all, accepts_json_and_sse, is_json_content_type, HostPolicy};
pub use listen_relay::ListenRelay;
pub use machine::{ExchangeMachine, SessionMachine};
pub use peer::{MaxSessionsPerPeer, Peer, PeerLimit};
pub use quote::{quote_peer_text, MAX_QUOTED_CHARS};
pub use reply::service_unavailable;
pub use stream_log::{RemoteResume, StreamLogEntry};
pub use streams::StreamChunk;
pub use types::{Body, HttpRequestHead, HttpResponse, StreamId};
