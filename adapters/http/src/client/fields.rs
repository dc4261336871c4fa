//! The header fields a client sends again and again (`Accept`, `Content-Type`, the session id,
//! the protocol version, a bearer token), checked and converted to hyper's types once per
//! client instead of once per request: a request clones the cached name and value (a value's
//! bytes are shared, not copied). Whole header maps are kept too: requests of one kind carry
//! the same fields (every POST of a session the same four), so a request whose fields equal
//! a kept map's gets a clone of that map, without hashing and inserting each field again.

use std::cell::RefCell;

use hyper::header::{HeaderName, HeaderValue};
use hyper::HeaderMap;
use mcp_sansio::http::HttpText;

/// Distinct fields kept at most; past it a field is converted per request (a server that
/// keeps changing a value cannot grow the cache).
const MAX_FIELDS: usize = 16;

/// Header maps kept at most (a session's POST, its GET and its DELETE, and the first POST,
/// which has no session id yet); the oldest goes first.
const MAX_HEADS: usize = 4;

/// A header map and the fields it was built from.
struct Head {
    fields: Vec<(&'static str, HttpText)>,
    authorization: Option<String>,
    with_body: bool,
    map: HeaderMap,
}

impl Head {
    fn matches(
        &self,
        fields: &[(&'static str, HttpText)],
        authorization: Option<&str>,
        with_body: bool,
    ) -> bool {
        self.with_body == with_body
            && self.authorization.as_deref() == authorization
            && self.fields.len() == fields.len()
            && self
                .fields
                .iter()
                .zip(fields)
                .all(|((n, v), (name, value))| n == name && v.as_str() == value.as_str())
    }
}

/// Header maps built so far, by the fields they hold.
#[derive(Default)]
pub(crate) struct HeadCache {
    heads: RefCell<Vec<Head>>,
}

impl HeadCache {
    /// The map for `fields` (and `authorization`, and whether the request has a body): a
    /// clone of a kept one, or one `build` makes, then kept.
    pub(crate) fn get(
        &self,
        fields: &[(&'static str, HttpText)],
        authorization: Option<&str>,
        with_body: bool,
        build: impl FnOnce() -> Result<HeaderMap, String>,
    ) -> Result<HeaderMap, String> {
        let mut heads = self.heads.borrow_mut();
        if let Some(head) = heads
            .iter()
            .find(|h| h.matches(fields, authorization, with_body))
        {
            return Ok(head.map.clone());
        }
        let map = build()?;
        if heads.len() >= MAX_HEADS {
            heads.remove(0);
        }
        heads.push(Head {
            fields: fields.to_vec(),
            authorization: authorization.map(str::to_owned),
            with_body,
            map: map.clone(),
        });
        Ok(map)
    }
}

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

    /// A kept map comes back for equal fields only (names, values, authorization), and the
    /// cache stays bounded.
    #[test]
    fn header_maps_are_reused_for_equal_fields_only() {
        let cache = HeadCache::default();
        let built = std::cell::Cell::new(0);
        let build = |fields: &[(&'static str, HttpText)]| {
            let fields = fields.to_vec();
            let built = &built;
            move || {
                built.set(built.get() + 1);
                let mut map = HeaderMap::new();
                for (name, value) in &fields {
                    map.append(*name, HeaderValue::from_str(value).unwrap());
                }
                Ok(map)
            }
        };
        let post = [
            ("accept", HttpText::from_static("a")),
            ("mcp-session-id", "s1".into()),
        ];
        let first = cache.get(&post, None, true, build(&post)).unwrap();
        let again = cache.get(&post, None, true, build(&post)).unwrap();
        assert_eq!(first, again);
        assert_eq!(built.get(), 1);
        let other = [
            ("accept", HttpText::from_static("a")),
            ("mcp-session-id", "s2".into()),
        ];
        let map = cache.get(&other, None, true, build(&other)).unwrap();
        assert_eq!(map["mcp-session-id"], "s2");
        assert_eq!(built.get(), 2);
        cache
            .get(&post, Some("Bearer t"), true, build(&post))
            .unwrap();
        assert_eq!(built.get(), 3);
        cache
            .get(&post[..1], None, true, build(&post[..1]))
            .unwrap();
        assert_eq!(built.get(), 4);
        cache.get(&post, None, false, build(&post)).unwrap();
        assert_eq!(
            built.get(),
            5,
            "a request without a body has a map of its own"
        );
        for i in 0..3 * MAX_HEADS {
            let fields = [("x-n", HttpText::from(i.to_string()))];
            let map = cache.get(&fields, None, true, build(&fields)).unwrap();
            assert_eq!(map["x-n"], i.to_string().as_str());
        }
        assert_eq!(cache.heads.borrow().len(), MAX_HEADS);
        let failed = cache.get(&[("x-bad", "v".into())], None, true, || Err("no".into()));
        assert!(failed.is_err());
    }

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
