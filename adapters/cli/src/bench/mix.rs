//! The method mix: parses `--mix ping=1,tool:NAME=3,read:URI=1` and `--args NAME=JSON`, turns
//! each entry into the request it sends, and hands out entries in proportion to their weights.
//!
//! The order is deterministic (smooth weighted round robin): `a=2,b=1` gives `a b a a b a …`,
//! so short runs already follow the proportions and two runs send the same sequence.

use mcp_sansio::jsonrpc::{self, RawJson};
use serde_json::{json, Map, Value};

/// The largest weight accepted for one entry (keeps the scheduler's sums far from overflow).
const MAX_WEIGHT: u32 = 1_000_000;
/// The most entries a mix may have (each has its own histogram in every session).
const MAX_ENTRIES: usize = 16;

/// What one mix entry asks the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// `ping`.
    Ping,
    /// `tools/call` of the named tool.
    Tool(String),
    /// `resources/read` of the URI.
    Read(String),
}

impl Op {
    /// How the entry is written in a mix (and in the report).
    pub(crate) fn label(&self) -> String {
        match self {
            Op::Ping => "ping".into(),
            Op::Tool(name) => format!("tool:{name}"),
            Op::Read(uri) => format!("read:{uri}"),
        }
    }

    /// The JSON-RPC method the entry calls.
    pub(crate) fn method(&self) -> &'static str {
        match self {
            Op::Ping => jsonrpc::PING,
            Op::Tool(_) => jsonrpc::TOOLS_CALL,
            Op::Read(_) => jsonrpc::RESOURCES_READ,
        }
    }
}

/// One entry of the mix, with its request params encoded once.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) op: Op,
    pub(crate) weight: u32,
    pub(crate) params: Option<RawJson>,
}

/// The parsed mix: entries in the order given.
#[derive(Clone, Debug)]
pub(crate) struct Mix {
    pub(crate) entries: Vec<Entry>,
}

impl Mix {
    /// Parses `spec` (comma-separated `OP[=WEIGHT]`, OP one of `ping`, `tool:NAME`,
    /// `read:URI`) with the tool arguments of `args` (each `NAME=JSON-object`).
    ///
    /// A weight is the part after the last `=` when it is all digits, so a URI that ends in
    /// `=digits` needs an explicit weight (`read:x://a?b=2=1`).
    pub(crate) fn parse(spec: &str, args: &[String]) -> Result<Self, String> {
        let arguments = parse_args(args)?;
        let mut entries = Vec::new();
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (op, weight) = parse_item(item)?;
            let params = match &op {
                Op::Ping => None,
                Op::Tool(name) => {
                    let mut params = json!({ "name": name });
                    if let Some(args) = arguments.iter().find(|(n, _)| n == name) {
                        params["arguments"] = Value::Object(args.1.clone());
                    }
                    Some(params)
                }
                Op::Read(uri) => Some(json!({ "uri": uri })),
            };
            let params = params
                .map(|p| RawJson::from_serialize(&p).map_err(|e| format!("{item}: {e}")))
                .transpose()?;
            if weight > 0 {
                entries.push(Entry { op, weight, params });
            }
        }
        if entries.is_empty() {
            return Err(format!(
                "--mix `{spec}` has no entry with a weight above 0 (e.g. `ping=1,tool:echo=3`)"
            ));
        }
        if entries.len() > MAX_ENTRIES {
            return Err(format!("--mix has more than {MAX_ENTRIES} entries"));
        }
        if let Some((name, _)) = arguments
            .iter()
            .find(|(name, _)| !entries.iter().any(|e| e.op == Op::Tool(name.clone())))
        {
            return Err(format!(
                "--args {name}=…: the mix has no `tool:{name}` entry"
            ));
        }
        Ok(Self { entries })
    }
}

fn parse_item(item: &str) -> Result<(Op, u32), String> {
    let (body, weight) = match item.rsplit_once('=') {
        Some((body, w)) if !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()) => {
            let weight: u32 =
                w.parse().ok().filter(|w| *w <= MAX_WEIGHT).ok_or_else(|| {
                    format!("--mix `{item}`: the weight must be 0..={MAX_WEIGHT}")
                })?;
            (body, weight)
        }
        _ => (item, 1),
    };
    let op = if body == "ping" {
        Op::Ping
    } else if let Some(name) = body.strip_prefix("tool:").filter(|n| !n.is_empty()) {
        Op::Tool(name.to_owned())
    } else if let Some(uri) = body.strip_prefix("read:").filter(|u| !u.is_empty()) {
        Op::Read(uri.to_owned())
    } else {
        return Err(format!(
            "--mix `{item}`: expected `ping`, `tool:NAME` or `read:URI`, optionally `=WEIGHT`"
        ));
    };
    Ok((op, weight))
}

/// Tool name and its arguments, from `--args NAME=JSON`.
type ToolArguments = Vec<(String, Map<String, Value>)>;

fn parse_args(args: &[String]) -> Result<ToolArguments, String> {
    let mut parsed = ToolArguments::new();
    for arg in args {
        let Some((name, text)) = arg.split_once('=').filter(|(n, _)| !n.is_empty()) else {
            return Err(format!("--args `{arg}`: expected NAME=JSON-object"));
        };
        let object = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => {
                return Err(format!(
                    "--args {name}: the arguments must be a JSON object"
                ))
            }
            Err(e) => return Err(format!("--args {name}: not valid JSON: {e}")),
        };
        if parsed.iter().any(|(n, _)| n == name) {
            return Err(format!("--args {name} is given twice"));
        }
        parsed.push((name.to_owned(), object));
    }
    Ok(parsed)
}

/// Hands out entry indexes in proportion to the weights (smooth weighted round robin).
#[derive(Clone, Debug)]
pub(crate) struct Scheduler {
    weights: Vec<i64>,
    current: Vec<i64>,
    total: i64,
}

impl Scheduler {
    /// A scheduler over `mix`'s entries.
    pub(crate) fn new(mix: &Mix) -> Self {
        let weights: Vec<i64> = mix.entries.iter().map(|e| i64::from(e.weight)).collect();
        Self {
            current: vec![0; weights.len()],
            total: weights.iter().sum(),
            weights,
        }
    }

    /// The index of the next entry to send.
    pub(crate) fn next_index(&mut self) -> usize {
        let mut best = 0;
        for i in 0..self.weights.len() {
            self.current[i] += self.weights[i];
            if self.current[i] > self.current[best] {
                best = i;
            }
        }
        self.current[best] -= self.total;
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(mix: &Mix) -> Vec<(String, u32)> {
        mix.entries
            .iter()
            .map(|e| (e.op.label(), e.weight))
            .collect()
    }

    #[test]
    fn parses_entries_weights_and_arguments() {
        let mix = Mix::parse(
            "ping=1, tool:echo=3,read:test://static-text=2,tool:add",
            &[r#"echo={"text":"hi"}"#.into()],
        )
        .unwrap();
        assert_eq!(
            labels(&mix),
            [
                ("ping".into(), 1),
                ("tool:echo".into(), 3),
                ("read:test://static-text".into(), 2),
                ("tool:add".into(), 1)
            ]
        );
        assert!(mix.entries[0].params.is_none());
        let echo: Value = mix.entries[1].params.as_ref().unwrap().to_value().unwrap();
        assert_eq!(echo, json!({"name":"echo","arguments":{"text":"hi"}}));
        let add: Value = mix.entries[3].params.as_ref().unwrap().to_value().unwrap();
        assert_eq!(add, json!({"name":"add"}));
        let read: Value = mix.entries[2].params.as_ref().unwrap().to_value().unwrap();
        assert_eq!(read, json!({"uri":"test://static-text"}));
        assert_eq!(mix.entries[2].op.method(), "resources/read");
    }

    #[test]
    fn a_uri_with_equals_keeps_it_unless_digits_follow() {
        let mix = Mix::parse("read:x://a?b=c,read:x://a?b=2=5", &[]).unwrap();
        assert_eq!(
            labels(&mix),
            [("read:x://a?b=c".into(), 1), ("read:x://a?b=2".into(), 5)]
        );
    }

    #[test]
    fn zero_weights_drop_entries_but_not_all_of_them() {
        let mix = Mix::parse("ping=0,tool:a=1", &[]).unwrap();
        assert_eq!(labels(&mix), [("tool:a".into(), 1)]);
        assert!(Mix::parse("ping=0", &[]).is_err());
        assert!(Mix::parse("", &[]).is_err());
    }

    #[test]
    fn rejects_bad_entries_and_arguments() {
        for bad in ["pong", "tool:", "read:", "ping=99999999999", "tool=1"] {
            assert!(Mix::parse(bad, &[]).is_err(), "{bad}");
        }
        for bad in ["echo", "=1", r#"echo=[1]"#, "echo={", r#"other={}"#] {
            assert!(Mix::parse("tool:echo", &[bad.into()]).is_err(), "{bad}");
        }
        let seventeen = vec!["ping"; 17].join(",");
        assert!(Mix::parse(&seventeen, &[]).is_err());
        let twice = [r#"echo={}"#.to_string(), r#"echo={}"#.to_string()];
        assert!(Mix::parse("tool:echo", &twice).is_err());
    }

    #[test]
    fn the_schedule_follows_the_weights_and_interleaves() {
        let mix = Mix::parse("tool:a=2,tool:b=1", &[]).unwrap();
        let mut s = Scheduler::new(&mix);
        let order: Vec<usize> = (0..6).map(|_| s.next_index()).collect();
        assert_eq!(order, [0, 1, 0, 0, 1, 0]);

        let mix = Mix::parse("ping=1,tool:x=3,read:y=6", &[]).unwrap();
        let mut s = Scheduler::new(&mix);
        let mut counts = [0usize; 3];
        for _ in 0..1_000 {
            counts[s.next_index()] += 1;
        }
        assert_eq!(counts, [100, 300, 600]);
    }
}
