"""A stdio MCP server of the handshake era that never answers before `initialize`.

Plain Python (no SDK): it stands for servers that drop or hold requests sent before the
handshake, so a client's era probe (`server/discover`) gets no answer at all and must fall back
to `initialize` after its timeout. After the handshake it serves one tool, `add {a, b}`.
"""

import json
import sys

initialized = False


def reply(message_id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    method = message.get("method")
    message_id = message.get("id")
    if method == "initialize":
        initialized = True
        reply(message_id, {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "quiet-until-initialize", "version": "0.1.0"},
        })
    elif not initialized or message_id is None:
        continue  # the point of this server: silence before the handshake
    elif method == "tools/list":
        reply(message_id, {"tools": [{
            "name": "add",
            "inputSchema": {"type": "object", "properties": {
                "a": {"type": "integer"}, "b": {"type": "integer"}}},
        }]})
    elif method == "tools/call":
        arguments = message.get("params", {}).get("arguments", {})
        total = arguments.get("a", 0) + arguments.get("b", 0)
        reply(message_id, {"content": [{"type": "text", "text": str(total)}]})
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "error": {
            "code": -32601, "message": "Method not found"}}) + "\n")
        sys.stdout.flush()
