//! The fast text-only reader against the general serde reader: whatever it accepts, the general
//! reader reads to the same value; what it declines is left to the general reader.

use proptest::prelude::*;

use super::read_texts_only;
use crate::model::{CallToolResult, ContentBlock};

/// The fast reader's answer for `text`, checked against the general reader's.
fn checked(text: &str) -> Option<CallToolResult> {
    let fast = read_texts_only(text.as_bytes());
    if let Some(fast) = &fast {
        let general: CallToolResult = serde_json::from_str(text).expect("general reader accepts");
        assert_eq!(fast, &general, "{text}");
    }
    fast
}

fn texts(result: &CallToolResult) -> Vec<&str> {
    result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text(t) => t.text.as_str(),
            other => panic!("not text: {other:?}"),
        })
        .collect()
}

#[test]
fn compact_text_results_are_read() {
    let one = checked(r#"{"content":[{"type":"text","text":"hi"}]}"#).unwrap();
    assert_eq!(texts(&one), ["hi"]);
    assert_eq!(one.is_error, None);
    let two = checked(
        r#"{"content":[{"type":"text","text":"a"},{"type":"text","text":""}],"isError":true}"#,
    )
    .unwrap();
    assert_eq!(texts(&two), ["a", ""]);
    assert_eq!(two.is_error, Some(true));
    let none = checked(r#"{"content":[],"isError":false}"#).unwrap();
    assert!(none.content.is_empty());
    assert_eq!(none.is_error, Some(false));
}

#[test]
fn escapes_are_unescaped_as_the_general_reader_does() {
    let text = r#"{"content":[{"type":"text","text":"q\"b\\s\/n\nr\rt\tb\bf\f é"}]}"#;
    assert_eq!(
        texts(&checked(text).unwrap()),
        ["q\"b\\s/n\nr\rt\tb\u{8}f\u{c} é"]
    );
}

#[test]
fn unicode_escapes_are_read_as_the_general_reader_reads_them() {
    let text = r#"{"content":[{"type":"text","text":"\u0041\u00e9\u0000x\ud83d\ude00\u001f"}]}"#;
    assert_eq!(
        texts(&checked(text).unwrap()),
        ["A\u{e9}\u{0}x\u{1F600}\u{1f}"]
    );
}

#[test]
fn other_shapes_are_left_to_the_general_reader() {
    for text in [
        r#"{"content":[{"type":"text","text":"\ud800"}]}"#,
        r#"{"content":[{"type":"text","text":"\udc00\ud800"}]}"#,
        r#"{"content":[{"type":"text","text":"\u00zz"}]}"#,
        r#"{"content":[{"type":"text","text":"\u12"}]}"#,
        r#"{"content":[{"type":"text","text":"x\q"}]}"#,
        "{\"content\":[{\"type\":\"text\",\"text\":\"raw\nline\"}]}",
        r#"{"content":[{"text":"x","type":"text"}]}"#,
        r#"{"content":[{"type":"text","text":"x","_meta":{}}]}"#,
        r#"{"content":[{"type":"image","data":"","mimeType":"image/png"}]}"#,
        r#"{"content":[{"type":"text","text":"x"}],"structuredContent":{}}"#,
        r#"{"content":[{"type":"text","text":"x"}],"isError":null}"#,
        r#"{"isError":true,"content":[]}"#,
        r#"{ "content":[]}"#,
        r#"{"content":[]} "#,
        r#"{"content":[{"type":"text","text":"x"},]}"#,
        r#"{"content":[{"type":"text","text":"x"}]"#,
        r#"{"content":[{"type":"text","text":"x\"#,
        r#"{"content":[{"type":"text","text":"x"#,
        "",
    ] {
        assert!(checked(text).is_none(), "{text}");
    }
}

/// A raw control character anywhere in a text (the reader's search refuses it: in a word, in
/// the tail, after an escape) leaves the result to the general reader, which refuses it.
#[test]
fn raw_control_characters_are_left_to_the_general_reader() {
    for control in ['\u{0}', '\u{1}', '\t', '\n', '\u{1f}'] {
        for body in [
            "{c}",
            "abcdefghijklmnop{c}q",
            "a\\nb{c}",
            "a\\\"bcdefghijkl{c}mnopq",
        ] {
            let body = body.replace("{c}", &control.to_string());
            let text = format!(r#"{{"content":[{{"type":"text","text":"{body}"}}]}}"#);
            assert!(read_texts_only(text.as_bytes()).is_none(), "{text:?}");
            assert!(serde_json::from_str::<CallToolResult>(&text).is_err());
        }
    }
}

#[test]
fn invalid_utf8_is_left_to_the_general_reader() {
    let mut text = br#"{"content":[{"type":"text","text":""#.to_vec();
    text.extend_from_slice(&[0xff, b'"', b'}', b']', b'}']);
    assert!(read_texts_only(&text).is_none());
}

/// A text with escapes, quotes, control characters and non-ASCII letters, written by serde.
fn text_member() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just('"'),
            Just('\\'),
            Just('/'),
            Just('\n'),
            Just('\u{1}'),
            Just('é'),
            Just('\u{1F600}'),
            proptest::char::range('a', 'e'),
        ],
        0..12,
    )
    .prop_map(|chars| chars.into_iter().collect())
}

proptest! {
    /// Results written by serde (compact) read the same through both readers, and the fast one
    /// reads them all (`\u` escapes of control characters included).
    #[test]
    fn serde_written_results_read_the_same(
        blocks in proptest::collection::vec(text_member(), 0..4),
        is_error in proptest::option::of(any::<bool>()),
    ) {
        let result = CallToolResult {
            content: blocks.iter().map(|t| ContentBlock::text(t.clone())).collect(),
            is_error,
            ..CallToolResult::default()
        };
        let text = serde_json::to_string(&result).unwrap();
        let fast = checked(&text);
        prop_assert!(fast.is_some(), "{}", text);
        if let Some(fast) = fast {
            prop_assert_eq!(fast, result);
        }
    }

    /// Serde-written results with a few bytes deleted, inserted or replaced: the fast reader
    /// accepts only what the general reader reads to the same value.
    #[test]
    fn edited_results_never_disagree(
        blocks in proptest::collection::vec(text_member(), 0..3),
        is_error in proptest::option::of(any::<bool>()),
        edits in proptest::collection::vec(
            (any::<proptest::sample::Index>(), 0..3u8, proptest::sample::select(EDIT_BYTES)),
            1..4,
        ),
    ) {
        let result = CallToolResult {
            content: blocks.iter().map(|t| ContentBlock::text(t.clone())).collect(),
            is_error,
            ..CallToolResult::default()
        };
        let mut text = serde_json::to_vec(&result).unwrap();
        for (at, kind, byte) in edits {
            let at = at.index(text.len() + 1);
            match kind {
                0 if at < text.len() => {
                    text.remove(at);
                }
                1 => text.insert(at, byte),
                _ if at < text.len() => text[at] = byte,
                _ => text.push(byte),
            }
        }
        if let Some(fast) = read_texts_only(&text) {
            let general: CallToolResult = serde_json::from_slice(&text).unwrap();
            prop_assert_eq!(fast, general);
        }
    }
}

/// Bytes the edits write: JSON's structure, escapes, a control character, invalid UTF-8.
const EDIT_BYTES: &[u8] = b"\"\\}]{[,:xtu \n\x01\xff";
