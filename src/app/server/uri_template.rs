//! RFC 6570 level-1 URI templates (`test://template/{id}/data`): parsing and matching.
//!
//! Level 1 is simple string expansion: each `{name}` becomes the percent-encoded value, where
//! everything but unreserved characters is encoded. Matching is the inverse: a variable matches a
//! non-empty run of characters up to the next literal of the template, never crossing a `/`,
//! `?` or `#` (an expanded value cannot contain them raw), and the captured text is
//! percent-decoded. Templates with operators (`{+x}`, `{?q}`, …) are refused at parse time.

use std::fmt;

use percent_encoding::percent_decode_str;

/// A parsed level-1 URI template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UriTemplate {
    text: String,
    parts: Vec<Part>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(String),
    Variable(String),
}

/// Why a template could not be parsed (given to users as `BuildError::InvalidTemplate`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TemplateError(pub(crate) String);

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid URI template: {}", self.0)
    }
}

impl std::error::Error for TemplateError {}

/// The most variables a template may have (matching cost is linear in them).
const MAX_VARIABLES: usize = 32;

impl UriTemplate {
    /// Parses a level-1 template.
    pub(crate) fn parse(text: &str) -> Result<Self, TemplateError> {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some((literal, after)) = rest.split_once('{') {
            if !literal.is_empty() {
                parts.push(Part::Literal(check_literal(literal)?));
            }
            let (name, after) = after
                .split_once('}')
                .ok_or_else(|| TemplateError("unclosed '{'".into()))?;
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return Err(TemplateError(format!(
                    "variable {{{name}}} is not a level-1 variable name"
                )));
            }
            if matches!(parts.last(), Some(Part::Variable(_))) {
                return Err(TemplateError(
                    "two adjacent variables cannot be matched".into(),
                ));
            }
            parts.push(Part::Variable(name.to_owned()));
            rest = after;
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(check_literal(rest)?));
        }
        let vars = parts
            .iter()
            .filter(|p| matches!(p, Part::Variable(_)))
            .count();
        if vars > MAX_VARIABLES {
            return Err(TemplateError(format!(
                "more than {MAX_VARIABLES} variables"
            )));
        }
        Ok(UriTemplate {
            text: text.to_owned(),
            parts,
        })
    }

    /// The template text as given.
    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// The variable names, in order.
    #[cfg(test)]
    pub(crate) fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Variable(v) => Some(v.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// Expands the template; a variable missing from `value_of` expands to nothing (the
    /// inverse of `matches`, which the tests check).
    #[cfg(test)]
    pub(crate) fn expand<'a>(&self, value_of: impl Fn(&str) -> Option<&'a str>) -> String {
        let mut out = String::with_capacity(self.text.len());
        for part in &self.parts {
            match part {
                Part::Literal(l) => out.push_str(l),
                Part::Variable(v) => {
                    if let Some(value) = value_of(v) {
                        percent_encode_into(&mut out, value);
                    }
                }
            }
        }
        out
    }

    /// Matches `uri` against the template, returning `(name, decoded value)` pairs.
    pub(crate) fn matches(&self, uri: &str) -> Option<Vec<(String, String)>> {
        let mut captured = Vec::new();
        let mut rest = uri;
        let mut parts = self.parts.iter().peekable();
        while let Some(part) = parts.next() {
            match part {
                Part::Literal(l) => rest = rest.strip_prefix(l.as_str())?,
                Part::Variable(name) => {
                    let end = match parts.peek() {
                        Some(Part::Literal(next)) => rest.find(next.as_str())?,
                        _ => rest.len(),
                    };
                    let (raw, tail) = rest.split_at_checked(end)?;
                    if raw.is_empty() || raw.contains(['/', '?', '#']) {
                        return None;
                    }
                    captured.push((name.clone(), percent_decode(raw)?));
                    rest = tail;
                }
            }
        }
        rest.is_empty().then_some(captured)
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn check_literal(s: &str) -> Result<String, TemplateError> {
    if s.contains('}') {
        return Err(TemplateError("unmatched '}'".into()));
    }
    Ok(s.to_owned())
}

#[cfg(test)]
fn percent_encode_into(out: &mut String, value: &str) {
    out.extend(percent_encoding::utf8_percent_encode(
        value,
        crate::encoding::COMPONENT,
    ));
}

/// Strict decoding (RFC 3986 §2.1): every `%` starts a two-hex-digit escape and the bytes
/// are UTF-8, or the captured text is no value of the variable.
fn percent_decode(s: &str) -> Option<String> {
    let mut escapes = s.split('%');
    escapes.next();
    let well_formed = escapes.all(|after| {
        let mut hex = after.bytes().take(2);
        hex.len() == 2 && hex.all(|b| b.is_ascii_hexdigit())
    });
    if !well_formed {
        return None;
    }
    percent_decode_str(s)
        .decode_utf8()
        .ok()
        .map(std::borrow::Cow::into_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_fixture_template() {
        let t = UriTemplate::parse("test://template/{id}/data").unwrap();
        assert_eq!(
            t.matches("test://template/123/data"),
            Some(vec![("id".into(), "123".into())])
        );
        assert_eq!(t.matches("test://template//data"), None);
        assert_eq!(t.matches("test://template/1/2/data"), None);
        assert_eq!(t.matches("test://template/123/datax"), None);
        assert_eq!(t.matches("test://other/123/data"), None);
    }

    #[test]
    fn expansion_and_matching_are_inverse() {
        let t = UriTemplate::parse("file:///{dir}/{name}.txt").unwrap();
        let uri = t.expand(|v| Some(if v == "dir" { "a b/c" } else { "é" }));
        assert_eq!(uri, "file:///a%20b%2Fc/%C3%A9.txt");
        assert_eq!(
            t.matches(&uri),
            Some(vec![
                ("dir".into(), "a b/c".into()),
                ("name".into(), "é".into())
            ])
        );
    }

    #[test]
    fn trailing_variable_takes_the_rest() {
        let t = UriTemplate::parse("users://{id}").unwrap();
        assert_eq!(
            t.matches("users://42"),
            Some(vec![("id".into(), "42".into())])
        );
        assert_eq!(t.variables().collect::<Vec<_>>(), vec!["id"]);
    }

    #[test]
    fn rejects_operators_and_malformed_templates() {
        for bad in ["a/{+x}", "a/{?q}", "a/{x", "a/x}", "a/{}", "{a}{b}"] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn bad_percent_encoding_does_not_match() {
        let t = UriTemplate::parse("x://{v}").unwrap();
        assert_eq!(t.matches("x://%zz"), None);
        assert_eq!(t.matches("x://%ff"), None, "not UTF-8 after decoding");
        for bad in ["x://%+f", "x://%-1", "x://%", "x://%é", "x://a%e"] {
            assert_eq!(t.matches(bad), None, "{bad:?}");
        }
        assert_eq!(
            t.matches("x://%C3%A9é"),
            Some(vec![("v".to_owned(), "éé".to_owned())])
        );
    }
}
