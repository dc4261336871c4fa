//! Taking over a session that transport auto-detection opened: the probe POST of
//! [`AutoClient`](crate::http::legacy::AutoClient) already carried `initialize` and read its
//! result, so the Streamable client starts with the session id, the negotiated version and
//! the `initialize` frame (for a replay after a 404), then sends what waited meanwhile.

use std::time::Instant;

use bytes::Bytes;

use super::{HttpClient, HttpClientConfig};
use crate::http::legacy::StreamableHandoff;
use crate::jsonrpc::{self, Message};
use crate::session::TransmitKind;

impl HttpClient {
    /// A transport continuing the session of `handoff` (from `AutoClient::take_handoff`):
    /// its pending frames go out at once, `notifications/initialized` first as sent.
    pub fn from_handoff(
        config: HttpClientConfig,
        now: Instant,
        handoff: StreamableHandoff,
    ) -> HttpClient {
        let mut client = HttpClient::new(config);
        if let Some(sid) = &handoff.session_id {
            client.take_session_id(sid);
        }
        client.protocol_version = handoff
            .protocol_version
            .filter(|v| !v.is_empty() && v.bytes().all(|b| (0x20..=0x7e).contains(&b)));
        client.init_frame = Some(handoff.init_frame);
        for frame in handoff.pending {
            let kind = kind_of(&frame);
            client.handle_transmit(now, frame, kind);
        }
        client
    }
}

/// What a frame the client machine transmitted is (requests by their `id` and `method`).
fn kind_of(frame: &Bytes) -> TransmitKind {
    match jsonrpc::decode_message(frame) {
        Ok(Message::Request(_)) => TransmitKind::Request,
        Ok(Message::Notification(_)) => TransmitKind::Notification,
        _ => TransmitKind::Response,
    }
}
