//! Performs the OAuth requests an [`AuthFlow`](mcp_sansio::auth::AuthFlow) emits (metadata,
//! registration, token) and the built-in "no-browser" authorization step, each on its own
//! short-lived HTTP/1.1 connection: the authorization server is usually not the MCP server,
//! and these requests are rare. Redirects are never followed; bodies are bounded.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use mcp_sansio::http::HttpMethod;
use mcp_sansio::outgoing::{ExchangeId, OutgoingRequest, ReceivedResponse};
use smol::net::TcpStream;

use super::endpoint_url::{endpoint_parts, parse_endpoint};
use smol::Timer;
use smol_hyper::rt::FuturesIo;

/// The largest authorization-server answer read (metadata documents are capped at 256 KiB).
const MAX_AUTH_BODY: usize = 256 * 1024;

/// Performs `request` (no redirects followed) within `timeout`.
pub(crate) async fn fetch(
    request: &OutgoingRequest,
    timeout: Duration,
) -> Result<ReceivedResponse, String> {
    let work = perform(request);
    let expire = async {
        Timer::after(timeout).await;
        Err(format!(
            "{:?} {}: no answer within {timeout:?}",
            request.method,
            url_of(request)
        ))
    };
    smol::future::or(work, expire).await
}

/// The built-in step of a client without a browser: GETs the authorization URL without
/// following the redirect and returns the redirect's `Location` (which carries `code`,
/// `state` and possibly `iss`). Works with authorization servers that redirect at once (test
/// and machine setups); a real login page answers 200 and this step fails.
pub(crate) async fn no_browser_redirect(url: &str, timeout: Duration) -> Result<String, String> {
    let request = OutgoingRequest {
        id: ExchangeId(0),
        method: HttpMethod::Get,
        url: Some(url.into()),
        headers: Vec::new(),
        named_headers: Vec::new(),
        body: Bytes::new(),
    };
    let response = fetch(&request, timeout).await?;
    if !(300..400).contains(&response.status) {
        return Err(format!(
            "the authorization endpoint answered {} instead of a redirect (it needs a browser)",
            response.status
        ));
    }
    let location = response.header_values("location").next().map(str::to_owned);
    location.ok_or_else(|| "the authorization redirect has no Location".to_owned())
}

/// A header value as text: bytes outside visible ASCII are kept (replaced when not UTF-8)
/// rather than the whole value dropped, so a malformed `WWW-Authenticate` or `Location` can
/// still be quoted in the error it causes.
pub(crate) fn header_text(value: &hyper::header::HeaderValue) -> String {
    String::from_utf8_lossy(value.as_bytes()).into_owned()
}

/// The request's absolute URL (the OAuth flow always gives one).
fn url_of(request: &OutgoingRequest) -> &str {
    request.url_str().unwrap_or_default()
}

async fn perform(request: &OutgoingRequest) -> Result<ReceivedResponse, String> {
    let url = url_of(request);
    let endpoint = parse_endpoint(url).map_err(|e| e.to_string())?;
    let (addr, authority, path) = endpoint_parts(&endpoint);
    let stream = TcpStream::connect(addr.as_str())
        .await
        .map_err(|e| format!("cannot connect to {authority}: {e}"))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(FuturesIo::new(stream))
        .await
        .map_err(|e| format!("HTTP handshake with {authority}: {e}"))?;
    let method = match request.method {
        HttpMethod::Post => hyper::Method::POST,
        _ => hyper::Method::GET,
    };
    let mut builder = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header(hyper::header::HOST, authority)
        .header(hyper::header::CONNECTION, "close");
    for (name, value) in &request.headers {
        builder = builder.header(*name, value.as_str());
    }
    let http_request = builder
        .body(Full::new(request.body.clone()))
        .map_err(|e| format!("invalid request: {e}"))?;
    let exchange = async {
        let response = sender
            .send_request(http_request)
            .await
            .map_err(|e| format!("{:?} {url}: {e}", request.method))?;
        let (parts, body) = response.into_parts();
        let body = Limited::new(body, MAX_AUTH_BODY)
            .collect()
            .await
            .map_err(|e| format!("{:?} {url}: body: {e}", request.method))?
            .to_bytes();
        let headers = parts
            .headers
            .iter()
            .map(|(n, v)| (n.as_str().to_owned(), header_text(v)))
            .collect();
        Ok(ReceivedResponse {
            status: parts.status.as_u16(),
            headers,
            body: body.to_vec(),
        })
    };
    // The connection is driven beside the exchange; once it closes, the exchange ends too
    // (with its answer or an error), so this arm only waits.
    let drive = async {
        let _ = connection.await;
        std::future::pending::<Result<ReceivedResponse, String>>().await
    };
    smol::future::or(exchange, drive).await
}
