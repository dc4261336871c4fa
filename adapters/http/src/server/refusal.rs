//! The adapter's own refusals: `503` with a JSON-RPC error carrying the request's id (the
//! core's [`service_unavailable`]), when the store fails or too many requests wait for other
//! instances.

use mcp_sansio::http::{service_unavailable, HttpResponse};

/// Why a request the store failed is refused.
pub(crate) const STORE_DOWN: &str = "the session store did not answer";

/// The answer to the request whose body is `body` when the store fails.
pub(crate) fn unavailable(body: &[u8]) -> HttpResponse {
    service_unavailable(body, STORE_DOWN)
}
