//! The example server of `examples/src/lib.rs` (`demo_server`: a typed `add` with a derived
//! output schema and an asynchronous typed `echo`) written with rmcp's macros, for the
//! side-by-side listing in docs/app-api.md. The code between the `listing` markers is what the
//! page shows, line for line; the tests check that, and that both servers list their tools and
//! answer a call.

// listing begin: rmcp
use mcp_sansio_examples::{AddArgs, EchoArgs, Sum};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::transport::stdio;
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};

/// The example server: its name and its tools.
#[derive(Clone)]
pub struct Demo {
    name: String,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Demo {
    #[tool(description = "Adds two integers.")]
    fn add(&self, Parameters(args): Parameters<AddArgs>) -> Json<Sum> {
        Json(Sum {
            result: args.a.saturating_add(args.b),
        })
    }

    #[tool(description = "Echoes the text back (asynchronously).")]
    async fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> String {
        format!("echo: {}", args.text)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Demo {
    fn get_info(&self) -> ServerConfig {
        let info = Implementation::new(self.name.clone(), env!("CARGO_PKG_VERSION"));
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(info)
    }
}

/// Builds the example server.
pub fn demo_server(name: &str) -> Demo {
    Demo {
        name: name.to_owned(),
        tool_router: Demo::tool_router(),
    }
}

/// Serves it on stdin/stdout until the input ends (on a tokio runtime).
pub async fn serve_stdio() -> Result<(), Box<dyn std::error::Error>> {
    demo_server("rmcp-example")
        .serve(stdio())
        .await?
        .waiting()
        .await?;
    Ok(())
}
// listing end: rmcp

#[cfg(test)]
mod tests;
