//! rmcp's side of the round-trip benches: an echo `ServerHandler` and a client, both served
//! over one `tokio::io::duplex` pipe (rmcp's own ndjson transport over async read/write).

use std::sync::Arc;

use futures::future::join_all;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientRequest, ContentBlock,
    JsonObject, PingRequest, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};

use crate::ECHO_TEXT;

/// An MCP server with one tool, `echo`, that answers with its `text` argument.
#[derive(Clone, Copy, Default)]
pub struct EchoServer;

impl ServerHandler for EchoServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != "echo" {
            return Err(ErrorData::invalid_params("unknown tool", None));
        }
        let text = request
            .arguments
            .as_ref()
            .and_then(|args| args.get("text"))
            .and_then(|text| text.as_str())
            .unwrap_or_default()
            .to_owned();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

/// A connected rmcp client; its server runs as a task on the same runtime.
pub type Client = Arc<RunningService<RoleClient, ()>>;

/// Serves [`EchoServer`] on one end of a duplex pipe and connects a client on the other
/// (handshake included). Must run inside a tokio runtime.
pub async fn connect() -> Client {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let server = EchoServer.serve(server_io).await.expect("server handshake");
        let _ = server.waiting().await;
    });
    Arc::new(().serve(client_io).await.expect("client handshake"))
}

/// The echo call's params.
pub fn echo_params() -> CallToolRequestParams {
    let mut args = JsonObject::new();
    args.insert("text".into(), ECHO_TEXT.into());
    CallToolRequestParams::new("echo").with_arguments(args)
}

/// `n` concurrent pings; returns how many succeeded.
pub async fn pings(client: &Client, n: usize) -> usize {
    let calls = (0..n).map(|_| {
        client
            .peer()
            .send_request(ClientRequest::PingRequest(PingRequest::default()))
    });
    join_all(calls)
        .await
        .into_iter()
        .filter(Result::is_ok)
        .count()
}

/// `n` concurrent echo calls; returns how many came back with the echoed text.
pub async fn echo_calls(client: &Client, n: usize, params: &CallToolRequestParams) -> usize {
    let calls = (0..n).map(|_| client.call_tool(params.clone()));
    join_all(calls)
        .await
        .into_iter()
        .filter(|r| r.as_ref().is_ok_and(is_echo))
        .count()
}

fn is_echo(result: &CallToolResult) -> bool {
    result
        .content
        .first()
        .and_then(|c| c.as_text())
        .is_some_and(|t| t.text == ECHO_TEXT)
}
