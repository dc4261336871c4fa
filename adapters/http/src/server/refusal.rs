//! The adapter's own refusals: `503` with a JSON-RPC error, when the store fails or too many
//! requests wait for other instances.

use bytes::Bytes;
use mcp_sansio::http::{Body, HttpResponse, HttpText};

/// The JSON-RPC error of a request the store failed.
pub(crate) const UNAVAILABLE_BODY: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Service Unavailable: the session store did not answer"}}"#;

/// The answer when the store fails.
pub(crate) fn unavailable() -> HttpResponse {
    service_unavailable(UNAVAILABLE_BODY)
}

/// A `503` carrying the JSON-RPC error `body`.
pub(crate) fn service_unavailable(body: &'static str) -> HttpResponse {
    let mut resp = HttpResponse::status(503);
    let json = HttpText::from_static("application/json");
    resp.headers
        .push((HttpText::from_static("Content-Type"), json));
    resp.body = Body::Full(Bytes::from_static(body.as_bytes()));
    resp
}
