//! A small, dependency-free JSON Schema validator for tool inputs (and structured outputs).
//!
//! It covers the keywords tool schemas use in practice, for draft-07 and 2020-12: `type`,
//! `enum`, `const`, `properties`, `required`, `additionalProperties`, `patternProperties` (names
//! only checked for presence, see below), `minProperties`/`maxProperties`, `items` (schema, or
//! the draft-07 array form), `prefixItems`, `minItems`/`maxItems`, `uniqueItems`, numeric bounds
//! (`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`), string lengths
//! (`minLength`, `maxLength`, counted in characters), `allOf`/`anyOf`/`oneOf`/`not`,
//! `if`/`then`/`else`, and local `$ref`s (`#`, `#/$defs/...`, `#/definitions/...`).
//!
//! Not checked (documented, accepted): `pattern` and `patternProperties` need a regex engine
//! the core does not carry, and `format` is an annotation. Network `$ref`s are never followed
//! (2026-07-28 forbids auto-dereferencing). Depth and reference expansion are bounded so a
//! hostile schema cannot make validation loop or recurse without end.

use serde_json::{Map, Value};

#[path = "schema_flat.rs"]
mod flat;

pub(crate) use flat::FlatObject;

/// Deepest nesting of schema evaluation (subschemas plus followed `$ref`s).
const MAX_DEPTH: usize = 64;
/// The most errors collected before validation stops.
const MAX_ERRORS: usize = 16;

/// A compiled schema: the parsed schema document, ready to validate instances.
#[derive(Clone, Debug)]
pub struct Schema {
    root: Value,
    /// The schema's flat object form, if it has one (a quick "valid" on JSON text).
    flat: Option<flat::FlatObject>,
}

/// One validation failure: where in the instance, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    /// JSON Pointer into the instance (`""` is the root).
    pub path: String,
    /// What is wrong there.
    pub message: String,
}

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        write!(f, "{path}: {}", self.message)
    }
}

impl Schema {
    /// Wraps a schema document (an object or a boolean).
    pub fn new(root: Value) -> Self {
        let flat = flat::FlatObject::compile(&root);
        Schema { root, flat }
    }

    /// Whether `text` (the JSON text of one value, already known to be valid JSON) surely
    /// passes [`Schema::validate`], answered without parsing it when the schema is a flat
    /// object schema (properties checked by `type` only). `false` means "not sure": parse the
    /// text and call `validate`, which also gives the errors.
    pub fn admits_text(&self, text: &[u8]) -> bool {
        self.flat.as_ref().is_some_and(|f| f.admits(text))
    }

    /// The schema's flat object form, if it has one: its check can run inside a larger scan.
    pub(crate) fn flat(&self) -> Option<&FlatObject> {
        self.flat.as_ref()
    }

    /// The schema document.
    pub fn document(&self) -> &Value {
        &self.root
    }

    /// Validates `instance`; `Ok` or every error found (up to a bound).
    pub fn validate(&self, instance: &Value) -> Result<(), Vec<SchemaError>> {
        let mut v = Validator {
            root: &self.root,
            errors: Vec::new(),
        };
        v.check(&self.root, instance, &mut String::new(), 0);
        if v.errors.is_empty() {
            Ok(())
        } else {
            Err(v.errors)
        }
    }
}

struct Validator<'s> {
    root: &'s Value,
    errors: Vec<SchemaError>,
}

impl<'s> Validator<'s> {
    fn fail(&mut self, path: &str, message: String) {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(SchemaError {
                path: path.to_owned(),
                message,
            });
        }
    }

    /// Whether `instance` is valid against `schema`, without recording errors.
    fn passes(&self, schema: &'s Value, instance: &Value, depth: usize) -> bool {
        let mut probe = Validator {
            root: self.root,
            errors: Vec::new(),
        };
        probe.check(schema, instance, &mut String::new(), depth);
        probe.errors.is_empty()
    }

    fn check(&mut self, schema: &'s Value, instance: &Value, path: &mut String, depth: usize) {
        if depth > MAX_DEPTH {
            self.fail(path, "schema nesting too deep".into());
            return;
        }
        let kw = match schema {
            Value::Bool(true) => return,
            Value::Bool(false) => return self.fail(path, "no value is allowed here".into()),
            Value::Object(obj) => Keywords::of(obj),
            _ => return,
        };
        let kw = &kw;
        if let Some(Value::String(reference)) = kw.reference {
            match resolve_ref(self.root, reference) {
                Some(target) => self.check(target, instance, path, depth + 1),
                None => self.fail(path, format!("unresolvable $ref {reference:?}")),
            }
        }
        self.check_type(kw, instance, path);
        self.check_enum_const(kw, instance, path);
        self.check_combinators(kw, instance, path, depth);
        match instance {
            Value::Object(map) => self.check_object(kw, map, path, depth),
            Value::Array(items) => self.check_array(kw, items, path, depth),
            Value::String(s) => self.check_string(kw, s, path),
            Value::Number(n) => self.check_number(kw, n.as_f64().unwrap_or(f64::NAN), path),
            _ => {}
        }
    }

    fn check_type(&mut self, kw: &Keywords<'_>, instance: &Value, path: &str) {
        let ok = match kw.ty {
            None => true,
            Some(Value::String(t)) => type_matches(t, instance),
            Some(Value::Array(ts)) => ts
                .iter()
                .any(|t| t.as_str().is_some_and(|t| type_matches(t, instance))),
            Some(_) => true,
        };
        if !ok {
            let want = kw.ty.map(Value::to_string).unwrap_or_default();
            self.fail(
                path,
                format!("expected type {want}, got {}", type_name(instance)),
            );
        }
    }

    fn check_enum_const(&mut self, kw: &Keywords<'_>, instance: &Value, path: &str) {
        if let Some(Value::Array(options)) = kw.enum_ {
            if !options.iter().any(|o| json_equal(o, instance)) {
                self.fail(
                    path,
                    format!("value is not one of {}", Value::Array(options.clone())),
                );
            }
        }
        if let Some(c) = kw.const_ {
            if !json_equal(c, instance) {
                self.fail(path, format!("value must be {c}"));
            }
        }
    }

    fn check_combinators(
        &mut self,
        kw: &Keywords<'s>,
        instance: &Value,
        path: &mut String,
        depth: usize,
    ) {
        if let Some(Value::Array(all)) = kw.all_of {
            for s in all {
                self.check(s, instance, path, depth + 1);
            }
        }
        if let Some(Value::Array(any)) = kw.any_of {
            if !any.iter().any(|s| self.passes(s, instance, depth + 1)) {
                self.fail(path, "value matches none of anyOf".into());
            }
        }
        if let Some(Value::Array(one)) = kw.one_of {
            let n = one
                .iter()
                .filter(|s| self.passes(s, instance, depth + 1))
                .count();
            if n != 1 {
                self.fail(
                    path,
                    format!("value matches {n} of oneOf, expected exactly 1"),
                );
            }
        }
        if let Some(not) = kw.not {
            if self.passes(not, instance, depth + 1) {
                self.fail(path, "value must not match the `not` schema".into());
            }
        }
        if let Some(cond) = kw.if_ {
            let branch = if self.passes(cond, instance, depth + 1) {
                kw.then
            } else {
                kw.else_
            };
            if let Some(b) = branch {
                self.check(b, instance, path, depth + 1);
            }
        }
    }

    fn check_object(
        &mut self,
        kw: &Keywords<'s>,
        map: &Map<String, Value>,
        path: &mut String,
        depth: usize,
    ) {
        if let Some(Value::Array(required)) = kw.required {
            for name in required.iter().filter_map(Value::as_str) {
                if !map.contains_key(name) {
                    self.fail(path, format!("missing required property {name:?}"));
                }
            }
        }
        let props = kw.properties.and_then(Value::as_object);
        let has_patterns = kw.pattern_properties.is_some();
        for (key, value) in map {
            let len = path.len();
            push_pointer(path, key);
            match props.and_then(|p| p.get(key)) {
                Some(sub) => self.check(sub, value, path, depth + 1),
                None if has_patterns => {}
                None => {
                    if let Some(extra) = kw.additional_properties {
                        if extra == &Value::Bool(false) {
                            self.fail(path, format!("property {key:?} is not allowed"));
                        } else {
                            self.check(extra, value, path, depth + 1);
                        }
                    }
                }
            }
            path.truncate(len);
        }
        let (min, max) = (kw.min_properties, kw.max_properties);
        self.check_count(min, max, map.len(), "properties", path);
    }

    fn check_array(&mut self, kw: &Keywords<'s>, items: &[Value], path: &mut String, depth: usize) {
        let prefix: &[Value] = match (kw.prefix_items, kw.items) {
            (Some(Value::Array(p)), _) => p,
            (None, Some(Value::Array(p))) => p,
            _ => &[],
        };
        let rest = match kw.items {
            Some(Value::Array(_)) => kw.additional_items,
            other => other,
        };
        for (i, item) in items.iter().enumerate() {
            let len = path.len();
            push_pointer(path, &i.to_string());
            match prefix.get(i) {
                Some(s) => self.check(s, item, path, depth + 1),
                None => {
                    if let Some(s) = rest {
                        self.check(s, item, path, depth + 1);
                    }
                }
            }
            path.truncate(len);
        }
        self.check_count(kw.min_items, kw.max_items, items.len(), "items", path);
        if kw.unique_items == Some(&Value::Bool(true)) {
            let dup = items
                .iter()
                .enumerate()
                .any(|(i, a)| items.iter().take(i).any(|b| json_equal(a, b)));
            if dup {
                self.fail(path, "items must be unique".into());
            }
        }
    }

    fn check_count(
        &mut self,
        min: Option<&Value>,
        max: Option<&Value>,
        n: usize,
        what: &str,
        path: &str,
    ) {
        let n = n as u64;
        if let Some(min) = min.and_then(Value::as_u64) {
            if n < min {
                self.fail(path, format!("expected at least {min} {what}, got {n}"));
            }
        }
        if let Some(max) = max.and_then(Value::as_u64) {
            if n > max {
                self.fail(path, format!("expected at most {max} {what}, got {n}"));
            }
        }
    }

    fn check_string(&mut self, kw: &Keywords<'_>, s: &str, path: &str) {
        if kw.min_length.is_none() && kw.max_length.is_none() {
            return; // no need to count the characters
        }
        let n = s.chars().count();
        self.check_count(kw.min_length, kw.max_length, n, "characters", path);
    }

    fn check_number(&mut self, kw: &Keywords<'_>, n: f64, path: &str) {
        let bound = |k: Option<&Value>| k.and_then(Value::as_f64);
        if let Some(min) = bound(kw.minimum) {
            if n < min {
                self.fail(path, format!("{n} is less than the minimum {min}"));
            }
        }
        if let Some(max) = bound(kw.maximum) {
            if n > max {
                self.fail(path, format!("{n} is greater than the maximum {max}"));
            }
        }
        if let Some(min) = bound(kw.exclusive_minimum) {
            if n <= min {
                self.fail(path, format!("{n} must be greater than {min}"));
            }
        }
        if let Some(max) = bound(kw.exclusive_maximum) {
            if n >= max {
                self.fail(path, format!("{n} must be less than {max}"));
            }
        }
        if let Some(m) = bound(kw.multiple_of).filter(|m| *m > 0.0) {
            let q = n / m;
            if (q - q.round()).abs() > 1e-9 {
                self.fail(path, format!("{n} is not a multiple of {m}"));
            }
        }
    }
}

/// The keywords of one schema object, found in one pass over its members: the validator
/// then reads fields instead of looking each keyword up (most are absent), and a
/// keyword's absence costs nothing.
#[derive(Default, PartialEq)]
struct Keywords<'s> {
    reference: Option<&'s Value>,
    ty: Option<&'s Value>,
    enum_: Option<&'s Value>,
    const_: Option<&'s Value>,
    all_of: Option<&'s Value>,
    any_of: Option<&'s Value>,
    one_of: Option<&'s Value>,
    not: Option<&'s Value>,
    if_: Option<&'s Value>,
    then: Option<&'s Value>,
    else_: Option<&'s Value>,
    required: Option<&'s Value>,
    properties: Option<&'s Value>,
    pattern_properties: Option<&'s Value>,
    additional_properties: Option<&'s Value>,
    min_properties: Option<&'s Value>,
    max_properties: Option<&'s Value>,
    prefix_items: Option<&'s Value>,
    items: Option<&'s Value>,
    additional_items: Option<&'s Value>,
    min_items: Option<&'s Value>,
    max_items: Option<&'s Value>,
    unique_items: Option<&'s Value>,
    min_length: Option<&'s Value>,
    max_length: Option<&'s Value>,
    minimum: Option<&'s Value>,
    maximum: Option<&'s Value>,
    exclusive_minimum: Option<&'s Value>,
    exclusive_maximum: Option<&'s Value>,
    multiple_of: Option<&'s Value>,
}

impl<'s> Keywords<'s> {
    fn of(obj: &'s Map<String, Value>) -> Self {
        let mut kw = Keywords::default();
        for (name, value) in obj {
            let slot = match name.as_str() {
                "$ref" => &mut kw.reference,
                "type" => &mut kw.ty,
                "enum" => &mut kw.enum_,
                "const" => &mut kw.const_,
                "allOf" => &mut kw.all_of,
                "anyOf" => &mut kw.any_of,
                "oneOf" => &mut kw.one_of,
                "not" => &mut kw.not,
                "if" => &mut kw.if_,
                "then" => &mut kw.then,
                "else" => &mut kw.else_,
                "required" => &mut kw.required,
                "properties" => &mut kw.properties,
                "patternProperties" => &mut kw.pattern_properties,
                "additionalProperties" => &mut kw.additional_properties,
                "minProperties" => &mut kw.min_properties,
                "maxProperties" => &mut kw.max_properties,
                "prefixItems" => &mut kw.prefix_items,
                "items" => &mut kw.items,
                "additionalItems" => &mut kw.additional_items,
                "minItems" => &mut kw.min_items,
                "maxItems" => &mut kw.max_items,
                "uniqueItems" => &mut kw.unique_items,
                "minLength" => &mut kw.min_length,
                "maxLength" => &mut kw.max_length,
                "minimum" => &mut kw.minimum,
                "maximum" => &mut kw.maximum,
                "exclusiveMinimum" => &mut kw.exclusive_minimum,
                "exclusiveMaximum" => &mut kw.exclusive_maximum,
                "multipleOf" => &mut kw.multiple_of,
                _ => continue,
            };
            *slot = Some(value);
        }
        kw
    }
}

fn type_matches(t: &str, v: &Value) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "number" => v.is_number(),
        "integer" => v.as_f64().is_some_and(|f| f.fract() == 0.0) || v.is_i64() || v.is_u64(),
        _ => true,
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Equality with JSON number semantics (`1` equals `1.0`).
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

fn push_pointer(path: &mut String, token: &str) {
    path.push('/');
    for c in token.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

/// Resolves a local reference (`#`, or a JSON Pointer after `#`) inside the root document.
fn resolve_ref<'s>(root: &'s Value, reference: &str) -> Option<&'s Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    let mut current = root;
    for raw in pointer.strip_prefix('/')?.split('/') {
        let token = raw.replace("~1", "/").replace("~0", "~");
        current = match current {
            Value::Object(m) => m.get(&token)?,
            Value::Array(a) => a.get(token.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(current)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errs(schema: Value, instance: Value) -> Vec<SchemaError> {
        Schema::new(schema)
            .validate(&instance)
            .err()
            .unwrap_or_default()
    }

    #[test]
    fn type_required_and_additional_properties() {
        let s = json!({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],
                       "additionalProperties":false});
        assert!(errs(s.clone(), json!({"a": 1})).is_empty());
        assert!(
            errs(s.clone(), json!({"a": 1.0})).is_empty(),
            "1.0 is an integer"
        );
        assert_eq!(errs(s.clone(), json!({"a": 1.5}))[0].path, "/a");
        assert_eq!(errs(s.clone(), json!({})).len(), 1);
        assert_eq!(errs(s.clone(), json!({"a": 1, "b": 2}))[0].path, "/b");
        assert_eq!(
            errs(s, json!([1])).len(),
            1,
            "object keywords do not apply to arrays"
        );
    }

    #[test]
    fn enums_bounds_and_lengths() {
        let s = json!({"type":"object","properties":{
            "e":{"enum":["x","y"]}, "n":{"minimum":0,"exclusiveMaximum":10,"multipleOf":2},
            "s":{"minLength":2,"maxLength":3}, "arr":{"items":{"type":"string"},"minItems":1,"uniqueItems":true}}});
        assert!(errs(s.clone(), json!({"e":"x","n":4,"s":"éé","arr":["a","b"]})).is_empty());
        assert_eq!(errs(s.clone(), json!({"e":"z"})).len(), 1);
        assert_eq!(errs(s.clone(), json!({"n":10})).len(), 1);
        assert_eq!(errs(s.clone(), json!({"n":3})).len(), 1);
        assert_eq!(errs(s.clone(), json!({"s":"a"})).len(), 1);
        assert_eq!(errs(s.clone(), json!({"arr":[]})).len(), 1);
        assert_eq!(errs(s, json!({"arr":["a","a",1]})).len(), 2);
    }

    #[test]
    fn local_refs_and_combinators() {
        let s = json!({"$defs":{"addr":{"type":"object","required":["city"]}},
                       "type":"object","properties":{"address":{"$ref":"#/$defs/addr"},
                       "v":{"oneOf":[{"type":"string"},{"type":"integer"}]},
                       "w":{"anyOf":[{"const":1},{"const":2}]}, "x":{"not":{"type":"null"}}}});
        assert!(errs(
            s.clone(),
            json!({"address":{"city":"P"},"v":"a","w":2,"x":0})
        )
        .is_empty());
        assert_eq!(errs(s.clone(), json!({"address":{}})).len(), 1);
        assert_eq!(errs(s.clone(), json!({"v":1.5})).len(), 1);
        assert_eq!(errs(s.clone(), json!({"w":3})).len(), 1);
        assert_eq!(errs(s, json!({"x":null})).len(), 1);
    }

    #[test]
    fn recursive_refs_are_bounded() {
        let s = json!({"$ref":"#"});
        let e = errs(s, json!(1));
        assert_eq!(e.len(), 1);
        assert!(e[0].message.contains("too deep"));
    }

    #[test]
    fn unresolvable_refs_are_errors_not_panics() {
        assert_eq!(
            errs(json!({"$ref":"https://example.com/s.json"}), json!(1)).len(),
            1
        );
        assert_eq!(errs(json!({"$ref":"#/nope"}), json!(1)).len(), 1);
    }

    #[test]
    fn boolean_schemas() {
        assert!(errs(json!(true), json!({"a":1})).is_empty());
        assert_eq!(errs(json!(false), json!(1)).len(), 1);
        assert_eq!(
            errs(json!({"properties":{"a":false}}), json!({"a":1}))[0].path,
            "/a"
        );
    }
}
