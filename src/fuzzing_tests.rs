//! Runs every fuzz body on built-in seeds and on a few thousand deterministic mutations of them.

use super::*;

const SEEDS: &[&[u8]] = &[
    b"",
    b"\x00",
    b"\x07{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n",
    b"\x03{\"a\":1}\r\n\r\n  \n{\"b\":\"\xc3\xa9\"}\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n[]",
    b"\x10id: 1\nretry: 100\ndata:\n\n",
    b"\x21\xEF\xBB\xBFevent: e\r\ndata: a\r\ndata: b\r\rid: x\0y\n: c\n\n",
    b"\x05data: 0123456789012345678901234567890123456789\n\ndata: ok\n\n",
    b"\x02data:\xFF\xFF\xFF\n\ndata:\xFF\xFF\n\n",
    br#"{"jsonrpc":"2.0","id":"a\"b\\c\u00e9","method":"tools/call","params":{"n":1}}"#,
    br#"{"jsonrpc":"2.0","id":18446744073709551615,"result":{}}"#,
    br#"{"jsonrpc":"2.0","id":-9223372036854775808,"result":[]}"#,
    br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m","data":[1]}}"#,
    br#"{"jsonrpc":"2.0","method":"notifications/progress","params":null}"#,
    br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#,
    br#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
    br#"{"jsonrpc":"2.0","id":-0,"method":"x"}"#,
    br#"{"jsonrpc":"2.0","id":-0.0,"method":"x"}"#,
    br#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"x"}"#,
    br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1,"a":2}}"#,
    br#"{"jsonrpc":"2\u002e0","id":"1","method":"m\u0041","params":[]}"#,
    br#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":3,"result":1},5]"#,
    br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","code":2}}"#,
    b"[]",
    b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
];

/// A fuzz body and its name.
type Body = (&'static str, fn(&[u8]));

const BODIES: &[Body] = &[
    ("ndjson", ndjson),
    ("sse", sse),
    ("jsonrpc_decode", jsonrpc_decode),
    ("jsonrpc_differential", jsonrpc_differential),
];

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A seed with a few random byte edits (replace, insert, delete), biased towards the bytes
/// that matter to the parsers.
fn mutate(rng: &mut XorShift, seed: &[u8]) -> Vec<u8> {
    const INTERESTING: &[u8] = b"\n\r:{}[]\",\\0123456789- \xEF\xBB\xBF\x00\xFF";
    let mut out = seed.to_vec();
    for _ in 0..=rng.below(4) {
        let byte = if rng.below(2) == 0 {
            INTERESTING[rng.below(INTERESTING.len())]
        } else {
            rng.next() as u8
        };
        let at = rng.below(out.len() + 1);
        match rng.below(3) {
            0 if at < out.len() => out[at] = byte,
            1 if at < out.len() => {
                out.remove(at);
            }
            _ => out.insert(at, byte),
        }
    }
    out
}

fn random_bytes(rng: &mut XorShift) -> Vec<u8> {
    (0..rng.below(200)).map(|_| rng.next() as u8).collect()
}

#[test]
fn bodies_accept_the_seeds() {
    for (name, body) in BODIES {
        for seed in SEEDS {
            let result = std::panic::catch_unwind(|| body(seed));
            assert!(
                result.is_ok(),
                "{name} failed on seed {:?}",
                String::from_utf8_lossy(seed)
            );
        }
    }
}

#[test]
fn bodies_accept_mutations_and_random_bytes() {
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
    for round in 0..2000 {
        let input = if round % 4 == 0 {
            random_bytes(&mut rng)
        } else {
            let seed = SEEDS[rng.below(SEEDS.len())];
            mutate(&mut rng, seed)
        };
        for (name, body) in BODIES {
            let result = std::panic::catch_unwind(|| body(&input));
            assert!(result.is_ok(), "{name} failed on {input:?}");
        }
    }
}

#[test]
fn the_model_check_catches_a_wrong_decoder() {
    // The ndjson model must disagree with a stream decoded under another limit, or the body
    // could not detect a broken limit.
    let stream = b"0123456789\n[1]\n";
    assert_ne!(ndjson_model(stream, 4), ndjson_model(stream, 20));
    assert!(std::panic::catch_unwind(|| compare(
        "{}",
        &serde_json::json!({"jsonrpc": "2.0", "method": "a"}),
        Err(DecodeErrorKind::InvalidRequest)
    ))
    .is_err());
}

/// The state-machine bodies: each input is an operation sequence (see `ops`).
const STATE_BODIES: &[Body] = &[
    ("session_server", session_server),
    ("session_client", session_client),
    ("pair_ops", pair_ops),
    ("app_server", app_server),
    ("http_endpoint", http_endpoint),
    ("http_client", http_client),
    ("sse_transport_router", sse_transport_router),
    ("stateless_validate", stateless_validate),
    ("model_types", model_types),
];

/// Seeds in `fuzz/corpus/<body>/`, read at test time so the committed corpus replays too.
fn corpus(name: &str) -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(name);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read(p).expect("a seed file"))
        .collect()
}

#[test]
fn state_bodies_replay_their_corpus() {
    for (name, body) in STATE_BODIES {
        let seeds = corpus(name);
        assert!(!seeds.is_empty(), "no seeds for {name}");
        for seed in seeds {
            body(&seed);
        }
    }
}

#[test]
fn state_bodies_accept_random_operation_sequences() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    for (name, body) in STATE_BODIES {
        let seeds = corpus(name);
        let started = std::time::Instant::now();
        for round in 0..200 {
            let input = if round % 2 == 0 || seeds.is_empty() {
                (0..rng.below(200)).map(|_| rng.next() as u8).collect()
            } else {
                let seed = &seeds[rng.below(seeds.len())];
                mutate(&mut rng, seed)
            };
            let result = std::panic::catch_unwind(|| body(&input));
            assert!(result.is_ok(), "{name} failed on {input:?}");
        }
        eprintln!("{name}: {:?}", started.elapsed());
    }
}
