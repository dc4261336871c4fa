//! A small blocking HTTP/1.1 client for the OTLP exporter: one `POST` per export over a fresh
//! TCP connection to an `http://` collector, so the exporter needs no async runtime (the SDK
//! exports from its own threads). `https://` endpoints are refused: there is no TLS here.

use std::future::Future;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};

/// The longest a collector's answer may be (its body is not used beyond the status).
const MAX_RESPONSE: u64 = 1024 * 1024;

/// Connect, write and read timeouts of one export.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The OTLP exporter's HTTP client (see the module header).
#[derive(Clone, Copy, Debug, Default)]
pub struct BlockingHttp;

impl HttpClient for BlockingHttp {
    fn send_bytes<'life0, 'async_trait>(
        &'life0 self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Bytes>, HttpError>> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(async move { post(&request) })
    }
}

/// Sends `request` and reads the answer's status and body.
fn post(request: &Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
    let uri = request.uri();
    if uri.scheme_str() != Some("http") {
        return Err(format!("only http:// OTLP endpoints are supported, not {uri}").into());
    }
    let host = uri.host().ok_or("the OTLP endpoint has no host")?;
    let port = uri.port_u16().unwrap_or(80);
    let addr = (host, port)
        .to_socket_addrs()?
        .next()
        .ok_or("the OTLP endpoint's host has no address")?;
    let mut stream = TcpStream::connect_timeout(&addr, TIMEOUT)?;
    stream.set_read_timeout(Some(TIMEOUT))?;
    stream.set_write_timeout(Some(TIMEOUT))?;
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let mut head = format!(
        "{} {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\nContent-Length: {}\r\n",
        request.method(),
        request.body().len()
    );
    for (name, value) in request.headers() {
        if name != http::header::CONTENT_LENGTH && name != http::header::HOST {
            if let Ok(value) = value.to_str() {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
        }
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(request.body())?;
    let mut answer = Vec::new();
    stream.take(MAX_RESPONSE).read_to_end(&mut answer)?;
    parse(&answer)
}

/// The status line and the bytes after the head.
fn parse(answer: &[u8]) -> Result<Response<Bytes>, HttpError> {
    let end = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("the collector's answer has no complete head")?;
    let head = std::str::from_utf8(&answer[..end])?;
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or("the collector's answer has no status code")?;
    let body = Bytes::copy_from_slice(&answer[end + 4..]);
    Ok(Response::builder().status(status).body(body)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_line_and_body_are_read() {
        let answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
        let response = parse(answer).expect("parsed");
        assert_eq!(response.status(), 200);
        assert_eq!(response.body().as_ref(), b"{}");
        assert!(parse(b"HTTP/1.1 200 OK\r\n").is_err());
    }

    #[test]
    fn https_is_refused() {
        let request = Request::builder()
            .uri("https://collector:4318/v1/traces")
            .body(Bytes::new())
            .expect("request");
        assert!(post(&request).is_err());
    }
}
