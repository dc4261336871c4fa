//! A tool call's arguments: the JSON text the client sent, read into a map only when a
//! handler (or a schema that needs it) asks, or parsed straight into the handler's own type.

use std::fmt;
use std::ops::Deref;
use std::sync::{LazyLock, OnceLock};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::app::json_scan::Scan;
use crate::jsonrpc::{ErrorObject, RawJson};

/// The map of a call without arguments (what `arguments` is when it is not an object).
static NO_ARGUMENTS: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);

/// The arguments of a `tools/call` (an object; `{}` when the client sent none), validated
/// against the tool's inputSchema.
///
/// Read them as a map through `Deref` (`call.arguments.get("text")`, built from the text
/// on first use and kept), or parse them into a type of the handler's own with
/// [`ToolArguments::parse`], which reads the JSON text directly and builds no map.
#[derive(Clone, Default)]
pub struct ToolArguments {
    /// The object's JSON text as sent (`None`: no arguments, or given as a map).
    text: Option<RawJson>,
    /// The parsed object (always a `Value::Object`), built on first use.
    value: OnceLock<Value>,
}

impl ToolArguments {
    /// Arguments from the JSON text of an object (the caller checked it is one), or why serde
    /// cannot read it: text serde cannot read (a lone surrogate escape such as `"\ud800"`,
    /// nesting past its depth limit) never becomes arguments, so reading them later cannot
    /// fail. Only text that may hold such things is parsed here (and the value kept);
    /// `suspect` says whether it may, when the walk that read the params already saw (`None`:
    /// found out here, in one walk of the text).
    pub(crate) fn read(text: RawJson, suspect: Option<bool>) -> Result<Self, serde_json::Error> {
        let suspect = suspect.unwrap_or_else(|| {
            let mut scan = Scan::new(text.as_bytes());
            scan.value().is_none() | scan.take_unicode_escape() | scan.take_near_limits()
        });
        let value = OnceLock::new();
        if suspect {
            // Set on a new cell: cannot be taken.
            let _ = value.set(text.to_value()?);
        }
        Ok(ToolArguments {
            text: Some(text),
            value,
        })
    }

    /// The JSON text as the client sent it, if the arguments came as text.
    pub fn text(&self) -> Option<&RawJson> {
        self.text.as_ref()
    }

    /// The arguments as a JSON object (parsed from the text on first use: the server admits
    /// only text that serde reads, refusing the call with -32602 otherwise).
    pub fn value(&self) -> &Value {
        self.value.get_or_init(|| {
            let parsed = self.text.as_ref().map(RawJson::to_value);
            match parsed {
                Some(Ok(object @ Value::Object(_))) => object,
                // No text, or (not reached: `read` proved it readable) text that is not an
                // object.
                _ => Value::Object(Map::new()),
            }
        })
    }

    /// The arguments as a map.
    pub fn map(&self) -> &Map<String, Value> {
        self.value().as_object().unwrap_or(&NO_ARGUMENTS)
    }

    /// The arguments as an owned map.
    pub fn into_map(mut self) -> Map<String, Value> {
        self.value();
        match self.value.take() {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        }
    }

    /// The arguments parsed into `T` (e.g. a `#[derive(Deserialize)]` struct), straight from
    /// the JSON text when there is one. A mismatch is an invalid-params error. (Serde's
    /// rules apply: a member sent twice is an error for a struct, where the map keeps the
    /// last one.)
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, ErrorObject> {
        let parsed = match (&self.text, self.value.get()) {
            (Some(text), None) => text.parse(),
            _ => T::deserialize(self.value()),
        };
        parsed.map_err(|e| ErrorObject::invalid_params(format!("invalid arguments: {e}")))
    }
}

impl From<Map<String, Value>> for ToolArguments {
    fn from(map: Map<String, Value>) -> Self {
        ToolArguments {
            text: None,
            value: OnceLock::from(Value::Object(map)),
        }
    }
}

impl Deref for ToolArguments {
    type Target = Map<String, Value>;

    fn deref(&self) -> &Map<String, Value> {
        self.map()
    }
}

impl PartialEq for ToolArguments {
    fn eq(&self, other: &Self) -> bool {
        self.map() == other.map()
    }
}

impl fmt::Debug for ToolArguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.map(), f)
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    fn from_text(text: &str) -> ToolArguments {
        let raw = RawJson::from_text(text.to_owned()).expect("json");
        ToolArguments::read(raw, None).expect("readable")
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Echo {
        text: String,
    }

    /// The text, the map and a typed parse all say the same, whichever is read first.
    #[test]
    fn text_map_and_parse_agree() {
        let text = r#"{"text":"a \"b\"","n":[1]}"#;
        let typed = from_text(text);
        assert_eq!(
            typed.parse::<Echo>(),
            Ok(Echo {
                text: "a \"b\"".into()
            })
        );
        assert_eq!(typed.get("n"), Some(&json!([1])));
        assert_eq!(
            typed.parse::<Echo>(),
            Ok(Echo {
                text: "a \"b\"".into()
            })
        );
        let mapped = from_text(text);
        assert_eq!(mapped["text"], json!("a \"b\""));
        assert_eq!(mapped.text().map(RawJson::get), Some(text));
        assert_eq!(typed, mapped);
        let expected = json!({"text": "a \"b\"", "n": [1]});
        assert_eq!(
            mapped.clone().into_map(),
            *expected.as_object().expect("object")
        );
        assert_eq!(
            from_text(text).into_map(),
            *expected.as_object().expect("object")
        );
    }

    #[test]
    fn arguments_given_as_a_map_or_absent() {
        let map = json!({"text": "x"}).as_object().cloned().expect("object");
        let given = ToolArguments::from(map.clone());
        assert_eq!(given.parse::<Echo>(), Ok(Echo { text: "x".into() }));
        assert_eq!(*given, map);
        assert_eq!(given.text(), None);
        let none = ToolArguments::default();
        assert!(none.is_empty());
        assert_eq!(none.value(), &json!({}));
        let e = none.parse::<Echo>().expect_err("text is missing");
        assert_eq!(e.code, crate::jsonrpc::code::INVALID_PARAMS);
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Named {
        name: Value,
    }

    /// Text serde cannot read never becomes arguments, whether the caller knew it suspect or
    /// not; text near the limits that serde reads is served alike by the map and a typed
    /// parse (before and after the map is built).
    #[test]
    fn unreadable_text_is_refused_and_readable_text_near_the_limits_served() {
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let unreadable = [
            format!(r#"{{"name":{}}}"#, nested(200)),
            format!(r#"{{"name":{}}}"#, nested(128)),
            r#"{"name":1e400}"#.to_owned(),
            format!(r#"{{"name":{}}}"#, "9".repeat(400)),
            r#"{"name":"\ud800"}"#.to_owned(),
        ];
        for text in unreadable {
            for suspect in [None, Some(true)] {
                let raw = RawJson::from_text(text.clone()).expect("json");
                let e = ToolArguments::read(raw, suspect).expect_err(&text);
                assert!(!e.to_string().is_empty());
            }
        }
        let readable = [
            (format!(r#"{{"name":{}}}"#, nested(100)), None),
            (r#"{"name":1e300}"#.to_owned(), None),
            (r#"{"name":"\u00e9"}"#.to_owned(), Some(json!("é"))),
        ];
        for (text, name) in readable {
            let expected: Value = serde_json::from_str(&text).expect("serde reads it");
            let typed = from_text(&text);
            assert_eq!(
                typed.parse::<Named>().map(|n| n.name),
                Ok(expected["name"].clone())
            );
            assert_eq!(typed.value(), &expected);
            assert_eq!(
                from_text(&text).map(),
                expected.as_object().expect("object")
            );
            if let Some(name) = name {
                assert_eq!(typed["name"], name);
            }
        }
    }
}
