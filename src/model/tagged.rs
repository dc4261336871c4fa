//! Reading the `type`-tagged blocks ([`ContentBlock`], [`SamplingContent`]) without buffering
//! them when the tag comes first.
//!
//! serde's derive for an internally tagged enum buffers every member of the object into its
//! private `Content` tree before it knows the variant, then reads the variant from that tree: a
//! second pass and an allocation per string. Every MCP peer we know writes `type` first (serde's
//! own serializer does), so the visitor here reads the first key and, when it is `type`, hands
//! the rest of the same map straight to the variant's derived `Deserialize`. When `type` comes
//! later it collects the members in order (duplicates kept) and reads the variant from them,
//! so the result is the derive's in both cases: same variants, same unknown members in `extra`
//! (without `type`), same refusal of a missing, repeated or unknown tag.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{MapAccessDeserializer, MapDeserializer};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::flatten::{KeySeed, MemberKey};
use super::{ContentBlock, Extra, SamplingContent};

/// The name of the tag member.
const TAG: &str = "type";

/// An enum tagged by `type` whose variants read themselves from a map.
pub(super) trait Tagged: Sized {
    /// The tag values, in declaration order (for the "unknown variant" error).
    const VARIANTS: &'static [&'static str];
    /// What the error messages call the type.
    const EXPECTING: &'static str;

    /// Reads variant number `index` of [`Tagged::VARIANTS`] from `rest` (the object's other
    /// members).
    fn read_variant<'de, D: Deserializer<'de>>(index: usize, rest: D) -> Result<Self, D::Error>;
}

/// Deserializes `T` from `deserializer` (the body of `T`'s `Deserialize::deserialize`).
pub(super) fn deserialize<'de, T: Tagged, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<T, D::Error> {
    deserializer.deserialize_map(TaggedVisitor(PhantomData))
}

struct TaggedVisitor<T>(PhantomData<T>);

impl<'de, T: Tagged> Visitor<'de> for TaggedVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        match map.next_key_seed(KeySeed(&[TAG]))? {
            None => Err(de::Error::missing_field(TAG)),
            Some(MemberKey::Known(_)) => {
                let index = map.next_value_seed(TagSeed::<T>(PhantomData))?;
                T::read_variant(index, MapAccessDeserializer::new(map))
            }
            Some(MemberKey::Other(key)) => {
                let first = map.next_value::<Value>()?;
                buffered(key, first, map)
            }
        }
    }
}

/// The tag came after other members: every member in order, then the variant from the rest.
fn buffered<'de, T: Tagged, A: MapAccess<'de>>(
    key: String,
    value: Value,
    mut map: A,
) -> Result<T, A::Error> {
    let mut members = vec![(key, value)];
    let mut tag = None;
    // Bounded by the input: one entry per member the deserializer hands out.
    while let Some(key) = map.next_key::<String>()? {
        if key == TAG {
            if tag.is_some() {
                return Err(de::Error::duplicate_field(TAG));
            }
            tag = Some(map.next_value_seed(TagSeed::<T>(PhantomData))?);
        } else {
            members.push((key, map.next_value::<Value>()?));
        }
    }
    let index = tag.ok_or_else(|| de::Error::missing_field(TAG))?;
    let rest = MapDeserializer::<_, serde_json::Error>::new(members.into_iter());
    T::read_variant(index, rest).map_err(de::Error::custom)
}

/// Reads the tag's value as the index of its variant, without allocating.
struct TagSeed<T>(PhantomData<T>);

impl<'de, T: Tagged> de::DeserializeSeed<'de> for TagSeed<T> {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<T: Tagged> Visitor<'_> for TagSeed<T> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("variant identifier")
    }

    fn visit_str<E: de::Error>(self, tag: &str) -> Result<usize, E> {
        T::VARIANTS
            .iter()
            .position(|v| *v == tag)
            .ok_or_else(|| E::unknown_variant(tag, T::VARIANTS))
    }
}

impl Tagged for ContentBlock {
    const VARIANTS: &'static [&'static str] =
        &["text", "image", "audio", "resource_link", "resource"];
    const EXPECTING: &'static str = "internally tagged enum ContentBlock";

    fn read_variant<'de, D: Deserializer<'de>>(index: usize, rest: D) -> Result<Self, D::Error> {
        let block = match index {
            0 => ContentBlock::Text(Deserialize::deserialize(rest)?),
            1 => ContentBlock::Image(Deserialize::deserialize(rest)?),
            2 => ContentBlock::Audio(Deserialize::deserialize(rest)?),
            3 => ContentBlock::ResourceLink(Deserialize::deserialize(rest)?),
            _ => ContentBlock::Resource(Deserialize::deserialize(rest)?),
        };
        let extra = match &block {
            ContentBlock::Text(b) => &b.extra,
            ContentBlock::Image(b) | ContentBlock::Audio(b) => &b.extra,
            ContentBlock::ResourceLink(b) => &b.extra,
            ContentBlock::Resource(b) => &b.extra,
            ContentBlock::Json(_) => return Ok(block),
        };
        refuse_repeated_tag(extra)?;
        Ok(block)
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize(deserializer)
    }
}

impl Tagged for SamplingContent {
    const VARIANTS: &'static [&'static str] =
        &["text", "image", "audio", "tool_use", "tool_result"];
    const EXPECTING: &'static str = "internally tagged enum SamplingContent";

    fn read_variant<'de, D: Deserializer<'de>>(index: usize, rest: D) -> Result<Self, D::Error> {
        let block = match index {
            0 => SamplingContent::Text(Deserialize::deserialize(rest)?),
            1 => SamplingContent::Image(Deserialize::deserialize(rest)?),
            2 => SamplingContent::Audio(Deserialize::deserialize(rest)?),
            3 => SamplingContent::ToolUse(Deserialize::deserialize(rest)?),
            _ => SamplingContent::ToolResult(Deserialize::deserialize(rest)?),
        };
        let extra = match &block {
            SamplingContent::Text(b) => &b.extra,
            SamplingContent::Image(b) | SamplingContent::Audio(b) => &b.extra,
            SamplingContent::ToolUse(b) => &b.extra,
            SamplingContent::ToolResult(b) => &b.extra,
        };
        refuse_repeated_tag(extra)?;
        Ok(block)
    }
}

impl<'de> Deserialize<'de> for SamplingContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize(deserializer)
    }
}

/// A second `type` member after a leading one lands in the variant's unknown members; the
/// derive refuses such an object, and so does this reader.
fn refuse_repeated_tag<E: de::Error>(extra: &Extra) -> Result<(), E> {
    match extra.contains_key(TAG) {
        true => Err(E::duplicate_field(TAG)),
        false => Ok(()),
    }
}

#[cfg(test)]
#[path = "tagged_tests.rs"]
pub(super) mod tests;
