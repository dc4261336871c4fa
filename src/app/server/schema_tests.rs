//! The validator behind tool schemas: the keywords tool schemas use, the ones a small
//! hand-written validator would skip, drafts chosen by `$schema`, and refusals at compile time.

use super::*;
use serde_json::json;

fn errs(schema: Value, instance: Value) -> Vec<SchemaError> {
    let schema = Schema::compile(schema).expect("compiles");
    schema.validate(&instance).err().unwrap_or_default()
}

fn valid(schema: &Value, instance: Value) -> bool {
    errs(schema.clone(), instance).is_empty()
}

#[test]
fn type_required_and_additional_properties() {
    let s = json!({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],
                   "additionalProperties":false});
    assert!(valid(&s, json!({"a": 1})));
    assert!(valid(&s, json!({"a": 1.0})), "1.0 is an integer");
    assert_eq!(errs(s.clone(), json!({"a": 1.5}))[0].path, "/a");
    assert_eq!(errs(s.clone(), json!({})).len(), 1);
    let extra = errs(s.clone(), json!({"a": 1, "b": 2}));
    assert_eq!(extra.len(), 1);
    assert!(extra[0].message.contains('b'), "{extra:?}");
    assert_eq!(errs(s, json!([1])).len(), 1, "an array is not an object");
}

#[test]
fn enums_bounds_and_lengths() {
    let s = json!({"type":"object","properties":{
        "e":{"enum":["x","y"]}, "n":{"minimum":0,"exclusiveMaximum":10,"multipleOf":2},
        "s":{"minLength":2,"maxLength":3}, "arr":{"items":{"type":"string"},"minItems":1,"uniqueItems":true}}});
    assert!(valid(&s, json!({"e":"x","n":4,"s":"éé","arr":["a","b"]})));
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
    assert!(valid(
        &s,
        json!({"address":{"city":"P"},"v":"a","w":2,"x":0})
    ));
    assert_eq!(errs(s.clone(), json!({"address":{}}))[0].path, "/address");
    assert_eq!(errs(s.clone(), json!({"v":1.5})).len(), 1);
    assert_eq!(errs(s.clone(), json!({"w":3})).len(), 1);
    assert_eq!(errs(s, json!({"x":null})).len(), 1);
}

#[test]
fn boolean_schemas() {
    assert!(valid(&json!(true), json!({"a":1})));
    assert_eq!(errs(json!(false), json!(1)).len(), 1);
    assert_eq!(
        errs(json!({"properties":{"a":false}}), json!({"a":1}))[0].path,
        "/a"
    );
}

/// `pattern` and `patternProperties` are asserted (a regex engine is compiled in).
#[test]
fn patterns_are_asserted() {
    let s = json!({"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z]+-[0-9]+$"}},
                   "patternProperties":{"^n_":{"type":"number"}}});
    assert!(valid(&s, json!({"id":"ab-12","n_x":1.5})));
    assert_eq!(errs(s.clone(), json!({"id":"AB-12"}))[0].path, "/id");
    assert_eq!(errs(s, json!({"n_x":"one"}))[0].path, "/n_x");
}

/// `dependentRequired`, `dependentSchemas`, `propertyNames`, `contains` with bounds.
#[test]
fn dependencies_names_and_contains() {
    let s = json!({"type":"object",
                   "dependentRequired":{"card":["cvv"]},
                   "dependentSchemas":{"gift":{"required":["to"]}},
                   "propertyNames":{"maxLength":4},
                   "properties":{"tags":{"contains":{"const":"x"},"minContains":2}}});
    assert!(valid(&s, json!({"card":1,"cvv":2,"tags":["x","x"]})));
    assert_eq!(errs(s.clone(), json!({"card":1})).len(), 1);
    assert_eq!(errs(s.clone(), json!({"gift":1})).len(), 1);
    assert_eq!(errs(s.clone(), json!({"toolong":1})).len(), 1);
    assert_eq!(errs(s, json!({"tags":["x","y"]}))[0].path, "/tags");
}

/// `unevaluatedProperties` and `unevaluatedItems` see through `allOf` and `prefixItems`.
#[test]
fn unevaluated_keywords() {
    let s = json!({"allOf":[{"properties":{"a":{"type":"string"}}}],
                   "properties":{"b":{"type":"integer"}},"unevaluatedProperties":false});
    assert!(valid(&s, json!({"a":"x","b":1})));
    assert_eq!(errs(s, json!({"a":"x","c":1})).len(), 1);
    let items = json!({"prefixItems":[{"type":"string"}],"unevaluatedItems":false});
    assert!(valid(&items, json!(["x"])));
    assert_eq!(errs(items, json!(["x", 2])).len(), 1);
}

/// `$anchor` and `$dynamicRef` references resolve within the document.
#[test]
fn anchors_and_dynamic_refs() {
    let s = json!({"$defs":{"pos":{"$anchor":"positive","type":"integer","minimum":1}},
                   "properties":{"n":{"$ref":"#positive"}}});
    assert!(valid(&s, json!({"n":3})));
    assert_eq!(errs(s, json!({"n":0}))[0].path, "/n");
    let tree = json!({"$id":"https://example.com/tree","$dynamicAnchor":"node","type":"object",
                      "properties":{"kids":{"type":"array","items":{"$dynamicRef":"#node"}}},
                      "required":["v"]});
    assert!(valid(&tree, json!({"v":1,"kids":[{"v":2,"kids":[]}]})));
    assert_eq!(
        errs(tree, json!({"v":1,"kids":[{"kids":[]}]}))[0].path,
        "/kids/0"
    );
}

/// The draft comes from `$schema`: draft-07's array form of `items` and `definitions`.
#[test]
fn drafts_follow_dollar_schema() {
    let s = json!({"$schema":"http://json-schema.org/draft-07/schema#",
                   "definitions":{"s":{"type":"string"}},
                   "items":[{"$ref":"#/definitions/s"},{"type":"integer"}],"additionalItems":false});
    assert!(valid(&s, json!(["a", 1])));
    assert_eq!(errs(s.clone(), json!([1, 1]))[0].path, "/0");
    assert_eq!(errs(s, json!(["a", 1, 2])).len(), 1);
    let s = json!({"$schema":"https://json-schema.org/draft/2019-09/schema",
                   "dependentRequired":{"a":["b"]}});
    assert_eq!(errs(s, json!({"a":1})).len(), 1);
}

/// `format` is an annotation unless format assertions are on.
#[test]
fn formats_are_opt_in() {
    let doc = json!({"type":"object","properties":{"at":{"type":"string","format":"date-time"},
                     "mail":{"type":"string","format":"email"}}});
    let bad = json!({"at":"yesterday","mail":"nobody"});
    assert_eq!(Schema::new(doc.clone()).validate(&bad), Ok(()));
    let strict = Schema::with_formats(doc.clone(), true);
    assert_eq!(strict.validate(&bad).unwrap_err().len(), 2);
    assert_eq!(
        strict.validate(&json!({"at":"2025-01-02T03:04:05Z","mail":"a@b.example"})),
        Ok(())
    );
    assert!(Schema::new(doc).formats(true).validate(&bad).is_err());
}

/// A document that is not a schema, or refers to another document, does not compile; the
/// reason is kept and every instance is refused with it.
#[test]
fn invalid_schemas_do_not_compile() {
    for doc in [
        json!({"type": 7}),
        json!({"type": "object", "properties": {"a": {"pattern": "("}}}),
        json!({"$ref": "https://example.com/s.json"}),
        json!({"$ref": "#/nope"}),
        json!({"$schema": "https://example.com/unknown-draft"}),
        json!(5),
    ] {
        let reason = Schema::compile(doc.clone()).expect_err("refused").reason;
        assert!(!reason.is_empty(), "{doc}");
        let kept = Schema::new(doc.clone());
        assert!(kept.error().is_some(), "{doc}");
        let refused = kept.validate(&json!({})).expect_err("refused");
        assert!(refused[0].message.contains("does not compile"), "{doc}");
    }
}

/// A schema that refers to itself without consuming the instance is refused or answered; it
/// never recurses without end.
#[test]
fn self_references_terminate() {
    let s = Schema::new(json!({"$ref": "#"}));
    let _ = s.validate(&json!(1));
    let s = Schema::compile(json!({"properties": {"next": {"$ref": "#"}}, "required": ["v"]}))
        .expect("compiles");
    let deep = (0..100).fold(json!({"v": 0}), |inner, _| json!({"v": 1, "next": inner}));
    assert_eq!(s.validate(&deep), Ok(()));
}

/// Errors are bounded in number.
#[test]
fn errors_are_bounded() {
    let s = json!({"type":"array","items":{"type":"string"}});
    let many: Vec<Value> = (0..100).map(|i| json!(i)).collect();
    assert_eq!(errs(s, Value::Array(many)).len(), MAX_ERRORS);
}
