//! Trace context in `params._meta`: W3C `traceparent` and `tracestate`, unprefixed, as the
//! MCP semantic conventions ask. Extraction gives the remote parent of a server span;
//! injection writes the context of a client span into a request before it is sent.

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry::Context;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use serde_json::{Map, Value};

/// The `_meta` key of the protocol version a 2026-07-28 request names.
const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

struct MetaReader<'a>(&'a Map<String, Value>);

impl Extractor for MetaReader<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key)?.as_str()
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

struct MetaWriter<'a>(&'a mut Map<String, Value>);

impl Injector for MetaWriter<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), Value::String(value));
    }
}

/// The remote context `params._meta` carries, when it carries a valid one.
pub(crate) fn extract(params: &Value) -> Option<Context> {
    let meta = params.get("_meta")?.as_object()?;
    let cx = TraceContextPropagator::new().extract(&MetaReader(meta));
    cx.span().span_context().is_valid().then_some(cx)
}

/// The protocol version `params._meta` names (2026-07-28 requests carry it).
pub(crate) fn protocol_version(params: &Value) -> Option<&str> {
    params.get("_meta")?.get(PROTOCOL_VERSION_KEY)?.as_str()
}

/// Writes `cx` into `params._meta` (creating both when absent). `params` that is not an
/// object (or null) is left alone.
pub fn inject(cx: &Context, params: &mut Value) {
    if params.is_null() {
        *params = Value::Object(Map::new());
    }
    let Some(object) = params.as_object_mut() else {
        return;
    };
    let meta = object
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(meta) = meta.as_object_mut() {
        TraceContextPropagator::new().inject_context(cx, &mut MetaWriter(meta));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_context_written_into_meta_reads_back() {
        let params = json!({"name": "add", "_meta": {
            "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "tracestate": "rojo=00f067aa0ba902b7"
        }});
        let cx = extract(&params).expect("a valid context");
        let mut out = json!({"name": "add"});
        inject(&cx, &mut out);
        assert_eq!(out["_meta"]["traceparent"], params["_meta"]["traceparent"]);
        assert_eq!(out["_meta"]["tracestate"], params["_meta"]["tracestate"]);
        assert!(extract(&json!({"_meta": {"traceparent": "garbage"}})).is_none());
        assert!(extract(&json!({})).is_none());
    }
}
