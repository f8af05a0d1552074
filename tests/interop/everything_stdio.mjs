// Interop test: drives the libmcp example server `everything` over stdio with
// the official MCP TypeScript SDK client (Client + StdioClientTransport): the
// whole surface the conformance suite knows only over HTTP. Tools of every
// content kind with their hints, logging after logging/setLevel, progress,
// elicitation, sampling and roots answered by the client's request handlers
// (the 2025 era: real requests to the client), resources and the template,
// subscriptions, prompts, completion, and tools and prompts that come and go
// with list_changed notifications. A second server, for a client that
// declares no capabilities, shows what a tool gets when it cannot ask.
//
// Usage and launcher as notes_stdio.mjs (see lib.mjs):
//   node everything_stdio.mjs <path-to-everything> [launcher words...]
// Every server process must exit by itself, with status 0, once its stdin is
// closed. Prints PASS/FAIL per check and ends with "N passed, N failed".

import process from 'node:process';
import { isDeepStrictEqual } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema,
  LoggingMessageNotificationSchema, McpError, PromptListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

import {
  check, checkExit, fail, finish, forwardLines, parseCommandLine, preflight, sdkVersion,
  serverCommand, shellQuote, show, sleep, startWatchdog,
} from './lib.mjs';
import { TrackedStdioTransport } from './stdio_lib.mjs';

const CONFIG = parseCommandLine('everything_stdio.mjs');
const opts = (more = {}) => ({ timeout: CONFIG.requestTimeoutMs, ...more });

// The images and sounds everything returns, as the wire carries them.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const ROOT = { uri: 'file:///srv/interop', name: 'Interop root' };

// Every tool and whether it changes anything (the rest are read-only); all
// reach nothing outside the server.
const TOOLS = {
  test_simple_text: 'ro', test_image_content: 'ro', test_audio_content: 'ro',
  test_embedded_resource: 'ro', test_multiple_content_types: 'ro', test_error_handling: 'ro',
  json_schema_2020_12_tool: 'ro', test_custom_header: 'ro',
  test_tool_with_logging: 'ro', test_logging_tool: 'ro',
  test_tool_with_progress: 'ro', test_sampling: 'ro', test_elicitation: 'ro',
  test_elicitation_sep1034_defaults: 'ro', test_elicitation_sep1330_enums: 'ro',
  test_streaming_elicitation: 'ro', test_missing_capability: 'ro',
  test_input_required_result_elicitation: 'ro', test_input_required_result_sampling: 'ro',
  test_input_required_result_list_roots: 'ro', test_input_required_result_request_state: 'ro',
  test_input_required_result_multiple_inputs: 'ro', test_input_required_result_multi_round: 'ro',
  test_input_required_result_tampered_state: 'ro', test_input_required_result_capabilities: 'ro',
  test_trigger_tool_change: 'rw', test_trigger_prompt_change: 'rw',
  // Tasks (interop.tasks_ext and the conformance tasks scenarios drive them).
  greet: 'ro', slow_compute: 'ro', failing_job: 'ro', protocol_error_job: 'ro',
  confirm_delete: 'ro', multi_input: 'ro', test_tool_with_task: 'ro', archive_notes: 'ro',
};
const PROMPTS = ['test_simple_prompt', 'test_prompt_with_arguments',
  'test_prompt_with_embedded_resource', 'test_prompt_with_image', 'test_input_required_result_prompt'];

// ---- sessions --------------------------------------------------------------

const live = new Set(); // transports still running, for the watchdog
let sessionCount = 0;

// Starts everything --stdio and connects a Client declaring capabilities;
// the client answers the server's requests as `answers` says and records
// them. Returns the session.
async function startSession(label, capabilities) {
  const tag = `everything#${++sessionCount} ${label}`;
  const { command, args } = serverCommand(CONFIG, ['--stdio']);
  console.log(`# [${tag}] spawn: ${[command, ...args].map(shellQuote).join(' ')}`);
  const transport = new TrackedStdioTransport({
    command, args, env: { ...process.env }, stderr: 'pipe',
  }, tag, CONFIG.exitGraceMs);
  forwardLines(transport.stderr, tag);
  const transportErrors = [];
  transport.onmessage = (msg) => { transport.received.push(msg); };
  transport.onerror = (err) => { transportErrors.push(err); };

  const client = new Client({ name: 'libmcp-interop', version: '0.0.0' }, { capabilities });
  const s = {
    client, transport, label: tag, transportErrors,
    asked: [], logs: [], toolsChanged: 0, promptsChanged: 0,
  };
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { s.logs.push(n.params); });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => { s.toolsChanged++; });
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => { s.promptsChanged++; });
  if (capabilities.elicitation) {
    client.setRequestHandler(ElicitRequestSchema, (req) => {
      s.asked.push(req);
      return elicitationAnswer(req.params);
    });
  }
  if (capabilities.sampling) {
    client.setRequestHandler(CreateMessageRequestSchema, (req) => {
      s.asked.push(req);
      const text = req.params.messages?.[0]?.content?.text === 'What is the capital of France?'
        ? 'Paris' : 'Hello from the model';
      return { role: 'assistant', content: { type: 'text', text }, model: 'test-model', stopReason: 'endTurn' };
    });
  }
  if (capabilities.roots) {
    client.setRequestHandler(ListRootsRequestSchema, (req) => {
      s.asked.push(req);
      return { roots: [ROOT] };
    });
  }
  live.add(transport);
  try {
    await client.connect(transport, opts());
  } catch (err) {
    await endSession(s);
    throw err;
  }
  return s;
}

// What the user "types" into each form everything shows.
function elicitationAnswer(params) {
  const props = params.requestedSchema?.properties ?? {};
  const content = {};
  if ('username' in props) Object.assign(content, { username: 'ada', email: 'ada@example.com' });
  if ('name' in props && !('age' in props)) content.name = 'Ada';
  if ('color' in props) content.color = 'blue';
  if ('ok' in props) content.ok = true;
  if ('context' in props) content.context = 'interop context';
  if ('untitledSingle' in props) content.untitledSingle = 'option1';
  return { action: 'accept', content };
}

async function endSession(s) {
  try {
    await s.transport.shutdown();
    await s.client.close();
  } catch (err) {
    fail(`${s.label}: close client`, show(err));
  }
  live.delete(s.transport);
  if (s.transport.tracker) checkExit(s.label, s.transport.tracker, CONFIG);
  else fail(`${s.label}: server exit status`, 'the server process was never started');
  check(`${s.label}: no transport errors (stdout is clean JSON-RPC)`, s.transportErrors.length === 0,
    s.transportErrors.map((e) => e?.message ?? String(e)).join('; '));
}

async function withSession(label, capabilities, fn) {
  let s;
  try {
    s = await startSession(label, capabilities);
  } catch (err) {
    fail(`${label}: connect/initialize`, show(err));
    return;
  }
  try {
    await fn(s);
  } catch (err) {
    fail(`${s.label}: unexpected exception`, err?.stack ?? show(err));
  } finally {
    await endSession(s);
  }
}

// ---- helpers ---------------------------------------------------------------

const call = (s, name, args, more) => s.client.callTool({ name, arguments: args }, undefined, opts(more));

const texts = (r) => (r?.content ?? []).filter((b) => b?.type === 'text').map((b) => b.text);

// The requests the server sent the client since mark (an index into asked).
const askedSince = (s, mark) => s.asked.slice(mark).map((r) => r.method);

async function expectRpcError(fn) {
  try {
    return { result: await fn() };
  } catch (err) {
    return { error: err };
  }
}

// ---- the checks --------------------------------------------------------------

function checkInitialize(s) {
  const { client, label } = s;
  const info = client.getServerVersion();
  check(`${label}: serverInfo.name is "everything"`, info?.name === 'everything', show(info));
  const caps = client.getServerCapabilities() ?? {};
  for (const cap of ['tools', 'prompts', 'logging', 'completions']) {
    check(`${label}: capability ${cap} is declared`, typeof caps[cap] === 'object', show(caps));
  }
  check(`${label}: resources capability with subscribe`, caps.resources?.subscribe === true, show(caps));
}

async function checkTools(s) {
  const { client, label } = s;
  const { tools } = await client.listTools(undefined, opts());
  const names = tools.map((t) => t.name).sort();
  check(`${label}: tools/list names exactly the ${Object.keys(TOOLS).length} tools`,
    isDeepStrictEqual(names, Object.keys(TOOLS).sort()), show(names));
  for (const t of tools) {
    const a = t.annotations ?? {};
    const kind = TOOLS[t.name];
    const honest = kind === 'ro'
      ? a.readOnlyHint === true && a.destructiveHint === false && a.idempotentHint === true
      : a.readOnlyHint === false && a.destructiveHint === false && a.idempotentHint === false;
    check(`${label}: ${t.name}: a description, an object inputSchema, ${kind === 'ro' ? 'read-only' : 'writing'} `
      + 'closed-world hints',
    typeof t.description === 'string' && t.description.length > 0 && t.inputSchema?.type === 'object'
        && honest && a.openWorldHint === false, show(t));
  }
  const js = tools.find((t) => t.name === 'json_schema_2020_12_tool')?.inputSchema;
  check(`${label}: json_schema_2020_12_tool keeps $schema, $defs.address, if/then/else, additionalProperties`,
    js?.$schema === 'https://json-schema.org/draft/2020-12/schema' && js?.$defs?.address?.$anchor === 'addressDef'
      && 'if' in js && 'then' in js && 'else' in js && js.additionalProperties === false
      && Array.isArray(js.allOf), show(js));
  const sampling = tools.find((t) => t.name === 'test_sampling')?.inputSchema;
  check(`${label}: test_sampling requires a string prompt`,
    sampling?.properties?.prompt?.type === 'string' && isDeepStrictEqual(sampling?.required, ['prompt']),
    show(sampling));
}

async function checkContent(s) {
  const { label } = s;
  const text = await s.client.callTool({ name: 'test_simple_text' }, undefined, opts()); // no arguments
  check(`${label}: test_simple_text without arguments returns text`,
    !text.isError && texts(text)[0]?.length > 0, show(text));
  const image = await call(s, 'test_image_content', {});
  check(`${label}: test_image_content returns the PNG`, isDeepStrictEqual(image.content,
    [{ type: 'image', data: PNG, mimeType: 'image/png' }]), show(image));
  const audio = await call(s, 'test_audio_content', {});
  const wav = Buffer.from(audio.content?.[0]?.data ?? '', 'base64');
  check(`${label}: test_audio_content returns a RIFF/WAVE sound as audio/wav`,
    audio.content?.[0]?.type === 'audio' && audio.content[0].mimeType === 'audio/wav'
      && wav.subarray(0, 4).toString() === 'RIFF' && wav.subarray(8, 12).toString() === 'WAVE'
      && wav.readUInt32LE(4) === wav.length - 8, show(audio));
  const embedded = await call(s, 'test_embedded_resource', {});
  check(`${label}: test_embedded_resource returns a text resource`,
    embedded.content?.[0]?.type === 'resource' && embedded.content[0].resource?.uri === 'test://embedded-resource'
      && embedded.content[0].resource.mimeType === 'text/plain'
      && embedded.content[0].resource.text?.length > 0, show(embedded));
  const mixed = await call(s, 'test_multiple_content_types', {});
  check(`${label}: test_multiple_content_types returns text, image and resource`,
    isDeepStrictEqual(mixed.content?.map((b) => b.type), ['text', 'image', 'resource'])
      && JSON.parse(mixed.content[2].resource.text).value === 123, show(mixed));
  const r = await expectRpcError(() => call(s, 'test_error_handling', {}));
  check(`${label}: test_error_handling is a result with isError and text, not a JSON-RPC error`,
    r.result?.isError === true && texts(r.result)[0]?.length > 0, show(r));
  const args = { name: 'Ada', contactMethod: 'email', email: 'ada@example.com' };
  const js = await call(s, 'json_schema_2020_12_tool', args);
  check(`${label}: json_schema_2020_12_tool accepts arguments its schema allows`,
    !js.isError && texts(js)[0]?.includes('ada@example.com'), show(js));
  const bad = await call(s, 'json_schema_2020_12_tool', { name: 'Ada', contactMethod: 'phone' });
  check(`${label}: json_schema_2020_12_tool refuses arguments its if/then forbids (no phone)`,
    bad.isError === true, show(bad));
}

async function checkLoggingAndProgress(s) {
  const { client, label } = s;
  const level = await client.setLoggingLevel('debug', opts());
  check(`${label}: logging/setLevel returns {}`, isDeepStrictEqual(level, {}), show(level));
  const before = s.logs.length;
  const logged = await call(s, 'test_tool_with_logging', {});
  await sleep(200);
  const logs = s.logs.slice(before);
  check(`${label}: test_tool_with_logging succeeds`, !logged.isError, show(logged));
  check(`${label}: three info notifications/message from the tool during the call, in order`,
    isDeepStrictEqual(logs.map((l) => [l.level, l.logger, l.data]), [
      ['info', 'test_tool_with_logging', 'Tool execution started'],
      ['info', 'test_tool_with_logging', 'Tool processing data'],
      ['info', 'test_tool_with_logging', 'Tool execution completed'],
    ]), show(logs));

  await client.setLoggingLevel('error', opts());
  const quiet = s.logs.length;
  await call(s, 'test_tool_with_logging', {});
  await sleep(200);
  check(`${label}: after setLevel error, info messages are not sent`, s.logs.length === quiet,
    show(s.logs.slice(quiet)));

  // Read from the wire: the SDK hands a notification to onprogress
  // asynchronously and drops one that it handles after the call's response.
  const mark = s.transport.received.length;
  const p = await call(s, 'test_tool_with_progress', {}, { onprogress: () => {} });
  const sent = s.transport.sent.findLast((m) => m.method === 'tools/call');
  const token = sent?.params?._meta?.progressToken;
  const progress = s.transport.received.slice(mark)
    .filter((m) => m.method === 'notifications/progress' && m.params?.progressToken === token)
    .map((m) => [m.params.progress, m.params.total]);
  check(`${label}: test_tool_with_progress succeeds`, !p.isError && texts(p).length > 0, show(p));
  check(`${label}: progress 0, 50, 100 of 100 before the result, with the request's token`,
    token !== undefined && isDeepStrictEqual(progress, [[0, 100], [50, 100], [100, 100]]), show(progress));
}

async function checkAsking(s) {
  const { label } = s;
  let mark = s.asked.length;
  const sampled = await call(s, 'test_sampling', { prompt: 'What is the capital of France?' });
  const req = s.asked[mark];
  check(`${label}: test_sampling sends sampling/createMessage with the prompt`,
    req?.method === 'sampling/createMessage'
      && req.params.messages?.[0]?.content?.text === 'What is the capital of France?'
      && req.params.maxTokens > 0, show(req));
  check(`${label}: test_sampling returns the model's reply`,
    texts(sampled)[0] === 'LLM response: Paris', show(sampled));

  mark = s.asked.length;
  const elicited = await call(s, 'test_elicitation', { message: 'Who are you? "quoted"' });
  const e = s.asked[mark];
  check(`${label}: test_elicitation sends elicitation/create with the message and a username/email form`,
    e?.method === 'elicitation/create' && e.params.message === 'Who are you? "quoted"'
      && isDeepStrictEqual(e.params.requestedSchema?.required, ['username', 'email']), show(e));
  check(`${label}: test_elicitation reports the answer`,
    texts(elicited)[0]?.includes('action=accept') && texts(elicited)[0]?.includes('ada@example.com'),
    show(elicited));

  mark = s.asked.length;
  await call(s, 'test_elicitation_sep1034_defaults', {});
  const d = s.asked[mark]?.params?.requestedSchema?.properties;
  check(`${label}: test_elicitation_sep1034_defaults offers a default of every type`,
    d?.name?.default === 'John Doe' && d?.age?.type === 'integer' && d.age.default === 30
      && d?.score?.default === 95.5 && d?.status?.default === 'active' && d.status.enum?.includes('active')
      && d?.verified?.default === true, show(d));

  mark = s.asked.length;
  await call(s, 'test_elicitation_sep1330_enums', {});
  const en = s.asked[mark]?.params?.requestedSchema?.properties;
  check(`${label}: test_elicitation_sep1330_enums offers the five kinds of choice`,
    Array.isArray(en?.untitledSingle?.enum) && Array.isArray(en?.titledSingle?.oneOf)
      && en?.legacyEnum?.enumNames?.length === en?.legacyEnum?.enum?.length
      && Array.isArray(en?.untitledMulti?.items?.enum) && Array.isArray(en?.titledMulti?.items?.anyOf),
    show(en));

  // The input-required tools, in this era with real requests to the client.
  mark = s.asked.length;
  const hello = await call(s, 'test_input_required_result_elicitation', {});
  check(`${label}: test_input_required_result_elicitation asks the name and greets`,
    isDeepStrictEqual(askedSince(s, mark), ['elicitation/create']) && texts(hello)[0] === 'Hello, Ada!',
    show({ asked: askedSince(s, mark), hello }));

  mark = s.asked.length;
  const capital = await call(s, 'test_input_required_result_sampling', {});
  check(`${label}: test_input_required_result_sampling asks the model`,
    isDeepStrictEqual(askedSince(s, mark), ['sampling/createMessage']) && texts(capital)[0]?.includes('Paris'),
    show(capital));

  mark = s.asked.length;
  const roots = await call(s, 'test_input_required_result_list_roots', {});
  check(`${label}: test_input_required_result_list_roots asks for the roots and names them`,
    isDeepStrictEqual(askedSince(s, mark), ['roots/list']) && texts(roots)[0]?.includes(ROOT.uri), show(roots));

  const state = await call(s, 'test_input_required_result_request_state', {});
  check(`${label}: test_input_required_result_request_state gets its state back (state-ok)`,
    !state.isError && texts(state)[0]?.includes('state-ok'), show(state));

  mark = s.asked.length;
  const three = await call(s, 'test_input_required_result_multiple_inputs', {});
  check(`${label}: test_input_required_result_multiple_inputs asks the user, the model and the client`,
    isDeepStrictEqual(askedSince(s, mark).sort(), ['elicitation/create', 'roots/list', 'sampling/createMessage'])
      && texts(three).join(' ').includes('Ada') && texts(three).join(' ').includes(ROOT.uri), show(three));

  mark = s.asked.length;
  const rounds = await call(s, 'test_input_required_result_multi_round', {});
  const messages = s.asked.slice(mark).map((r) => r.params?.message);
  check(`${label}: test_input_required_result_multi_round asks step 1, then step 2`,
    messages.length === 2 && messages[0]?.startsWith('Step 1') && messages[1]?.startsWith('Step 2'),
    show(messages));
  check(`${label}: test_input_required_result_multi_round carries the name to the last round`,
    texts(rounds)[0] === "Ada's favorite color is blue.", show(rounds));

  mark = s.asked.length;
  const caps = await call(s, 'test_input_required_result_capabilities', {});
  check(`${label}: test_input_required_result_capabilities asks all three of a client that can answer`,
    askedSince(s, mark).length === 3 && texts(caps)[0] === 'Got 3 answer(s).', show(caps));
}

async function checkResources(s) {
  const { client, label } = s;
  const { resources } = await client.listResources(undefined, opts());
  check(`${label}: resources/list has the three resources with uri, name and mimeType`,
    isDeepStrictEqual(resources.map((r) => r.uri).sort(),
      ['test://static-binary', 'test://static-text', 'test://watched-resource'])
      && resources.every((r) => r.name && r.mimeType), show(resources));
  const { resourceTemplates } = await client.listResourceTemplates(undefined, opts());
  check(`${label}: resources/templates/list has test://template/{id}/data`,
    resourceTemplates.length === 1 && resourceTemplates[0].uriTemplate === 'test://template/{id}/data',
    show(resourceTemplates));

  const text = await client.readResource({ uri: 'test://static-text' }, opts());
  check(`${label}: test://static-text reads as text/plain`,
    text.contents?.[0]?.uri === 'test://static-text' && text.contents[0].mimeType === 'text/plain'
      && text.contents[0].text?.length > 0, show(text));
  const binary = await client.readResource({ uri: 'test://static-binary' }, opts());
  check(`${label}: test://static-binary reads as a PNG blob`,
    binary.contents?.[0]?.blob === PNG && binary.contents[0].mimeType === 'image/png', show(binary));
  const templ = await client.readResource({ uri: 'test://template/123/data' }, opts());
  let data = null;
  try { data = JSON.parse(templ.contents?.[0]?.text); } catch { /* checked below */ }
  check(`${label}: test://template/123/data reads as JSON naming id 123`,
    templ.contents?.[0]?.uri === 'test://template/123/data' && data?.id === '123', show(templ));
  const missing = await expectRpcError(() => client.readResource({ uri: 'test://no-such-resource' }, opts()));
  check(`${label}: an unknown resource is a JSON-RPC error naming the uri`,
    missing.error instanceof McpError && missing.error.data?.uri === 'test://no-such-resource', show(missing));
  const noData = await expectRpcError(() => client.readResource({ uri: 'test://template/abc/data' }, opts()));
  check(`${label}: the template's handler says not found for a non-numeric id`,
    noData.error instanceof McpError && noData.error.code === missing.error?.code
      && noData.error.data?.uri === 'test://template/abc/data', show(noData));

  const sub = await expectRpcError(() => client.subscribeResource({ uri: 'test://watched-resource' }, opts()));
  check(`${label}: resources/subscribe test://watched-resource succeeds`, sub.result !== undefined, show(sub));
  const unsub = await expectRpcError(() => client.unsubscribeResource({ uri: 'test://watched-resource' }, opts()));
  check(`${label}: resources/unsubscribe succeeds`, unsub.result !== undefined, show(unsub));
}

async function checkPrompts(s) {
  const { client, label } = s;
  const { prompts } = await client.listPrompts(undefined, opts());
  check(`${label}: prompts/list names the ${PROMPTS.length} prompts, each with a description`,
    isDeepStrictEqual(prompts.map((p) => p.name).sort(), [...PROMPTS].sort())
      && prompts.every((p) => p.description?.length > 0), show(prompts));
  const withArgs = prompts.find((p) => p.name === 'test_prompt_with_arguments');
  check(`${label}: test_prompt_with_arguments takes arg1 and arg2, both required`,
    isDeepStrictEqual(withArgs?.arguments?.map((a) => [a.name, a.required]), [['arg1', true], ['arg2', true]]),
    show(withArgs));

  const simple = await client.getPrompt({ name: 'test_simple_prompt' }, opts());
  check(`${label}: test_simple_prompt is one user text message`,
    simple.messages?.length === 1 && simple.messages[0].role === 'user'
      && simple.messages[0].content?.type === 'text', show(simple));
  const args = await client.getPrompt({ name: 'test_prompt_with_arguments',
    arguments: { arg1: 'testValue1', arg2: 'testValue2' } }, opts());
  check(`${label}: test_prompt_with_arguments uses both values`,
    JSON.stringify(args.messages).includes('testValue1') && JSON.stringify(args.messages).includes('testValue2'),
    show(args));
  const missing = await expectRpcError(() => client.getPrompt({ name: 'test_prompt_with_arguments',
    arguments: { arg1: 'only one' } }, opts()));
  check(`${label}: test_prompt_with_arguments without arg2 is refused (-32602)`,
    missing.error instanceof McpError && missing.error.code === -32602, show(missing));
  const embedded = await client.getPrompt({ name: 'test_prompt_with_embedded_resource',
    arguments: { resourceUri: 'test://static-text' } }, opts());
  check(`${label}: test_prompt_with_embedded_resource embeds the resource it is given`,
    embedded.messages?.[0]?.content?.type === 'resource'
      && embedded.messages[0].content.resource?.uri === 'test://static-text', show(embedded));
  const image = await client.getPrompt({ name: 'test_prompt_with_image' }, opts());
  check(`${label}: test_prompt_with_image has an image message`,
    image.messages?.some((m) => m.content?.type === 'image' && m.content.data === PNG
      && m.content.mimeType === 'image/png'), show(image));
  const mark = s.asked.length;
  const asking = await client.getPrompt({ name: 'test_input_required_result_prompt' }, opts());
  check(`${label}: test_input_required_result_prompt asks the user first, then uses the answer`,
    isDeepStrictEqual(askedSince(s, mark), ['elicitation/create'])
      && JSON.stringify(asking.messages).includes('interop context'), show(asking));

  const done = await client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
    argument: { name: 'arg1', value: 'test' } }, opts());
  const values = done.completion?.values;
  check(`${label}: completion/complete of arg1 "test" suggests testValue1 and test only`,
    isDeepStrictEqual(values, ['testValue1', 'test']), show(done));
  const none = await client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
    argument: { name: 'arg2', value: 'zzz' } }, opts());
  check(`${label}: completion/complete with no match is an empty list`,
    isDeepStrictEqual(none.completion?.values, []), show(none));
}

// Tools and prompts that come and go, with list_changed notifications.
async function checkListChanges(s) {
  const { client, label } = s;
  for (const [kind, trigger, dynamic, list, counter] of [
    ['tool', 'test_trigger_tool_change', 'test_dynamic_tool', async () => (await client.listTools(undefined, opts())).tools, 'toolsChanged'],
    ['prompt', 'test_trigger_prompt_change', 'test_dynamic_prompt', async () => (await client.listPrompts(undefined, opts())).prompts, 'promptsChanged'],
  ]) {
    const before = s[counter];
    const added = await call(s, trigger, {});
    await sleep(100);
    check(`${label}: ${trigger} adds ${dynamic} and notifies list_changed`,
      !added.isError && s[counter] > before && (await list()).some((x) => x.name === dynamic),
      show({ added, notified: s[counter] - before }));
    if (kind === 'tool') {
      const r = await call(s, dynamic, {});
      check(`${label}: ${dynamic} can be called`, !r.isError && texts(r).length === 1, show(r));
    } else {
      const r = await client.getPrompt({ name: dynamic }, opts());
      check(`${label}: ${dynamic} can be got`, r.messages?.length === 1, show(r));
    }
    const mid = s[counter];
    const removed = await call(s, trigger, {});
    await sleep(100);
    check(`${label}: ${trigger} again removes ${dynamic} and notifies again`,
      !removed.isError && s[counter] > mid && !(await list()).some((x) => x.name === dynamic),
      show({ removed, notified: s[counter] - mid }));
  }
}

// A client that declares no capabilities: tools that need to ask fail as
// tool errors, and nothing is asked.
async function checkWithoutCapabilities(s) {
  const { label } = s;
  for (const [name, args] of [
    ['test_sampling', { prompt: 'hi' }], ['test_elicitation', { message: 'hi' }],
    ['test_missing_capability', {}], ['test_input_required_result_list_roots', {}],
    ['test_input_required_result_capabilities', {}],
  ]) {
    const r = await expectRpcError(() => call(s, name, args));
    check(`${label}: ${name} is an isError result when the client cannot be asked`,
      r.result?.isError === true && texts(r.result)[0]?.length > 0, show(r));
  }
  check(`${label}: nothing was asked of a client without capabilities`, s.asked.length === 0, show(s.asked));
  // Without logging/setLevel, a legacy session gets no log messages.
  await call(s, 'test_tool_with_logging', {});
  await sleep(200);
  check(`${label}: no notifications/message without logging/setLevel`, s.logs.length === 0, show(s.logs));
}

// ---- main --------------------------------------------------------------------

const watchdog = startWatchdog(CONFIG.totalBudgetMs, () => { for (const t of live) t.kill(); });

async function main() {
  console.log(`# everything: ${CONFIG.notes}`);
  console.log(`# launcher: ${CONFIG.launcher.length ? CONFIG.launcher.join(' ') : '(none)'}`);
  console.log(`# @modelcontextprotocol/sdk ${sdkVersion()}`);
  const problem = preflight(CONFIG);
  if (problem) {
    fail('preflight', problem);
    return;
  }
  await withSession('full client', { sampling: {}, elicitation: {}, roots: { listChanged: true } }, async (s) => {
    checkInitialize(s);
    await checkTools(s);
    await checkContent(s);
    await checkLoggingAndProgress(s);
    await checkAsking(s);
    await checkResources(s);
    await checkPrompts(s);
    await checkListChanges(s);
  });
  await withSession('bare client', {}, checkWithoutCapabilities);
}

main()
  .catch((err) => fail('test driver', err?.stack ?? show(err)))
  .finally(() => {
    clearTimeout(watchdog);
    for (const t of live) t.kill();
    finish();
  });
