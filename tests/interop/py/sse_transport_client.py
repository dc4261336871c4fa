"""Drives an HTTP+SSE (2024-11-05) MCP server with the official Python SDK's
`sse_client` + `ClientSession`: connect, list tools, call `echo` with no arguments. Prints one
JSON line: {"protocolVersion": ..., "server": ..., "tools": [names], "echo": <first text>}.
Exits non-zero on any error (or after 30 s).

Run: $MCP_PYTHON tests/interop/py/sse_transport_client.py http://127.0.0.1:PORT/sse
"""

import json
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.sse import sse_client


async def main(url: str) -> None:
    with anyio.fail_after(30):
        async with sse_client(url) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                tools = await session.list_tools()
                echo = await session.call_tool("echo", {})
                print(
                    json.dumps(
                        {
                            "protocolVersion": str(init.protocol_version),
                            "server": init.server_info.name,
                            "tools": [t.name for t in tools.tools],
                            "echo": echo.content[0].text if echo.content else None,
                        }
                    ),
                    flush=True,
                )


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
