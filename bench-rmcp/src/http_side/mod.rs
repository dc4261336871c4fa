//! Fixtures of the HTTP bench (feature `http`): three servers on loopback, each on a thread of
//! its own, and the client side of each, timed by the bench.
//!
//! - [`floor`]: a bare hyper HTTP/1.1 server that echoes the POST body, and a hyper client
//!   holding one kept-alive connection per request in flight (TCP_NODELAY both sides), both
//!   on single-threaded smol executors: the least an HTTP round trip costs with this stack.
//! - [`ours`]: `mcp_sansio_http::server::HttpServer` with an echo tool, and
//!   `mcp_sansio_http::client` (the app `Client` over the core `HttpClient`).
//! - [`rmcp`]: rmcp's `StreamableHttpService` (a tower service, served with hyper on a
//!   current-thread tokio runtime) with [`crate::rmcp_side::EchoServer`], and rmcp's
//!   `StreamableHttpClientTransport` on reqwest, as rmcp builds it by default.
//!
//! Every client function performs `rounds` batches of `in_flight` concurrent calls, checks
//! every answer (the echo text must come back) and returns the time of the batches only
//! (connections and handshakes are made before the clock starts).

pub mod floor;
pub mod lean;
pub mod ours;
pub mod rmcp;

#[cfg(test)]
mod tests;

/// What one round trip is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// `ping`: answered by the session itself.
    Ping,
    /// `tools/call` of the echo tool with [`crate::ECHO_TEXT`].
    Echo,
}

/// A server running on its own thread until dropped.
pub struct ServerThread {
    url: String,
    stop: Option<Box<dyn FnOnce() + Send>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ServerThread {
    /// `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// `127.0.0.1:PORT`.
    pub fn addr(&self) -> &str {
        self.url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
    }
}

impl Drop for ServerThread {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            stop();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A loopback listener on an ephemeral port and its endpoint URL.
fn loopback() -> (std::net::TcpListener, String) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    (listener, url)
}
