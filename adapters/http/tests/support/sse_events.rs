//! The events of raw SSE text, for tests that read a stream as text (shared by the HTTP
//! server's tests and the command line's scale-out tests).

/// The events of an SSE text that carry data, as (id, data), in order (a priming event,
/// which carries none, is left out).
pub fn sse_events(text: &str) -> Vec<(String, String)> {
    let mut events = Vec::new();
    let mut id = String::new();
    for line in text.lines() {
        if let Some(value) = line.strip_prefix("id: ") {
            id = value.to_owned();
        } else if let Some(data) = line.strip_prefix("data: ").filter(|d| !d.is_empty()) {
            events.push((std::mem::take(&mut id), data.to_owned()));
        }
    }
    events
}
