//! The `WWW-Authenticate` parser under `BearerChallenge::find`: several challenges in one
//! value, case-insensitive parameter names, garbage and the parameter bound.

use crate::auth::challenge::{parse_challenges, BearerChallenge, MAX_CHALLENGE_PARAMS};

#[test]
fn several_challenges_in_one_value_and_across_values() {
    let value = r#"Basic realm="a, b", bearer scope=read, Negotiate"#;
    let all = parse_challenges(value);
    let schemes: Vec<_> = all.iter().map(|c| c.scheme.as_str()).collect();
    assert_eq!(schemes, ["Basic", "bearer", "Negotiate"]);
    assert_eq!(all[0].param("REALM"), Some("a, b"));
    assert_eq!(all[1].param("scope"), Some("read"));
    let found = BearerChallenge::find(["Basic realm=x", "Bearer error=invalid_token"]);
    assert_eq!(
        found.and_then(|c| c.error).as_deref(),
        Some("invalid_token")
    );
    assert_eq!(BearerChallenge::find(["Basic realm=x"]), None);
}

#[test]
fn challenge_parser_survives_garbage() {
    for value in [
        "",
        "=",
        "\"",
        "Bearer =\"",
        "Bearer a=\"unterminated",
        ",,,",
        "é = ü",
    ] {
        let _ = parse_challenges(value);
    }
    let long = "Bearer ".to_owned() + &"a=b, ".repeat(10_000);
    let parsed = parse_challenges(&long);
    assert!(parsed[0].params.len() <= MAX_CHALLENGE_PARAMS);
}
