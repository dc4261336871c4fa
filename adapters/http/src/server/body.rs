//! The response body handed to hyper: empty, complete, pulled from the endpoint with
//! `poll_stream` only when hyper asks for more (so a slow reader backs up into the endpoint's
//! bounded queues, never into this adapter), or fed by a task through a bounded channel (a
//! stream resumed from the store, see `resume`).

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Frame, SizeHint};
use mcp_sansio::http::{StreamChunk, StreamId};
use smol::channel::Receiver;
use smol::stream::Stream;

use super::shared::Shared;

/// Bytes gathered into one frame at most (fewer, larger writes under load).
const MAX_FRAME: usize = 64 * 1024;

/// A response body.
pub(crate) enum ResponseBody {
    /// Nothing.
    Empty,
    /// All of it (taken at the first poll).
    Full(Option<Bytes>),
    /// Pulled from the endpoint.
    Stream(StreamBody),
    /// Fed by a task; ends when the task drops its sender.
    Fed(Pin<Box<Receiver<Bytes>>>),
}

/// A body the endpoint produces over time (SSE, or JSON that waits for a handler).
pub(crate) struct StreamBody {
    id: StreamId,
    shared: Shared,
    done: bool,
    /// Reports the body's frames, when the server is traced.
    pub(crate) tap: Option<crate::trace::BodyTap>,
    /// The exchange's HTTP server span, ended with the body (feature `otel`, when traced).
    #[cfg(feature = "otel")]
    pub(crate) span: Option<mcp_sansio_otel::HttpServerSpan>,
}

impl StreamBody {
    pub(crate) fn new(id: StreamId, shared: Shared) -> Self {
        StreamBody {
            id,
            shared,
            done: false,
            tap: None,
            #[cfg(feature = "otel")]
            span: None,
        }
    }

    fn poll_data(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        if self.done {
            return Poll::Ready(None);
        }
        let id = self.id;
        let mut buf = Vec::new();
        let mut ended = false;
        let parked = self.shared.try_with(|core| {
            while buf.len() < MAX_FRAME {
                match core.endpoint.poll_stream(id, &mut buf) {
                    Some(StreamChunk::Data { .. }) => {}
                    Some(StreamChunk::End) => {
                        ended = true;
                        break;
                    }
                    None => break,
                }
            }
            if buf.is_empty() && !ended {
                core.park(id, cx.waker());
                return true;
            }
            false
        });
        match parked {
            // Borrowed elsewhere (cannot happen on one thread outside a drop): try again.
            None => {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Some(true) => Poll::Pending,
            Some(false) => {
                self.done = ended;
                if let Some(tap) = &mut self.tap {
                    tap.chunk(&buf);
                    if ended {
                        tap.end();
                    }
                }
                if buf.is_empty() {
                    Poll::Ready(None)
                } else {
                    Poll::Ready(Some(Bytes::from(buf)))
                }
            }
        }
    }
}

impl Drop for StreamBody {
    fn drop(&mut self) {
        let id = self.id;
        let done = self.done;
        // The client went away (or hyper dropped the response): the request keeps running,
        // and what it sends stays available for resumption.
        self.shared.try_with(|core| {
            core.forget(id);
            if !done {
                core.endpoint.stream_closed(id);
            }
        });
    }
}

impl hyper::body::Body for ResponseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            ResponseBody::Empty => Poll::Ready(None),
            ResponseBody::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            ResponseBody::Stream(stream) => stream
                .poll_data(cx)
                .map(|data| data.map(|b| Ok(Frame::data(b)))),
            ResponseBody::Fed(feed) => feed
                .as_mut()
                .poll_next(cx)
                .map(|data| data.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ResponseBody::Empty | ResponseBody::Full(None) => true,
            ResponseBody::Full(Some(_)) => false,
            ResponseBody::Stream(stream) => stream.done,
            ResponseBody::Fed(_) => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ResponseBody::Empty | ResponseBody::Full(None) => SizeHint::with_exact(0),
            ResponseBody::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            ResponseBody::Stream(_) | ResponseBody::Fed(_) => SizeHint::default(),
        }
    }
}
