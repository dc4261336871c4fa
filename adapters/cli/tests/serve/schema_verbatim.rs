//! Tool input schemas travel verbatim: `tools/list` of the reference server shows the
//! `json_schema_2020_12_tool` schema with every key in the order it was written (SEP-1613).

use std::process::Command;

#[test]
fn tools_list_keeps_the_2020_12_schema_verbatim() {
    let bin = env!("CARGO_BIN_EXE_mcp-sansio");
    let out = Command::new(bin)
        .args([
            "client", "--stdio", "tools", "list", "--", bin, "serve", "--stdio",
        ])
        .output()
        .expect("run the CLI client against the reference server");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("UTF-8 output");
    let expected = concat!(
        r##""inputSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":""##,
        r##"object","$defs":{"address":{"$anchor":"addressDef","type":"object","properties":"##,
        r##"{"street":{"type":"string"},"city":{"type":"string"}}}},"properties":{"name":{"t"##,
        r##"ype":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"str"##,
        r##"ing","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"##,
        r##""}},"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"if":{"p"##,
        r##"roperties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"th"##,
        r##"en":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":"##,
        r##"false}"##
    );
    assert!(
        text.contains(expected),
        "schema reordered or changed:\n{text}"
    );
}
