//! Interoperability with the official SDKs and conformance peers (real processes on
//! loopback; scripts/install-peers installs them). One peer runs at a time: they are small, but
//! the machine is shared.

mod harness;
mod peers_conformance;
mod sse_transport;
mod sse_transport_sdk_clients;

/// Held by each test that starts a peer.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
