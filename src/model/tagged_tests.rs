//! The hand-written tagged readers against serde's derive (kept here as the reference): the
//! same value or the same refusal for generated objects, whatever the member order.

use proptest::prelude::*;
use serde::Deserialize;
use serde_json::{json, Value};

use super::super::{
    CallToolResult, ContentBlock, EmbeddedResource, MediaContent, SamplingContent, TextContent,
    ToolResultContent, ToolUseContent,
};

/// What `ContentBlock`'s derive was before the hand-written reader.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum DerivedBlock {
    Text(TextContent),
    Image(MediaContent),
    Audio(MediaContent),
    ResourceLink(crate::model::Resource),
    Resource(EmbeddedResource),
}

impl From<DerivedBlock> for ContentBlock {
    fn from(block: DerivedBlock) -> Self {
        match block {
            DerivedBlock::Text(b) => ContentBlock::Text(b),
            DerivedBlock::Image(b) => ContentBlock::Image(b),
            DerivedBlock::Audio(b) => ContentBlock::Audio(b),
            DerivedBlock::ResourceLink(b) => ContentBlock::ResourceLink(b),
            DerivedBlock::Resource(b) => ContentBlock::Resource(b),
        }
    }
}

/// The same for `SamplingContent`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum DerivedSampling {
    Text(TextContent),
    Image(MediaContent),
    Audio(MediaContent),
    ToolUse(ToolUseContent),
    ToolResult(ToolResultContent),
}

impl From<DerivedSampling> for SamplingContent {
    fn from(block: DerivedSampling) -> Self {
        match block {
            DerivedSampling::Text(b) => SamplingContent::Text(b),
            DerivedSampling::Image(b) => SamplingContent::Image(b),
            DerivedSampling::Audio(b) => SamplingContent::Audio(b),
            DerivedSampling::ToolUse(b) => SamplingContent::ToolUse(b),
            DerivedSampling::ToolResult(b) => SamplingContent::ToolResult(b),
        }
    }
}

/// Both readers on `text`, through the text reader and through `Value`: equal values, or
/// both refuse.
fn assert_same(text: &str) {
    let _ = read_alike::<ContentBlock, DerivedBlock>(text);
    let _ = read_alike::<SamplingContent, DerivedSampling>(text);
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        let new = serde_json::from_value::<ContentBlock>(value.clone());
        let old = serde_json::from_value::<DerivedBlock>(value).map(ContentBlock::from);
        assert_eq!(new.as_ref().ok(), old.as_ref().ok(), "{text} (Value)");
    }
}

/// The hand-written reader `New` and the derived reader `Old` on `text`: checks that they give
/// equal values, or both refuse, and returns both readings.
pub(in crate::model) fn read_alike<New, Old>(
    text: &str,
) -> (
    Result<New, serde_json::Error>,
    Result<New, serde_json::Error>,
)
where
    New: serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
    Old: serde::de::DeserializeOwned + Into<New>,
{
    let new = serde_json::from_str::<New>(text);
    let old = serde_json::from_str::<Old>(text).map(Into::into);
    assert_eq!(
        new.as_ref().ok(),
        old.as_ref().ok(),
        "{text}: {new:?} vs {old:?}"
    );
    (new, old)
}

/// Member values the generator draws from: every field of every variant, right or wrong
/// types, `_meta`, annotations and unknown members.
fn member() -> impl Strategy<Value = (String, Value)> {
    let tags = prop_oneof![
        Just(json!("text")),
        Just(json!("image")),
        Just(json!("audio")),
        Just(json!("resource_link")),
        Just(json!("resource")),
        Just(json!("tool_use")),
        Just(json!("tool_result")),
        Just(json!("video")),
        Just(json!(7)),
        Just(json!(null)),
    ];
    prop_oneof![
        3 => tags.prop_map(|t| ("type".to_owned(), t)),
        1 => Just(("text".to_owned(), json!("hello \u{e9} \"q\""))),
        1 => Just(("text".to_owned(), json!(5))),
        1 => Just(("data".to_owned(), json!("aGk="))),
        1 => Just(("mimeType".to_owned(), json!("image/png"))),
        1 => Just(("uri".to_owned(), json!("file:///a"))),
        1 => Just(("name".to_owned(), json!("a"))),
        1 => Just(("id".to_owned(), json!("u1"))),
        1 => Just(("input".to_owned(), json!({"x": 1}))),
        1 => Just(("toolUseId".to_owned(), json!("u1"))),
        1 => Just(("content".to_owned(), json!([{"type": "text", "text": "in"}]))),
        1 => Just(("resource".to_owned(), json!({"uri": "file:///b", "text": "t"}))),
        1 => Just(("annotations".to_owned(), json!({"audience": ["user"], "priority": 0.5}))),
        1 => Just(("annotations".to_owned(), json!(null))),
        1 => Just(("_meta".to_owned(), json!({"k": [1, 2.5, -3, 1e40]}))),
        1 => Just(("x-unknown".to_owned(), json!({"deep": [true, null, "s"]}))),
        1 => Just(("number".to_owned(), json!(18446744073709551615u64))),
    ]
}

/// An object text with these members in this order (duplicates kept).
pub(in crate::model) fn object_text(members: &[(String, Value)]) -> String {
    let parts: Vec<String> = members
        .iter()
        .map(|(k, v)| format!("{}:{}", Value::String(k.clone()), v))
        .collect();
    format!("{{{}}}", parts.join(","))
}

proptest! {
    #[test]
    fn same_as_the_derive_on_generated_objects(
        members in proptest::collection::vec(member(), 0..7)
    ) {
        assert_same(&object_text(&members));
    }

    #[test]
    fn same_as_the_derive_with_the_tag_first(
        tag in member().prop_filter("a tag", |(k, _)| k == "type"),
        members in proptest::collection::vec(member(), 0..6)
    ) {
        let mut all = vec![tag];
        all.extend(members);
        assert_same(&object_text(&all));
    }
}

#[test]
fn a_leading_tag_and_a_late_tag_read_the_same_block() {
    let first =
        r#"{"type":"text","text":"hi","_meta":{"a":1},"annotations":{"priority":1},"z":[1]}"#;
    let late =
        r#"{"text":"hi","_meta":{"a":1},"annotations":{"priority":1},"type":"text","z":[1]}"#;
    let a: ContentBlock = serde_json::from_str(first).unwrap();
    let b: ContentBlock = serde_json::from_str(late).unwrap();
    assert_eq!(a, b);
    let ContentBlock::Text(text) = &a else {
        panic!("not text: {a:?}");
    };
    assert_eq!(text.text, "hi");
    assert_eq!(text.extra.get("z"), Some(&json!([1])));
    assert!(
        !text.extra.contains_key("type"),
        "the tag is not an unknown member"
    );
    assert_same(first);
    assert_same(late);
}

#[test]
fn refusals_match_the_derive() {
    for text in [
        r#"{}"#,
        r#"{"text":"no tag"}"#,
        r#"{"type":"text"}"#,
        r#"{"type":"video","text":"x"}"#,
        r#"{"type":"text","text":"x","type":"text"}"#,
        r#"{"text":"x","type":"text","type":"image"}"#,
        r#"{"type":1,"text":"x"}"#,
        r#"{"type":"text","text":"x","text":"y"}"#,
        r#"{"text":"x","text":"y","type":"text"}"#,
        r#""text""#,
        r#"[]"#,
        r#"null"#,
    ] {
        assert!(
            serde_json::from_str::<ContentBlock>(text).is_err(),
            "{text}"
        );
        assert_same(text);
    }
}

#[test]
fn a_tool_result_reads_its_blocks_in_place() {
    let text = r#"{"content":[{"type":"text","text":"a"},{"data":"aGk=","type":"image","mimeType":"image/png"}],"isError":false,"_meta":{"m":1},"other":2}"#;
    let result: CallToolResult = serde_json::from_str(text).unwrap();
    assert_eq!(result.content.len(), 2);
    assert!(matches!(&result.content[0], ContentBlock::Text(t) if t.text == "a"));
    assert!(matches!(&result.content[1], ContentBlock::Image(m) if m.mime_type == "image/png"));
    assert_eq!(result.extra.get("other"), Some(&json!(2)));
    // Written back: the tag first, the same members.
    let again: Value = serde_json::to_value(&result).unwrap();
    let original: Value = serde_json::from_str(text).unwrap();
    assert_eq!(again, original);
}
