// An HTTP+SSE (2024-11-05) MCP server written with the official TypeScript SDK's
// `SSEServerTransport` on node:http, the peer our auto-detecting client must find as HTTP+SSE.
// Routes (the SDK's conventions): GET /sse opens a session (its first event is `endpoint`,
// `/messages?sessionId=<uuid>`); POST /messages?sessionId=... carries client messages (202).
// Every other path is 404, so a Streamable probe POST to /sse gets 404 and the client falls back.
//
// It serves the same small feature set as py/sdk_server.py: tools `add {a, b}` (text "<a+b>",
// structuredContent {"result": a+b}) and `echo {text}`, resource `greeting://hello`
// ("Hello, world!"), template `greeting://{name}`, prompt `greet {name}`.
//
// It listens on 127.0.0.1 on a free port, prints `listening on http://127.0.0.1:PORT/sse` on
// stderr, and exits when its stdin closes (so a test harness never leaves it behind).
//
// Run: $MCP_NODE22 tests/interop/ts/sse_transport_server.mjs   (after sourcing .ci-cache/env)

import http from 'node:http';
import { sdk } from './sdk.mjs';

const { Server } = await sdk('server/index.js');
const { SSEServerTransport } = await sdk('server/sse.js');
const {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} = await sdk('types.js');

const text = (t) => ({ type: 'text', text: String(t) });

/** One SDK `Server` per SSE session (a `Server` serves one transport at a time). */
function buildServer() {
  const server = new Server(
    { name: 'mcp-sansio-interop-ts-sse-transport', version: '0.1.0' },
    { capabilities: { tools: {}, resources: {}, prompts: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      {
        name: 'add',
        description: 'Adds two integers.',
        inputSchema: {
          type: 'object',
          properties: { a: { type: 'integer' }, b: { type: 'integer' } },
          required: ['a', 'b'],
        },
      },
      {
        name: 'echo',
        description: 'Returns its text unchanged.',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const args = req.params.arguments ?? {};
    switch (req.params.name) {
      case 'add': {
        const sum = Number(args.a) + Number(args.b);
        return { content: [text(sum)], structuredContent: { result: sum } };
      }
      case 'echo':
        return { content: [text(args.text)], structuredContent: { result: args.text } };
      default:
        return { content: [text(`unknown tool ${req.params.name}`)], isError: true };
    }
  });
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: [{ uri: 'greeting://hello', name: 'hello', mimeType: 'text/plain' }],
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [{ uriTemplate: 'greeting://{name}', name: 'greeting', mimeType: 'text/plain' }],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const name = req.params.uri.replace(/^greeting:\/\//, '');
    const body = name === 'hello' ? 'Hello, world!' : `Hello, ${name}!`;
    return { contents: [{ uri: req.params.uri, mimeType: 'text/plain', text: body }] };
  });
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: [{ name: 'greet', arguments: [{ name: 'name', required: true }] }],
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (req) => ({
    messages: [{ role: 'user', content: text(`Please greet ${req.params.arguments?.name}.`) }],
  }));
  return server;
}

/** Live transports by session id. */
const transports = new Map();

const httpServer = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  try {
    if (req.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', res);
      transports.set(transport.sessionId, transport);
      res.on('close', () => transports.delete(transport.sessionId));
      await buildServer().connect(transport);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/messages') {
      const sessionId = url.searchParams.get('sessionId');
      const transport = sessionId ? transports.get(sessionId) : undefined;
      if (!transport) {
        res.writeHead(sessionId ? 404 : 400).end('No transport found for sessionId');
        return;
      }
      await transport.handlePostMessage(req, res);
      return;
    }
    res.writeHead(404).end('Not Found');
  } catch (error) {
    if (!res.headersSent) res.writeHead(500).end(String(error));
  }
});

httpServer.listen(0, '127.0.0.1', () => {
  const { port } = httpServer.address();
  process.stderr.write(`listening on http://127.0.0.1:${port}/sse\n`);
});

// Exit when stdin closes: the harness holds our stdin open for as long as it needs us.
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
process.stdin.resume();
