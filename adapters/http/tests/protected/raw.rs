//! A one-request-per-connection HTTP/1.1 client over a blocking loopback socket, enough for
//! the protected-resource tests: absolute URLs, `Connection: close`, Content-Length or
//! chunked bodies, and a head-only read for SSE streams that stay open.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use mcp_sansio::http::HttpMethod;
use mcp_sansio::outgoing::{OutgoingRequest, ReceivedResponse};
use mcp_sansio::url::HttpUrl;

/// Every socket read gives up after this (a hang fails the test instead of blocking it).
const READ_LIMIT: Duration = Duration::from_secs(10);

/// One response: status, headers (names lowercased), body.
pub type Reply = ReceivedResponse;

/// The first value of header `name` of `reply`.
pub fn header<'a>(reply: &'a Reply, name: &'a str) -> Option<&'a str> {
    reply.header_values(name).next()
}

fn send(method: &str, url: &str, headers: &[(&str, String)], body: &[u8]) -> BufReader<TcpStream> {
    let url = HttpUrl::parse(url).unwrap_or_else(|_| panic!("not an http URL: {url}"));
    let stream = TcpStream::connect((url.host(), url.port())).expect("connect");
    stream.set_read_timeout(Some(READ_LIMIT)).unwrap();
    let mut req = format!(
        "{method} {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
        url.path_and_query(),
        url.authority(),
        body.len()
    );
    for (name, value) in headers {
        req.push_str(&format!("{name}: {value}\r\n"));
    }
    req.push_str("\r\n");
    let mut stream = stream;
    stream.write_all(req.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    BufReader::new(stream)
}

fn read_head(reader: &mut BufReader<TcpStream>) -> Reply {
    let mut line = String::new();
    reader.read_line(&mut line).expect("status line");
    let status = line
        .split(' ')
        .nth(1)
        .expect("status")
        .parse()
        .expect("code");
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("header line");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').expect("header");
        headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
    }
    Reply {
        status,
        headers,
        body: Vec::new(),
    }
}

/// Performs one request and reads the whole response.
pub fn request(method: &str, url: &str, headers: &[(&str, String)], body: &[u8]) -> Reply {
    let mut reader = send(method, url, headers, body);
    let mut reply = read_head(&mut reader);
    if header(&reply, "transfer-encoding") == Some("chunked") {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).expect("chunk size");
            let size = usize::from_str_radix(size.trim(), 16).expect("hex size");
            let mut data = vec![0; size + 2];
            reader.read_exact(&mut data).expect("chunk");
            data.truncate(size);
            if size == 0 {
                break;
            }
            reply.body.extend_from_slice(&data);
        }
    } else if let Some(len) = header(&reply, "content-length") {
        let mut body = vec![0; len.parse().expect("length")];
        reader.read_exact(&mut body).expect("body");
        reply.body = body;
    }
    reply
}

/// Performs one request and reads only the response head (for streams that stay open).
pub fn head_only(method: &str, url: &str, headers: &[(&str, String)]) -> Reply {
    read_head(&mut send(method, url, headers, b""))
}

/// Performs a request the authorization flow asked for.
pub fn perform(req: &OutgoingRequest) -> Reply {
    let headers: Vec<(&str, String)> = req
        .headers
        .iter()
        .map(|(n, v)| (*n, v.as_str().to_owned()))
        .collect();
    let method = match req.method {
        HttpMethod::Post => "POST",
        _ => "GET",
    };
    request(
        method,
        req.url_str().unwrap_or_default(),
        &headers,
        &req.body,
    )
}
