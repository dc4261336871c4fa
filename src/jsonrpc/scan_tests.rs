//! The envelope scanner against the serde path: whenever the scanner answers, serde must
//! accept the same text and find the same six members, byte for byte; where serde refuses a
//! text, the scanner must not answer. Then the edges the scanner leaves to serde, through
//! `decode`, with today's answers.

use super::decode;
use super::scan::{self, Members};
use super::*;
use bytes::Bytes;

type Six<'a> = [Option<&'a str>; 6];

fn six<'a>(m: &Members<'a>) -> Six<'a> {
    let text = |member: Option<&'a [u8]>| member.map(|b| std::str::from_utf8(b).unwrap());
    [m.jsonrpc, m.id, m.method, m.params, m.result, m.error].map(text)
}

/// The decoder's serde path (today's reading), or `None` when it refuses the text.
fn serde_six(text: &str) -> Option<Six<'_>> {
    decode::serde_members(text).ok().map(|m| six(&m))
}

/// The scanner's answer, checked against serde's: returns whether the scanner answered.
fn agrees(text: &str) -> bool {
    match scan::members(text.as_bytes()) {
        Some(members) => {
            assert_eq!(Some(six(&members)), serde_six(text), "text {text:?}");
            assert!(
                serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok(),
                "the scanner accepted invalid JSON {text:?}"
            );
            true
        }
        None => false,
    }
}

#[test]
fn the_common_shapes_are_scanned_and_match_serde() {
    let texts = [
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":"a\"b\\c\u00e9\ud83d\ude00","method":"tools/call","params":{"name":"echo","arguments":{"text":"the \"quick\" fox\n\t\/"}}}"#,
        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}],"isError":false}}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad","data":[1,2.5,-0.0,1e9,1E-9,2.5e+3]}}"#,
        " \t\r\n{ \"jsonrpc\" : \"2.0\" ,\n\"method\" :\t\"notifications/initialized\" , \"params\" : { } } \n ",
        r#"{"jsonrpc":"2.0","id":-9223372036854775808,"result":[]}"#,
        r#"{"jsonrpc":"2.0","id":18446744073709551615,"result":[[],{},[{}],{"a":[]}]}"#,
        r#"{"jsonrpc":"2.0","id":18446744073709551616,"result":null}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"result":true}"#,
        r#"{"jsonrpc":"2.0","id":0,"result":false,"extra":{"deep":[1,{"x":"\u0041"}]},"extra":1}"#,
        r#"{"jsonrpc":"2.0","id":-0,"method":"x","params":[null,true,false,0,-1,"é"]}"#,
        r#"{"id":1}"#,
        r#"{}"#,
        "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"k\u{e9}y\":\"\u{1F600}\"}}",
        r#"{"jsonrpc":"2.0", "id" :2 , "method":"m"}"#,
        // Top-level scalars are read inline unless they are fractions or exponents.
        r#"{"jsonrpc":"2.0","id":12e3,"result":1}"#,
        r#"{"jsonrpc":"2.0","id":1E+2,"method":"m","n":10.25}"#,
        r#"{"id":9,"x":"y","z":123456789012345678901234567890}"#,
    ];
    for text in texts {
        assert!(agrees(text), "the scanner gave up on {text:?}");
    }
}

#[test]
fn the_scanner_leaves_unusual_texts_to_serde() {
    // Non-empty containers count (an empty one is read like a scalar).
    let nested = |depth: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"m","params":{}1{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        )
    };
    let deep = nested(scan::MAX_DEPTH as usize + 1);
    let within = nested(scan::MAX_DEPTH as usize);
    assert!(agrees(&within));
    for text in [
        r#"{"\u0069d":1,"jsonrpc":"2.0","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","method":"m","method":"m"}"#,
        r#"{"jsonrpc":"2.0","jsonrpc":"2.0","method":"m"}"#,
        r#"[{"jsonrpc":"2.0","method":"m"}]"#,
        r#""a string""#,
        "7",
        "null",
        deep.as_str(),
    ] {
        assert!(scan::members(text.as_bytes()).is_none(), "{text:?}");
    }
}

#[test]
fn the_scanner_refuses_invalid_json() {
    for text in [
        "",
        "{",
        "{}x",
        "{} {}",
        r#"{"a"}"#,
        r#"{"a":}"#,
        r#"{"a":1,}"#,
        r#"{,"a":1}"#,
        r#"{"a":1 "b":2}"#,
        r#"{"a":[1,]}"#,
        r#"{"a":[,1]}"#,
        r#"{"a":[1 2]}"#,
        r#"{"a":{"b"}}"#,
        r#"{"a":{"b":1,}}"#,
        r#"{"a":{1:1}}"#,
        r#"{"a":[}"#,
        r#"{"a":{]}"#,
        r#"{"a":01}"#,
        r#"{"a":-}"#,
        r#"{"a":-a}"#,
        r#"{"a":1.}"#,
        r#"{"a":.5}"#,
        r#"{"a":1e}"#,
        r#"{"a":1e+}"#,
        r#"{"a":+1}"#,
        r#"{"a":tru}"#,
        r#"{"a":nul}"#,
        r#"{"a":falsey}"#,
        r#"{"a":"\x"}"#,
        r#"{"a":"\u12"}"#,
        r#"{"a":"\u12g4"}"#,
        "{\"a\":\"tab\there\"}",
        "{\"a\":\"nl\nhere\"}",
        "{\"a\":\"unterminated}",
        "{\"k\u{1}\":1}",
        r#"{"a":1}}"#,
        r#"{"a":[1]]}"#,
        "{\u{a0}}",
        // The version-first opening taken without scanning still needs a valid rest.
        r#"{"jsonrpc":"2.0",}"#,
        r#"{"jsonrpc":"2.0","#,
        r#"{"jsonrpc":"2.0",,"id":1}"#,
        r#"{"jsonrpc":"2.0","id"}"#,
        r#"{"jsonrpc":"2.0","id":1"#,
        r#"{"id":12x}"#,
        r#"{"id":1 2}"#,
        r#"{"id":1.}"#,
        r#"{"id":1e}"#,
        r#"{"id":"a"b}"#,
        r#"{"id":"a}"#,
        r#"{"id":1"#,
    ] {
        assert!(scan::members(text.as_bytes()).is_none(), "{text:?}");
        assert!(serde_json::from_str::<serde::de::IgnoredAny>(text).is_err());
    }
}

/// Seeded byte edits of real messages: wherever the scanner answers, serde agrees; wherever
/// serde refuses, the scanner does too. Also checks `decode` answers the same as the serde-only
/// reading of the same text, through the public API.
#[test]
fn mutated_messages_agree_with_serde() {
    let seeds: [&[u8]; 5] = [
        br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a \"b\" \u00e9","n":[1,-2.5e3,true,null]}}}"#,
        br#"{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"hi\n"}],"isError":false}}"#,
        br#" {"jsonrpc" : "2.0", "id":null, "error":{"code":-32600,"message":"m","data":{}}} "#,
        br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}"#,
        br#"{"jsonrpc":"2.0","id":105,"n":2.5e1,"method":"m"}"#,
    ];
    let alphabet = b"{}[]\":,\\ 0-1.eEtrufalsn\x01\t\nu";
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut answered, mut total) = (0, 0);
    for round in 0..20_000 {
        let mut bytes = seeds[round % seeds.len()].to_vec();
        for _ in 0..=(next() % 3) {
            let at = (next() % (bytes.len() as u64 + 1)) as usize;
            let b = alphabet[(next() % alphabet.len() as u64) as usize];
            match next() % 3 {
                0 if at < bytes.len() => bytes[at] = b,
                1 => bytes.insert(at, b),
                _ if at < bytes.len() => {
                    bytes.remove(at);
                }
                _ => {}
            }
        }
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        total += 1;
        answered += usize::from(agrees(text));
        if serde_json::from_str::<serde::de::IgnoredAny>(text).is_err() {
            assert!(scan::members(text.as_bytes()).is_none(), "{text:?}");
        }
    }
    // Most single edits break the JSON; the rest must mostly take the fast path.
    assert!(answered > total / 20, "{answered} of {total}");
}

fn decoded(text: &str) -> Result<Incoming, DecodeError> {
    decode(&Bytes::copy_from_slice(text.as_bytes()))
}

#[test]
fn an_escaped_key_is_still_the_member_it_spells() {
    let Ok(Incoming::Single(Message::Request(r))) =
        decoded(r#"{"jsonrpc":"2.0","\u0069d":5,"met\u0068od":"ping"}"#)
    else {
        panic!("an escaped key is unescaped before matching")
    };
    assert_eq!(r.id, RequestId::number(5));
    assert_eq!(r.method, "ping");
}

#[test]
fn a_duplicate_member_is_an_invalid_request_with_its_id() {
    let e = decoded(r#"{"jsonrpc":"2.0","id":3,"method":"a","method":"b"}"#).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::InvalidRequest);
    assert_eq!(e.id, Some(RequestId::number(3)));
    // Unknown members may repeat.
    assert!(decoded(r#"{"jsonrpc":"2.0","x":1,"x":2,"method":"a"}"#).is_ok());
}

#[test]
fn deep_params_decode_through_either_path() {
    for depth in [scan::MAX_DEPTH as usize, scan::MAX_DEPTH as usize + 40] {
        let params = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let text = format!(r#"{{"jsonrpc":"2.0","method":"m","params":{params}}}"#);
        let Ok(Incoming::Single(Message::Notification(n))) = decoded(&text) else {
            panic!("depth {depth}")
        };
        assert_eq!(n.params.unwrap().get(), params);
    }
}

#[test]
fn integer_ids_keep_their_exact_value_across_i64_and_u64() {
    let cases = [
        ("0", Some(RequestId::number(0))),
        ("-0", Some(RequestId::number(0))),
        ("-1", Some(RequestId::number(-1))),
        ("9223372036854775807", Some(RequestId::number(i64::MAX))),
        ("9223372036854775808", Some(RequestId::unsigned(1 << 63))),
        ("18446744073709551615", Some(RequestId::unsigned(u64::MAX))),
        ("-9223372036854775808", Some(RequestId::number(i64::MIN))),
        ("18446744073709551616", None),
        ("-9223372036854775809", None),
        ("1.0", None),
        ("1e2", None),
    ];
    for (text, want) in cases {
        let frame = format!(r#"{{"jsonrpc":"2.0","id":{text},"result":{{}}}}"#);
        assert!(agrees(&frame), "{frame}");
        match (decoded(&frame), want) {
            (Ok(Incoming::Single(Message::Response(r))), Some(id)) => {
                assert_eq!(r.id, Some(id), "{text}")
            }
            (Err(e), None) => assert_eq!(e.kind, DecodeErrorKind::InvalidResponse, "{text}"),
            (other, want) => panic!("{text}: {other:?}, wanted {want:?}"),
        }
    }
}

#[test]
fn payloads_are_the_exact_value_text_without_surrounding_blanks() {
    let text = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\" :\n [ 1 , {\"a\" : \"b\"} ] \t}";
    let Ok(Incoming::Single(Message::Response(r))) = decoded(text) else {
        panic!()
    };
    assert_eq!(r.outcome.unwrap().get(), "[ 1 , {\"a\" : \"b\"} ]");
}

#[test]
fn the_word_at_a_time_string_search_finds_the_first_stop_byte() {
    let is_stop = |b: u8| b < 0x20 || b == b'"' || b == b'\\' || b >= 0x80;
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    for len in 0..40 {
        for _ in 0..200 {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    // Mostly plain text, some stop bytes and some non-ASCII.
                    match state % 16 {
                        0 => b'"',
                        1 => b'\\',
                        2 => (state >> 8) as u8 % 0x20,
                        3 => 0x80 | (state >> 8) as u8,
                        _ => b' ' + (state >> 8) as u8 % 0x5f,
                    }
                })
                .collect();
            let want = bytes.iter().position(|&b| is_stop(b));
            assert_eq!(scan::find_string_stop(&bytes), want, "{bytes:?}");
        }
    }
}

#[test]
fn utf8_is_checked_inside_strings_and_nothing_else_passes() {
    // Valid non-ASCII text (2, 3 and 4 byte characters, long runs) takes the fast path.
    for text in [
        "{\"jsonrpc\":\"2.0\",\"id\":\"\u{e9}\",\"method\":\"x\",\"params\":{\"t\":\"caf\u{e9} \u{65e5}\u{672c}\u{8a9e}\u{1f600}\"}}",
        &format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"t\":\"{}\"}}}}", "\u{65e5}\u{672c}".repeat(50)),
    ] {
        assert!(agrees(text), "{text:?}");
    }
    // Invalid UTF-8 in a string or around the grammar: the scanner never answers, and the
    // decoder gives the same parse error as for any other frame that is not UTF-8, carrying
    // the id the frame's head shows.
    let prefix = br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"t":""#;
    let bad: [&[u8]; 8] = [
        b"\x80",             // a lone continuation byte
        b"\xc3",             // a truncated 2-byte character
        b"\xc0\xaf",         // an overlong encoding
        b"\xed\xa0\x80",     // a surrogate
        b"\xf4\x90\x80\x80", // past U+10FFFF
        b"\xe6\x97",         // a truncated 3-byte character
        b"\xff",
        b"a\xe6\x97\xa5\xe6", // valid then truncated in one run
    ];
    for b in bad {
        let mut frame = prefix.to_vec();
        frame.extend_from_slice(b);
        frame.extend_from_slice(br#""}}"#);
        assert!(scan::members(&frame).is_none(), "{frame:?}");
        let err = decode(&Bytes::from(frame)).unwrap_err();
        let mut expected = DecodeError::parse("frame is not UTF-8");
        expected.id = Some(RequestId::number(1));
        assert_eq!(err, expected);
    }
    // Outside strings a non-ASCII byte is never grammar.
    for frame in [
        &b"{\"id\":1\xc3\xa9}"[..],
        b"\xef\xbb\xbf{}",
        b"{} \xc2\xa0",
    ] {
        assert!(scan::members(frame).is_none(), "{frame:?}");
    }
}
