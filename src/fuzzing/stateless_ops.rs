//! Fuzz body for the 2026-07-28 stateless request validation (`stateless::validate_request`,
//! then the client capability check a server makes): a method from a vocabulary (or raw bytes) and params that
//! are either raw fuzz bytes or a `_meta` built from choices (version, client capabilities,
//! client info, log level, junk keys), against a stateless-only or dual-era profile with some
//! server capabilities. Invariants: no panic; the same input gives the same answer; an
//! accepted request names a version the profile serves statelessly (the one its `_meta` says)
//! and a request method of the revision; `missing_capabilities` reports exactly the required
//! capabilities the request did not declare, and their -32021 error names each of them; a refusal carries its reason's code and
//! status (404 only for an unknown method), its error object serializes, and -32022 lists
//! exactly the profile's versions; the `server/discover` result of the profile serializes.

use serde_json::{json, Map, Value};

use super::ops::Cursor;
use crate::jsonrpc::{code, RawJson};
use crate::model::{ClientCapabilityKey, Implementation, MethodKind, ServerCapabilities};
use crate::stateless::{
    capability_name, discover_response, missing_capabilities, missing_capabilities_error,
    required_capabilities_object, validate_request, ServerProfile, StatelessError,
};

const METHODS: &[&str] = &[
    "tools/call",
    "tools/list",
    "resources/read",
    "resources/list",
    "prompts/get",
    "completion/complete",
    "server/discover",
    "ping",
    "initialize",
    "notifications/cancelled",
    "logging/setLevel",
    "tasks/get",
    "nope",
    "",
];
const VERSIONS: &[&str] = &[
    "2026-07-28",
    "2025-11-25",
    "2025-03-26",
    "2024-11-05",
    "2099-01-01",
    "",
];
const LEVELS: &[&str] = &["debug", "warning", "emergency", "loud", ""];
const CAPABILITY_VALUES: &[&str] = &[
    r#"{}"#,
    r#"{"roots":{"listChanged":true}}"#,
    r#"{"sampling":{},"elicitation":{"url":{}}}"#,
    r#"{"elicitation":{}}"#,
    r#"{"tasks":{"list":{},"cancel":{}}}"#,
    r#"{"roots":false,"sampling":null}"#,
    r#"[]"#,
    r#"null"#,
    r#""x""#,
];
const KEYS: &[ClientCapabilityKey] = &[
    ClientCapabilityKey::Roots,
    ClientCapabilityKey::RootsListChanged,
    ClientCapabilityKey::Sampling,
    ClientCapabilityKey::Elicitation,
    ClientCapabilityKey::ElicitationUrl,
    ClientCapabilityKey::Tasks,
    ClientCapabilityKey::TasksList,
    ClientCapabilityKey::TasksCancel,
];
const SERVER_CAPABILITIES: &[&str] = &[
    r#"{}"#,
    r#"{"tools":{}}"#,
    r#"{"tools":{},"resources":{},"prompts":{},"completions":{},"logging":{}}"#,
];

/// Validates one arbitrary request. See the module docs.
pub fn stateless_validate(data: &[u8]) {
    let mut c = Cursor::new(data);
    let profile = profile(&mut c);
    let method = match c.below(8) {
        0 => c.field(METHODS),
        _ => c.pick(METHODS).to_owned(),
    };
    let text = if c.below(4) == 0 {
        String::from_utf8_lossy(c.bytes(512)).into_owned()
    } else {
        built_params(&mut c).to_string()
    };
    let params = RawJson::from_text(text).ok();
    let required: Vec<ClientCapabilityKey> = (0..c.below(4)).map(|_| c.pick(KEYS)).collect();

    let outcome = validate_request(&profile, &method, params.as_ref());
    assert_eq!(
        outcome,
        validate_request(&profile, &method, params.as_ref()),
        "validation is not deterministic"
    );
    match outcome {
        Ok(request) => {
            assert!(profile.serves_statelessly(request.version));
            assert_eq!(request.method.name, method);
            assert_eq!(request.method.kind, MethodKind::Request);
            assert_eq!(
                meta_version(params.as_ref()).as_deref(),
                Some(request.version.as_str()),
                "accepted under another version than the one _meta names"
            );
            let missing = missing_capabilities(&request.client_capabilities, &required);
            for key in &required {
                assert_eq!(
                    missing.contains(key),
                    !key.is_declared(&request.client_capabilities),
                    "{key:?} misreported"
                );
            }
            if !missing.is_empty() {
                let error = missing_capabilities_error(&missing);
                assert_eq!(error.code, code::MISSING_REQUIRED_CLIENT_CAPABILITY);
                for &key in &missing {
                    assert!(
                        error.message.contains(capability_name(key)),
                        "{key:?} unnamed"
                    );
                }
                let data = serde_json::to_value(&error.data).expect("the error serializes");
                let named = serde_json::to_value(required_capabilities_object(&missing))
                    .expect("capabilities serialize");
                assert_eq!(data["requiredCapabilities"], named);
            }
        }
        Err(e) => check_refusal(&profile, &e),
    }
    let discover = serde_json::to_value(discover_response(&profile)).expect("discover serializes");
    assert!(discover.is_object());
}

fn profile(c: &mut Cursor<'_>) -> ServerProfile {
    let b = c.byte();
    let caps: ServerCapabilities =
        serde_json::from_str(SERVER_CAPABILITIES[usize::from(b % 3)]).expect("valid capabilities");
    let profile = ServerProfile::new(Implementation::new("fuzz", "1"), caps);
    if b & 4 == 0 {
        profile
    } else {
        profile.dual_era()
    }
}

/// Params with a `_meta` built from choices, so most inputs get past the shape checks.
fn built_params(c: &mut Cursor<'_>) -> Value {
    let mut meta = Map::new();
    let fields = c.byte();
    if fields & 1 == 0 {
        let version = match c.below(8) {
            0 => json!(3),
            1 => Value::Null,
            _ => json!(c.field(VERSIONS)),
        };
        meta.insert("io.modelcontextprotocol/protocolVersion".into(), version);
    }
    if fields & 2 == 0 {
        let caps: Value = serde_json::from_str(c.pick(CAPABILITY_VALUES)).expect("valid JSON");
        meta.insert("io.modelcontextprotocol/clientCapabilities".into(), caps);
    }
    if fields & 4 == 0 {
        let info = match c.below(3) {
            0 => json!({"name": c.field(&["c"])}),
            1 => json!(c.field(&["c"])),
            _ => json!({"name": c.field(&["c"]), "version": c.field(&["1"])}),
        };
        meta.insert("io.modelcontextprotocol/clientInfo".into(), info);
    }
    if fields & 8 == 0 {
        let level = json!(c.field(LEVELS));
        meta.insert("io.modelcontextprotocol/logLevel".into(), level);
    }
    if fields & 16 == 0 {
        meta.insert("progressToken".into(), json!(c.byte()));
    }
    let mut params = json!({"name": "t", "arguments": {}});
    match fields >> 5 {
        0 => params = json!([meta]),
        1 => params["_meta"] = json!(c.byte()),
        _ => params["_meta"] = Value::Object(meta),
    }
    params
}

/// The protocol version string `params._meta` names, if any.
fn meta_version(params: Option<&RawJson>) -> Option<String> {
    let value: Value = serde_json::from_slice(params?.as_bytes()).ok()?;
    let version = value
        .get("_meta")?
        .get("io.modelcontextprotocol/protocolVersion")?;
    version.as_str().map(str::to_owned)
}

/// A refusal's code, status and error object agree with its reason.
fn check_refusal(profile: &ServerProfile, e: &StatelessError) {
    let expected = match e {
        StatelessError::InvalidParams(_) => (code::INVALID_PARAMS, 400),
        StatelessError::UnsupportedVersion { supported, .. } => {
            assert_eq!(*supported, profile.supported_strings());
            (code::UNSUPPORTED_PROTOCOL_VERSION, 400)
        }
        StatelessError::MethodNotFound(_) => (code::METHOD_NOT_FOUND, 404),
    };
    let object = e.to_error_object();
    assert_eq!((object.code, e.http_status()), expected);
    assert!(!object.message.is_empty(), "an error without a message");
    serde_json::to_string(&object).expect("the error object serializes");
}
