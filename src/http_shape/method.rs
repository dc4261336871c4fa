//! [`HttpMethod`]: the request methods the MCP endpoint and the client machines tell apart.

/// The HTTP methods the MCP endpoint distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpMethod {
    /// Client-to-server messages.
    Post,
    /// Opens (or resumes) a server-to-client SSE stream.
    Get,
    /// Terminates a session.
    Delete,
    /// Anything else (answered 405).
    Other,
}

impl HttpMethod {
    /// Maps a method token (case-sensitive, as HTTP defines) to the enum.
    pub fn parse(token: &str) -> HttpMethod {
        match token {
            "POST" => HttpMethod::Post,
            "GET" => HttpMethod::Get,
            "DELETE" => HttpMethod::Delete,
            _ => HttpMethod::Other,
        }
    }
}
