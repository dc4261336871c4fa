//! `mcp-sansio inspect` in a real browser: headless Chromium driven through chromedriver
//! over the W3C WebDriver protocol (plain HTTP, support/inspector.rs). A person's path against
//! `serve --stdio` and `serve --http` (Streamable HTTP and HTTP+SSE) in the handshake era: the
//! page connects, lists the tools, a tool's form is filled and called, the result and its
//! frames show, an elicitation is answered from its card, and roots set in the Roots tab are
//! offered on the card of the server's `roots/list`, edited and sent. The same in 2026-07-28
//! (found by the era probe over stdio, `--era stateless` over HTTP): the revision and
//! capabilities from `server/discover`, no `initialize`, the inputs of a call answered from
//! cards. Results with an image, audio and an embedded resource, prompts, elicitation forms
//! of every scalar, enum and array shape, and the frame filter. The Python SDK's server of
//! the interop tests (tests/interop/py) over stdio and Streamable HTTP in both eras and over
//! HTTP+SSE: a tool with integer arguments and structured content, a sampling request
//! answered from its card (handshake era), a resource template filled in. A screenshot goes
//! to `target/inspect-screenshot.png`. Without chromium and chromedriver (or, for the Python
//! server, the peers of scripts/install-peers) a test says why and passes, unless `CI` is set.

use crate::harness;
use crate::http_fixture;
use crate::inspector;
use crate::peers;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use http_fixture::HttpFixture;
use inspector::{http, Inspector};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-sansio");
const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A chromedriver process and one browser session, both ended when dropped.
struct Browser {
    driver: Child,
    authority: String,
    session: String,
}

impl Browser {
    fn start() -> Option<Browser> {
        let present =
            std::path::Path::new(CHROMIUM).exists() && std::path::Path::new(CHROMEDRIVER).exists();
        if !present {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI needs {CHROMIUM} and {CHROMEDRIVER} (.ci/run installs them)"
            );
            eprintln!("skipped: {CHROMIUM} or {CHROMEDRIVER} is missing (apt-get install chromium chromium-driver)");
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let mut browser = Browser {
            driver,
            authority: format!("127.0.0.1:{port}"),
            session: String::new(),
        };
        let until = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(&browser.authority).is_err() {
            assert!(Instant::now() < until, "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        let caps = json!({"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
            "binary": CHROMIUM,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,900"]}}}});
        let created = browser.call("POST", "/session", Some(caps));
        browser.session = created["sessionId"]
            .as_str()
            .expect("a session id")
            .to_owned();
        Some(browser)
    }

    /// One WebDriver command: its `value`.
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let json = [("Content-Type", "application/json")];
        let body = body.map(|b| b.to_string());
        let (status, raw) = http(&self.authority, method, path, &json, body.as_deref());
        let reply: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
        assert_eq!(status, 200, "{method} {path}: {reply}");
        reply["value"].clone()
    }

    fn session(&self, method: &str, rest: &str, body: Option<Value>) -> Value {
        self.call(method, &format!("/session/{}{rest}", self.session), body)
    }

    /// The first element matching `css`, waited for (bounded).
    fn find(&self, css: &str) -> String {
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            let found = self.session(
                "POST",
                "/elements",
                Some(json!({"using": "css selector", "value": css})),
            );
            if let Some(id) = found[0][ELEMENT].as_str() {
                return id.to_owned();
            }
            assert!(Instant::now() < until, "no element matches {css}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn click(&self, css: &str) {
        let id = self.find(css);
        self.session("POST", &format!("/element/{id}/click"), Some(json!({})));
    }

    fn type_into(&self, css: &str, text: &str) {
        let id = self.find(css);
        self.session(
            "POST",
            &format!("/element/{id}/value"),
            Some(json!({"text": text})),
        );
    }

    /// Empties the field `css`, then types one space: the page hears an `input` event and
    /// trims the value to nothing.
    fn clear(&self, css: &str) {
        let id = self.find(css);
        self.session("POST", &format!("/element/{id}/clear"), Some(json!({})));
        self.type_into(css, " ");
    }

    /// Waits (bounded) until the text of `css` contains `wanted`.
    fn wait_text(&self, css: &str, wanted: &str) -> String {
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            let id = self.find(css);
            let text = self.session("GET", &format!("/element/{id}/text"), None);
            let text = text.as_str().unwrap_or_default().to_owned();
            if text.contains(wanted) {
                return text;
            }
            assert!(
                Instant::now() < until,
                "{css} shows {text:?}, not {wanted:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits (bounded) until the number of elements matching `css` satisfies `wanted`.
    fn wait_count(&self, css: &str, wanted: impl Fn(usize) -> bool) {
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            let found = self.session(
                "POST",
                "/elements",
                Some(json!({"using": "css selector", "value": css})),
            );
            let n = found.as_array().map_or(0, Vec::len);
            if wanted(n) {
                return;
            }
            assert!(Instant::now() < until, "{n} elements match {css}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = http(
                &self.authority,
                "DELETE",
                &format!("/session/{}", self.session),
                &[],
                None,
            );
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// Opens the inspector's page and waits (bounded) until it is connected.
fn open_page(browser: &Browser, inspector: &Inspector) {
    browser.session("POST", "/url", Some(json!({"url": inspector.url})));
    browser.wait_text("#status", "connected");
}

/// Picks `tool` in the list, fills its form's `fields` (name, text typed) and calls it.
fn call_tool(browser: &Browser, tool: &str, fields: &[(&str, &str)]) {
    browser.click(&format!("li[data-tool='{tool}']"));
    for (name, text) in fields {
        browser.type_into(&format!("#tool input[data-field='{name}']"), text);
    }
    browser.click("#call-tool");
}

/// The person's path on an inspector's page; saves a screenshot to `screenshot` when given.
fn person_path(browser: &Browser, inspector: &Inspector, screenshot: Option<&str>) {
    open_page(browser, inspector);
    call_tool(browser, "greet", &[("name", "Ada")]);
    browser.wait_text("#tool-result", "Hello, Ada");
    browser.wait_count("#frames details[data-method='tools/call']", |n| n >= 2);

    call_tool(browser, "test_elicitation", &[("message", "Your name?")]);
    browser.wait_text(".card[data-kind='elicitation']", "Your name?");
    browser.type_into(".card[data-kind='elicitation'] input", "Grace");
    if let Some(path) = screenshot {
        let png = browser.session("GET", "/screenshot", None);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(png.as_str().unwrap_or_default())
            .expect("a base64 screenshot");
        std::fs::write(path, bytes).expect("write the screenshot");
    }
    browser.click(".card[data-kind='elicitation'] button[data-action='accept']");
    browser.wait_text("#tool-result", "action=accept");
    browser.wait_text("#tool-result", "Grace");
    browser.wait_count(".card", |n| n == 0);
    roots_path(browser);
}

/// Sets a root in the Roots tab, then answers the server's `roots/list` from its card, which
/// offers that root, with one more added on the card.
fn roots_path(browser: &Browser) {
    browser.click("#tabs button[data-tab='roots']");
    browser.type_into("#roots", "file:///tab/offered");
    browser.click("#set-roots");
    browser.wait_text("#roots-note", "sent 1 root");
    browser.click("#tabs button[data-tab='tools']");
    call_tool(browser, "test_input_required_result_list_roots", &[]);
    browser.wait_text(".card[data-kind='roots']", "roots/list");
    let card = ".card[data-kind='roots'] textarea";
    let id = browser.find(card);
    let offered = browser.session("GET", &format!("/element/{id}/property/value"), None);
    assert_eq!(offered, "file:///tab/offered");
    browser.type_into(card, "\nfile:///card/added");
    browser.click(".card[data-kind='roots'] button[data-action='send']");
    let text = browser.wait_text("#tool-result", "file:///card/added");
    assert!(text.contains("file:///tab/offered"), "{text}");
    browser.wait_count(".card", |n| n == 0);
}

#[test]
fn a_person_inspects_our_server_over_stdio_and_http_in_chromium() {
    let Some(browser) = Browser::start() else {
        return;
    };
    // Our server speaks both eras: `--era stateful` for the handshake (the probe would find
    // 2026-07-28, see the stateless test below).
    let inspector = Inspector::start(&[
        "--era", "stateful", "--stdio", "--", BIN, "serve", "--stdio",
    ]);
    person_path(&browser, &inspector, None);
    drop(inspector);

    // The screenshot is of the HTTP run: its frame log also shows the HTTP heads.
    let server = HttpFixture::start(&[]);
    let inspector = Inspector::start(&["--era", "stateful", &server.url]);
    let screenshot = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/inspect-screenshot.png"
    );
    person_path(&browser, &inspector, Some(screenshot));
    browser.wait_text("#target", "streamable");
    browser.wait_text("#frames", "POST /mcp");
    drop(inspector);

    // The same server's HTTP+SSE transport (2024-11-05), detected from its URL after the era
    // probe's `server/discover` was refused there.
    let inspector = Inspector::start(&[&server.sse_url]);
    person_path(&browser, &inspector, None);
    browser.wait_text("#target", "sse");
    browser.wait_text("#frames", "GET /sse");
}

/// What a result can hold, rendered (an image, audio, an embedded resource), a prompt with
/// arguments and one with an image, and the frame log filtered by method.
fn rendering_path(browser: &Browser, inspector: &Inspector) {
    open_page(browser, inspector);
    call_tool(browser, "test_image_content", &[]);
    browser.wait_count("#tool-result .content.image img[src^='data:image/']", |n| {
        n == 1
    });
    call_tool(browser, "test_audio_content", &[]);
    browser.wait_count(
        "#tool-result .content.audio audio[src^='data:audio/wav;base64,']",
        |n| n == 1,
    );
    call_tool(browser, "test_embedded_resource", &[]);
    let text = browser.wait_text("#tool-result .content.resource", "test://embedded-resource");
    assert!(
        text.contains("This is an embedded resource content."),
        "{text}"
    );

    browser.click("#tabs button[data-tab='prompts']");
    browser.click("#list-prompts");
    browser.click("li[data-prompt='test_prompt_with_arguments']");
    browser.type_into("#prompt input[data-field='arg1']", "one");
    browser.type_into("#prompt input[data-field='arg2']", "two");
    browser.click("#get-prompt");
    browser.wait_text("#prompt-result", "arg1='one', arg2='two'");
    browser.click("li[data-prompt='test_prompt_with_image']");
    browser.click("#get-prompt");
    browser.wait_count("#prompt-result .content.image img", |n| n == 1);

    browser.click("#tabs button[data-tab='tools']");
    forms_path(browser);

    // Only the frames of the filtered method stay shown; emptying the filter shows the rest.
    browser.type_into("#filter", "prompts/get");
    let shown = "#frames details:not([hidden])";
    browser.wait_count(shown, |n| n >= 4);
    browser.wait_count(
        "#frames details:not([hidden]):not([data-method='prompts/get'])",
        |n| n == 0,
    );
    browser.clear("#filter");
    browser.wait_count(
        "#frames details:not([hidden])[data-method='tools/call']",
        |n| n >= 6,
    );
}

/// Elicitation forms generated from their schemas: defaults of every scalar type sent as
/// they are, then enums (plain, titled `oneOf`) chosen and an array of enums given an item;
/// and a tool's form whose nested object is a `$ref` into `$defs`, with an enum beside it.
fn forms_path(browser: &Browser) {
    browser.click("li[data-tool='json_schema_2020_12_tool']");
    browser.type_into("#tool input[data-field='name']", "Ada");
    browser.type_into("#tool input[data-field='address.street']", "1 Main St");
    browser.type_into("#tool input[data-field='address.city']", "Paris");
    browser.click("#tool select[data-field='contactMethod'] option[value='1']");
    browser.type_into("#tool input[data-field='email']", "ada@example.com");
    browser.click("#call-tool");
    let text = browser.wait_text("#tool-result", "JSON Schema 2020-12 tool called with");
    for field in [
        r#""name":"Ada""#,
        r#""street":"1 Main St""#,
        r#""city":"Paris""#,
        r#""contactMethod":"email""#,
        r#""email":"ada@example.com""#,
    ] {
        assert!(text.contains(field), "{field} in {text}");
    }

    let card = ".card[data-kind='elicitation']";
    call_tool(browser, "test_elicitation_sep1034_defaults", &[]);
    browser.wait_text(card, "defaults");
    browser.click(&format!("{card} button[data-action='accept']"));
    let text = browser.wait_text("#tool-result", "action=accept");
    for field in [
        r#""name":"John Doe""#,
        r#""age":30"#,
        r#""score":95.5"#,
        r#""status":"active""#,
        r#""verified":true"#,
    ] {
        assert!(text.contains(field), "{field} in {text}");
    }
    browser.wait_count(".card", |n| n == 0);

    call_tool(browser, "test_elicitation_sep1330_enums", &[]);
    browser.wait_text(card, "enum fields");
    // Option values are indices; "" is "(unset)" on a field that is not required.
    browser.click(&format!(
        "{card} select[data-field$='.untitledSingle'] option[value='1']"
    ));
    browser.click(&format!(
        "{card} select[data-field$='.titledSingle'] option[value='2']"
    ));
    browser.click(&format!("{card} button[data-add$='.untitledMulti']"));
    browser.click(&format!(
        "{card} select[data-field$='.untitledMulti[0]'] option[value='2']"
    ));
    browser.click(&format!("{card} button[data-action='accept']"));
    let text = browser.wait_text("#tool-result", "action=accept");
    for field in [
        r#""untitledSingle":"option2""#,
        r#""titledSingle":"value3""#,
        r#""untitledMulti":["option3"]"#,
    ] {
        assert!(text.contains(field), "{field} in {text}");
    }
    assert!(
        !text.contains("legacyEnum"),
        "an unset field is left out: {text}"
    );
    browser.wait_count(".card", |n| n == 0);
}

#[test]
fn results_prompts_and_the_frame_filter_render_in_chromium() {
    let Some(browser) = Browser::start() else {
        return;
    };
    let inspector = Inspector::start(&[
        "--era", "stateful", "--stdio", "--", BIN, "serve", "--stdio",
    ]);
    rendering_path(&browser, &inspector);
}

/// The person's path on the page of a 2026-07-28 server: no `initialize`, the revision and
/// capabilities from `server/discover`, a tool called from its form, an elicitation that comes
/// back as an input request of the call answered from its card (the call is then sent again
/// with the answer), and the roots path, also as input requests.
fn stateless_path(browser: &Browser, inspector: &Inspector) {
    open_page(browser, inspector);
    browser.wait_text("#status", "2026-07-28");
    browser.wait_text("#server-summary", "revision 2026-07-28");
    let (_, state) = inspector.get("api/state");
    assert_eq!(state["era"], "stateless", "{state}");
    assert!(state["capabilities"]["tools"].is_object(), "{state}");
    assert_eq!(state["serverInfo"]["name"], "mcp-sansio-reference-fixture");
    browser.wait_count("#frames details[data-method='server/discover']", |n| n >= 2);

    call_tool(browser, "greet", &[("name", "Ada")]);
    browser.wait_text("#tool-result", "Hello, Ada");
    browser.wait_count("#frames details[data-method='tools/call']", |n| n >= 2);

    call_tool(browser, "test_input_required_result_elicitation", &[]);
    browser.wait_text(".card[data-kind='elicitation']", "What is your name?");
    browser.type_into(".card[data-kind='elicitation'] input", "Grace");
    browser.click(".card[data-kind='elicitation'] button[data-action='accept']");
    browser.wait_text("#tool-result", "Hello, Grace!");
    browser.wait_count(".card", |n| n == 0);
    // greet's request and response, then the call, its input-required answer, the call
    // again with the elicitation's answer, and its result.
    browser.wait_count("#frames details[data-method='tools/call']", |n| n >= 6);
    roots_path(browser);
    browser.wait_count("#frames details[data-method='initialize']", |n| n == 0);
}

#[test]
fn a_person_inspects_a_2026_07_28_server_over_stdio_and_http_in_chromium() {
    let Some(browser) = Browser::start() else {
        return;
    };
    // Found by the era probe (`--era auto`, the default).
    let inspector = Inspector::start(&["--stdio", "--", BIN, "serve", "--stdio"]);
    stateless_path(&browser, &inspector);
    drop(inspector);

    let server = HttpFixture::start(&[]);
    let inspector = Inspector::start(&["--era", "stateless", &server.url]);
    stateless_path(&browser, &inspector);
    browser.wait_text("#target", "streamable");
    browser.wait_text("#frames", "POST /mcp");
}

/// The Python SDK's server of the interop tests: a tool with integer arguments, a resource
/// template filled in on the page, and (in the handshake era: its `sample` tool asks through
/// the session, which a 2026-07-28 call has not) a sampling request answered from its card.
fn python_path(browser: &Browser, inspector: &Inspector, era: &str) {
    open_page(browser, inspector);
    browser.wait_text("#server-summary", "mcp-sansio-interop-py-server");
    call_tool(browser, "add", &[("a", "40"), ("b", "2")]);
    browser.wait_text("#tool-result", "42");
    // FastMCP returns an `int` as structured content too (its output schema's `result`).
    browser.wait_text("#tool-result .content.structured", "\"result\": 42");
    browser.wait_count("#frames details[data-method='tools/call']", |n| n >= 2);

    let (_, state) = inspector.get("api/state");
    assert_eq!(state["era"], era, "{state}");
    if era == "stateless" {
        assert_eq!(state["protocolVersion"], "2026-07-28", "{state}");
        browser.wait_count("#frames details[data-method='initialize']", |n| n == 0);
    } else {
        sampling_path(browser);
    }

    browser.click("#tabs button[data-tab='resources']");
    browser.click("#list-resources");
    browser.click("li[data-template='greeting://{name}']");
    browser.type_into("#var-name", "Ada");
    browser.click("#read-template");
    browser.wait_text("#resource-result", "Hello, Ada!");
}

/// The Python SDK's `sample` tool: its sampling request answered from the card.
fn sampling_path(browser: &Browser) {
    call_tool(browser, "sample", &[("prompt", "Say hi")]);
    browser.wait_text(".card[data-kind='sampling']", "Say hi");
    browser.type_into(".card[data-kind='sampling'] textarea", "hi there");
    browser.click(".card[data-kind='sampling'] button[data-action='send']");
    browser.wait_text("#tool-result", "sampled: hi there");
    browser.wait_count(".card", |n| n == 0);
}

/// The Python interpreter of scripts/install-peers, or `None` (skipped) outside CI without it.
fn python_peer() -> Option<String> {
    if !peers::ready() {
        return None;
    }
    Some(std::env::var("MCP_PYTHON").expect("MCP_PYTHON set by .ci-cache/env"))
}

/// The Python SDK server over Streamable HTTP on a free loopback port, killed by PID when
/// dropped.
struct PythonHttp {
    child: Child,
    url: String,
}

impl PythonHttp {
    fn start(python: &str, script: &str) -> PythonHttp {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new(python)
            .args([script, "--http", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the Python SDK server");
        let server = PythonHttp {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        };
        let until = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < until,
                "the Python SDK server did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }
}

impl Drop for PythonHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_person_inspects_the_python_sdk_server_over_stdio_and_http_in_chromium() {
    let Some(python) = python_peer() else {
        return;
    };
    let Some(browser) = Browser::start() else {
        return;
    };
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/interop/py/sdk_server.py"
    );
    // The SDK answers `server/discover`: the probe finds 2026-07-28.
    let inspector = Inspector::start(&["--stdio", "--", &python, script]);
    python_path(&browser, &inspector, "stateless");
    drop(inspector);
    let inspector = Inspector::start(&["--era", "stateful", "--stdio", "--", &python, script]);
    python_path(&browser, &inspector, "stateful");
    drop(inspector);

    let server = PythonHttp::start(&python, script);
    let inspector = Inspector::start(&["--era", "stateful", &server.url]);
    python_path(&browser, &inspector, "stateful");
    drop(inspector);
    let inspector = Inspector::start(&[&server.url]);
    python_path(&browser, &inspector, "stateless");
    browser.wait_text("#frames", "POST /mcp");
}

#[test]
fn a_person_inspects_the_python_sdk_server_over_http_sse_in_chromium() {
    let Some(python) = python_peer() else {
        return;
    };
    let Some(browser) = Browser::start() else {
        return;
    };
    // The SDK's own `sse_app` (2024-11-05): GET /sse, POST /messages/.
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/interop/py/sse_transport_server.py"
    );
    let mut command = Command::new(python);
    command.arg(script);
    let server = harness::serve_announced(command, Duration::from_secs(60));
    // The era probe's POST to /sse is refused (405): the handshake over HTTP+SSE follows.
    let inspector = Inspector::start(&[&server.url]);
    python_path(&browser, &inspector, "stateful");
    browser.wait_text("#target", "sse");
    browser.wait_text("#frames", "GET /sse");
}
