//! `GET api/frames`: the [`Feed`](super::feed::Feed) as server-sent events, one event per
//! record with the record's sequence number as its `id` (so a reconnecting `EventSource`
//! resumes with `Last-Event-ID`), a `missed` event when the buffer dropped records the
//! listener had not seen, and a comment every few seconds to find closed connections.
//! At most [`MAX_LISTENERS`] streams are open at once.

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use super::api::Api;
use super::server::{write_response, write_stream_head, Response};

/// Event streams open at most at once; more get 503.
const MAX_LISTENERS: usize = 8;
/// How long a stream stays silent before a keep-alive comment.
const KEEP_ALIVE: Duration = Duration::from_secs(10);

/// Streams the feed to `stream` from after record `after` until the page goes away.
pub(crate) fn stream_feed(api: &Api, mut stream: TcpStream, after: Option<u64>) {
    if !api.enter_listener(MAX_LISTENERS) {
        let _ = write_response(&mut stream, &Response::text(503, "too many event streams"));
        return;
    }
    let _ = stream.set_write_timeout(Some(KEEP_ALIVE));
    let _ = pump(api, &mut stream, after);
    api.leave_listener();
}

fn pump(api: &Api, stream: &mut TcpStream, mut after: Option<u64>) -> std::io::Result<()> {
    write_stream_head(stream)?;
    stream.write_all(b"retry: 1000\n\n")?;
    loop {
        let batch = api.feed.next(after, KEEP_ALIVE);
        let mut out = Vec::new();
        if batch.missed > 0 {
            out.extend_from_slice(format!("event: missed\ndata: {}\n\n", batch.missed).as_bytes());
        }
        for (seq, record) in &batch.records {
            out.extend_from_slice(format!("id: {seq}\ndata: {record}\n\n").as_bytes());
            after = Some(*seq);
        }
        if out.is_empty() {
            out.extend_from_slice(b": keep-alive\n\n");
        }
        stream.write_all(&out)?;
        stream.flush()?;
    }
}
