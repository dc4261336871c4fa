//! The rmcp server side of the interop peer: a `ServerHandler` with tools (`echo`, `add`,
//! `protocol_version`), one prompt (`greet`) and one resource (`memo://hello`), served on
//! stdio or, with feature `peer-http`, over rmcp's Streamable HTTP service.
//!
//! rmcp answers both eras on the same handler: `initialize` (2024-11-05..2025-11-25) and the
//! stateless 2026-07-28 requests (`server/discover`, per-request `_meta`). `--versions` narrows
//! what it advertises and accepts.

use std::borrow::Cow;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

/// The one resource the peer serves.
pub const MEMO_URI: &str = "memo://hello";
/// Its text.
pub const MEMO_TEXT: &str = "hello from rmcp";

/// The peer's handler; `versions` is what it advertises (rmcp's known versions by default).
#[derive(Clone)]
pub struct PeerServer {
    pub versions: Vec<ProtocolVersion>,
}

/// Builds an rmcp model value from its wire JSON (the peer's fixtures are written as JSON so
/// they read like the specification's examples). Results carry `"resultType": "complete"`
/// as rmcp's constructors set it: rmcp sends what the handler returns on 2026-07-28 (a result
/// deserialized without it goes out without it) and drops it for older versions.
fn from_json<T: DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("fixture JSON matches rmcp's model")
}

fn tools() -> ListToolsResult {
    from_json(json!({"resultType": "complete", "tools": [
        {"name": "echo", "description": "Answers with its `text` argument",
         "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                         "required": ["text"]}},
        {"name": "add", "description": "Adds the numbers `a` and `b`",
         "inputSchema": {"type": "object", "properties": {"a": {"type": "number"},
                         "b": {"type": "number"}}, "required": ["a", "b"]}},
        {"name": "protocol_version",
         "description": "Answers with the protocol version this request was served under",
         "inputSchema": {"type": "object"}}
    ]}))
}

fn prompts() -> ListPromptsResult {
    from_json(json!({"resultType": "complete", "prompts": [
        {"name": "greet", "description": "Greets someone",
         "arguments": [{"name": "name", "required": true}]}
    ]}))
}

fn resources() -> ListResourcesResult {
    from_json(json!({"resultType": "complete", "resources": [
        {"uri": MEMO_URI, "name": "memo", "mimeType": "text/plain"}
    ]}))
}

fn text_result(text: String) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(text)]).into()
}

fn number(args: Option<&serde_json::Map<String, Value>>, key: &str) -> Result<f64, ErrorData> {
    args.and_then(|args| args.get(key))
        .and_then(Value::as_f64)
        .ok_or_else(|| ErrorData::invalid_params(format!("`{key}` must be a number"), None))
}

impl ServerHandler for PeerServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_prompts()
            .enable_resources()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("rmcp-peer", env!("CARGO_PKG_VERSION")))
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Owned(self.versions.clone())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(tools())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.as_ref();
        match request.name.as_ref() {
            "echo" => {
                let text = args
                    .and_then(|args| args.get("text"))
                    .and_then(Value::as_str)
                    .ok_or_else(|| ErrorData::invalid_params("`text` must be a string", None))?;
                Ok(text_result(text.to_owned()))
            }
            "add" => {
                let sum = number(args, "a")? + number(args, "b")?;
                Ok(text_result(sum.to_string()))
            }
            "protocol_version" => {
                let version = context.protocol_version().map(|v| v.to_string());
                Ok(text_result(version.unwrap_or_else(|| "unknown".into())))
            }
            other => Err(ErrorData::invalid_params(
                format!("unknown tool: {other}"),
                None,
            )),
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(prompts())
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name != "greet" {
            return Err(ErrorData::invalid_params("unknown prompt", None));
        }
        let name = request
            .arguments
            .as_ref()
            .and_then(|args| args.get("name"))
            .and_then(Value::as_str)
            .ok_or_else(|| ErrorData::invalid_params("`name` is required", None))?;
        let result: GetPromptResult = from_json(json!({
            "resultType": "complete",
            "description": "A greeting",
            "messages": [{"role": "user",
                          "content": {"type": "text", "text": format!("Hello, {name}!")}}]
        }));
        Ok(GetPromptResponse::Complete(result))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(resources())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != MEMO_URI {
            return Err(ErrorData::resource_not_found("no such resource", None));
        }
        let result: ReadResourceResult = from_json(json!({"resultType": "complete", "contents": [
            {"uri": MEMO_URI, "mimeType": "text/plain", "text": MEMO_TEXT}
        ]}));
        Ok(ReadResourceResponse::Complete(result))
    }
}

/// Serves `server` on this process's stdin/stdout until stdin ends.
pub async fn serve_stdio(server: PeerServer) -> Result<(), String> {
    use rmcp::ServiceExt;
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("serve stdio: {e}"))?;
    running
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| format!("stdio service: {e}"))
}

/// Serves `server` with rmcp's Streamable HTTP service at `http://ADDR/mcp` (any path, in
/// fact), printing `listening on URL` on stdout once bound; runs until killed.
#[cfg(feature = "peer-http")]
pub async fn serve_http(server: PeerServer, addr: &str) -> Result<(), String> {
    use std::io::Write;
    use std::sync::Arc;

    use hyper_util::rt::TokioIo;
    use hyper_util::service::TowerToHyperService;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("bind {addr}: {e}"))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    println!("listening on http://{local}/mcp");
    let _ = std::io::stdout().flush();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of descriptors, say: wait instead of spinning on the error.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            continue;
        };
        let service = TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
