//! `mcp-sansio inspect`: its JSON API and frame feed, and its page in headless Chromium.

#[path = "../../../../tests/interop/harness.rs"]
mod harness;
#[path = "../support/hostile_http.rs"]
mod hostile_http;
#[path = "../support/http_fixture.rs"]
mod http_fixture;
#[path = "../support/inspector.rs"]
mod inspector;
#[path = "../support/peers.rs"]
mod peers;

mod api;
mod browser;
