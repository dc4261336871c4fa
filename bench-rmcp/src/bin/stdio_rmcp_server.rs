//! rmcp's server side of the stdio bench (`benches/stdio.rs`): the echo `ServerHandler` served
//! on this process's stdin/stdout with `rmcp::transport::stdio()` (ping is built in), on a
//! current-thread tokio runtime.

use bench_rmcp::rmcp_side::EchoServer;
use rmcp::ServiceExt;

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let server = EchoServer
            .serve(rmcp::transport::stdio())
            .await
            .expect("server handshake");
        let _ = server.waiting().await;
    });
}
