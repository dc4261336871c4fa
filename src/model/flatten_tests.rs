//! The hand-written member readers against serde's derive (kept here as the reference): the
//! same value or both refuse, for generated objects in any member order, with repeated,
//! missing, null and wrongly typed members, through the text reader and through `Value`.

use proptest::prelude::*;
use serde::Deserialize;
use serde_json::{json, Value};

use super::super::tagged::tests::{object_text, read_alike};
use super::super::{Annotations, CallToolResult, ContentBlock, Extra, Meta, TextContent};

/// What `CallToolResult`'s derive was before the hand-written reader.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DerivedCallToolResult {
    content: Vec<ContentBlock>,
    #[serde(default)]
    structured_content: Option<Value>,
    #[serde(default)]
    is_error: Option<bool>,
    #[serde(rename = "_meta", default)]
    meta: Option<Meta>,
    #[serde(flatten)]
    extra: Extra,
}

impl From<DerivedCallToolResult> for CallToolResult {
    fn from(r: DerivedCallToolResult) -> Self {
        CallToolResult {
            content: r.content,
            structured_content: r.structured_content,
            is_error: r.is_error,
            meta: r.meta,
            extra: r.extra,
        }
    }
}

/// What `TextContent`'s derive was before the hand-written reader.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DerivedTextContent {
    text: String,
    #[serde(default)]
    annotations: Option<Annotations>,
    #[serde(rename = "_meta", default)]
    meta: Option<Meta>,
    #[serde(flatten)]
    extra: Extra,
}

impl From<DerivedTextContent> for TextContent {
    fn from(t: DerivedTextContent) -> Self {
        TextContent {
            text: t.text,
            annotations: t.annotations,
            meta: t.meta,
            extra: t.extra,
        }
    }
}

/// The types read here: their unknown members, for comparing their order.
trait HasExtra {
    fn extra(&self) -> &Extra;
}

impl HasExtra for CallToolResult {
    fn extra(&self) -> &Extra {
        &self.extra
    }
}

impl HasExtra for TextContent {
    fn extra(&self) -> &Extra {
        &self.extra
    }
}

/// `New` (hand-written) and `Old` (derived) on `text`, through the text reader and through
/// `Value`: equal values (and equal `extra` order), or both refuse.
fn assert_same_as<New, Old>(text: &str)
where
    New: for<'de> Deserialize<'de> + HasExtra + PartialEq + std::fmt::Debug,
    Old: for<'de> Deserialize<'de> + Into<New> + std::fmt::Debug,
{
    let (new, old) = read_alike::<New, Old>(text);
    if let (Ok(new), Ok(old)) = (&new, &old) {
        assert!(
            new.extra().keys().eq(old.extra().keys()),
            "{text}: extra order"
        );
    }
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        let new = serde_json::from_value::<New>(value.clone());
        let old = serde_json::from_value::<Old>(value).map(Into::into);
        assert_eq!(new.as_ref().ok(), old.as_ref().ok(), "{text} (Value)");
    }
}

/// Both types' readers against their derives on `text`.
fn assert_same(text: &str) {
    assert_same_as::<CallToolResult, DerivedCallToolResult>(text);
    assert_same_as::<TextContent, DerivedTextContent>(text);
}

/// Members the generator draws from: every field of both types, right and wrong types,
/// nulls, and unknown members (some repeated).
fn member() -> impl Strategy<Value = (String, Value)> {
    let blocks = prop_oneof![
        Just(json!([])),
        Just(json!([{"type": "text", "text": "a \"q\" \u{e9}"}])),
        Just(
            json!([{"type": "text", "text": "a"}, {"type": "image", "data": "aGk=", "mimeType": "image/png"}])
        ),
        Just(
            json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}, {"type": "text", "text": "c"}])
        ),
        Just(json!([{"text": "late tag", "type": "text"}])),
        Just(json!([{"type": "video"}])),
        Just(json!({"type": "text"})),
        Just(json!(null)),
    ];
    prop_oneof![
        3 => blocks.prop_map(|b| ("content".to_owned(), b)),
        1 => Just(("structuredContent".to_owned(), json!({"a": [1, 2]}))),
        1 => Just(("structuredContent".to_owned(), json!(null))),
        1 => Just(("structuredContent".to_owned(), json!([1]))),
        1 => Just(("isError".to_owned(), json!(true))),
        1 => Just(("isError".to_owned(), json!(null))),
        1 => Just(("isError".to_owned(), json!("yes"))),
        1 => Just(("_meta".to_owned(), json!({"k": [1, 2.5, -3, 1e40]}))),
        1 => Just(("_meta".to_owned(), json!(null))),
        2 => Just(("text".to_owned(), json!("hello \u{e9} \"q\""))),
        1 => Just(("text".to_owned(), json!(5))),
        1 => Just(("annotations".to_owned(), json!({"audience": ["user"], "priority": 0.5}))),
        1 => Just(("annotations".to_owned(), json!(null))),
        1 => Just(("annotations".to_owned(), json!(3))),
        1 => Just(("type".to_owned(), json!("text"))),
        2 => Just(("x-unknown".to_owned(), json!({"deep": [true, null, "s"]}))),
        1 => Just(("x-unknown".to_owned(), json!(2))),
        1 => Just(("number".to_owned(), json!(18446744073709551615u64))),
        1 => Just(("negative".to_owned(), json!(-7))),
    ]
}

proptest! {
    #[test]
    fn same_as_the_derive_on_generated_objects(
        members in proptest::collection::vec(member(), 0..8)
    ) {
        assert_same(&object_text(&members));
    }
}

#[test]
fn refusals_and_edge_cases_match_the_derive() {
    for text in [
        r#"{}"#,
        r#"{"content":[]}"#,
        r#"{"content":null}"#,
        r#"{"content":[],"content":[]}"#,
        r#"{"content":[],"isError":false,"isError":true}"#,
        r#"{"content":[],"x":1,"y":2,"x":3}"#,
        r#"{"text":"a","text":"b"}"#,
        r#"{"text":"a","annotations":null,"annotations":null}"#,
        r#"{"text":"a","z":{"n":1e400}}"#,
        r#"[]"#,
        r#"["content"]"#,
        r#"null"#,
        r#""text""#,
        r#"{"content":[{"type":"text","text":"a"}],"structuredContent":{"k":"v"},"isError":true,"_meta":{"m":1},"other":2}"#,
    ] {
        assert_same(text);
    }
}

/// One block (the usual tool result) gets a list of capacity one; more blocks all arrive.
#[test]
fn a_single_block_list_is_allocated_exactly() {
    let one: CallToolResult =
        serde_json::from_str(r#"{"content":[{"type":"text","text":"a"}]}"#).unwrap();
    assert_eq!(one.content.capacity(), 1);
    let none: CallToolResult = serde_json::from_str(r#"{"content":[]}"#).unwrap();
    assert_eq!(none.content.capacity(), 0);
    let blocks: Vec<Value> = (0..70)
        .map(|i| json!({"type": "text", "text": i.to_string()}))
        .collect();
    let many: CallToolResult = serde_json::from_value(json!({"content": blocks})).unwrap();
    assert_eq!(many.content.len(), 70);
    assert!(matches!(&many.content[69], ContentBlock::Text(t) if t.text == "69"));
}
