//! Reading a finished span's attributes.

use opentelemetry::Value as OtelValue;
use opentelemetry_sdk::trace::SpanData;

/// The value of the attribute `key`, when the span has it.
pub fn attr<'a>(span: &'a SpanData, key: &str) -> Option<&'a OtelValue> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

/// The attribute `key` as text.
pub fn text(span: &SpanData, key: &str) -> Option<String> {
    attr(span, key).map(|v| v.as_str().into_owned())
}
