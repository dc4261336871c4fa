"""Interop client written with the official Python MCP SDK (`mcp`: ClientSession + stdio_client).

It spawns the server command given on its command line and drives it through every feature of
the conformance "everything" fixture (docs/fixture.md) plus the mcp-sansio extras
(`test_slow` for cancellation, paging of lists with MCP_SANSIO_PAGE_SIZE) and the fixture's timed
extras (late additions at 2 s, watched-resource updates).

Usage: $MCP_PYTHON tests/interop/py/fixture_client.py [--] SERVER_COMMAND [ARGS...]
       $MCP_PYTHON tests/interop/py/fixture_client.py --url http://127.0.0.1:PORT/mcp
       $MCP_PYTHON tests/interop/py/fixture_client.py --sse http://127.0.0.1:PORT/sse
With --url it talks Streamable HTTP (`streamable_http_client`) instead of stdio, and also checks
`test_reconnection` (SEP-1699: the server closes the POST stream after its priming event; the SDK
resumes by GET with Last-Event-ID and gets the result there). With --sse it talks the
HTTP+SSE transport of 2024-11-05 (`sse_client`: GET, `endpoint` event, POSTs) and checks that the
`endpoint` event named a session.
Prints `PASS name` or `FAIL name: why` per check, then `N passed, N failed`; exits 1 on failure.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any, Awaitable, Callable

import anyio
import mcp.types as types
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

# setLevel and (un)subscribe are deprecated for the 2026 protocol revision, but they are exactly
# what a 2025-11-25 session must exercise.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

FIXTURE: dict[str, Any] = json.loads((Path(__file__).resolve().parent.parent / "fixture.json").read_text())
REQUEST_TIMEOUT_S = 10.0
PAGE_SIZE = int(os.environ.get("MCP_SANSIO_PAGE_SIZE") or "0")
SAMPLED_PREFIX = "interop-sampled:"
EXTRAS_WAIT_S = 8.0


class CheckFailed(Exception):
    """A check's expectation did not hold."""


def ensure(condition: bool, why: str) -> None:
    if not condition:
        raise CheckFailed(why)


def wire(value: Any) -> Any:
    """The JSON shape of an SDK model (or list of them), as it was on the wire."""
    if isinstance(value, list):
        return [wire(v) for v in value]
    if hasattr(value, "model_dump"):
        return value.model_dump(by_alias=True, exclude_none=True, mode="json")
    return value


def same_json(actual: Any, expected: Any, what: str) -> None:
    got = wire(actual)
    ensure(got == expected, f"{what}: got {json.dumps(got)}, want {json.dumps(expected)}")


def expected_prompt_messages(name: str, args: dict[str, str] | None) -> list[dict[str, Any]]:
    args = args or {}

    def user(content: dict[str, Any]) -> dict[str, Any]:
        return {"role": "user", "content": content}

    if name == "test_simple_prompt":
        return [user({"type": "text", "text": "This is a simple prompt for testing."})]
    if name == "test_prompt_with_arguments":
        text = f"Prompt with arguments: arg1='{args['arg1']}', arg2='{args['arg2']}'"
        return [user({"type": "text", "text": text})]
    if name == "test_prompt_with_embedded_resource":
        resource = {
            "uri": args["resourceUri"],
            "mimeType": "text/plain",
            "text": "Embedded resource content for testing.",
        }
        return [
            user({"type": "resource", "resource": resource}),
            user({"type": "text", "text": "Please process the embedded resource above."}),
        ]
    if name == "test_prompt_with_image":
        return [
            user({"type": "image", "data": FIXTURE["png"], "mimeType": "image/png"}),
            user({"type": "text", "text": "Please analyze the image above."}),
        ]
    raise ValueError(f"no expectation for prompt {name}")


def fill_elicitation(schema: dict[str, Any]) -> dict[str, Any]:
    """Answers a form: each field's default, else its first allowed value, else a marker."""
    content: dict[str, Any] = {}
    for field, prop in (schema.get("properties") or {}).items():
        items = prop.get("items") or {}
        if "default" in prop:
            content[field] = prop["default"]
        elif prop.get("type") == "array":
            first = (items.get("enum") or [None])[0]
            if first is None and items.get("anyOf"):
                first = items["anyOf"][0].get("const")
            content[field] = [] if first is None else [first]
        elif prop.get("enum"):
            content[field] = prop["enum"][0]
        elif prop.get("oneOf"):
            content[field] = prop["oneOf"][0]["const"]
        elif prop.get("type") == "integer":
            content[field] = 7
        elif prop.get("type") == "number":
            content[field] = 7.5
        elif prop.get("type") == "boolean":
            content[field] = True
        else:
            content[field] = f"interop answer for {field}"
    return content


def text_of(result: types.CallToolResult) -> str | None:
    for item in result.content:
        if isinstance(item, types.TextContent):
            return item.text
    return None


def is_empty_result(result: Any) -> bool:
    return result.model_dump(by_alias=True, exclude_unset=True, exclude_none=True) == {}


class Recorder:
    """What the server sent us outside of responses."""

    def __init__(self) -> None:
        self.sampling: list[dict[str, Any]] = []
        self.elicitation: list[dict[str, Any]] = []
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.transport_errors: list[Exception] = []
        # Every other server notification, as (method, params), in arrival order.
        self.notifications: list[tuple[str | None, dict[str, Any]]] = []

    async def on_sampling(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        raw = wire(params)
        self.sampling.append(raw)
        first = (raw.get("messages") or [{}])[0].get("content") or {}
        prompt = first.get("text", "") if isinstance(first, dict) else ""
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"{SAMPLED_PREFIX}{prompt}"),
            model="interop-test-model",
            stop_reason="endTurn",
        )

    async def on_elicitation(self, context: ClientRequestContext, params: Any) -> types.ElicitResult:
        raw = wire(params)
        self.elicitation.append(raw)
        return types.ElicitResult(action="accept", content=fill_elicitation(raw.get("requestedSchema") or {}))

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            self.transport_errors.append(message)
            return
        params = getattr(message, "params", None)
        self.notifications.append((getattr(message, "method", None), wire(params) if params else {}))


class Runner:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    async def check(self, name: str, fn: Callable[[], Awaitable[None]]) -> None:
        try:
            with anyio.fail_after(30):
                await fn()
        except CheckFailed as err:
            self.failed += 1
            print(f"FAIL {name}: {err}", flush=True)
        except Exception as err:  # any SDK error fails the check, with its type for the log
            self.failed += 1
            why = " ".join(f"{type(err).__name__}: {err}".split())
            print(f"FAIL {name}: {why}", flush=True)
            if os.environ.get("INTEROP_DEBUG"):
                traceback.print_exc()
        else:
            self.passed += 1
            print(f"PASS {name}", flush=True)


async def list_all(fetch: Callable[[types.PaginatedRequestParams | None], Awaitable[Any]], key: str):
    """Follows nextCursor to the end; returns every item and the page sizes."""
    items: list[Any] = []
    pages: list[int] = []
    cursor: str | None = None
    for _ in range(1000):
        result = await fetch(None if cursor is None else types.PaginatedRequestParams(cursor=cursor))
        page = getattr(result, key)
        items.extend(page)
        pages.append(len(page))
        if result.next_cursor is None:
            return items, pages
        cursor = result.next_cursor
    raise CheckFailed("more than 1000 pages: the cursor never ends")


def check_paging(items: list[Any], pages: list[int], key_of: Callable[[Any], str], expected: list[str], what: str):
    keys = [key_of(i) for i in items]
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    ensure(not dupes, f"{what} seen more than once: {', '.join(dupes)}")
    missing = [k for k in expected if k not in keys]
    ensure(not missing, f"{what} missing: {', '.join(missing)}")
    if PAGE_SIZE > 0:
        ensure(all(n <= PAGE_SIZE for n in pages), f"page sizes {pages} exceed MCP_SANSIO_PAGE_SIZE={PAGE_SIZE}")
        want = -(-len(items) // PAGE_SIZE)
        ensure(len(pages) >= want, f"{len(items)} items came in {len(pages)} page(s), want {want}")


async def run_checks(session: ClientSession, rec: Recorder, r: Runner, http: bool = False) -> None:  # noqa: C901
    state: dict[str, Any] = {}

    async def initialize() -> None:
        result = await session.initialize()
        caps = wire(result.capabilities)
        for cap in ("tools", "resources", "prompts", "logging", "completions"):
            ensure(cap in caps, f"capability {cap} not declared: {json.dumps(caps)}")
        ensure(caps["resources"].get("subscribe") is True, "resources.subscribe not declared")
        ensure(bool(result.server_info.name and result.server_info.version), "serverInfo incomplete")

    await r.check("initialize", initialize)

    async def list_tools(params):
        return await session.list_tools(params=params)

    async def list_resources(params):
        return await session.list_resources(params=params)

    async def list_prompts(params):
        return await session.list_prompts(params=params)

    async def list_templates(params):
        return await session.list_resource_templates(params=params)

    async def tools_list() -> None:
        tools, _ = await list_all(list_tools, "tools")
        state["tools"] = tools
        for tool in tools:
            ensure(bool(tool.name), f"tool without a name: {wire(tool)}")
            ensure(bool(tool.description), f"tool {tool.name} has no description")
            ensure(tool.input_schema.get("type") == "object", f"tool {tool.name} inputSchema is not an object")
        names = [t.name for t in tools]
        missing = [n for n in FIXTURE["tools"] if n not in names]
        ensure(not missing, f"missing tools: {', '.join(missing)}")

    await r.check("tools-list", tools_list)

    async def json_schema_2020_12() -> None:
        tool = next((t for t in state.get("tools", []) if t.name == "json_schema_2020_12_tool"), None)
        ensure(tool is not None, "json_schema_2020_12_tool not listed")
        same_json(tool.input_schema, FIXTURE["jsonSchema202012"], "inputSchema")

    await r.check("tools-list-json-schema-2020-12", json_schema_2020_12)

    async def paging(fetch, key, key_of, expected, what):
        items, pages = await list_all(fetch, key)
        check_paging(items, pages, key_of, expected, what)

    await r.check("pagination-tools", lambda: paging(list_tools, "tools", lambda t: t.name, FIXTURE["tools"], "tool"))
    await r.check(
        "pagination-resources",
        lambda: paging(list_resources, "resources", lambda x: str(x.uri), FIXTURE["resources"], "resource"),
    )
    await r.check(
        "pagination-prompts", lambda: paging(list_prompts, "prompts", lambda p: p.name, FIXTURE["prompts"], "prompt")
    )

    async def invalid_cursor() -> None:
        try:
            await session.list_tools(params=types.PaginatedRequestParams(cursor="not-a-cursor-this-server-issued"))
        except MCPError as err:
            ensure(err.code == -32602, f"error code {err.code}, want -32602")
            return
        raise CheckFailed("an unknown cursor was accepted")

    await r.check("pagination-invalid-cursor", invalid_cursor)

    async def call(name: str, args: dict[str, Any] | None = None, **kw: Any) -> types.CallToolResult:
        return await session.call_tool(name, args, read_timeout_seconds=REQUEST_TIMEOUT_S, **kw)

    def content_check(tool: str, key: str, args: dict[str, Any] | None = None):
        async def run() -> None:
            result = await call(tool, args)
            same_json(result.content, FIXTURE["content"][key], "content")
            ensure(not result.is_error, "isError set")

        return run

    await r.check("tools-call-simple-text", content_check("test_simple_text", "simpleText"))  # no arguments
    await r.check("tools-call-image", content_check("test_image_content", "image", {}))
    await r.check("tools-call-audio", content_check("test_audio_content", "audio", {}))
    await r.check("tools-call-embedded-resource", content_check("test_embedded_resource", "embedded", {}))
    await r.check("tools-call-mixed-content", content_check("test_multiple_content_types", "mixed", {}))

    async def set_level() -> None:
        result = await session.set_logging_level("debug")
        ensure(is_empty_result(result), f"result is not {{}}: {wire(result)}")

    await r.check("logging-set-level", set_level)

    async def with_logging() -> None:
        rec.logs.clear()
        result = await call("test_tool_with_logging", {})
        ensure(bool(text_of(result)) and not result.is_error, f"the call failed: {wire(result.content)}")
        await anyio.sleep(0.2)
        ensure(len(rec.logs) >= 3, f"{len(rec.logs)} notifications/message, want >= 3")
        data = [m.data for m in rec.logs]
        want = ["Tool execution started", "Tool processing data", "Tool execution completed"]
        ensure(data == want, f"log data {data}, want {want}")
        ensure(all(m.level == "info" for m in rec.logs), f"levels {[m.level for m in rec.logs]}")

    await r.check("tools-call-with-logging", with_logging)

    async def level_filters() -> None:
        await session.set_logging_level("error")
        rec.logs.clear()
        result = await call("test_tool_with_logging", {})
        ensure(bool(text_of(result)) and not result.is_error, f"the call failed: {wire(result.content)}")
        await anyio.sleep(0.2)
        ensure(not rec.logs, f"{len(rec.logs)} info messages arrived at level error")
        await session.set_logging_level("debug")

    await r.check("logging-level-filters", level_filters)

    async def with_progress() -> None:
        updates: list[tuple[float, float | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            updates.append((progress, total))

        result = await call("test_tool_with_progress", {}, progress_callback=on_progress)
        ensure(bool(text_of(result)), "no text result")
        ensure(len(updates) >= 3, f"{len(updates)} progress notifications, want >= 3")
        ensure(all(b[0] > a[0] for a, b in zip(updates, updates[1:])), f"progress not increasing: {updates}")
        ensure(updates == [(0, 100), (50, 100), (100, 100)], f"progress/total {updates}")

    await r.check("tools-call-with-progress", with_progress)

    async def error_result() -> None:
        result = await call("test_error_handling", {})
        ensure(result.is_error is True, f"isError is {result.is_error}")
        same_json(result.content, FIXTURE["content"]["error"], "content")

    await r.check("tools-call-error", error_result)

    async def sampling() -> None:
        rec.sampling.clear()
        prompt = "interop sampling prompt"
        result = await call("test_sampling", {"prompt": prompt})
        ensure(len(rec.sampling) == 1, f"{len(rec.sampling)} sampling/createMessage requests")
        params = rec.sampling[0]
        want = [{"role": "user", "content": {"type": "text", "text": prompt}}]
        ensure(params.get("messages") == want, f"messages {params.get('messages')}")
        ensure(params.get("maxTokens") == 100, f"maxTokens {params.get('maxTokens')}")
        ensure(text_of(result) == f"LLM response: {SAMPLED_PREFIX}{prompt}", f"result {wire(result.content)}")

    await r.check("tools-call-sampling", sampling)

    async def elicitation() -> None:
        rec.elicitation.clear()
        message = "interop elicitation message"
        result = await call("test_elicitation", {"message": message})
        ensure(len(rec.elicitation) == 1, f"{len(rec.elicitation)} elicitation/create requests")
        params = rec.elicitation[0]
        ensure(params.get("message") == message, f"message {params.get('message')!r}")
        schema = params.get("requestedSchema") or {}
        ensure(schema.get("type") == "object", "requestedSchema is not an object schema")
        text = text_of(result) or ""
        ensure("action=accept" in text, f"result does not echo the accept: {text}")
        for value in fill_elicitation(schema).values():
            ensure(json.dumps(value) in text, f"result does not echo {json.dumps(value)}: {text}")

    await r.check("tools-call-elicitation", elicitation)

    async def sep1034() -> None:
        rec.elicitation.clear()
        result = await call("test_elicitation_sep1034_defaults", {})
        ensure(len(rec.elicitation) == 1, f"{len(rec.elicitation)} elicitation/create requests")
        props = (rec.elicitation[0].get("requestedSchema") or {}).get("properties") or {}
        for field, want in FIXTURE["sep1034"].items():
            got = props.get(field) or {}
            ensure(got.get("type") == want["type"], f"{field}.type {got.get('type')!r}, want {want['type']}")
            ensure(
                got.get("default") == want["default"] and type(got.get("default")) is type(want["default"]),
                f"{field}.default {got.get('default')!r}, want {want['default']!r}",
            )
        ensure(props["status"].get("enum") == ["active", "inactive", "pending"], f"status.enum {props['status']}")
        ensure("action=accept" in (text_of(result) or ""), f"result {wire(result.content)}")

    await r.check("elicitation-sep1034-defaults", sep1034)

    async def sep1330() -> None:
        rec.elicitation.clear()
        result = await call("test_elicitation_sep1330_enums", {})
        ensure(len(rec.elicitation) == 1, f"{len(rec.elicitation)} elicitation/create requests")
        p = (rec.elicitation[0].get("requestedSchema") or {}).get("properties") or {}
        u = p.get("untitledSingle") or {}
        ensure(
            u.get("type") == "string" and isinstance(u.get("enum"), list) and "oneOf" not in u and "enumNames" not in u,
            f"untitledSingle {u}",
        )
        t = p.get("titledSingle") or {}
        ensure(
            t.get("type") == "string"
            and "enum" not in t
            and isinstance(t.get("oneOf"), list)
            and all("const" in o and o.get("title") for o in t["oneOf"]),
            f"titledSingle {t}",
        )
        legacy = p.get("legacyEnum") or {}
        ensure(
            legacy.get("type") == "string"
            and isinstance(legacy.get("enum"), list)
            and isinstance(legacy.get("enumNames"), list)
            and len(legacy["enum"]) == len(legacy["enumNames"]),
            f"legacyEnum {legacy}",
        )
        um = p.get("untitledMulti") or {}
        um_items = um.get("items") or {}
        ensure(
            um.get("type") == "array"
            and um_items.get("type") == "string"
            and isinstance(um_items.get("enum"), list)
            and "anyOf" not in um_items,
            f"untitledMulti {um}",
        )
        tm = p.get("titledMulti") or {}
        tm_items = tm.get("items") or {}
        ensure(
            tm.get("type") == "array"
            and isinstance(tm_items.get("anyOf"), list)
            and "enum" not in tm_items
            and all("const" in o and o.get("title") for o in tm_items["anyOf"]),
            f"titledMulti {tm}",
        )
        ensure("action=accept" in (text_of(result) or ""), f"result {wire(result.content)}")

    await r.check("elicitation-sep1330-enums", sep1330)

    async def resources_list() -> None:
        items, _ = await list_all(list_resources, "resources")
        for res in items:
            ensure(bool(str(res.uri)) and bool(res.name), f"resource without uri/name: {wire(res)}")
        uris = [str(x.uri) for x in items]
        missing = [u for u in FIXTURE["resources"] if u not in uris]
        ensure(not missing, f"missing resources: {', '.join(missing)}")

    await r.check("resources-list", resources_list)

    async def read(uri: str, key: str) -> None:
        result = await session.read_resource(uri)
        same_json(result.contents, FIXTURE["content"][key], "contents")

    await r.check("resources-read-text", lambda: read("test://static-text", "staticText"))
    await r.check("resources-read-binary", lambda: read("test://static-binary", "staticBinary"))

    async def templates_list() -> None:
        items, _ = await list_all(list_templates, "resource_templates")
        ensure(
            any(t.uri_template == "test://template/{id}/data" and t.name for t in items),
            f"template test://template/{{id}}/data not listed: {wire(items)}",
        )

    await r.check("resources-templates-list", templates_list)

    async def templates_read() -> None:
        uri = "test://template/123/data"
        result = await session.read_resource(uri)
        contents = wire(result.contents)
        ensure(len(contents) == 1 and contents[0].get("uri") == uri, f"contents {contents}")
        ensure(contents[0].get("mimeType") == "application/json", f"mimeType {contents[0].get('mimeType')}")
        want = {"id": "123", "templateTest": True, "data": "Data for ID: 123"}
        ensure(json.loads(contents[0]["text"]) == want, f"text {contents[0]['text']}")

    await r.check("resources-templates-read", templates_read)

    async def subscribe() -> None:
        result = await session.subscribe_resource("test://watched-resource")
        ensure(is_empty_result(result), f"result is not {{}}: {wire(result)}")

    async def unsubscribe() -> None:
        result = await session.unsubscribe_resource("test://watched-resource")
        ensure(is_empty_result(result), f"result is not {{}}: {wire(result)}")

    await r.check("resources-subscribe", subscribe)
    await r.check("resources-unsubscribe", unsubscribe)

    async def prompts_list() -> None:
        items, _ = await list_all(list_prompts, "prompts")
        for p in items:
            ensure(bool(p.name) and bool(p.description), f"prompt without name/description: {wire(p)}")
        names = [p.name for p in items]
        missing = [n for n in FIXTURE["prompts"] if n not in names]
        ensure(not missing, f"missing prompts: {', '.join(missing)}")
        with_args = next(p for p in items if p.name == "test_prompt_with_arguments")
        got = [(a.name, a.required is True) for a in with_args.arguments or []]
        ensure(got == [("arg1", True), ("arg2", True)], f"test_prompt_with_arguments arguments {got}")

    await r.check("prompts-list", prompts_list)

    for name, args in [
        ("test_simple_prompt", None),
        ("test_prompt_with_arguments", {"arg1": "testValue1", "arg2": "testValue2"}),
        ("test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"}),
        ("test_prompt_with_image", None),
    ]:

        async def get_prompt(name: str = name, args: dict[str, str] | None = args) -> None:
            result = await session.get_prompt(name, args)
            same_json(result.messages, expected_prompt_messages(name, args), "messages")

        await r.check(f"prompts-get {name}", get_prompt)

    async def completion() -> None:
        ref = types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments")
        result = await session.complete(ref, {"name": "arg1", "value": "test"})
        ensure(isinstance(result.completion.values, list), f"completion.values {wire(result)}")

    await r.check("completion-complete", completion)

    async def ping() -> None:
        result = await session.send_ping()
        ensure(is_empty_result(result), f"result is not {{}}: {wire(result)}")

    await r.check("ping", ping)

    async def cancellation() -> None:
        started = time.monotonic()
        with anyio.move_on_after(0.2) as scope:
            await call("test_slow", {"ms": 10_000})
        elapsed = time.monotonic() - started
        ensure(scope.cancelled_caught, "the slow call completed before the cancel")
        ensure(elapsed < 2.0, f"cancel took {elapsed:.2f} s")
        with anyio.fail_after(1.0):
            await session.send_ping()
        quick = await call("test_slow", {"ms": 10})
        ensure(bool(text_of(quick)), "a short test_slow after the cancel returned no text")
        await anyio.sleep(0.3)

    await r.check("cancellation", cancellation)

    if http:

        async def reconnection() -> None:
            result = await call("test_reconnection", {})
            ensure(text_of(result) == "Reconnection test completed", f"result {wire(result)}")

        await r.check("sse-resume-test_reconnection", reconnection)

    # The timed reference extras (docs/fixture.md): 2 s after start the late tool, resource and
    # prompt arrive, each announced by its list_changed; a subscriber of test://watched-resource
    # hears notifications/resources/updated (every 3 s). Waits are bounded.
    async def wait_for(found: Callable[[], bool], what: str) -> None:
        with anyio.move_on_after(EXTRAS_WAIT_S):
            while not found():
                await anyio.sleep(0.05)
        ensure(found(), f"{what} did not arrive within {EXTRAS_WAIT_S} s")

    async def late_additions() -> None:
        for kind in ("tools", "resources", "prompts"):
            method = f"notifications/{kind}/list_changed"
            await wait_for(lambda m=method: any(n == m for n, _ in rec.notifications), method)
        tools, _ = await list_all(list_tools, "tools")
        ensure(any(t.name == "test_dynamic_tool" for t in tools), "test_dynamic_tool not listed")
        resources, _ = await list_all(list_resources, "resources")
        ensure(any(str(x.uri) == "test://dynamic-resource" for x in resources), "test://dynamic-resource not listed")
        prompts, _ = await list_all(list_prompts, "prompts")
        ensure(any(p.name == "test_dynamic_prompt" for p in prompts), "test_dynamic_prompt not listed")
        called = await call("test_dynamic_tool", None)
        ensure(not called.is_error and bool(text_of(called)), f"test_dynamic_tool: {wire(called)}")
        read = wire((await session.read_resource("test://dynamic-resource")).contents)
        ensure(read and read[0].get("uri") == "test://dynamic-resource", f"read: {read}")
        prompt = wire((await session.get_prompt("test_dynamic_prompt", None)).messages)
        ensure(prompt and prompt[0].get("role") == "user", f"prompt: {prompt}")

    await r.check("late-additions", late_additions)

    async def resources_updated() -> None:
        watched = "test://watched-resource"
        start = len(rec.notifications)

        def updated() -> bool:
            return any(
                n == "notifications/resources/updated" and p.get("uri") == watched
                for n, p in rec.notifications[start:]
            )

        await session.subscribe_resource(watched)
        await wait_for(updated, "notifications/resources/updated")
        await session.unsubscribe_resource(watched)

    await r.check("resources-updated", resources_updated)

    async def no_transport_errors() -> None:
        ensure(not rec.transport_errors, "; ".join(repr(e) for e in rec.transport_errors))

    await r.check("no-transport-errors", no_transport_errors)


async def main(argv: list[str]) -> int:
    if argv and argv[0] == "--":
        argv = argv[1:]
    url = argv[1] if len(argv) == 2 and argv[0] == "--url" else None
    sse_url = argv[1] if len(argv) == 2 and argv[0] == "--sse" else None
    if not argv or (argv[0] in ("--url", "--sse") and url is None and sse_url is None):
        print("usage: fixture_client.py [--] SERVER_COMMAND [ARGS...] | --url URL | --sse URL", file=sys.stderr)
        return 2
    rec = Recorder()
    runner = Runner()
    sse_sessions: list[str] = []
    if url is not None:
        transport = streamable_http_client(url)
    elif sse_url is not None:
        transport = sse_client(sse_url, on_session_created=sse_sessions.append)
    else:
        transport = stdio_client(StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ)))
    with anyio.fail_after(120):
        async with transport as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(
                read,
                write,
                read_timeout_seconds=REQUEST_TIMEOUT_S,
                sampling_callback=rec.on_sampling,
                elicitation_callback=rec.on_elicitation,
                logging_callback=rec.on_log,
                message_handler=rec.on_message,
                client_info=types.Implementation(name="mcp-sansio-interop-py", version="0.1.0"),
            ) as session:
                await run_checks(session, rec, runner, http=url is not None)
                if sse_url is not None:

                    async def sse_transport_endpoint() -> None:
                        ensure(
                            len(sse_sessions) == 1 and re.fullmatch(r"[0-9a-f]{32}", sse_sessions[0]) is not None,
                            f"the endpoint event named sessions {sse_sessions}",
                        )

                    await runner.check("sse-transport-endpoint", sse_transport_endpoint)
    print(f"{runner.passed} passed, {runner.failed} failed", flush=True)
    return 0 if runner.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1:]))
