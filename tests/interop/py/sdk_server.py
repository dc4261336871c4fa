"""A small MCP server over stdio written with the official Python SDK (`mcp` 2.x, MCPServer).

It is the peer our CLI client drives in the interop tests. It serves:
  - tool `add {a: integer, b: integer}` -> text "<a+b>" plus structuredContent {"result": a+b}
    (the SDK derives an outputSchema from the return annotation);
  - tool `echo {text: string}` -> text "<text>" plus structuredContent {"result": text};
  - resource `greeting://hello` (text/plain "Hello, world!") and template `greeting://{name}`;
  - prompt `greet {name}` -> one user message "Please greet <name>.".

Run: $MCP_PYTHON tests/interop/py/sdk_server.py               (stdio)
     $MCP_PYTHON tests/interop/py/sdk_server.py --http PORT   (Streamable HTTP at 127.0.0.1:PORT/mcp)
"""

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer(name="mcp-sansio-interop-py-server", version="0.1.0")


@server.tool(description="Adds two integers.")
def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="Returns its text unchanged.")
def echo(text: str) -> str:
    return text


@server.resource("greeting://hello", name="hello", description="A fixed greeting.", mime_type="text/plain")
def hello() -> str:
    return "Hello, world!"


@server.resource("greeting://{name}", name="greeting", description="A greeting for a name.", mime_type="text/plain")
def greeting(name: str) -> str:
    return f"Hello, {name}!"


@server.prompt(description="Asks the model to greet someone.")
def greet(name: str) -> str:
    return f"Please greet {name}."


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
