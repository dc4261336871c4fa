//! A quick "valid" for the most common tool input schema, read on the arguments' JSON text:
//! an object whose properties are checked by `type` alone, some of them required, others
//! allowed or not (`{"type":"object","properties":{"text":{"type":"string"}}}`). Such a
//! schema is recognised once, when the tool is built; a call's arguments are then checked in
//! one pass over their text, with no `Value` built.
//!
//! It only ever answers "valid". Anything it is unsure of (a member that fails, a key written
//! with escapes, a number with a fraction where `integer` is asked for) goes to the full
//! validator on the parsed arguments, so every refusal and its error text are the full
//! validator's. A member given twice is checked each time, so a "valid" here holds for the
//! last one, which is what the parsed map keeps.
//!
//! It still pays against the compiled `jsonschema` validator because it skips the parse:
//! `cargo bench --bench codec -- tool_args` gives about 120 ns for `{"text":"hello"}` on this
//! path against about 740 ns to parse it and validate (of which validation is about 85 ns).

use serde_json::Value;

use crate::app::json_scan::{Scan, ANY, ARRAY, BOOLEAN, FRACTIONAL, INTEGER, NULL, OBJECT, STRING};

/// Properties a flat schema may list at most (the required ones are a bit set).
const MAX_PROPERTIES: usize = 64;

/// A schema of the flat object shape, compiled.
#[derive(Clone, Debug)]
pub(crate) struct FlatObject {
    /// Each property's name and the types it admits.
    properties: Vec<(String, u8)>,
    /// The required properties, as bits of their index in `properties`.
    required: u64,
    /// Whether members not in `properties` are allowed.
    additional: bool,
}

impl FlatObject {
    /// The flat form of `schema`, if it has that shape: at its root only `type` (`"object"`),
    /// `properties` (each a schema with at most `type`, or `true`), `required` (names among
    /// the properties) and a boolean `additionalProperties` among the keywords the validator
    /// reads; anything else (annotations, `x-` members) is ignored by both.
    pub(super) fn compile(schema: &Value) -> Option<FlatObject> {
        let Value::Object(root) = schema else {
            return None;
        };
        let (mut ty, mut properties, mut required, mut additional_properties) =
            (None, None, None, None);
        for (name, value) in root {
            match name.as_str() {
                "type" => ty = Some(value),
                "properties" => properties = Some(value),
                "required" => required = Some(value),
                "additionalProperties" => additional_properties = Some(value),
                other if is_annotation(other) => {}
                _ => return None,
            }
        }
        if types(ty) & OBJECT == 0 {
            return None;
        }
        let properties = match properties {
            None => Vec::new(),
            Some(Value::Object(props)) if props.len() <= MAX_PROPERTIES => props
                .iter()
                .map(|(name, sub)| Some((name.clone(), property_types(sub)?)))
                .collect::<Option<Vec<_>>>()?,
            Some(_) => return None,
        };
        let mut required_bits = 0u64;
        match required {
            None => {}
            Some(Value::Array(names)) => {
                for name in names.iter().filter_map(Value::as_str) {
                    let index = properties.iter().position(|(n, _)| n == name)?;
                    required_bits |= 1 << index;
                }
            }
            Some(_) => return None,
        }
        let additional = match additional_properties {
            None | Some(Value::Bool(true)) => true,
            Some(Value::Bool(false)) => false,
            Some(_) => return None,
        };
        Some(FlatObject {
            properties,
            required: required_bits,
            additional,
        })
    }

    /// Whether `text` (one JSON value, already known to be valid JSON) is an object this
    /// schema surely admits. `false` means "not sure": ask the full validator.
    pub(super) fn admits(&self, text: &[u8]) -> bool {
        self.admits_next(&mut Scan::new(text))
    }

    /// Whether the value at `scan` (after blanks) is an object this schema surely admits; on
    /// `true` the scan is past it (so a caller walking a larger text, the params of
    /// `tools/call`, checks the arguments in the same walk). On `false` ("not sure") the scan
    /// is left anywhere inside the value.
    pub(crate) fn admits_next(&self, scan: &mut Scan<'_>) -> bool {
        if !scan.eat(b'{') {
            return false;
        }
        let mut seen = 0u64;
        if !scan.eat(b'}') {
            loop {
                let (Some(key), Some((kind, _))) = (scan.key(), scan.value()) else {
                    return false;
                };
                match self
                    .properties
                    .iter()
                    .position(|(n, _)| n.as_bytes() == key)
                    .map(|i| (i, self.properties.get(i).map_or(0, |p| p.1)))
                {
                    Some((i, kinds)) if kinds & kind != 0 => seen |= 1 << i,
                    None if self.additional => {}
                    _ => return false,
                }
                if scan.eat(b',') {
                    continue;
                }
                if scan.eat(b'}') {
                    break;
                }
                return false;
            }
        }
        seen & self.required == self.required
    }
}

/// What a property's schema admits, if it is `true` or an object with at most `type` among
/// the validator's keywords.
fn property_types(schema: &Value) -> Option<u8> {
    match schema {
        Value::Bool(true) => Some(ANY),
        Value::Bool(false) => None,
        Value::Object(obj) => {
            let mut ty = None;
            for (name, value) in obj {
                match name.as_str() {
                    "type" => ty = Some(value),
                    other if is_annotation(other) => {}
                    _ => return None,
                }
            }
            Some(types(ty))
        }
        // A compiled schema has no subschema of any other kind.
        _ => None,
    }
}

/// Members that assert nothing (with `format` off: a schema with `format` is never flat, so
/// the same flat form serves both settings). Any other member, a keyword of any draft or an
/// unknown one, makes the schema not flat.
fn is_annotation(name: &str) -> bool {
    matches!(
        name,
        "$schema"
            | "$id"
            | "$comment"
            | "$defs"
            | "definitions"
            | "title"
            | "description"
            | "default"
            | "examples"
            | "deprecated"
            | "readOnly"
            | "writeOnly"
    ) || name.starts_with("x-")
}

/// The types a `type` keyword admits, as the validator reads it.
fn types(ty: Option<&Value>) -> u8 {
    match ty {
        None => ANY,
        Some(Value::String(t)) => type_bits(t),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(type_bits)
            .fold(0, |a, b| a | b),
        Some(_) => ANY,
    }
}

fn type_bits(t: &str) -> u8 {
    match t {
        "object" => OBJECT,
        "array" => ARRAY,
        "string" => STRING,
        "boolean" => BOOLEAN,
        "null" => NULL,
        "number" => INTEGER | FRACTIONAL,
        "integer" => INTEGER,
        _ => ANY,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::Schema;
    use super::*;

    fn schemas() -> Vec<Value> {
        vec![
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": ["string", "null"]},
                   "c": {"type": "number", "description": "x"}, "d": true, "e": {}},
                   "required": ["a", "b"], "additionalProperties": false, "title": "T"}),
            json!({"properties": {"o": {"type": "object"}, "l": {"type": "array"}, "f": {"type": "boolean"}},
                   "required": ["o"], "$schema": "https://json-schema.org/draft/2020-12/schema"}),
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            json!({"type": ["object", "null"], "properties": {"x": {"type": "boolean", "$comment": "c"}},
                   "x-note": 1}),
        ]
    }

    fn instances() -> Vec<&'static str> {
        vec![
            r#"{}"#,
            r#"{"text":"the \"quick\" fox"}"#,
            r#" { "text" : "a" , "other" : [1, {"x": "]"}] } "#,
            r#"{"text":1}"#,
            r#"{"text":"a","text":2}"#,
            r#"{"text":2,"text":"a"}"#,
            r#"{"t\u0065xt":1}"#,
            r#"{"a":1,"b":"x"}"#,
            r#"{"a":1.0,"b":null}"#,
            r#"{"a":1.5,"b":null}"#,
            r#"{"a":-3e2,"b":"y","c":2.5,"d":[],"e":{"q":1}}"#,
            r#"{"a":1}"#,
            r#"{"a":1,"b":"x","z":0}"#,
            r#"{"o":{"p":[1,"}"]},"l":[[]],"f":false}"#,
            r#"{"o":{},"f":true,"l":null}"#,
            r#"{"l":[]}"#,
            r#"{"x":true,"y":null}"#,
        ]
    }

    /// Whenever the quick check says "valid", the full validator agrees, for every schema of
    /// the flat shape against every instance (the quick check may be unsure more often).
    #[test]
    fn a_quick_yes_is_always_the_full_validators_yes() {
        for schema in schemas() {
            let flat = FlatObject::compile(&schema).expect("flat");
            for text in instances() {
                let value: Value = serde_json::from_str(text).expect("json");
                if flat.admits(text.as_bytes()) {
                    assert_eq!(
                        Schema::new(schema.clone()).validate(&value),
                        Ok(()),
                        "{schema} {text}"
                    );
                }
            }
        }
    }

    /// The common calls are answered quickly (the point of the check).
    #[test]
    fn common_valid_arguments_are_admitted_without_parsing() {
        let [echo, typed, nested, empty, _] = &schemas()[..] else {
            panic!("five schemas");
        };
        let admits =
            |s: &Value, t: &str| FlatObject::compile(s).expect("flat").admits(t.as_bytes());
        assert!(admits(echo, r#"{"text":"the \"quick\" fox"}"#));
        assert!(admits(
            echo,
            r#" { "text" : "a" , "other" : [1, {"x": "]"}] } "#
        ));
        assert!(admits(echo, "{}"));
        assert!(admits(typed, r#"{"a":1,"b":"x"}"#));
        assert!(admits(
            typed,
            r#"{"a":-3,"b":null,"c":2.5,"d":[],"e":{"q":1}}"#
        ));
        assert!(admits(nested, r#"{"o":{"p":[1,"}"]},"l":[[]],"f":false}"#));
        assert!(admits(empty, "{}"));
        // Unsure (left to the full validator), whatever the full answer is.
        assert!(!admits(echo, r#"{"text":1}"#));
        assert!(!admits(typed, r#"{"a":1.0,"b":null}"#));
        assert!(!admits(typed, r#"{"a":1}"#));
        assert!(!admits(typed, r#"{"a":1,"b":"x","z":0}"#));
        assert!(!admits(empty, r#"{"x":1}"#));
    }

    /// Schemas using any other keyword, a `$ref`, a `false` property or a required name that
    /// is not a property are not flat: the full validator checks them.
    #[test]
    fn other_shapes_are_not_flat() {
        for schema in [
            json!(true),
            json!({"type": "array"}),
            json!({"type": "object", "minProperties": 1}),
            json!({"type": "object", "properties": {"a": {"type": "string", "minLength": 1}}}),
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}}),
            json!({"type": "object", "properties": {"a": false}}),
            json!({"type": "object", "required": ["a"]}),
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            json!({"type": "object", "anyOf": [{"required": ["a"]}]}),
            json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "^x"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "format": "email"}}}),
            json!({"type": "object", "dependentRequired": {"a": ["b"]}}),
            json!({"type": "object", "unevaluatedProperties": false}),
            json!({"type": "object", "propertyNames": {"maxLength": 3}}),
            json!({"type": "object", "some-future-keyword": 1}),
        ] {
            assert!(FlatObject::compile(&schema).is_none(), "{schema}");
        }
    }
}
