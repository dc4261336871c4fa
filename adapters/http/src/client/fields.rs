//! The header fields a client sends again and again (`Accept`, `Content-Type`, the session id,
//! the protocol version, a bearer token), checked and converted to hyper's types once per
//! client instead of once per request: a request clones the cached name and value (a value's
//! bytes are shared, not copied).

use std::cell::RefCell;

use hyper::header::{HeaderName, HeaderValue};

/// Distinct fields kept at most; past it a field is converted per request (a server that
/// keeps changing a value cannot grow the cache).
const MAX_FIELDS: usize = 16;

struct Field {
    name: &'static str,
    value: String,
    header: (HeaderName, HeaderValue),
}

/// Fields converted so far.
#[derive(Default)]
pub(crate) struct FieldCache {
    fields: RefCell<Vec<Field>>,
}

impl FieldCache {
    /// `name: value` as hyper's types, or why it is not a valid field.
    pub(crate) fn get(
        &self,
        name: &'static str,
        value: &str,
    ) -> Result<(HeaderName, HeaderValue), String> {
        let mut fields = self.fields.borrow_mut();
        if let Some(field) = fields.iter().find(|f| f.name == name && f.value == value) {
            return Ok(field.header.clone());
        }
        let header = (
            HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| format!("invalid request: header name {name}: {e}"))?,
            HeaderValue::from_str(value)
                .map_err(|e| format!("invalid request: header {name}: {e}"))?,
        );
        if fields.len() < MAX_FIELDS {
            fields.push(Field {
                name,
                value: value.to_owned(),
                header: header.clone(),
            });
        }
        Ok(header)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cached field comes back equal (lowercase name, same value); an invalid one is an
    /// error every time; past the bound fields are still converted.
    #[test]
    fn fields_are_converted_once_and_checked() {
        let cache = FieldCache::default();
        let (name, value) = cache.get("Mcp-Session-Id", "abc").unwrap();
        assert_eq!(name.as_str(), "mcp-session-id");
        assert_eq!(value, "abc");
        assert_eq!(cache.get("Mcp-Session-Id", "abc").unwrap().1, "abc");
        assert_eq!(cache.get("Mcp-Session-Id", "def").unwrap().1, "def");
        assert!(cache.get("Mcp-Session-Id", "bad\nvalue").is_err());
        assert!(cache.get("bad name", "x").is_err());
        for i in 0..2 * MAX_FIELDS {
            let v = format!("v{i}");
            assert_eq!(cache.get("X-Test", &v).unwrap().1, v.as_str());
        }
        assert_eq!(cache.fields.borrow().len(), MAX_FIELDS);
    }
}
