//! Property tests of the stateless validator: on any params it never panics, every refusal
//! is one of the four codes with the HTTP status the revision gives it, and a request it
//! accepts really carries both required `_meta` fields and a served version.

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use super::{validate_request, ServerProfile};
use crate::jsonrpc::{self as m, code, RawJson};
use crate::model::stateless::{CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY};
use crate::model::{Implementation, ProtocolVersion, ServerCapabilities};

fn profile() -> ServerProfile {
    let caps: ServerCapabilities =
        serde_json::from_value(json!({"tools": {}, "prompts": {}})).unwrap();
    ServerProfile::new(Implementation::new("s", "1"), caps).dual_era()
}

/// Small JSON values, biased towards the shapes the validator looks at.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        prop::sample::select(vec!["2026-07-28", "2025-11-25", "", "info", "loud", "x"])
            .prop_map(Value::from),
    ];
    let key = prop::sample::select(keys());
    leaf.prop_recursive(3, 24, 4, move |inner| {
        let member = (key.clone(), inner.clone());
        prop_oneof![
            prop::collection::vec(inner, 0..4).prop_map(Value::Array),
            prop::collection::vec(member, 0..4).prop_map(|members| {
                Value::Object(
                    members
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect(),
                )
            }),
        ]
    })
}

/// The object keys of [`json_value`]'s trees.
fn keys() -> Vec<&'static str> {
    vec![
        PROTOCOL_VERSION_KEY,
        CLIENT_CAPABILITIES_KEY,
        "io.modelcontextprotocol/clientInfo",
        "io.modelcontextprotocol/logLevel",
        "_meta",
        "name",
        "elicitation",
        "progressToken",
    ]
}

fn method() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        m::SERVER_DISCOVER,
        m::TOOLS_CALL,
        m::PROMPTS_GET,
        m::RESOURCES_READ,
        m::INITIALIZE,
        m::PING,
        m::NOTIFICATIONS_CANCELLED,
        "nope/nope",
    ])
}

proptest! {
    #[test]
    fn any_params_get_a_well_formed_verdict(method in method(), params in json_value(),
                                            wrap in any::<bool>()) {
        // Half the cases put the random value under `_meta`, where the interesting checks are.
        let params = if wrap { json!({"_meta": params}) } else { params };
        check(method, &params)?;
    }

    #[test]
    fn near_valid_meta_gets_a_well_formed_verdict(method in method(), version in version(),
                                                  caps in json_value(), extra in json_value()) {
        let mut meta = match extra {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        meta.insert(PROTOCOL_VERSION_KEY.into(), version);
        meta.insert(CLIENT_CAPABILITIES_KEY.into(), caps);
        check(method, &json!({"_meta": meta}))?;
    }
}

fn version() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => Just(json!("2026-07-28")),
        1 => Just(json!("2025-11-25")),
        1 => Just(json!(null)),
        1 => Just(json!(20260728)),
    ]
}

fn check(method: &str, params: &Value) -> Result<(), TestCaseError> {
    let raw = RawJson::from_serialize(params).unwrap();
    match validate_request(&profile(), method, Some(&raw)) {
        Ok(ok) => {
            let meta = &params["_meta"];
            prop_assert!(meta
                .get(CLIENT_CAPABILITIES_KEY)
                .is_some_and(|v| !v.is_null()));
            let version = meta[PROTOCOL_VERSION_KEY].as_str().unwrap();
            prop_assert_eq!(ProtocolVersion::parse(version), Some(ok.version));
            prop_assert!(!ok.version.is_stateful());
            prop_assert_eq!(ok.method.name, method);
        }
        Err(e) => {
            let object = e.to_error_object();
            let status = match object.code {
                code::INVALID_PARAMS | code::UNSUPPORTED_PROTOCOL_VERSION => 400,
                code::METHOD_NOT_FOUND => 404,
                other => return Err(TestCaseError::fail(format!("code {other}"))),
            };
            prop_assert_eq!(e.http_status(), status);
            prop_assert!(!object.message.is_empty());
        }
    }
    Ok(())
}
