//! Every refusal path of the stateless validator, with the exact error shapes of the
//! specification's examples, and the `server/discover` result.

use serde_json::{json, Value};

use super::*;
use crate::jsonrpc::{self as m, code, RawJson};
use crate::model::stateless::ResultType;
use crate::model::{ClientCapabilityKey as C, Implementation, ProtocolVersion, ServerCapabilities};

fn profile() -> ServerProfile {
    let caps: ServerCapabilities =
        serde_json::from_value(json!({"tools": {}, "resources": {}})).unwrap();
    ServerProfile::new(Implementation::new("ExampleServer", "1.0.0"), caps)
}

fn params(meta: Value) -> RawJson {
    RawJson::from_serialize(&json!({"name": "get_weather", "_meta": meta})).unwrap()
}

fn good_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "ExampleClient", "version": "1.0.0"},
    })
}

fn error_json(e: &StatelessError) -> Value {
    serde_json::to_value(e.to_error_object()).unwrap()
}

#[test]
fn a_complete_request_passes_with_typed_fields() {
    let mut meta = good_meta();
    meta["io.modelcontextprotocol/logLevel"] = json!("warning");
    meta["progressToken"] = json!(7);
    let ok = validate_request(&profile(), m::TOOLS_CALL, Some(&params(meta))).unwrap();
    assert_eq!(ok.version, ProtocolVersion::V2026_07_28);
    assert_eq!(ok.method.name, m::TOOLS_CALL);
    assert_eq!(ok.meta.client_info.unwrap().name, "ExampleClient");
    assert_eq!(ok.meta.log_level, Some(crate::model::LoggingLevel::Warning));
    assert_eq!(ok.meta.extra["progressToken"], json!(7));
}

#[test]
fn missing_required_fields_are_invalid_params() {
    let cases = [
        None,
        Some(RawJson::from_text("[]").unwrap()),
        Some(RawJson::from_text(r#"{"name":"x"}"#).unwrap()),
        Some(RawJson::from_text(r#"{"_meta":3}"#).unwrap()),
        Some(params(
            json!({"io.modelcontextprotocol/clientCapabilities": {}}),
        )),
        Some(params(
            json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"}),
        )),
        Some(params(json!({
            "io.modelcontextprotocol/protocolVersion": null,
            "io.modelcontextprotocol/clientCapabilities": {},
        }))),
        Some(params(json!({
            "io.modelcontextprotocol/protocolVersion": 2026,
            "io.modelcontextprotocol/clientCapabilities": {},
        }))),
        Some(params(json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/logLevel": "loud",
        }))),
    ];
    for p in cases {
        let e = validate_request(&profile(), m::TOOLS_LIST, p.as_ref()).unwrap_err();
        assert_eq!(e.to_error_object().code, code::INVALID_PARAMS, "{p:?}: {e}");
        assert_eq!(e.http_status(), 400);
        assert!(matches!(e, StatelessError::InvalidParams(_)));
    }
}

#[test]
fn unsupported_versions_list_what_the_server_supports() {
    let p = profile().dual_era();
    for requested in ["1900-01-01", "2025-11-25", ""] {
        let mut meta = good_meta();
        meta["io.modelcontextprotocol/protocolVersion"] = json!(requested);
        let e = validate_request(&p, m::TOOLS_LIST, Some(&params(meta))).unwrap_err();
        assert_eq!(e.http_status(), 400);
        assert_eq!(
            error_json(&e),
            json!({
                "code": -32022,
                "message": "Unsupported protocol version",
                "data": {
                    "supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26",
                        "2024-11-05"],
                    "requested": requested,
                }
            })
        );
    }
}

#[test]
fn unknown_removed_and_ungated_methods_are_not_found() {
    for method in [
        "nope/nope",
        m::INITIALIZE,
        m::PING,
        m::LOGGING_SET_LEVEL,
        m::RESOURCES_SUBSCRIBE,
        m::SAMPLING_CREATE_MESSAGE,
        m::NOTIFICATIONS_PROGRESS,
        // The profile declares neither prompts nor completions.
        m::PROMPTS_LIST,
        m::COMPLETION_COMPLETE,
    ] {
        let e = validate_request(&profile(), method, Some(&params(good_meta()))).unwrap_err();
        assert_eq!(e.to_error_object().code, code::METHOD_NOT_FOUND, "{method}");
        assert_eq!(e.http_status(), 404);
    }
    for method in [
        m::SERVER_DISCOVER,
        m::SUBSCRIPTIONS_LISTEN,
        m::TOOLS_LIST,
        m::RESOURCES_READ,
    ] {
        assert!(validate_request(&profile(), method, Some(&params(good_meta()))).is_ok());
    }
}

#[test]
fn the_stateless_validator_refuses_session_era_messages() {
    let profile = ServerProfile::new(
        Implementation::new("s", "1"),
        serde_json::from_value(json!({"logging": {}})).unwrap(),
    )
    .dual_era();
    // An `initialize` has no `_meta` protocol fields: a dual-era server must route it to a
    // session before validating; here it is refused like any malformed stateless request.
    let params = RawJson::from_text(
        r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}"#,
    )
    .unwrap();
    let e = validate_request(&profile, m::INITIALIZE, Some(&params)).unwrap_err();
    assert_eq!(e.to_error_object().code, code::INVALID_PARAMS);
    // With stateless `_meta`, the removed methods are unknown.
    let meta = RawJson::from_text(
        r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"level":"info"}"#,
    )
    .unwrap();
    for method in [m::INITIALIZE, m::PING, m::LOGGING_SET_LEVEL] {
        let e = validate_request(&profile, method, Some(&meta)).unwrap_err();
        assert_eq!(e.to_error_object().code, code::METHOD_NOT_FOUND, "{method}");
    }
}

#[test]
fn the_version_is_checked_before_the_method() {
    let mut meta = good_meta();
    meta["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let e = validate_request(&profile(), "nope/nope", Some(&params(meta))).unwrap_err();
    assert_eq!(e.to_error_object().code, code::UNSUPPORTED_PROTOCOL_VERSION);
}

#[test]
fn missing_client_capabilities_match_the_spec_example() {
    let ok = validate_request(&profile(), m::TOOLS_CALL, Some(&params(good_meta()))).unwrap();
    let missing = missing_capabilities(&ok.client_capabilities, &[C::Elicitation]);
    assert_eq!(
        serde_json::to_value(missing_capabilities_error(&missing)).unwrap(),
        json!({
            "code": -32021,
            "message": "Server requires the elicitation capability for this request",
            "data": {"requiredCapabilities": {"elicitation": {}}}
        })
    );
    // Only the missing ones are named.
    let mut meta = good_meta();
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({"sampling": {}, "elicitation": {}});
    let ok = validate_request(&profile(), m::TOOLS_CALL, Some(&params(meta))).unwrap();
    let declared = &ok.client_capabilities;
    assert!(missing_capabilities(declared, &[C::Sampling, C::Elicitation]).is_empty());
    let missing = missing_capabilities(declared, &[C::Sampling, C::ElicitationUrl, C::Roots]);
    assert_eq!(missing, [C::ElicitationUrl, C::Roots]);
    assert_eq!(
        serde_json::to_value(missing_capabilities_error(&missing)).unwrap()["data"],
        json!({"requiredCapabilities": {"elicitation": {"url": {}}, "roots": {}}})
    );
}

#[test]
fn discover_carries_versions_capabilities_cache_hints_and_server_info() {
    let mut p = profile();
    p.instructions = Some("Prefer get_weather.".into());
    let result = serde_json::to_value(discover_response(&p)).unwrap();
    assert_eq!(
        result,
        json!({
            "resultType": "complete",
            "ttlMs": 60000,
            "cacheScope": "public",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}, "resources": {}},
            "instructions": "Prefer get_weather.",
            "_meta": {"io.modelcontextprotocol/serverInfo":
                {"name": "ExampleServer", "version": "1.0.0"}},
        })
    );
    let back: crate::model::stateless::DiscoverResponse = serde_json::from_value(result).unwrap();
    assert_eq!(back.result_type, ResultType::Complete);
    assert_eq!(back.body.server_info().unwrap().name, "ExampleServer");
}

#[test]
fn the_advertised_list_is_bounded() {
    let mut p = profile();
    p.supported_versions = vec![ProtocolVersion::V2026_07_28; 100];
    assert_eq!(p.supported_strings().len(), MAX_SUPPORTED_VERSIONS);
}
