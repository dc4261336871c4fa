//! [`HttpText`]: the text of a header name or value (or a request target), cheap to make from
//! a literal, from an owned `String`, or as a slice of one buffer shared by all the fields of a
//! request head (so an adapter copies a head's header text once, not once per field).

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Deref, Range};
use std::sync::Arc;

/// Immutable UTF-8 text of an HTTP field. Cloning never copies the text: a literal is a
/// pointer, owned text is cloned as owned, and a slice of a shared buffer bumps its count.
/// Compares, hashes and prints as the `str` it holds.
#[derive(Clone)]
pub struct HttpText(Repr);

#[derive(Clone)]
enum Repr {
    /// A literal: nothing allocated.
    Static(&'static str),
    /// Text of its own.
    Owned(String),
    /// `start..end` of a buffer shared with other fields of the same head.
    Shared {
        buf: Arc<str>,
        start: usize,
        end: usize,
    },
}

impl HttpText {
    /// A literal, with nothing allocated.
    pub const fn from_static(text: &'static str) -> Self {
        HttpText(Repr::Static(text))
    }

    /// The `range` of `buf`, sharing `buf`; `None` when `range` is not a `str` slice of it
    /// (out of bounds or off a character boundary).
    pub fn shared(buf: &Arc<str>, range: Range<usize>) -> Option<Self> {
        buf.get(range.clone())?;
        Some(HttpText(Repr::Shared {
            buf: Arc::clone(buf),
            start: range.start,
            end: range.end,
        }))
    }

    /// The text, when it is a literal (an adapter can hand it on without copying).
    pub fn as_static(&self) -> Option<&'static str> {
        match self.0 {
            Repr::Static(s) => Some(s),
            _ => None,
        }
    }

    /// The length of the text in bytes (read without slicing the shared buffer).
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Static(s) => s.len(),
            Repr::Owned(s) => s.len(),
            Repr::Shared { start, end, .. } => end - start,
        }
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Static(s) => s,
            Repr::Owned(s) => s,
            // Checked when made: a char-boundary range within the buffer.
            Repr::Shared { buf, start, end } => buf.get(*start..*end).unwrap_or_default(),
        }
    }
}

impl Deref for HttpText {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for HttpText {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for HttpText {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl Default for HttpText {
    fn default() -> Self {
        HttpText::from_static("")
    }
}

impl From<&str> for HttpText {
    /// Copies the text (use [`HttpText::from_static`] for a literal without copying).
    fn from(text: &str) -> Self {
        HttpText(Repr::Owned(text.to_owned()))
    }
}

impl From<Arc<str>> for HttpText {
    fn from(text: Arc<str>) -> Self {
        let end = text.len();
        HttpText(Repr::Shared {
            buf: text,
            start: 0,
            end,
        })
    }
}

impl From<String> for HttpText {
    fn from(text: String) -> Self {
        HttpText(Repr::Owned(text))
    }
}

impl From<&String> for HttpText {
    fn from(text: &String) -> Self {
        HttpText(Repr::Owned(text.clone()))
    }
}

impl From<std::borrow::Cow<'_, str>> for HttpText {
    fn from(text: std::borrow::Cow<'_, str>) -> Self {
        HttpText(Repr::Owned(text.into_owned()))
    }
}

impl From<HttpText> for String {
    fn from(text: HttpText) -> Self {
        match text.0 {
            Repr::Owned(s) => s,
            _ => text.as_str().to_owned(),
        }
    }
}

impl PartialEq for HttpText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for HttpText {}

impl PartialEq<str> for HttpText {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for HttpText {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for HttpText {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl Hash for HttpText {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for HttpText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for HttpText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_reads_and_compares_as_its_text() {
        let buf: Arc<str> = Arc::from("acceptapplication/jsonµ");
        let shared = HttpText::shared(&buf, 6..22).expect("in bounds");
        assert_eq!(shared, "application/json");
        assert_eq!(HttpText::from_static("accept"), HttpText::from("accept"));
        assert_eq!(HttpText::from(String::from("x")).as_str(), "x");
        assert!(HttpText::shared(&buf, 22..23).is_none(), "inside 'µ'");
        assert!(HttpText::shared(&buf, 20..40).is_none(), "out of bounds");
        assert_eq!(
            format!("{shared} {shared:?}"),
            "application/json \"application/json\""
        );
    }
}
