//! HMAC-SHA-256 against the RFC 4231 test vectors, and the `requestState` token: minted
//! states verify, and any change to payload or tag, another key, another binding, or a lapsed
//! expiry is refused.

use mcp_sansio::encoding::{constant_time_eq, hmac_sha256};
use mcp_sansio::stateless::{request_binding, RequestStateKey, StateError};
use serde_json::{json, Map, Value};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn rfc_4231_vectors() {
    let long_key = vec![0xaa; 131];
    let cases: [(Vec<u8>, Vec<u8>, &str); 6] = [
        (
            vec![0x0b; 20],
            b"Hi There".to_vec(),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
        ),
        (
            b"Jefe".to_vec(),
            b"what do ya want for nothing?".to_vec(),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
        ),
        (
            vec![0xaa; 20],
            vec![0xdd; 50],
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
        ),
        (
            (1u8..=25).collect(),
            vec![0xcd; 50],
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
        ),
        (
            long_key.clone(),
            b"Test Using Larger Than Block-Size Key - Hash Key First".to_vec(),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
        ),
        (
            long_key,
            b"This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.".to_vec(),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
        ),
    ];
    for (key, data, expected) in cases {
        assert_eq!(hex(&hmac_sha256(&key, &data)), expected);
    }
    // Test case 5: the output truncated to 128 bits.
    let tag = hmac_sha256(&[0x0c; 20], b"Test With Truncation");
    assert_eq!(hex(&tag[..16]), "a3b6167473100ee06e0c796c2955552b");
}

#[test]
fn constant_time_eq_compares_bytes_and_lengths() {
    assert!(constant_time_eq(b"abc", b"abc"));
    assert!(!constant_time_eq(b"abc", b"abd"));
    assert!(!constant_time_eq(b"abc", b"abcd"));
    assert!(constant_time_eq(b"", b""));
}

fn answers() -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("k".into(), json!({"action": "accept"}));
    m
}

#[test]
fn minted_states_verify_and_every_change_is_refused() {
    let key = RequestStateKey::new(b"k1".to_vec(), 1000);
    let token = key.mint("bind", &answers(), 5000).unwrap();
    assert_eq!(key.verify(&token, "bind", 5999), Ok(answers()));
    assert_eq!(key.verify(&token, "bind", 6000), Err(StateError::Expired));
    assert_eq!(
        key.verify(&token, "other", 5000),
        Err(StateError::WrongRequest)
    );
    let other = RequestStateKey::new(b"k2".to_vec(), 1000);
    assert_eq!(
        other.verify(&token, "bind", 5000),
        Err(StateError::BadSignature)
    );
    // Every single-character change of the token is refused.
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.";
    for i in 0..token.len() {
        for &c in alphabet.iter().step_by(7) {
            let mut bytes = token.clone().into_bytes();
            if bytes[i] == c {
                continue;
            }
            bytes[i] = c;
            let changed = String::from_utf8(bytes).unwrap();
            // The last tag character has two unused bits: equal decodings are the same tag.
            if let Ok(a) = key.verify(&changed, "bind", 5000) {
                assert_eq!(a, answers());
                assert!(i == token.len() - 1, "accepted a change at {i}");
            }
        }
    }
    for junk in ["", ".", "a.b", "!!!.###", &format!("{token}-TAMPERED")] {
        assert!(key.verify(junk, "bind", 5000).is_err(), "{junk}");
    }
}

#[test]
fn the_binding_ignores_meta_retry_members_and_member_order() {
    let a: Map<String, Value> = serde_json::from_value(json!({
        "name": "t", "arguments": {"x": 1, "y": [1, {"b": 2, "a": 1}]},
        "_meta": {"progressToken": 1}, "inputResponses": {}, "requestState": "s"
    }))
    .unwrap();
    let b: Map<String, Value> = serde_json::from_value(json!({
        "arguments": {"y": [1, {"a": 1, "b": 2}], "x": 1}, "name": "t"
    }))
    .unwrap();
    assert_eq!(
        request_binding("tools/call", &a),
        request_binding("tools/call", &b)
    );
    assert_ne!(
        request_binding("tools/call", &a),
        request_binding("prompts/get", &a)
    );
    let c: Map<String, Value> =
        serde_json::from_value(json!({"name": "t", "arguments": {"x": 2}})).unwrap();
    assert_ne!(
        request_binding("tools/call", &b),
        request_binding("tools/call", &c)
    );
}
