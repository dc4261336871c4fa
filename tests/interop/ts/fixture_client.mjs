// Interop client written with the official TypeScript MCP SDK (`Client` + `StdioClientTransport`).
// It spawns the server command given on its command line and drives it through every feature of
// the conformance "everything" fixture (docs/fixture.md) plus the mcp-sansio extras
// (`test_slow` for cancellation, paging of lists with MCP_SANSIO_PAGE_SIZE) and the fixture's
// timed extras (late additions at 2 s, watched-resource updates).
//
// Usage: $MCP_NODE22 tests/interop/ts/fixture_client.mjs [--] SERVER_COMMAND [ARGS...]
//        $MCP_NODE22 tests/interop/ts/fixture_client.mjs --url http://127.0.0.1:PORT/mcp
//        $MCP_NODE22 tests/interop/ts/fixture_client.mjs --sse http://127.0.0.1:PORT/sse
// With --url it talks Streamable HTTP (`StreamableHTTPClientTransport`) instead of stdio, and
// also checks `test_reconnection` (SEP-1699: the server closes the POST stream after its
// priming event; the SDK resumes by GET with Last-Event-ID and gets the result there).
// With --sse it talks the HTTP+SSE transport of 2024-11-05 (`SSEClientTransport`: GET,
// `endpoint` event, POSTs) and checks that the messages went to the announced endpoint.
// Prints `PASS name` or `FAIL name: why` per check, then `N passed, N failed`; exits 1 on failure.

import { sdk } from './sdk.mjs';
import { FIXTURE, expectedPromptMessages, fillElicitation } from './fixture_expectations.mjs';

const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { SSEClientTransport } = await sdk('client/sse.js');
const { CreateMessageRequestSchema, ElicitRequestSchema, LoggingMessageNotificationSchema, McpError } =
  await sdk('types.js');

const argv = process.argv.slice(2);
if (argv[0] === '--') argv.shift();
const HTTP_URL = argv[0] === '--url' ? argv[1] : undefined;
const SSE_URL = argv[0] === '--sse' ? argv[1] : undefined;
if (argv.length === 0 || (['--url', '--sse'].includes(argv[0]) && !(HTTP_URL || SSE_URL))) {
  console.error('usage: fixture_client.mjs [--] SERVER_COMMAND [ARGS...] | --url URL | --sse URL');
  process.exit(2);
}

const REQUEST_TIMEOUT_MS = 10_000;
const PAGE_SIZE = Number.parseInt(process.env.MCP_SANSIO_PAGE_SIZE ?? '0', 10) || 0;
const watchdog = setTimeout(() => {
  console.log('FAIL watchdog: the run took longer than 120 s');
  process.exit(1);
}, 120_000);

let passed = 0;
let failed = 0;

/** Runs one named check; `fn` throws (or rejects) to fail it. */
async function check(name, fn) {
  try {
    await fn();
    passed += 1;
    console.log(`PASS ${name}`);
  } catch (err) {
    failed += 1;
    const why = err instanceof Error ? err.message : String(err);
    console.log(`FAIL ${name}: ${why.replace(/\s+/g, ' ')}`);
  }
}

function assert(condition, why) {
  if (!condition) throw new Error(why);
}

const json = (v) => JSON.stringify(v);

/** Deep equality by canonical JSON (key order ignored). */
function sameJson(a, b) {
  const canon = (v) =>
    Array.isArray(v)
      ? v.map(canon)
      : v && typeof v === 'object'
        ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])]))
        : v;
  return json(canon(a)) === json(canon(b));
}

function assertSame(actual, expected, what) {
  assert(sameJson(actual, expected), `${what}: got ${json(actual)}, want ${json(expected)}`);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- client and the handlers for server-initiated traffic ----

const client = new Client(
  { name: 'mcp-sansio-interop-ts', version: '0.1.0' },
  { capabilities: { sampling: {}, elicitation: { form: {} } } },
);

const samplingRequests = [];
const SAMPLED_PREFIX = 'interop-sampled:';
client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
  samplingRequests.push(request.params);
  const first = request.params.messages?.[0]?.content;
  const prompt = first?.type === 'text' ? first.text : '';
  return {
    role: 'assistant',
    content: { type: 'text', text: `${SAMPLED_PREFIX}${prompt}` },
    model: 'interop-test-model',
    stopReason: 'endTurn',
  };
});

const elicitationRequests = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  elicitationRequests.push(request.params);
  return { action: 'accept', content: fillElicitation(request.params.requestedSchema) };
});

const logMessages = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
  logMessages.push(notification.params);
});

const protocolErrors = [];
client.onerror = (err) => protocolErrors.push(err);

// Every message the server sent, in arrival order.
const rawIncoming = [];

// The TS SDK (1.32.x) runs notification handlers a microtask later but responses at once, so a
// progress notification that arrives in the same read as its request's response finds its
// handler already removed and is reported through `onerror` as "unknown token". That is a client
// race, not a server fault: such errors are forgiven when the raw tap shows the notification came
// before the response.
const racedProgressTokens = new Set();
const isForgivenError = (err) => {
  const match = /progress notification for an unknown token: (.*)$/.exec(String(err?.message));
  if (!match) return false;
  try {
    return racedProgressTokens.has(JSON.parse(match[1]).params.progressToken);
  } catch {
    return false;
  }
};
const unforgivenErrors = (errors) => errors.filter((err) => !isForgivenError(err));

const transport = HTTP_URL
  ? new StreamableHTTPClientTransport(new URL(HTTP_URL))
  : SSE_URL
  ? new SSEClientTransport(new URL(SSE_URL))
  : new StdioClientTransport({
      command: argv[0],
      args: argv.slice(1),
      env: { ...process.env },
      stderr: 'inherit',
    });

const opts = { timeout: REQUEST_TIMEOUT_MS };

const callTool = (name, args, extra = {}) =>
  client.callTool(args === undefined ? { name } : { name, arguments: args }, undefined, {
    ...opts,
    ...extra,
  });

/** Follows nextCursor to the end of a paged list; returns every item and the page sizes. */
async function listAll(fetchPage, key) {
  const items = [];
  const pages = [];
  let cursor;
  for (let guard = 0; guard < 1000; guard += 1) {
    const result = await fetchPage(cursor === undefined ? undefined : { cursor });
    const page = result[key];
    assert(Array.isArray(page), `${key} is not an array`);
    items.push(...page);
    pages.push(page.length);
    if (result.nextCursor === undefined) return { items, pages };
    assert(typeof result.nextCursor === 'string', 'nextCursor is not a string');
    cursor = result.nextCursor;
  }
  throw new Error('more than 1000 pages: the cursor never ends');
}

/** The pagination contract: with MCP_SANSIO_PAGE_SIZE=n every page has at most n items. */
function checkPaging({ items, pages }, keyOf, expected, what) {
  const keys = items.map(keyOf);
  const dupes = keys.filter((k, i) => keys.indexOf(k) !== i);
  assert(dupes.length === 0, `${what} seen more than once: ${dupes.join(', ')}`);
  const missing = expected.filter((k) => !keys.includes(k));
  assert(missing.length === 0, `${what} missing: ${missing.join(', ')}`);
  if (PAGE_SIZE > 0) {
    assert(
      pages.every((n) => n <= PAGE_SIZE),
      `page sizes ${json(pages)} exceed MCP_SANSIO_PAGE_SIZE=${PAGE_SIZE}`,
    );
    const wantPages = Math.ceil(items.length / PAGE_SIZE);
    assert(pages.length >= wantPages, `${items.length} items came in ${pages.length} page(s), want ${wantPages}`);
  }
}

const textOf = (result) => result.content?.find((c) => c.type === 'text')?.text;

// ---- the checks ----

await check('initialize', async () => {
  await client.connect(transport);
  // Tap the raw incoming messages (see the progress check for why).
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    rawIncoming.push(message);
    deliver?.(message, extra);
  };
  const caps = client.getServerCapabilities();
  assert(caps, 'no server capabilities');
  for (const cap of ['tools', 'resources', 'prompts', 'logging', 'completions']) {
    assert(caps[cap] !== undefined, `capability ${cap} not declared: ${json(caps)}`);
  }
  assert(caps.resources.subscribe === true, 'resources.subscribe not declared');
  const info = client.getServerVersion();
  assert(info?.name && info?.version, `serverInfo incomplete: ${json(info)}`);
});

let tools = [];
await check('tools-list', async () => {
  const listing = await listAll((params) => client.listTools(params, opts), 'tools');
  tools = listing.items;
  for (const tool of tools) {
    assert(typeof tool.name === 'string' && tool.name, `tool without a name: ${json(tool)}`);
    assert(typeof tool.description === 'string' && tool.description, `tool ${tool.name} has no description`);
    assert(tool.inputSchema?.type === 'object', `tool ${tool.name} inputSchema is not an object schema`);
  }
  const names = tools.map((t) => t.name);
  const missing = FIXTURE.tools.filter((n) => !names.includes(n));
  assert(missing.length === 0, `missing tools: ${missing.join(', ')}`);
});

await check('tools-list-json-schema-2020-12', async () => {
  const tool = tools.find((t) => t.name === 'json_schema_2020_12_tool');
  assert(tool, 'json_schema_2020_12_tool not listed');
  assertSame(tool.inputSchema, FIXTURE.jsonSchema202012, 'inputSchema');
});

await check('pagination-tools', async () => {
  const listing = await listAll((params) => client.listTools(params, opts), 'tools');
  checkPaging(listing, (t) => t.name, FIXTURE.tools, 'tool');
});

await check('pagination-resources', async () => {
  const listing = await listAll((params) => client.listResources(params, opts), 'resources');
  checkPaging(listing, (r) => r.uri, FIXTURE.resources, 'resource');
});

await check('pagination-prompts', async () => {
  const listing = await listAll((params) => client.listPrompts(params, opts), 'prompts');
  checkPaging(listing, (p) => p.name, FIXTURE.prompts, 'prompt');
});

await check('pagination-invalid-cursor', async () => {
  try {
    await client.listTools({ cursor: 'not-a-cursor-this-server-issued' }, opts);
  } catch (err) {
    assert(err instanceof McpError, `not a JSON-RPC error: ${err}`);
    assert(err.code === -32602, `error code ${err.code}, want -32602`);
    return;
  }
  throw new Error('an unknown cursor was accepted');
});

await check('tools-call-simple-text', async () => {
  const result = await callTool('test_simple_text'); // no `arguments` at all
  assertSame(result.content, FIXTURE.content.simpleText, 'content');
  assert(!result.isError, 'isError set');
});

await check('tools-call-image', async () => {
  assertSame((await callTool('test_image_content', {})).content, FIXTURE.content.image, 'content');
});

await check('tools-call-audio', async () => {
  assertSame((await callTool('test_audio_content', {})).content, FIXTURE.content.audio, 'content');
});

await check('tools-call-embedded-resource', async () => {
  assertSame((await callTool('test_embedded_resource', {})).content, FIXTURE.content.embedded, 'content');
});

await check('tools-call-mixed-content', async () => {
  assertSame((await callTool('test_multiple_content_types', {})).content, FIXTURE.content.mixed, 'content');
});

await check('logging-set-level', async () => {
  const result = await client.setLoggingLevel('debug', opts);
  assert(Object.keys(result).length === 0, `result is not {}: ${json(result)}`);
});

await check('tools-call-with-logging', async () => {
  logMessages.length = 0;
  const result = await callTool('test_tool_with_logging', {});
  assert(textOf(result), 'no text result');
  await sleep(200);
  assert(logMessages.length >= 3, `${logMessages.length} notifications/message, want >= 3`);
  assertSame(
    logMessages.map((m) => m.data),
    ['Tool execution started', 'Tool processing data', 'Tool execution completed'],
    'log data',
  );
  assert(logMessages.every((m) => m.level === 'info'), `levels ${json(logMessages.map((m) => m.level))}`);
});

await check('logging-level-filters', async () => {
  await client.setLoggingLevel('error', opts);
  logMessages.length = 0;
  const result = await callTool('test_tool_with_logging', {});
  assert(textOf(result) && !result.isError, `the call failed: ${json(result.content)}`);
  await sleep(200);
  assert(logMessages.length === 0, `${logMessages.length} info messages arrived at level error`);
  await client.setLoggingLevel('debug', opts);
});

await check('tools-call-with-progress', async () => {
  const updates = [];
  const rawStart = rawIncoming.length;
  const result = await callTool('test_tool_with_progress', {}, { onprogress: (p) => updates.push(p) });
  assert(textOf(result), 'no text result');
  // The wire view: every notifications/progress before this call's response.
  const seen = rawIncoming.slice(rawStart);
  const responseAt = seen.findIndex((m) => m.id !== undefined && (m.result?.content || m.error));
  const raw = seen.slice(0, responseAt).filter((m) => m.method === 'notifications/progress').map((m) => m.params);
  assert(raw.length >= 3, `${raw.length} notifications/progress on the wire, want >= 3`);
  const tokens = new Set(raw.map((p) => p.progressToken));
  assert(tokens.size === 1, `progress tokens differ: ${json([...tokens])}`);
  for (const token of tokens) racedProgressTokens.add(token);
  for (let i = 1; i < raw.length; i += 1) {
    assert(raw[i].progress > raw[i - 1].progress, `progress not increasing: ${json(raw)}`);
  }
  assertSame(
    raw.map((u) => [u.progress, u.total]),
    [
      [0, 100],
      [50, 100],
      [100, 100],
    ],
    'progress/total',
  );
  // The SDK's onprogress got every update except, at most, the one racing the response.
  assert(updates.length >= raw.length - 1, `onprogress saw ${updates.length} of ${raw.length} updates`);
  assertSame(updates, raw.slice(0, updates.length).map(({ progressToken, ...rest }) => rest), 'onprogress updates');
});

await check('tools-call-error', async () => {
  const result = await callTool('test_error_handling', {});
  assert(result.isError === true, `isError is ${result.isError}`);
  assertSame(result.content, FIXTURE.content.error, 'content');
});

await check('tools-call-sampling', async () => {
  samplingRequests.length = 0;
  const prompt = 'interop sampling prompt';
  const result = await callTool('test_sampling', { prompt });
  assert(samplingRequests.length === 1, `${samplingRequests.length} sampling/createMessage requests`);
  const params = samplingRequests[0];
  assertSame(params.messages, [{ role: 'user', content: { type: 'text', text: prompt } }], 'messages');
  assert(params.maxTokens === 100, `maxTokens ${params.maxTokens}`);
  assert(textOf(result) === `LLM response: ${SAMPLED_PREFIX}${prompt}`, `result ${json(result.content)}`);
});

await check('tools-call-elicitation', async () => {
  elicitationRequests.length = 0;
  const message = 'interop elicitation message';
  const result = await callTool('test_elicitation', { message });
  assert(elicitationRequests.length === 1, `${elicitationRequests.length} elicitation/create requests`);
  const params = elicitationRequests[0];
  assert(params.message === message, `message ${json(params.message)}`);
  assert(params.requestedSchema?.type === 'object', 'requestedSchema is not an object schema');
  const answer = fillElicitation(params.requestedSchema);
  const text = textOf(result) ?? '';
  assert(text.includes('action=accept'), `result does not echo the accept: ${text}`);
  assert(text.includes(json(answer)), `result does not echo the content ${json(answer)}: ${text}`);
});

await check('elicitation-sep1034-defaults', async () => {
  elicitationRequests.length = 0;
  const result = await callTool('test_elicitation_sep1034_defaults', {});
  assert(elicitationRequests.length === 1, `${elicitationRequests.length} elicitation/create requests`);
  const props = elicitationRequests[0].requestedSchema?.properties ?? {};
  for (const [field, want] of Object.entries(FIXTURE.sep1034)) {
    assert(props[field]?.type === want.type, `${field}.type ${json(props[field]?.type)}, want ${want.type}`);
    assertSame(props[field]?.default, want.default, `${field}.default`);
  }
  assertSame(props.status?.enum, ['active', 'inactive', 'pending'], 'status.enum');
  assert((textOf(result) ?? '').includes('action=accept'), `result ${json(result.content)}`);
});

await check('elicitation-sep1330-enums', async () => {
  elicitationRequests.length = 0;
  const result = await callTool('test_elicitation_sep1330_enums', {});
  assert(elicitationRequests.length === 1, `${elicitationRequests.length} elicitation/create requests`);
  const p = elicitationRequests[0].requestedSchema?.properties ?? {};
  const u = p.untitledSingle;
  assert(u?.type === 'string' && Array.isArray(u.enum) && !u.oneOf && !u.enumNames, `untitledSingle ${json(u)}`);
  const t = p.titledSingle;
  assert(
    t?.type === 'string' && !t.enum && Array.isArray(t.oneOf) && t.oneOf.every((o) => 'const' in o && o.title),
    `titledSingle ${json(t)}`,
  );
  const l = p.legacyEnum;
  assert(
    l?.type === 'string' && Array.isArray(l.enum) && Array.isArray(l.enumNames) && l.enum.length === l.enumNames.length,
    `legacyEnum ${json(l)}`,
  );
  const um = p.untitledMulti;
  assert(
    um?.type === 'array' && um.items?.type === 'string' && Array.isArray(um.items.enum) && !um.items.anyOf,
    `untitledMulti ${json(um)}`,
  );
  const tm = p.titledMulti;
  assert(
    tm?.type === 'array' && Array.isArray(tm.items?.anyOf) && !tm.items.enum && tm.items.anyOf.every((o) => 'const' in o && o.title),
    `titledMulti ${json(tm)}`,
  );
  assert((textOf(result) ?? '').includes('action=accept'), `result ${json(result.content)}`);
});

await check('resources-list', async () => {
  const { items } = await listAll((params) => client.listResources(params, opts), 'resources');
  for (const r of items) assert(r.uri && r.name, `resource without uri/name: ${json(r)}`);
  const uris = items.map((r) => r.uri);
  const missing = FIXTURE.resources.filter((u) => !uris.includes(u));
  assert(missing.length === 0, `missing resources: ${missing.join(', ')}`);
});

await check('resources-read-text', async () => {
  const result = await client.readResource({ uri: 'test://static-text' }, opts);
  assertSame(result.contents, FIXTURE.content.staticText, 'contents');
});

await check('resources-read-binary', async () => {
  const result = await client.readResource({ uri: 'test://static-binary' }, opts);
  assertSame(result.contents, FIXTURE.content.staticBinary, 'contents');
});

await check('resources-templates-list', async () => {
  const { items } = await listAll((params) => client.listResourceTemplates(params, opts), 'resourceTemplates');
  assert(
    items.some((t) => t.uriTemplate === 'test://template/{id}/data' && t.name),
    `template test://template/{id}/data not listed: ${json(items)}`,
  );
});

await check('resources-templates-read', async () => {
  const uri = 'test://template/123/data';
  const result = await client.readResource({ uri }, opts);
  const [item] = result.contents;
  assert(result.contents.length === 1 && item.uri === uri, `contents ${json(result.contents)}`);
  assert(item.mimeType === 'application/json', `mimeType ${item.mimeType}`);
  assertSame(JSON.parse(item.text), { id: '123', templateTest: true, data: 'Data for ID: 123' }, 'text');
});

await check('resources-subscribe', async () => {
  const result = await client.subscribeResource({ uri: 'test://watched-resource' }, opts);
  assert(Object.keys(result).length === 0, `result is not {}: ${json(result)}`);
});

await check('resources-unsubscribe', async () => {
  const result = await client.unsubscribeResource({ uri: 'test://watched-resource' }, opts);
  assert(Object.keys(result).length === 0, `result is not {}: ${json(result)}`);
});

await check('prompts-list', async () => {
  const { items } = await listAll((params) => client.listPrompts(params, opts), 'prompts');
  for (const p of items) assert(p.name && p.description, `prompt without name/description: ${json(p)}`);
  const names = items.map((p) => p.name);
  const missing = FIXTURE.prompts.filter((n) => !names.includes(n));
  assert(missing.length === 0, `missing prompts: ${missing.join(', ')}`);
  const withArgs = items.find((p) => p.name === 'test_prompt_with_arguments');
  assertSame(
    (withArgs.arguments ?? []).map((a) => [a.name, a.required === true]),
    [
      ['arg1', true],
      ['arg2', true],
    ],
    'test_prompt_with_arguments arguments',
  );
});

for (const [name, args] of [
  ['test_simple_prompt', undefined],
  ['test_prompt_with_arguments', { arg1: 'testValue1', arg2: 'testValue2' }],
  ['test_prompt_with_embedded_resource', { resourceUri: 'test://example-resource' }],
  ['test_prompt_with_image', undefined],
]) {
  await check(`prompts-get ${name}`, async () => {
    const result = await client.getPrompt(args === undefined ? { name } : { name, arguments: args }, opts);
    assertSame(result.messages, expectedPromptMessages(name, args), 'messages');
  });
}

await check('completion-complete', async () => {
  const result = await client.complete(
    { ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'test' } },
    opts,
  );
  assert(Array.isArray(result.completion?.values), `completion.values is not an array: ${json(result)}`);
});

await check('ping', async () => {
  const result = await client.ping(opts);
  assert(Object.keys(result).length === 0, `result is not {}: ${json(result)}`);
});

await check('cancellation', async () => {
  const errorsBefore = protocolErrors.length;
  const controller = new AbortController();
  const started = Date.now();
  setTimeout(() => controller.abort('interop test cancels'), 200);
  let outcome = 'completed';
  try {
    await callTool('test_slow', { ms: 10_000 }, { signal: controller.signal, timeout: 30_000 });
  } catch (err) {
    outcome = controller.signal.aborted ? 'aborted' : `failed: ${err}`;
  }
  const elapsed = Date.now() - started;
  assert(outcome === 'aborted', `the slow call ${outcome}`);
  assert(elapsed < 2_000, `abort took ${elapsed} ms`);
  const pingStarted = Date.now();
  await client.ping({ timeout: 2_000 });
  assert(Date.now() - pingStarted < 1_000, 'ping after the cancel was slow');
  const quick = await callTool('test_slow', { ms: 10 });
  assert(textOf(quick), 'a short test_slow after the cancel returned no text');
  await sleep(300);
  const late = unforgivenErrors(protocolErrors.slice(errorsBefore));
  assert(late.length === 0, `protocol errors after the cancel: ${late.map(String).join('; ')}`);
});

if (HTTP_URL) {
  await check('http-session-id', async () => {
    assert(/^[\x21-\x7e]{32,}$/.test(transport.sessionId ?? ''), `session id ${transport.sessionId}`);
  });

  await check('sse-resume-test_reconnection', async () => {
    const result = await callTool('test_reconnection', {});
    assert(textOf(result) === 'Reconnection test completed', `result ${json(result)}`);
  });
}

if (SSE_URL) {
  await check('sse-transport-endpoint', async () => {
    // The SDK keeps the `endpoint` event's resolved URL privately; it is where every POST went.
    const endpoint = transport._endpoint;
    assert(endpoint?.pathname === '/messages', `message endpoint ${endpoint}`);
    assert(/^[0-9a-f]{32}$/.test(endpoint.searchParams.get('sessionId') ?? ''), `session ${endpoint}`);
  });
}

// The timed reference extras (docs/fixture.md): 2 s after start the late tool, resource and
// prompt arrive, each announced by its list_changed; a subscriber of test://watched-resource
// hears notifications/resources/updated (every 3 s). Waits are bounded.
const EXTRAS_WAIT_MS = 8_000;
const WATCHED = 'test://watched-resource';

/** Waits until `found()` holds, polling the wire tap; fails after EXTRAS_WAIT_MS. */
async function waitForWire(found, what) {
  const deadline = Date.now() + EXTRAS_WAIT_MS;
  while (!found()) {
    assert(Date.now() < deadline, `${what} did not arrive within ${EXTRAS_WAIT_MS} ms`);
    await sleep(50);
  }
}

await check('late-additions', async () => {
  for (const kind of ['tools', 'resources', 'prompts']) {
    const method = `notifications/${kind}/list_changed`;
    await waitForWire(() => rawIncoming.some((m) => m.method === method), method);
  }
  const tools = (await listAll((params) => client.listTools(params, opts), 'tools')).items;
  assert(tools.some((t) => t.name === 'test_dynamic_tool'), 'test_dynamic_tool not listed');
  const resources = (await listAll((params) => client.listResources(params, opts), 'resources')).items;
  assert(resources.some((r) => r.uri === 'test://dynamic-resource'), 'test://dynamic-resource not listed');
  const prompts = (await listAll((params) => client.listPrompts(params, opts), 'prompts')).items;
  assert(prompts.some((p) => p.name === 'test_dynamic_prompt'), 'test_dynamic_prompt not listed');
  const called = await callTool('test_dynamic_tool');
  assert(!called.isError && textOf(called), `test_dynamic_tool: ${json(called)}`);
  const read = await client.readResource({ uri: 'test://dynamic-resource' }, opts);
  assert(read.contents?.[0]?.uri === 'test://dynamic-resource', `read: ${json(read)}`);
  const prompt = await client.getPrompt({ name: 'test_dynamic_prompt' }, opts);
  assert(prompt.messages?.[0]?.role === 'user', `prompt: ${json(prompt)}`);
});

await check('resources-updated', async () => {
  const from = rawIncoming.length;
  await client.subscribeResource({ uri: WATCHED }, opts);
  await waitForWire(
    () => rawIncoming.slice(from).some((m) => m.method === 'notifications/resources/updated' && m.params?.uri === WATCHED),
    'notifications/resources/updated',
  );
  await client.unsubscribeResource({ uri: WATCHED }, opts);
});

await check('no-protocol-errors', async () => {
  const errors = unforgivenErrors(protocolErrors);
  assert(errors.length === 0, errors.map(String).join('; '));
});

await client.close().catch(() => {});
clearTimeout(watchdog);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
