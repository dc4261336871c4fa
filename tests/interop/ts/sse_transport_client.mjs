// Drives an HTTP+SSE (2024-11-05) MCP server with the official TypeScript SDK's
// `SSEClientTransport`: connect (GET, `endpoint` event, POST initialize), list tools, call
// `echo` with no arguments, close. Prints one JSON line:
//   {"protocolVersion": ..., "tools": [names], "echo": <first text of the echo result>}
// Exits non-zero on any error (or after 30 s).
//
// Run: $MCP_NODE22 tests/interop/ts/sse_transport_client.mjs http://127.0.0.1:PORT/sse

import { sdk } from './sdk.mjs';

const { Client } = await sdk('client/index.js');
const { SSEClientTransport } = await sdk('client/sse.js');

const watchdog = setTimeout(() => {
  process.stderr.write('sse_transport_client: timed out\n');
  process.exit(2);
}, 30_000);

const url = new URL(process.argv[2]);
const client = new Client({ name: 'mcp-sansio-interop-ts-sse-transport-client', version: '0.1.0' });
let transportErrors = 0;
client.onerror = (e) => {
  transportErrors += 1;
  process.stderr.write(`onerror: ${e}\n`);
};
const transport = new SSEClientTransport(url);
await client.connect(transport);
const tools = await client.listTools();
const echo = await client.callTool({ name: 'echo', arguments: {} });
const out = {
  protocolVersion: transport.protocolVersion ?? null,
  server: client.getServerVersion()?.name ?? null,
  tools: tools.tools.map((t) => t.name),
  echo: echo.content?.[0]?.text ?? null,
  transportErrors,
};
console.log(JSON.stringify(out));
await client.close();
clearTimeout(watchdog);
process.exit(0);
