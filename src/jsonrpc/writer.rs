//! A writer of one JSON value, straight into a byte buffer, without serde: objects, arrays,
//! keys, strings, numbers, booleans, null and embedded [`RawJson`] values, written as
//! serde_json's compact output writes them.
//!
//! The writer is valid by construction: it follows its position in the value with a small
//! state machine (the open containers as a bit stack, and whether the innermost one expects a
//! first item, a further item or the value of a key). A call that would make the text
//! invalid (a key outside an object, a value where a key belongs, a close that does not match,
//! nesting past [`JsonWriter::MAX_DEPTH`], a non-finite float, anything after the value is complete)
//! marks the writer failed; every later call is ignored, and the owner of the buffer (the
//! session's `respond_with`) drops what was written. Errors are sticky rather than returned
//! by each call so a value is written as a plain chain of calls.

use super::encode::write_json_string;
use super::RawJson;

/// What comes next where the writer is: the innermost open container's kind and whether it
/// expects its first item, a further one (after a comma) or the value of the key just
/// written; or the top level's one value, or nothing. One comparison tells a call whether it
/// is allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// The top-level value: nothing written yet.
    Top,
    /// An array's first element.
    ArrayFirst,
    /// An array's further element, after a comma.
    ArrayNext,
    /// An object's first key.
    ObjectFirst,
    /// An object's further key, after a comma.
    ObjectNext,
    /// The value of the key just written.
    ObjectValue,
    /// Nothing: the top-level value is complete.
    Done,
    /// Nothing: a call was refused, and every later call is ignored.
    Failed,
}

/// Writes one JSON value into a buffer; see the module docs. A writer is handed out by
/// [`Session::respond_with`](crate::session::Session::respond_with).
///
/// ```
/// # use mcp_sansio::jsonrpc::JsonWriter;
/// fn echo_result(w: &mut JsonWriter<'_>, text: &str) {
///     w.begin_object().key("content").begin_array();
///     w.begin_object().key("type").string("text").key("text").string(text).end_object();
///     w.end_array().key("isError").bool(false).end_object();
/// }
/// ```
#[derive(Debug)]
pub struct JsonWriter<'a> {
    out: &'a mut Vec<u8>,
    /// Bit `k` is 1 when the open container at depth `k + 1` is an object.
    objects: u64,
    /// How many containers are open.
    depth: u32,
    slot: Slot,
}

impl<'a> JsonWriter<'a> {
    /// How deep containers may nest: the open containers are one bit each of a `u64`, and the
    /// decoder's fast path reads as deep (a deeper text is still read, by serde).
    pub const MAX_DEPTH: u32 = 64;

    /// A writer appending one value to `out`.
    #[inline]
    pub(crate) fn new(out: &'a mut Vec<u8>) -> Self {
        JsonWriter {
            out,
            objects: 0,
            depth: 0,
            slot: Slot::Top,
        }
    }

    /// Whether exactly one whole value was written and no call was refused.
    #[inline]
    pub(crate) fn is_complete(&self) -> bool {
        self.slot == Slot::Done
    }

    /// Opens an object (a value).
    #[inline]
    pub fn begin_object(&mut self) -> &mut Self {
        if self.open_container(true) {
            self.out.push(b'{');
        }
        self
    }

    /// Closes the innermost container, which must be an object not waiting for a key's value.
    #[inline]
    pub fn end_object(&mut self) -> &mut Self {
        if matches!(self.slot, Slot::ObjectFirst | Slot::ObjectNext) {
            self.out.push(b'}');
            self.close_container();
        } else {
            self.slot = Slot::Failed;
        }
        self
    }

    /// Opens an array (a value).
    #[inline]
    pub fn begin_array(&mut self) -> &mut Self {
        if self.open_container(false) {
            self.out.push(b'[');
        }
        self
    }

    /// Closes the innermost container, which must be an array.
    #[inline]
    pub fn end_array(&mut self) -> &mut Self {
        if matches!(self.slot, Slot::ArrayFirst | Slot::ArrayNext) {
            self.out.push(b']');
            self.close_container();
        } else {
            self.slot = Slot::Failed;
        }
        self
    }

    /// Writes a member's name (escaped); the member's value comes next. Only inside an object,
    /// where a name is expected.
    #[inline]
    pub fn key(&mut self, name: &str) -> &mut Self {
        match self.slot {
            Slot::ObjectFirst => {}
            Slot::ObjectNext => self.out.push(b','),
            _ => {
                self.slot = Slot::Failed;
                return self;
            }
        }
        write_json_string(self.out, name);
        self.out.push(b':');
        self.slot = Slot::ObjectValue;
        self
    }

    /// Writes a string value (escaped as serde_json escapes it).
    #[inline]
    pub fn string(&mut self, text: &str) -> &mut Self {
        if self.begin_value() {
            write_json_string(self.out, text);
            self.end_value();
        }
        self
    }

    /// Writes an integer value.
    #[inline]
    pub fn i64(&mut self, value: i64) -> &mut Self {
        self.integer(value)
    }

    /// Writes an unsigned integer value.
    #[inline]
    pub fn u64(&mut self, value: u64) -> &mut Self {
        self.integer(value)
    }

    /// Writes a float value as serde_json writes an `f64` (shortest round-trip form, `.0` on
    /// whole numbers). JSON has no NaN or infinity: those fail the writer.
    pub fn f64(&mut self, value: f64) -> &mut Self {
        if !value.is_finite() {
            self.slot = Slot::Failed;
        } else if self.begin_value() {
            // A finite f64 always serialises, and writing into a Vec cannot fail; serde_json
            // formats it, so the text is the one `respond_serialize` would write.
            let written = serde_json::to_writer(&mut *self.out, &value);
            debug_assert!(written.is_ok());
            self.end_value();
        }
        self
    }

    /// Writes `true` or `false`.
    #[inline]
    pub fn bool(&mut self, value: bool) -> &mut Self {
        self.literal(if value { b"true" } else { b"false" })
    }

    /// Writes `null`.
    #[inline]
    pub fn null(&mut self) -> &mut Self {
        self.literal(b"null")
    }

    /// Writes a JSON value as it is (it is valid JSON by construction), kept on one line: a
    /// raw CR or LF in it (insignificant whitespace) is written as a space, as
    /// `respond_serialize` writes raw values.
    pub fn raw(&mut self, value: &RawJson) -> &mut Self {
        if self.begin_value() {
            if value.is_one_line() {
                self.out.extend_from_slice(value.as_bytes());
            } else {
                super::push_on_one_line(self.out, value.as_bytes());
            }
            self.end_value();
        }
        self
    }

    fn integer(&mut self, value: impl itoa::Integer) -> &mut Self {
        if self.begin_value() {
            let mut digits = itoa::Buffer::new();
            self.out.extend_from_slice(digits.format(value).as_bytes());
            self.end_value();
        }
        self
    }

    #[inline]
    fn literal(&mut self, text: &[u8]) -> &mut Self {
        if self.begin_value() {
            self.out.extend_from_slice(text);
            self.end_value();
        }
        self
    }

    /// Checks that a value may start here and writes the comma before it; `false` (and the
    /// writer failed) when it may not.
    #[inline]
    fn begin_value(&mut self) -> bool {
        match self.slot {
            Slot::Top | Slot::ArrayFirst | Slot::ObjectValue => true,
            Slot::ArrayNext => {
                self.out.push(b',');
                true
            }
            _ => {
                self.slot = Slot::Failed;
                false
            }
        }
    }

    /// A value (scalar or container) ended at the current depth.
    #[inline]
    fn end_value(&mut self) {
        self.slot = match self.depth {
            0 => Slot::Done,
            depth if self.objects >> (depth - 1) & 1 == 1 => Slot::ObjectNext,
            _ => Slot::ArrayNext,
        };
    }

    /// Starts a container value of the kind given: one level deeper, expecting its first item.
    /// The caller writes the opening bracket.
    #[inline]
    fn open_container(&mut self, object: bool) -> bool {
        if self.depth == Self::MAX_DEPTH {
            self.slot = Slot::Failed;
            return false;
        }
        if !self.begin_value() {
            return false;
        }
        let bit = 1 << self.depth;
        self.depth += 1;
        if object {
            self.objects |= bit;
            self.slot = Slot::ObjectFirst;
        } else {
            self.objects &= !bit;
            self.slot = Slot::ArrayFirst;
        }
        true
    }

    /// Ends the innermost container (the caller checked it may end, so one is open).
    #[inline]
    fn close_container(&mut self) {
        self.depth = self.depth.saturating_sub(1);
        self.end_value();
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
