//! Gating of what the application asks to send (lifecycle, direction, declared
//! capabilities) and plain notifications. A refused command is an error to the application;
//! nothing reaches the wire.

use super::gating;
use super::{RequestId, Role, SendError, Session, State};
use crate::jsonrpc::{self as m, Message, Notification, RawJson};

impl Session {
    /// Lifecycle, direction and capability gating of an outbound request.
    pub(crate) fn check_send_request(&self, method: &str) -> Result<(), SendError> {
        if self.state == State::Closed || self.input_ended {
            return Err(SendError::Closed);
        }
        if method == m::INITIALIZE {
            return Err(reserved(method));
        }
        let rule = gating::request_rule(method);
        if let Some((sender, _)) = rule {
            if !sender.allows(self.role) {
                return Err(wrong_direction(method));
            }
        }
        if method == m::PING {
            return Ok(());
        }
        if self.state != State::Ready {
            return Err(SendError::NotInitialized);
        }
        match rule {
            Some((_, Some(cap))) if !self.peer_declared(cap) => Err(undeclared(method, cap)),
            _ => Ok(()),
        }
    }

    /// Whether the peer declared `cap` (the receiver's capability gates requests).
    pub(crate) fn peer_declared(&self, cap: gating::Capability) -> bool {
        match self.role {
            Role::Client => self
                .peer_server_caps
                .as_ref()
                .is_some_and(|c| gating::server_has(c, cap, self.version)),
            Role::Server => self
                .peer_client_caps
                .as_ref()
                .is_some_and(|c| gating::client_has(c, cap)),
        }
    }

    /// Whether this side declared `cap` (the sender's capability gates notifications; the
    /// receiver's gates inbound requests).
    pub(crate) fn self_declared(&self, cap: gating::Capability) -> bool {
        match (&self.client_setup, &self.server_setup) {
            (Some(c), _) => gating::client_has(&c.capabilities, cap),
            (_, Some(s)) => gating::server_has(&s.capabilities, cap, self.version),
            _ => false,
        }
    }

    /// Sends a notification (gated by this side's own declared capabilities).
    pub fn notify(&mut self, method: &str, params: Option<RawJson>) -> Result<(), SendError> {
        self.notify_inner(method, params, None)
    }

    /// Sends a notification that belongs to an inbound request (e.g. a log message while
    /// handling `tools/call`), so a multi-stream transport routes it with that request.
    pub fn notify_related(
        &mut self,
        inbound: &RequestId,
        method: &str,
        params: Option<RawJson>,
    ) -> Result<(), SendError> {
        self.notify_inner(method, params, Some(inbound.clone()))
    }

    fn notify_inner(
        &mut self,
        method: &str,
        params: Option<RawJson>,
        related: Option<RequestId>,
    ) -> Result<(), SendError> {
        self.check_notify(method)?;
        check_structured(params.as_ref())?;
        let n = Notification {
            method: m::intern_method(method),
            params,
        };
        self.enqueue_command(Message::Notification(n), related)
    }

    fn check_notify(&self, method: &str) -> Result<(), SendError> {
        if self.state == State::Closed {
            return Err(SendError::Closed);
        }
        if matches!(
            method,
            m::NOTIFICATIONS_INITIALIZED | m::NOTIFICATIONS_CANCELLED | m::NOTIFICATIONS_PROGRESS
        ) {
            return Err(reserved(method));
        }
        let rule = gating::notification_rule(method);
        if let Some((sender, cap)) = rule {
            if !sender.allows(self.role) {
                return Err(wrong_direction(method));
            }
            if let Some(cap) = cap {
                if !self.self_declared(cap) {
                    return Err(undeclared(method, cap));
                }
            }
        }
        // Logging may flow while the server waits for `initialized`; nothing else may.
        let early_log = method == m::NOTIFICATIONS_MESSAGE && self.state == State::Initializing;
        if self.state != State::Ready && !early_log {
            return Err(SendError::NotInitialized);
        }
        Ok(())
    }
}

// The refusals' errors own a copy of the method name: built out of line, only when one
// happens (instruction cache).

/// `method` is the session's own to send.
#[cold]
#[inline(never)]
fn reserved(method: &str) -> SendError {
    SendError::Reserved {
        method: method.to_owned(),
    }
}

/// `method` only flows the other way.
#[cold]
#[inline(never)]
fn wrong_direction(method: &str) -> SendError {
    SendError::WrongDirection {
        method: method.to_owned(),
    }
}

/// `method` needs capability `cap`, which the side it depends on did not declare.
#[cold]
#[inline(never)]
fn undeclared(method: &str, cap: gating::Capability) -> SendError {
    SendError::CapabilityNotDeclared {
        method: method.to_owned(),
        capability: cap,
    }
}

/// JSON-RPC 2.0: params, when present, are an object or an array. Anything else would go out
/// as a message the peer must reject as an invalid request.
pub(crate) fn check_structured(params: Option<&RawJson>) -> Result<(), SendError> {
    let first = params.and_then(|p| p.as_bytes().iter().find(|b| !b.is_ascii_whitespace()));
    match first {
        None | Some(b'{' | b'[') => Ok(()),
        Some(_) => Err(SendError::InvalidParams),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::session::RequestOptions;
    use crate::testing::SessionPair;

    /// Params serialised around a raw value that holds line breaks: the session cannot skip
    /// the search for them (`RawJson::is_one_line` is false) and writes them as spaces.
    #[test]
    fn raw_line_breaks_inside_serialised_params_still_become_spaces() {
        let mut pair = SessionPair::with_defaults(Instant::now());
        assert!(pair.connect().is_some());
        let (now, s) = (pair.now(), &mut pair.client);
        let raw = RawJson::from_text("{\"a\":\r\n[1,\n2]}").unwrap();
        let params = RawJson::from_serialize(&serde_json::json!({"text": "x\ny"}))
            .and_then(|text| RawJson::from_serialize(&[raw, text]))
            .unwrap();
        let opts = RequestOptions::default();
        s.send_request(now, "ping", Some(params), opts).unwrap();
        let mut buf = Vec::new();
        while s.poll_transmit(&mut buf).is_some() {}
        let written = String::from_utf8(buf).unwrap();
        assert!(
            written.ends_with(r#""params":[{"a":  [1, 2]},{"text":"x\ny"}]}"#),
            "{written}"
        );
    }

    /// Found by the `session_server` fuzz body: `send_request(.., params = 5)` queued
    /// `"params":5`, a message every peer must reject as an invalid request.
    #[test]
    fn scalar_params_are_refused_not_sent() {
        let mut pair = SessionPair::with_defaults(Instant::now());
        assert!(pair.connect().is_some());
        let (now, s) = (pair.now(), &mut pair.client);
        let five = RawJson::from_text("5").unwrap();
        let opts = RequestOptions::default();
        let sent = s.send_request(now, "ping", Some(five.clone()), opts.clone());
        assert_eq!(sent, Err(SendError::InvalidParams));
        let null = RawJson::null();
        assert_eq!(s.notify("x/y", Some(null)), Err(SendError::InvalidParams));
        let array = RawJson::from_text(" [1]").unwrap();
        assert!(s.send_request(now, "ping", Some(array), opts).is_ok());
    }
}
