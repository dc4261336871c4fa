//! Which client capabilities a request lacks, and how to write them as the
//! `requiredCapabilities` object of a -32021 error.

use serde_json::{json, Map, Value};

use crate::jsonrpc::ErrorObject;
use crate::model::stateless::missing_capability_error;
use crate::model::{ClientCapabilities, ClientCapabilityKey};

/// The dotted name of a client capability (`"elicitation.url"`), for messages.
pub fn capability_name(key: ClientCapabilityKey) -> &'static str {
    use ClientCapabilityKey as K;
    match key {
        K::Roots => "roots",
        K::RootsListChanged => "roots.listChanged",
        K::Sampling => "sampling",
        K::Elicitation => "elicitation",
        K::ElicitationUrl => "elicitation.url",
        K::Tasks => "tasks",
        K::TasksList => "tasks.list",
        K::TasksCancel => "tasks.cancel",
    }
}

/// The keys of `required` that `declared` lacks, in order, without repeats.
pub fn missing_capabilities(
    declared: &ClientCapabilities,
    required: &[ClientCapabilityKey],
) -> Vec<ClientCapabilityKey> {
    let mut missing = Vec::new();
    for &key in required {
        if !key.is_declared(declared) && !missing.contains(&key) {
            missing.push(key);
        }
    }
    missing
}

/// The -32021 error (HTTP 400) for a request lacking the client capabilities `missing` (as
/// [`missing_capabilities`] reports them): the message names them and
/// `data.requiredCapabilities` holds them as a capabilities object.
pub(crate) fn missing_capabilities_error(missing: &[ClientCapabilityKey]) -> ErrorObject {
    let names: Vec<&str> = missing.iter().map(|&k| capability_name(k)).collect();
    missing_capability_error(required_capabilities_object(missing), &names.join(", "))
}

/// `keys` as a client capabilities object (`[Elicitation]` → `{"elicitation": {}}`), the
/// shape `data.requiredCapabilities` takes.
pub fn required_capabilities_object(keys: &[ClientCapabilityKey]) -> ClientCapabilities {
    let mut object = Map::new();
    for &key in keys {
        let mut path = capability_name(key).split('.');
        let Some(top) = path.next() else { continue };
        let entry = object
            .entry(top.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if let (Some(sub), Value::Object(inner)) = (path.next(), entry) {
            // `listChanged` is a flag; the other sub-capabilities are objects.
            let value = if sub == "listChanged" {
                json!(true)
            } else {
                json!({})
            };
            inner.insert(sub.to_owned(), value);
        }
    }
    serde_json::from_value(Value::Object(object)).unwrap_or_default()
}
