// Reference "everything" fixture server over stdio, written with the official TypeScript SDK
// (@modelcontextprotocol/sdk, low-level `Server`). It implements the conformance fixture of
// docs/fixture.md plus the two mcp-sansio extras that the interop clients test:
//   - tool `test_slow {ms: integer}`: sleeps `ms` milliseconds, stops early when cancelled;
//   - every list (tools, resources, templates, prompts) is paged with the page size read from the
//     environment variable MCP_SANSIO_PAGE_SIZE (unset or 0 = one page).
// and the fixture's timed reference extras: `test_dynamic_tool`, `test://dynamic-resource` and
// `test_dynamic_prompt` appear 2 s after start (each with its list_changed notification), and
// subscribers of `test://watched-resource` get `notifications/resources/updated` every 3 s.
// It exists to validate the interop clients against a real SDK peer and as a comparison peer.
//
// Run: $MCP_NODE22 tests/interop/ts/reference_fixture_server.mjs   (after sourcing .ci-cache/env)

import { sdk } from './sdk.mjs';

const { Server } = await sdk('server/index.js');
const { StdioServerTransport } = await sdk('server/stdio.js');
const {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} = await sdk('types.js');

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

const PAGE_SIZE = Number.parseInt(process.env.MCP_SANSIO_PAGE_SIZE ?? '0', 10) || 0;

const noInput = { type: 'object', properties: {} };

const JSON_SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
};

const TOOLS = [
  ['test_simple_text', 'Returns a simple text response', noInput],
  ['test_image_content', 'Returns a 1x1 PNG image', noInput],
  ['test_audio_content', 'Returns a short WAV audio clip', noInput],
  ['test_embedded_resource', 'Returns an embedded text resource', noInput],
  ['test_multiple_content_types', 'Returns text, image and resource content', noInput],
  ['test_tool_with_logging', 'Sends three log messages during execution', noInput],
  ['test_tool_with_progress', 'Sends three progress notifications', noInput],
  ['test_error_handling', 'Returns a tool error result', noInput],
  [
    'test_sampling',
    'Asks the client to sample an LLM completion',
    { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
  ],
  [
    'test_elicitation',
    'Asks the client to elicit user input',
    { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  ],
  ['test_elicitation_sep1034_defaults', 'Elicits a form whose fields carry defaults', noInput],
  ['test_elicitation_sep1330_enums', 'Elicits a form with every enum shape', noInput],
  ['json_schema_2020_12_tool', 'Has a JSON Schema 2020-12 input schema', JSON_SCHEMA_2020_12],
  ['test_reconnection', 'Returns a text result (stream reconnection is HTTP only)', noInput],
  [
    'test_slow',
    'Sleeps for `ms` milliseconds; stops early when cancelled',
    { type: 'object', properties: { ms: { type: 'integer', minimum: 0 } }, required: ['ms'] },
  ],
].map(([name, description, inputSchema]) => ({ name, description, inputSchema }));

const RESOURCES = [
  {
    uri: 'test://static-text',
    name: 'static-text',
    title: 'Static text',
    description: 'A static text resource',
    mimeType: 'text/plain',
  },
  {
    uri: 'test://static-binary',
    name: 'static-binary',
    title: 'Static binary',
    description: 'A static PNG resource',
    mimeType: 'image/png',
  },
  {
    uri: 'test://watched-resource',
    name: 'watched-resource',
    title: 'Watched resource',
    description: 'A resource that can be subscribed to',
    mimeType: 'text/plain',
  },
];

const TEMPLATES = [
  {
    uriTemplate: 'test://template/{id}/data',
    name: 'template-data',
    title: 'Template data',
    description: 'Data for an id',
    mimeType: 'application/json',
  },
];

const PROMPTS = [
  { name: 'test_simple_prompt', description: 'A prompt without arguments' },
  {
    name: 'test_prompt_with_arguments',
    description: 'A prompt with two required arguments',
    arguments: [
      { name: 'arg1', description: 'First argument', required: true },
      { name: 'arg2', description: 'Second argument', required: true },
    ],
  },
  {
    name: 'test_prompt_with_embedded_resource',
    description: 'A prompt that embeds a resource',
    arguments: [{ name: 'resourceUri', description: 'URI to embed', required: true }],
  },
  { name: 'test_prompt_with_image', description: 'A prompt with an image' },
];

/** One page of `items` starting at the offset encoded in `cursor`. */
function page(items, cursor, key) {
  let start = 0;
  if (cursor !== undefined) {
    const match = /^offset:(\d+)$/.exec(Buffer.from(cursor, 'base64').toString('utf8'));
    if (!match || Number(match[1]) > items.length) {
      throw new McpError(ErrorCode.InvalidParams, `invalid cursor: ${cursor}`);
    }
    start = Number(match[1]);
  }
  const end = PAGE_SIZE > 0 ? Math.min(items.length, start + PAGE_SIZE) : items.length;
  const result = { [key]: items.slice(start, end) };
  if (end < items.length) {
    result.nextCursor = Buffer.from(`offset:${end}`, 'utf8').toString('base64');
  }
  return result;
}

/** Resolves after `ms`, or rejects as soon as `signal` aborts. */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('cancelled'));
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new Error('cancelled'));
      },
      { once: true },
    );
  });
}

const text = (t) => ({ content: [{ type: 'text', text: t }] });

const server = new Server(
  { name: 'mcp-sansio-reference-fixture', version: '0.1.0' },
  {
    capabilities: {
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      logging: {},
      completions: {},
    },
  },
);

async function elicit(extra, message, requestedSchema) {
  return extra.sendRequest(
    { method: 'elicitation/create', params: { message, requestedSchema } },
    ElicitResultSchema,
  );
}

const TOOL_HANDLERS = {
  test_simple_text: async () => text('This is a simple text response for testing.'),
  test_image_content: async () => ({ content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] }),
  test_audio_content: async () => ({ content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] }),
  test_embedded_resource: async () => ({
    content: [
      {
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ],
  }),
  test_multiple_content_types: async () => ({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: {
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: '{"test":"data","value":123}',
        },
      },
    ],
  }),
  test_tool_with_logging: async (_args, extra) => {
    const log = (data) =>
      server.sendLoggingMessage({ level: 'info', logger: 'test_tool_with_logging', data });
    await log('Tool execution started');
    await sleep(50, extra.signal);
    await log('Tool processing data');
    await sleep(50, extra.signal);
    await log('Tool execution completed');
    return text('Tool with logging executed successfully');
  },
  test_tool_with_progress: async (_args, extra) => {
    const progressToken = extra._meta?.progressToken;
    for (const progress of [0, 50, 100]) {
      if (progressToken !== undefined) {
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress, total: 100, message: `Completed step ${progress}` },
        });
      }
      if (progress < 100) await sleep(50, extra.signal);
    }
    return text(progressToken === undefined ? 'No progress token' : 'Progress reported');
  },
  test_error_handling: async () => ({
    isError: true,
    content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
  }),
  test_sampling: async (args, extra) => {
    const result = await extra.sendRequest(
      {
        method: 'sampling/createMessage',
        params: {
          messages: [{ role: 'user', content: { type: 'text', text: String(args.prompt ?? '') } }],
          maxTokens: 100,
        },
      },
      CreateMessageResultSchema,
    );
    const content = Array.isArray(result.content) ? result.content[0] : result.content;
    return text(`LLM response: ${content?.type === 'text' ? content.text : JSON.stringify(content)}`);
  },
  test_elicitation: async (args, extra) => {
    const result = await elicit(extra, String(args.message ?? ''), {
      type: 'object',
      properties: { response: { type: 'string', description: "User's response" } },
      required: ['response'],
    });
    return text(`User response: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`);
  },
  test_elicitation_sep1034_defaults: async (_args, extra) => {
    const result = await elicit(extra, 'Please review and update the form fields with defaults', {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'User name', default: 'John Doe' },
        age: { type: 'integer', description: 'User age', default: 30 },
        score: { type: 'number', description: 'User score', default: 95.5 },
        status: {
          type: 'string',
          description: 'User status',
          enum: ['active', 'inactive', 'pending'],
          default: 'active',
        },
        verified: { type: 'boolean', description: 'Verification status', default: true },
      },
      required: [],
    });
    return text(
      `Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`,
    );
  },
  test_elicitation_sep1330_enums: async (_args, extra) => {
    const result = await elicit(extra, 'Please select options from the enum fields', {
      type: 'object',
      properties: {
        untitledSingle: {
          type: 'string',
          description: 'Select one option',
          enum: ['option1', 'option2', 'option3'],
        },
        titledSingle: {
          type: 'string',
          description: 'Select one titled option',
          oneOf: [
            { const: 'value1', title: 'First Option' },
            { const: 'value2', title: 'Second Option' },
            { const: 'value3', title: 'Third Option' },
          ],
        },
        legacyEnum: {
          type: 'string',
          description: 'Select one (legacy)',
          enum: ['opt1', 'opt2', 'opt3'],
          enumNames: ['Option One', 'Option Two', 'Option Three'],
        },
        untitledMulti: {
          type: 'array',
          description: 'Select several options',
          minItems: 1,
          maxItems: 3,
          items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
        },
        titledMulti: {
          type: 'array',
          description: 'Select several titled options',
          minItems: 1,
          maxItems: 3,
          items: {
            anyOf: [
              { const: 'value1', title: 'First Choice' },
              { const: 'value2', title: 'Second Choice' },
              { const: 'value3', title: 'Third Choice' },
            ],
          },
        },
      },
      required: [],
    });
    return text(
      `Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`,
    );
  },
  json_schema_2020_12_tool: async (args) => text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`),
  test_reconnection: async () => text('Reconnection test completed'),
  test_slow: async (args, extra) => {
    const ms = Number(args.ms);
    if (!Number.isInteger(ms) || ms < 0) {
      throw new McpError(ErrorCode.InvalidParams, 'test_slow: `ms` must be a non-negative integer');
    }
    await sleep(ms, extra.signal);
    return text(`Slept ${ms} ms`);
  },
};

server.setRequestHandler(ListToolsRequestSchema, async (req) => page(TOOLS, req.params?.cursor, 'tools'));

server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
  const handler = TOOL_HANDLERS[req.params.name];
  if (!handler) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name}`);
  return handler(req.params.arguments ?? {}, extra);
});

server.setRequestHandler(ListResourcesRequestSchema, async (req) =>
  page(RESOURCES, req.params?.cursor, 'resources'),
);

server.setRequestHandler(ListResourceTemplatesRequestSchema, async (req) =>
  page(TEMPLATES, req.params?.cursor, 'resourceTemplates'),
);

server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
  const { uri } = req.params;
  if (uri === 'test://static-text') {
    return {
      contents: [{ uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }],
    };
  }
  if (uri === 'test://static-binary') return { contents: [{ uri, mimeType: 'image/png', blob: PNG }] };
  if (uri === 'test://watched-resource') {
    return { contents: [{ uri, mimeType: 'text/plain', text: 'Watched resource content' }] };
  }
  if (uri === 'test://dynamic-resource' && lateAdded) {
    return { contents: [{ uri, mimeType: 'text/plain', text: 'This resource was added after the session started.' }] };
  }
  const match = /^test:\/\/template\/([^/]+)\/data$/.exec(uri);
  if (match) {
    const id = match[1];
    return {
      contents: [
        {
          uri,
          mimeType: 'application/json',
          text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
        },
      ],
    };
  }
  throw new McpError(-32002, `Resource not found: ${uri}`);
});

const subscriptions = new Set();
server.setRequestHandler(SubscribeRequestSchema, async (req) => {
  subscriptions.add(req.params.uri);
  return {};
});
server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
  subscriptions.delete(req.params.uri);
  return {};
});

server.setRequestHandler(ListPromptsRequestSchema, async (req) => page(PROMPTS, req.params?.cursor, 'prompts'));

server.setRequestHandler(GetPromptRequestSchema, async (req) => {
  const args = req.params.arguments ?? {};
  const user = (content) => ({ role: 'user', content });
  switch (req.params.name) {
    case 'test_simple_prompt':
      return { messages: [user({ type: 'text', text: 'This is a simple prompt for testing.' })] };
    case 'test_prompt_with_arguments':
      return {
        messages: [
          user({ type: 'text', text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` }),
        ],
      };
    case 'test_prompt_with_embedded_resource':
      return {
        messages: [
          user({
            type: 'resource',
            resource: {
              uri: args.resourceUri,
              mimeType: 'text/plain',
              text: 'Embedded resource content for testing.',
            },
          }),
          user({ type: 'text', text: 'Please process the embedded resource above.' }),
        ],
      };
    case 'test_prompt_with_image':
      return {
        messages: [
          user({ type: 'image', data: PNG, mimeType: 'image/png' }),
          user({ type: 'text', text: 'Please analyze the image above.' }),
        ],
      };
    case 'test_dynamic_prompt':
      if (lateAdded) return { messages: [user({ type: 'text', text: 'This prompt was added after the session started.' })] };
    // falls through: not registered yet
    default:
      throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${req.params.name}`);
  }
});

server.setRequestHandler(CompleteRequestSchema, async () => ({
  completion: { values: [], total: 0, hasMore: false },
}));

// The timed extras. Unref'd timers: they never keep the process alive after stdin closed.
let lateAdded = false;
setTimeout(() => {
  lateAdded = true;
  TOOLS.push({ name: 'test_dynamic_tool', description: 'A tool registered 2 s after the session started', inputSchema: noInput });
  TOOL_HANDLERS.test_dynamic_tool = async () => text('This tool was added after the session started.');
  RESOURCES.push({
    uri: 'test://dynamic-resource',
    name: 'dynamic-resource',
    title: 'Dynamic resource',
    description: 'A resource registered 2 s after the session started',
    mimeType: 'text/plain',
  });
  PROMPTS.push({ name: 'test_dynamic_prompt', description: 'A prompt registered 2 s after the session started' });
  for (const send of [server.sendToolListChanged, server.sendResourceListChanged, server.sendPromptListChanged]) {
    send.call(server).catch(() => {});
  }
}, 2_000).unref();
setInterval(() => {
  if (subscriptions.has('test://watched-resource')) {
    server.sendResourceUpdated({ uri: 'test://watched-resource' }).catch(() => {});
  }
}, 3_000).unref();

await server.connect(new StdioServerTransport());
