//! The response header fields the HTTP+SSE client and the auto-detecting client read, found
//! in one pass over the head.

/// The header fields the client transports read on a response head, found in one pass (the
/// shape of the server side's request `KnownFields`). The first field of a name wins; names
/// compare without regard to ASCII case.
#[derive(Default)]
pub(super) struct ResponseFields<'a> {
    pub(super) content_type: Option<&'a str>,
    pub(super) location: Option<&'a str>,
    pub(super) session_id: Option<&'a str>,
}

impl<'a> ResponseFields<'a> {
    /// The known fields among `headers`.
    pub(super) fn of(headers: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut known = ResponseFields::default();
        for (name, value) in headers {
            // The length picks the candidate without reading the name.
            let (wanted, slot) = match name.len() {
                8 => ("location", &mut known.location),
                12 => ("content-type", &mut known.content_type),
                14 => ("mcp-session-id", &mut known.session_id),
                _ => continue,
            };
            if name.eq_ignore_ascii_case(wanted) {
                slot.get_or_insert(value);
            }
        }
        known
    }
}

#[cfg(test)]
mod tests {
    use super::ResponseFields;

    #[test]
    fn the_first_field_of_each_name_wins_in_any_case() {
        let fields = ResponseFields::of([
            ("Content-Type", "text/event-stream"),
            ("LOCATION", "/a"),
            ("content-type", "application/json"),
            ("Mcp-Session-Id", "s1"),
            ("location", "/b"),
            ("content-typo", "x"),
        ]);
        assert_eq!(fields.content_type, Some("text/event-stream"));
        assert_eq!(fields.location, Some("/a"));
        assert_eq!(fields.session_id, Some("s1"));
        let none = ResponseFields::of([("x-location", "/c")]);
        assert_eq!(
            (none.content_type, none.location, none.session_id),
            (None, None, None)
        );
    }
}
