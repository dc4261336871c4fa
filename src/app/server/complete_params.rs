//! The params of `completion/complete`, checked before the completion provider sees them: a
//! `ref` to a registered prompt or resource (a fixed URI, a URI a template matches, or a
//! template's own text, which is what clients send), an `argument` with a string `name` and
//! `value`, and `context.arguments`, if given, an object of strings. Each violation is
//! `-32602` naming what is wrong.

use serde_json::{Map, Value};

use super::builder::Registry;
use crate::jsonrpc::ErrorObject;

/// Checks `params` against the registry; the first violation found.
pub(super) fn check(registry: &Registry, params: &Map<String, Value>) -> Result<(), ErrorObject> {
    check_ref(registry, params.get("ref"))?;
    let Some(Value::Object(argument)) = params.get("argument") else {
        return Err(invalid(
            "argument must be an object with a name and a value",
        ));
    };
    for member in ["name", "value"] {
        if !matches!(argument.get(member), Some(Value::String(_))) {
            return Err(invalid(&format!("argument.{member} must be a string")));
        }
    }
    let Some(context) = params.get("context") else {
        return Ok(());
    };
    let Value::Object(context) = context else {
        return Err(invalid("context must be an object"));
    };
    match context.get("arguments") {
        None => Ok(()),
        Some(Value::Object(arguments)) => match arguments.iter().find(|(_, v)| !v.is_string()) {
            Some((name, _)) => Err(invalid(&format!(
                "context.arguments.{name} must be a string"
            ))),
            None => Ok(()),
        },
        Some(_) => Err(invalid("context.arguments must be an object of strings")),
    }
}

/// The `ref` member: a registered prompt or resource.
fn check_ref(registry: &Registry, reference: Option<&Value>) -> Result<(), ErrorObject> {
    let Some(Value::Object(reference)) = reference else {
        return Err(invalid("ref must be an object"));
    };
    match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => {
            let Some(name) = reference.get("name").and_then(Value::as_str) else {
                return Err(invalid("ref.name must be a string"));
            };
            if registry.prompts.contains_key(name) {
                return Ok(());
            }
            Err(invalid(&format!("unknown prompt: {name}")))
        }
        Some("ref/resource") => {
            let Some(uri) = reference.get("uri").and_then(Value::as_str) else {
                return Err(invalid("ref.uri must be a string"));
            };
            let known = registry.resources.contains_key(uri)
                || registry
                    .templates
                    .values()
                    .any(|t| t.template.as_str() == uri || t.template.matches(uri).is_some());
            if known {
                return Ok(());
            }
            Err(invalid(&format!("unknown resource: {uri}")))
        }
        Some(other) => Err(invalid(&format!(
            "ref.type must be ref/prompt or ref/resource, not {other}"
        ))),
        None => Err(invalid("ref.type must be ref/prompt or ref/resource")),
    }
}

fn invalid(message: &str) -> ErrorObject {
    ErrorObject::invalid_params(message)
}
