//! Streamable HTTP and HTTP+SSE, in memory: the endpoint, the sans-IO client transports and
//! their property tests.

mod client;
mod client_rig;
mod endpoint;
mod props;
mod sse_transport;
mod sse_transport_client;
mod sse_transport_props;
mod support;
