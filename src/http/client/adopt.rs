//! Taking over a session that transport auto-detection opened: the probe POST of
//! [`AutoClient`](crate::http::sse_transport::AutoClient) already carried `initialize` and read its
//! result, so the Streamable client starts with the session id, the negotiated version and
//! the `initialize` frame (for a replay after a 404), then sends what waited meanwhile.

use std::time::Instant;

use super::{HttpClient, HttpClientConfig};
use crate::http::sse_transport::{transmit_kind, StreamableHandoff};

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
            .filter(|v| !v.is_empty() && v.bytes().all(|b| (0x20..=0x7e).contains(&b)))
            .map(Into::into);
        client.init_frame = Some(handoff.init_frame);
        for frame in handoff.pending {
            let kind = transmit_kind(&frame);
            client.handle_transmit(now, frame, kind);
        }
        client
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outgoing::Action;
    use bytes::Bytes;

    #[test]
    fn the_adopted_session_sends_its_pending_frames_with_the_session_headers() {
        let init =
            Bytes::from_static(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#);
        let initialized =
            Bytes::from_static(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        let handoff = StreamableHandoff {
            url: "http://127.0.0.1:1/mcp".into(),
            session_id: Some("abc123".into()),
            pending: vec![initialized.clone()],
            init_frame: init.clone(),
            protocol_version: Some("2025-06-18".into()),
        };
        let mut client =
            HttpClient::from_handoff(HttpClientConfig::default(), Instant::now(), handoff);
        assert_eq!(client.session_id(), Some("abc123"));
        assert_eq!(client.protocol_version(), Some("2025-06-18"));
        assert_eq!(
            client.init_frame.as_ref(),
            Some(&init),
            "kept for a replay after 404"
        );
        let Some(Action::Send(post)) = client.poll_action() else {
            panic!("the pending notification is POSTed at once");
        };
        assert_eq!(post.method, crate::http::HttpMethod::Post);
        assert_eq!(post.body, initialized);
        let header = |name: &str| {
            post.headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(header("mcp-session-id"), Some("abc123"));
        assert_eq!(header("mcp-protocol-version"), Some("2025-06-18"));
        assert!(client.poll_action().is_none(), "nothing else yet");
    }
}
