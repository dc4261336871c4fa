//! Reuse of cacheable 2026-07-28 results: a result that carries `ttlMs` > 0 may be reused for
//! the same method and params until `ttlMs` has passed (the clock comes in as an argument);
//! a list change or resource update seen on a listen stream makes the matching entries stale
//! at once. Both `cacheScope` values are kept: this cache belongs to one client, which
//! `private` allows and `public` does not restrict further.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::ListenEvent;

/// Results kept at most; past it the entry closest to expiry leaves first.
pub const MAX_CACHED_RESULTS: usize = 1024;

/// Largest `ttlMs` honoured (a day): a server's larger number is read as this.
pub const MAX_TTL: Duration = Duration::from_secs(24 * 60 * 60);

struct Entry {
    method: String,
    uri: Option<String>,
    result: Value,
    expires: Instant,
}

/// A bounded map from (method, params) to a result and its expiry.
#[derive(Default)]
pub(crate) struct ResultCache {
    entries: HashMap<String, Entry>,
}

impl ResultCache {
    /// An empty cache.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The stored result of `method` with `params`, if still fresh at `now`.
    pub(crate) fn get(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<&Value>,
    ) -> Option<Value> {
        let key = cache_key(method, params);
        match self.entries.get(&key) {
            Some(entry) if now < entry.expires => Some(entry.result.clone()),
            Some(_) => {
                self.entries.remove(&key);
                None
            }
            None => None,
        }
    }

    /// Keeps `result` of `method` with `params` if it says it may be cached (`ttlMs` > 0).
    /// Returns whether it was kept.
    pub(crate) fn store(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<&Value>,
        result: &Value,
    ) -> bool {
        let Some(ttl_ms) = result.get("ttlMs").and_then(Value::as_u64) else {
            return false;
        };
        if ttl_ms == 0 {
            return false;
        }
        let ttl = Duration::from_millis(ttl_ms).min(MAX_TTL);
        self.entries.retain(|_, e| now < e.expires);
        let key = cache_key(method, params);
        if self.entries.len() >= MAX_CACHED_RESULTS && !self.entries.contains_key(&key) {
            let soonest = self
                .entries
                .iter()
                .min_by_key(|(_, e)| e.expires)
                .map(|(k, _)| k.clone());
            if let Some(soonest) = soonest {
                self.entries.remove(&soonest);
            }
        }
        let uri = (method == "resources/read")
            .then(|| params.and_then(|p| p.get("uri")).and_then(Value::as_str))
            .flatten()
            .map(str::to_owned);
        self.entries.insert(
            key,
            Entry {
                method: method.to_owned(),
                uri,
                result: result.clone(),
                expires: now + ttl,
            },
        );
        true
    }

    /// Drops what `event` made stale: every page of the changed list, or the reads of the
    /// updated resource. Returns how many entries left.
    pub(crate) fn invalidate(&mut self, event: &ListenEvent) -> usize {
        let before = self.entries.len();
        let lists = event.stale_lists();
        match event {
            ListenEvent::ResourceUpdated(uri) => self
                .entries
                .retain(|_, e| e.uri.as_deref() != Some(uri.as_str())),
            _ => self
                .entries
                .retain(|_, e| !lists.contains(&e.method.as_str())),
        }
        before - self.entries.len()
    }

    /// Drops everything.
    #[cfg(test)]
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
    }

    /// How many results are kept (fresh or not yet swept).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

/// The method and the params that select the result (not `_meta`, `inputResponses` or
/// `requestState`), with object keys sorted so member order does not matter.
fn cache_key(method: &str, params: Option<&Value>) -> String {
    let mut key = String::with_capacity(64);
    key.push_str(method);
    key.push('\n');
    if let Some(Value::Object(params)) = params {
        let mut selected = Map::new();
        for (name, value) in params {
            if !matches!(name.as_str(), "_meta" | "inputResponses" | "requestState") {
                selected.insert(name.clone(), value.clone());
            }
        }
        write_sorted(&Value::Object(selected), &mut key);
    }
    key
}

fn write_sorted(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut names: Vec<&String> = map.keys().collect();
            names.sort();
            out.push('{');
            for name in names {
                out.push_str(&Value::String(name.clone()).to_string());
                out.push(':');
                write_sorted(&map[name], out);
                out.push(',');
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for item in items {
                write_sorted(item, out);
                out.push(',');
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}
