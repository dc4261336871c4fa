"""The Python SDK server of sdk_server.py (same tools, resources and prompt), served over the
HTTP+SSE transport (2024-11-05) by the SDK's own `sse_app`: GET /sse, POST
/messages/?session_id=... . The peer our auto-detecting client must find as sse_transport (a probe
POST to /sse gets 405 from Starlette, so the client falls back to GET).

It listens on 127.0.0.1 on a free port, prints `listening on http://127.0.0.1:PORT/sse` on
stderr, and exits when its stdin closes (so a test harness never leaves it behind).

Run: $MCP_PYTHON tests/interop/py/sse_transport_server.py
"""

import os
import socket
import sys

import anyio
import uvicorn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sdk_server import server  # noqa: E402  (the shared feature set)


async def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    app = server.sse_app(sse_path="/sse", message_path="/messages/", host="127.0.0.1")
    web = uvicorn.Server(uvicorn.Config(app, log_level="warning"))

    async def watch_stdin() -> None:
        # Blocks in a worker thread until EOF, then asks uvicorn to stop.
        await anyio.to_thread.run_sync(sys.stdin.buffer.read)
        web.should_exit = True

    print(f"listening on http://127.0.0.1:{port}/sse", file=sys.stderr, flush=True)
    async with anyio.create_task_group() as tg:
        tg.start_soon(watch_stdin)
        await web.serve(sockets=[sock])
        tg.cancel_scope.cancel()


if __name__ == "__main__":
    anyio.run(main)
