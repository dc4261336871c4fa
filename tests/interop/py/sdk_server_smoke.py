"""Smoke check of tests/interop/py/sdk_server.py with the official Python SDK client.

It shows the SDK server starts and serves what our CLI client will later be checked against.
Usage: $MCP_PYTHON tests/interop/py/sdk_server_smoke.py   (spawns sdk_server.py with this Python)
Prints `PASS name` / `FAIL name: why` per check, then `N passed, N failed`; exits 1 on failure.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

SERVER = Path(__file__).resolve().parent / "sdk_server.py"


async def main() -> int:
    results: list[tuple[str, str | None]] = []

    def record(name: str, ok: bool, why: str) -> None:
        results.append((name, None if ok else why))
        print(f"PASS {name}" if ok else f"FAIL {name}: {why}", flush=True)

    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    with anyio.fail_after(60):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            record("initialize", init.server_info.name == "mcp-sansio-interop-py-server", f"{init.server_info}")
            tools = sorted(t.name for t in (await session.list_tools()).tools)
            record("tools-list", tools == ["add", "echo", "sample"], f"tools {tools}")
            added = await session.call_tool("add", {"a": 2, "b": 3})
            record(
                "call-add",
                added.content[0].text == "5" and added.structured_content == {"result": 5},
                f"{added.content} {added.structured_content}",
            )
            echoed = await session.call_tool("echo", {"text": "héllo"})
            record("call-echo", echoed.content[0].text == "héllo", f"{echoed.content}")
            hello = await session.read_resource("greeting://hello")
            record("read-resource", hello.contents[0].text == "Hello, world!", f"{hello.contents}")
            bob = await session.read_resource("greeting://Bob")
            record("read-template", bob.contents[0].text == "Hello, Bob!", f"{bob.contents}")
            prompt = await session.get_prompt("greet", {"name": "Ada"})
            text = prompt.messages[0].content.text
            record("get-prompt", text == "Please greet Ada.", f"{prompt.messages}")
    failed = sum(1 for _, why in results if why is not None)
    print(f"{len(results) - failed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(anyio.run(main))
