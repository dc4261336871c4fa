//! Unit tests of the client's pure parts (no clock needed; frame-driven tests live in
//! tests/app/client_frames.rs because the core's sources may not read a clock).

use serde_json::json;

use super::*;
use crate::model::Implementation;

#[test]
fn capabilities_follow_registrations() {
    let builder = Client::builder(Implementation::new("c", "1"));
    assert_eq!(
        serde_json::to_value(builder.capabilities()).unwrap(),
        json!({})
    );
    let builder = builder
        .elicitation_with_defaults()
        .elicitation_url(true)
        .sampling_sync(|_, _| Err(ErrorObject::internal("no model")))
        .roots(vec![]);
    assert_eq!(
        serde_json::to_value(builder.capabilities()).unwrap(),
        json!({"sampling": {}, "elicitation": {"form": {}, "url": {}}, "roots": {"listChanged": true}})
    );
}

#[test]
fn errors_describe_themselves() {
    let e = ClientError::Rpc(ErrorObject::method_not_found("x/y"));
    assert!(e.is_method_not_found() && !e.is_invalid_params());
    assert!(e.to_string().contains("x/y"), "{e}");
    assert_eq!(ClientError::TimedOut.rpc_code(), None);
    let closed = ClientError::Closed(Some(CloseReason::InitializeTimedOut));
    assert!(closed.to_string().contains("initialize"), "{closed}");
}

#[test]
fn a_failed_initialize_does_not_blame_the_server() {
    // The error of a transport that closed under the handshake reads as a failure, not as the
    // server's refusal.
    let error = ErrorObject::new(-32000, "the HTTP+SSE transport closed");
    let text = describe_close(&crate::session::CloseReason::InitializeFailed(error));
    assert_eq!(
        text,
        "initialize failed: JSON-RPC error -32000: the HTTP+SSE transport closed"
    );
}
