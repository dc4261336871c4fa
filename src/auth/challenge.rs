//! Parses `WWW-Authenticate` header values (RFC 9110 §11.6.1) into challenges and reads the
//! Bearer parameters MCP uses (RFC 6750 §3, RFC 9728 §5.1): `resource_metadata`, `scope`,
//! `error`, `error_description`.
//!
//! A value may hold several challenges (`Basic realm="a", Bearer scope="b"`); parameter values
//! are tokens or quoted strings with backslash escapes. Bounded: a value over
//! [`MAX_HEADER_LEN`] bytes or more than [`MAX_CHALLENGE_PARAMS`] parameters is cut off, never a panic.

/// The longest header value parsed; the rest is ignored.
pub(crate) const MAX_HEADER_LEN: usize = 16 * 1024;
/// The most parameters kept over all challenges of one value.
pub const MAX_CHALLENGE_PARAMS: usize = 64;

/// One challenge: an auth scheme and its parameters (names lowercased).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Challenge {
    /// The auth scheme as sent (compare case-insensitively).
    pub(crate) scheme: String,
    /// `(name, value)` pairs, names lowercased, quoted values unescaped.
    pub(crate) params: Vec<(String, String)>,
}

impl Challenge {
    /// The value of parameter `name` (case-insensitive), if present.
    #[must_use]
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Whether this is a Bearer challenge.
    #[must_use]
    pub(crate) fn is_bearer(&self) -> bool {
        self.scheme.eq_ignore_ascii_case("bearer")
    }
}

/// The Bearer parameters an MCP client acts on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BearerChallenge {
    /// RFC 9728 protected-resource metadata URL.
    pub resource_metadata: Option<String>,
    /// Space-separated scopes the resource asks for.
    pub scope: Option<String>,
    /// RFC 6750 error code (`invalid_token`, `insufficient_scope`, ...).
    pub error: Option<String>,
    /// Human-readable error description.
    pub error_description: Option<String>,
}

impl BearerChallenge {
    /// Finds the first Bearer challenge in any of `header_values` (the `WWW-Authenticate`
    /// header may repeat).
    #[must_use]
    pub fn find<'a>(header_values: impl IntoIterator<Item = &'a str>) -> Option<Self> {
        header_values
            .into_iter()
            .flat_map(parse_challenges)
            .find(Challenge::is_bearer)
            .map(|c| Self {
                resource_metadata: c.param("resource_metadata").map(str::to_owned),
                scope: c.param("scope").map(str::to_owned),
                error: c.param("error").map(str::to_owned),
                error_description: c.param("error_description").map(str::to_owned),
            })
    }
}

fn is_tchar(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~/".contains(&c)
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn skip_ws(&mut self) {
        while self
            .bytes
            .get(self.pos)
            .is_some_and(|b| *b == b' ' || *b == b'\t')
        {
            self.pos += 1;
        }
    }

    fn skip_ws_and_commas(&mut self) {
        while self
            .bytes
            .get(self.pos)
            .is_some_and(|b| b" \t,".contains(b))
        {
            self.pos += 1;
        }
    }

    fn token(&mut self) -> &str {
        let start = self.pos;
        while self.bytes.get(self.pos).is_some_and(|b| is_tchar(*b)) {
            self.pos += 1;
        }
        let token = self.bytes.get(start..self.pos).unwrap_or_default();
        std::str::from_utf8(token).unwrap_or("")
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn quoted(&mut self) -> String {
        let mut out = Vec::new();
        self.pos += 1; // opening quote
        while let Some(b) = self.peek() {
            self.pos += 1;
            match b {
                b'"' => break,
                b'\\' => {
                    if let Some(escaped) = self.peek() {
                        out.push(escaped);
                        self.pos += 1;
                    }
                }
                other => out.push(other),
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// Parses one `WWW-Authenticate` value into its challenges. Malformed parts are skipped.
#[must_use]
pub(crate) fn parse_challenges(value: &str) -> Vec<Challenge> {
    let bytes = value.as_bytes();
    let bytes = bytes.get(..MAX_HEADER_LEN).unwrap_or(bytes);
    let mut cur = Cursor { bytes, pos: 0 };
    let mut challenges: Vec<Challenge> = Vec::new();
    let mut params = 0;
    while cur.pos < bytes.len() && params < MAX_CHALLENGE_PARAMS {
        cur.skip_ws_and_commas();
        let start = cur.pos;
        let name = cur.token().to_owned();
        if name.is_empty() {
            cur.pos = (start + 1).max(cur.pos); // skip a stray byte
            continue;
        }
        cur.skip_ws();
        if cur.peek() == Some(b'=') {
            cur.pos += 1;
            cur.skip_ws();
            let value = if cur.peek() == Some(b'"') {
                cur.quoted()
            } else {
                cur.token().to_owned()
            };
            if let Some(current) = challenges.last_mut() {
                current.params.push((name.to_ascii_lowercase(), value));
                params += 1;
            }
        } else {
            challenges.push(Challenge {
                scheme: name,
                params: Vec::new(),
            });
        }
    }
    challenges
}
