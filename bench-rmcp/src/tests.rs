//! The fixtures do the work the benches time: both engines echo the text back and complete
//! every request, for 1 and for 64 in flight.

use super::*;

#[test]
fn echo_tool_echoes_and_rejects_other_tools() {
    let result = echo_tool(Some(&echo_params())).expect("echo answers");
    assert!(is_echo(&result));
    let other = RawJson::from_text(r#"{"name":"other","arguments":{"text":"x"}}"#).unwrap();
    assert!(echo_tool(Some(&other)).is_none());
}

#[test]
fn ours_completes_pings_and_echo_calls_with_either_reader() {
    for reader in [Reader::View, Reader::Serde] {
        let mut pair = OursPair::connected_with(reader);
        for n in [1, 64] {
            assert_eq!(pair.round_trips(n, "ping", None, |_| {}), n);
            let mut echoed = 0;
            let params = echo_params();
            let results = pair.round_trips(n, "tools/call", Some(&params), |r| {
                echoed += usize::from(is_echo(r) && is_echo_read(r, reader));
            });
            assert_eq!((results, echoed), (n, n));
        }
        assert_eq!(pair.client.pending_outbound(), 0);
        assert_eq!(pair.server.inflight_inbound(), 0);
    }
}

#[test]
fn both_readers_refuse_what_is_not_an_echo() {
    let wrong = [
        r#"{"name":"other","arguments":{"text":"x"}}"#,
        r#"{"name":"echo","arguments":{"text":7}}"#,
        r#"{"arguments":{"text":"x"}}"#,
    ];
    for text in wrong {
        let params = RawJson::from_text(text).unwrap();
        for reader in [Reader::View, Reader::Serde] {
            assert!(
                echo_text(Some(&params), reader).is_none(),
                "{reader:?} {text}"
            );
        }
    }
    let escaped = RawJson::from_text(r#"{"name":"ech\u006f","arguments":{"text":"a\"b"}}"#);
    let escaped = escaped.unwrap();
    for reader in [Reader::View, Reader::Serde] {
        assert_eq!(echo_text(Some(&escaped), reader).as_deref(), Some("a\"b"));
    }
    let result = echo_tool(Some(&echo_params())).unwrap();
    let other = RawJson::from_text(r#"{"content":[{"type":"text","text":"nope"}]}"#).unwrap();
    for reader in [Reader::View, Reader::Serde] {
        assert!(is_echo_read(&result, reader) && !is_echo_read(&other, reader));
    }
}

#[test]
fn rmcp_completes_pings_and_echo_calls() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = rmcp_side::connect().await;
        let params = rmcp_side::echo_params();
        for n in [1, 64] {
            assert_eq!(rmcp_side::pings(&client, n).await, n);
            assert_eq!(rmcp_side::echo_calls(&client, n, &params).await, n);
        }
    });
}

#[test]
fn the_written_echo_result_is_the_serialised_one() {
    for text in [ECHO_TEXT, "", "a\"b\\c\n\u{1}é"] {
        let mut written = Vec::new();
        let mut serialised = Vec::new();
        for (reader, out) in [
            (Reader::View, &mut written),
            (Reader::Serde, &mut serialised),
        ] {
            let mut pair = OursPair::connected_with(reader);
            let params = serde_json::json!({"name": "echo", "arguments": {"text": text}});
            let params = RawJson::try_from(&params).unwrap();
            pair.round_trips(1, "tools/call", Some(&params), |r| {
                out.extend_from_slice(r.as_bytes())
            });
        }
        assert_eq!(written, serialised, "{text:?}");
        let expected = serde_json::to_vec(&EchoResult::new(text)).unwrap();
        assert_eq!(written, expected);
    }
}
