"""A small MCP server over stdio written with the official Python SDK (`mcp` 2.x, MCPServer).

It is the peer our CLI client drives in the interop tests. It serves:
  - tool `add {a: integer, b: integer}` -> text "<a+b>" plus structuredContent {"result": a+b}
    (the SDK derives an outputSchema from the return annotation);
  - tool `echo {text: string}` -> text "<text>" plus structuredContent {"result": text};
  - resource `greeting://hello` (text/plain "Hello, world!") and template `greeting://{name}`;
  - prompt `greet {name}` -> one user message "Please greet <name>.";
  - tool `sample {prompt: string, times?: integer}` -> asks the client to sample `times` times
    (default 1, at most 10; `sampling/createMessage`, one user message, maxTokens 100) and returns
    the answers joined by "; ", each "sampled: <the answer's text>", or
    "refused: <the client's error message>" when the client answered with an error.

Run: $MCP_PYTHON tests/interop/py/sdk_server.py               (stdio)
     $MCP_PYTHON tests/interop/py/sdk_server.py --http PORT   (Streamable HTTP at 127.0.0.1:PORT/mcp)
"""

import sys

from mcp import types
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError

server = MCPServer(name="mcp-sansio-interop-py-server", version="0.1.0")


@server.tool(description="Adds two integers.")
def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="Returns its text unchanged.")
def echo(text: str) -> str:
    return text


@server.tool(description="Asks the client to sample an answer to the prompt, `times` times in a row.")
async def sample(prompt: str, ctx: Context, times: int = 1) -> str:
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))
    answers = []
    for _ in range(max(1, min(times, 10))):
        try:
            result = await ctx.session.create_message([message], max_tokens=100, related_request_id=ctx.request_id)
        except MCPError as error:
            answers.append(f"refused: {error}")
            continue
        content = result.content
        answers.append(f"sampled: {content.text if isinstance(content, types.TextContent) else content}")
    return "; ".join(answers)


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
