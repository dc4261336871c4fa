//! Reading the structs that keep their unknown members (`extra`) member by member, without
//! serde's `flatten` machinery, for the types a client parses on every call
//! ([`CallToolResult`], [`TextContent`]).
//!
//! serde's derive for a struct with a `#[serde(flatten)]` map reads each member name into its
//! private `Content` type, keeps every unknown member as a `Content` tree, and builds `extra`
//! from those trees at the end. The readers here match the member name in place, read known
//! members straight into their fields and unknown ones straight into `extra`; the result is
//! the derive's: the same fields, the same `extra` (in order, a repeated unknown member keeping
//! its last value), and the same refusals (a repeated known member, a missing required one,
//! anything but an object). The content list is read into a `Vec` of exactly its length when
//! it holds one block (the usual tool result), instead of serde's first guess of four.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::{CallToolResult, ContentBlock, Extra, TextContent};

/// A member name: one of the struct's known names (its index), or another name, kept for
/// `extra`.
pub(super) enum MemberKey {
    Known(usize),
    Other(String),
}

/// Reads a member name as a [`MemberKey`] against a list of known names.
pub(super) struct KeySeed(pub(super) &'static [&'static str]);

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = MemberKey;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<MemberKey, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed {
    type Value = MemberKey;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<MemberKey, E> {
        Ok(match self.0.iter().position(|k| *k == key) {
            Some(index) => MemberKey::Known(index),
            None => MemberKey::Other(key.to_owned()),
        })
    }

    fn visit_string<E: de::Error>(self, key: String) -> Result<MemberKey, E> {
        Ok(match self.0.iter().position(|k| *k == key) {
            Some(index) => MemberKey::Known(index),
            None => MemberKey::Other(key),
        })
    }
}

/// Reads every member of `map`: known ones (by index into `known`) through `read_known`,
/// unknown ones into the returned `extra`.
fn read_members<'de, A: MapAccess<'de>>(
    mut map: A,
    known: &'static [&'static str],
    mut read_known: impl FnMut(usize, &mut A) -> Result<(), A::Error>,
) -> Result<Extra, A::Error> {
    let mut extra = Extra::new();
    // Bounded by the input: one step per member the deserializer hands out.
    while let Some(key) = map.next_key_seed(KeySeed(known))? {
        match key {
            MemberKey::Known(index) => read_known(index, &mut map)?,
            MemberKey::Other(name) => {
                let value = map.next_value::<Value>()?;
                extra.insert(name, value);
            }
        }
    }
    Ok(extra)
}

/// Reads the value of known member `name` into `slot`, refusing a second occurrence.
fn read_once<'de, T: Deserialize<'de>, A: MapAccess<'de>>(
    map: &mut A,
    slot: &mut Option<T>,
    name: &'static str,
) -> Result<(), A::Error> {
    if slot.is_some() {
        return Err(de::Error::duplicate_field(name));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

/// [`read_once`] with a seed.
fn read_once_seed<'de, S: DeserializeSeed<'de>, A: MapAccess<'de>>(
    map: &mut A,
    slot: &mut Option<S::Value>,
    name: &'static str,
    seed: S,
) -> Result<(), A::Error> {
    if slot.is_some() {
        return Err(de::Error::duplicate_field(name));
    }
    *slot = Some(map.next_value_seed(seed)?);
    Ok(())
}

const CALL_TOOL_RESULT: &[&str] = &["content", "structuredContent", "isError", "_meta"];

impl<'de> Deserialize<'de> for CallToolResult {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(CallToolResultVisitor)
    }
}

struct CallToolResultVisitor;

impl<'de> Visitor<'de> for CallToolResultVisitor {
    type Value = CallToolResult;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct CallToolResult")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<CallToolResult, A::Error> {
        let mut content = None;
        let mut structured_content = None;
        let mut is_error = None;
        let mut meta = None;
        let extra = read_members(map, CALL_TOOL_RESULT, |index, map| match index {
            0 => read_once_seed(map, &mut content, "content", BlockList),
            1 => read_once(map, &mut structured_content, "structuredContent"),
            2 => read_once(map, &mut is_error, "isError"),
            _ => read_once(map, &mut meta, "_meta"),
        })?;
        Ok(CallToolResult {
            content: content.ok_or_else(|| de::Error::missing_field("content"))?,
            structured_content: structured_content.flatten(),
            is_error: is_error.flatten(),
            meta: meta.flatten(),
            extra,
        })
    }
}

/// Reads a list of content blocks; one block gets a `Vec` of capacity one.
struct BlockList;

impl<'de> DeserializeSeed<'de> for BlockList {
    type Value = Vec<ContentBlock>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for BlockList {
    type Value = Vec<ContentBlock>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let Some(first) = seq.next_element()? else {
            return Ok(Vec::new());
        };
        let Some(second) = seq.next_element()? else {
            return Ok(vec![first]);
        };
        // As serde's own reader: a size hint is trusted only up to a small bound.
        let hint = seq.size_hint().unwrap_or(0).min(64);
        let mut blocks = Vec::with_capacity(2 + hint);
        blocks.push(first);
        blocks.push(second);
        // Bounded by the input: one step per element the deserializer hands out.
        while let Some(block) = seq.next_element()? {
            blocks.push(block);
        }
        Ok(blocks)
    }
}

const TEXT_CONTENT: &[&str] = &["text", "annotations", "_meta"];

impl<'de> Deserialize<'de> for TextContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(TextContentVisitor)
    }
}

struct TextContentVisitor;

impl<'de> Visitor<'de> for TextContentVisitor {
    type Value = TextContent;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct TextContent")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<TextContent, A::Error> {
        let mut text = None;
        let mut annotations = None;
        let mut meta = None;
        let extra = read_members(map, TEXT_CONTENT, |index, map| match index {
            0 => read_once(map, &mut text, "text"),
            1 => read_once(map, &mut annotations, "annotations"),
            _ => read_once(map, &mut meta, "_meta"),
        })?;
        Ok(TextContent {
            text: text.ok_or_else(|| de::Error::missing_field("text"))?,
            annotations: annotations.flatten(),
            meta: meta.flatten(),
            extra,
        })
    }
}

#[cfg(test)]
#[path = "flatten_tests.rs"]
mod tests;
