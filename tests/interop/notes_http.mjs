// Interop test over Streamable HTTP: the official MCP TypeScript SDK client
// (Client + StreamableHTTPClientTransport, pinned in package-lock.json)
// drives `notes --http 127.0.0.1:0`.
//
//  (a) stateful: the legacy handshake mints an Mcp-Session-Id; tools/list
//      with every hint; each tool called, delete_note confirmed through a
//      real elicitation/create sent on the call's stream and answered on a
//      second POST; concurrent calls; DELETE ends the session (then 404).
//  (b) stateless: 2026-07-28 requests without a session (server/discover,
//      tools/list, each tool, delete_note's InputRequiredResult and retry,
//      a header mismatch). SDK 1.32.2 speaks protocol versions up to
//      2025-11-25 only, so this part is driven with fetch; an SDK session
//      on the same endpoint then sees what the stateless requests stored.
//  (c) scopes: `--scopes notes:read`: the refused calls never run.
//
// Usage and launcher as notes_stdio.mjs (see lib.mjs):
//   node notes_http.mjs <path-to-notes> [launcher words...]
//   MCP_TEST_LAUNCHER="valgrind --error-exitcode=99 ..." node notes_http.mjs <path-to-notes>
// Every server must run until SIGTERM and then exit by itself with status 0.
// Prints PASS/FAIL per check, ends with "N passed, N failed", exits non-zero
// on any failure; loopback only, bounded by a watchdog.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema, LATEST_PROTOCOL_VERSION, McpError, SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';

import {
  checkHttpExit, checkListeningUrl, readMessages, startHttpServer, stopHttpServer,
} from './http_lib.mjs';
import {
  check, fail, failures, finish, parseCommandLine, pass, preflight, sdkVersion, show, startWatchdog,
} from './lib.mjs';

const CONFIG = parseCommandLine('notes_http.mjs');
const opts = () => ({ timeout: CONFIG.requestTimeoutMs });
const MODERN = '2026-07-28';
const SCOPE_ERROR_CODE = -31403;
const NOTES_TOOLS = ['add_note', 'delete_note', 'export_notes', 'get_note', 'list_notes', 'manage_note'];
const HINTS = {
  // Every hint is on the wire; a read-only tool's two are derived.
  list_notes: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  get_note: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  add_note: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  delete_note: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  // The worst case of its actions; tools/resolve narrows each call.
  manage_note: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  // A long read that may run as a task.
  export_notes: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
};
const SESSION_ID = /^[\x21-\x7e]{22,256}$/;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'libmcp-interop-http-'));
const live = new Set();

// ---- plumbing --------------------------------------------------------------

// A fetch that records method, status and session header of every exchange.
function recordingFetch(log) {
  return async (url, init) => {
    const res = await fetch(url, init);
    log.push({
      method: init?.method ?? 'GET',
      status: res.status,
      sessionId: res.headers.get('mcp-session-id'),
      contentType: res.headers.get('content-type'),
    });
    return res;
  };
}

async function withServer(tag, args, fn) {
  let server;
  try {
    server = await startHttpServer(CONFIG, tag, args);
  } catch (err) {
    fail(`${tag}: server starts and prints its URL`, err?.message ?? show(err));
    return;
  }
  live.add(server);
  try {
    if (checkListeningUrl(tag, server.url)) await fn(server);
  } catch (err) {
    fail(`${tag}: unexpected exception`, err?.stack ?? show(err));
  } finally {
    const st = await stopHttpServer(server, CONFIG);
    live.delete(server);
    checkHttpExit(tag, st, CONFIG);
  }
}

// An SDK client over Streamable HTTP; elicitation requests are accepted
// and counted in client.elicitations.
async function connectSdk(url, log) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch(log) });
  const client = new Client({ name: 'libmcp-interop-http', version: '0.0.0' },
    { capabilities: { elicitation: {} } });
  client.elicitations = 0;
  client.setRequestHandler(ElicitRequestSchema, async () => {
    client.elicitations++;
    return { action: 'accept', content: {} };
  });
  transport.errors = [];
  transport.onerror = (err) => transport.errors.push(err);
  await client.connect(transport, opts());
  return { client, transport };
}

async function call(client, name, args) {
  try {
    return { result: await client.callTool({ name, arguments: args }, undefined, opts()) };
  } catch (err) {
    return { error: err };
  }
}

function isNonEmptyString(v) {
  return typeof v === 'string' && v.length > 0;
}

function resultText(r) {
  return (r?.content ?? []).filter((b) => b?.type === 'text').map((b) => b.text).join('\n');
}

function checkTools(tag, tools) {
  const names = tools.map((t) => t.name).sort();
  check(`${tag}: tools/list returns the ${NOTES_TOOLS.length} notes tools`, isDeepStrictEqual(names, NOTES_TOOLS), show(names));
  for (const [name, hints] of Object.entries(HINTS)) {
    const t = tools.find((x) => x.name === name);
    if (!t) continue;
    check(`${tag}: ${name} has a description`, isNonEmptyString(t.description), show(t.description));
    check(`${tag}: ${name} inputSchema.type is "object"`, t.inputSchema?.type === 'object', show(t.inputSchema));
    const ann = t.annotations ?? {};
    for (const [hint, value] of Object.entries(hints)) {
      check(`${tag}: ${name} annotations.${hint} === ${value}`, ann[hint] === value, show(ann[hint]));
    }
  }
}

// ---- (a) stateful ------------------------------------------------------------

async function scenarioStateful() {
  await withServer('stateful', ['--data', path.join(tmp, 'a.json')], async (server) => {
    const tag = 'stateful';
    const log = [];
    const { client, transport } = await connectSdk(server.url, log);
    const sid = transport.sessionId;
    check(`${tag}: initialize returned an Mcp-Session-Id of 22-256 visible ASCII characters`,
      SESSION_ID.test(sid ?? ''), show(sid));
    check(`${tag}: negotiated ${LATEST_PROTOCOL_VERSION}`, transport.protocolVersion === LATEST_PROTOCOL_VERSION,
      show(transport.protocolVersion));
    check(`${tag}: serverInfo.name is notes`, client.getServerVersion()?.name === 'notes',
      show(client.getServerVersion()));
    check(`${tag}: tools capability`, typeof client.getServerCapabilities()?.tools === 'object',
      show(client.getServerCapabilities()));

    const listed = await client.listTools(undefined, opts());
    checkTools(tag, listed.tools);

    let r = await call(client, 'list_notes', {});
    check(`${tag}: list_notes on a new store is empty`,
      r.result && Array.isArray(r.result.structuredContent?.notes) && r.result.structuredContent.notes.length === 0,
      show(r));
    r = await call(client, 'add_note', { title: 'HTTP note', text: 'over "Streamable" HTTP: é ✓' });
    const id = r.result?.structuredContent?.id;
    check(`${tag}: add_note returns structuredContent.id`, r.result && !r.result.isError && isNonEmptyString(id),
      show(r));
    r = await call(client, 'get_note', { id });
    check(`${tag}: get_note returns the text`, resultText(r.result).includes('over "Streamable" HTTP: é ✓'),
      show(r));
    r = await call(client, 'add_note', { title: 'no text' });
    check(`${tag}: add_note without text is a tool error (isError)`, r.result?.isError === true, show(r));

    // Three calls at once on the one session.
    const many = await Promise.all([1, 2, 3].map(() => call(client, 'list_notes', {})));
    check(`${tag}: three concurrent list_notes all answer`,
      many.every((x) => x.result?.structuredContent?.notes?.length === 1), show(many));

    // delete_note asks for confirmation: elicitation/create on the call's
    // stream, answered by the SDK on a second POST (202).
    r = await call(client, 'delete_note', { id });
    check(`${tag}: delete_note asked once through elicitation/create`, client.elicitations === 1,
      `${client.elicitations} elicitation(s)`);
    check(`${tag}: delete_note succeeds after the confirmation`, r.result && !r.result.isError, show(r));
    check(`${tag}: the answer to elicitation/create got 202`,
      log.some((e) => e.method === 'POST' && e.status === 202), show(log));
    r = await call(client, 'get_note', { id });
    check(`${tag}: get_note of the deleted note is a tool error`, r.result?.isError === true, show(r));
    await client.ping(opts());
    pass(`${tag}: ping answered`);

    const get = log.find((e) => e.method === 'GET');
    check(`${tag}: the SDK's standalone GET stream was accepted (200 text/event-stream) or refused with 405`,
      get && ((get.status === 200 && /text\/event-stream/.test(get.contentType ?? '')) || get.status === 405),
      show(get));
    check(`${tag}: no transport errors`, transport.errors.length === 0,
      transport.errors.map((e) => e?.message ?? String(e)).join('; '));

    await transport.terminateSession();
    const del = log.find((e) => e.method === 'DELETE');
    check(`${tag}: DELETE ends the session (200 or 204)`, del && (del.status === 200 || del.status === 204),
      show(del));
    const after = await fetch(server.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sid,
        'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'ping' }),
    });
    await after.text();
    check(`${tag}: the ended session's id gets 404`, after.status === 404, `HTTP ${after.status}`);
    await client.close();
  });
}

// ---- (b) stateless (2026-07-28) ---------------------------------------------

function modernMeta(capabilities = {}) {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'libmcp-interop-http-raw', version: '0.0.0' },
    'io.modelcontextprotocol/clientCapabilities': capabilities,
  };
}

let rawId = 0;

// One stateless request: headers from the body unless overridden.
async function modern(url, method, params, { caps = {}, headers = {} } = {}) {
  const h = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
  };
  if (method === 'tools/call') h['mcp-name'] = params.name;
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...h, ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: `raw-${++rawId}`, method, params: { ...params, _meta: modernMeta(caps) } }),
    signal: AbortSignal.timeout(CONFIG.requestTimeoutMs),
  });
  const r = await readMessages(res);
  r.reply = r.messages.at(-1);
  return r;
}

function expectComplete(tag, what, r) {
  const ok = check(`${tag}: ${what}: HTTP 200 with a result`, r.status === 200 && r.reply?.result,
    `HTTP ${r.status} ${r.text.slice(0, 300)}`);
  if (!ok) return undefined;
  check(`${tag}: ${what}: no Mcp-Session-Id in the response`, r.headers.get('mcp-session-id') === null,
    show(r.headers.get('mcp-session-id')));
  return r.reply.result;
}

async function scenarioStateless() {
  await withServer('stateless', ['--data', path.join(tmp, 'b.json')], async (server) => {
    const tag = 'stateless';
    console.log(`# SDK ${sdkVersion()} supports ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}: no ${MODERN}, `
      + 'so the stateless era is driven with fetch');
    const url = server.url;
    const d = expectComplete(tag, 'server/discover', await modern(url, 'server/discover', {}));
    check(`${tag}: server/discover lists ${MODERN}`, d?.supportedVersions?.includes(MODERN), show(d));
    const l = expectComplete(tag, 'tools/list', await modern(url, 'tools/list', {}));
    if (l) checkTools(tag, l.tools ?? []);

    let r = expectComplete(tag, 'add_note',
      await modern(url, 'tools/call', { name: 'add_note', arguments: { title: 'Stateless', text: 'no session' } }));
    const id = r?.structuredContent?.id;
    check(`${tag}: add_note returns an id`, isNonEmptyString(id), show(r));
    r = expectComplete(tag, 'get_note', await modern(url, 'tools/call', { name: 'get_note', arguments: { id } }));
    check(`${tag}: get_note returns the text`, resultText(r).includes('no session'), show(r));

    // An SDK session on the same endpoint sees the stateless write.
    const log = [];
    const { client, transport } = await connectSdk(url, log);
    const seen = await call(client, 'list_notes', {});
    check(`${tag}: an SDK session on the same endpoint sees the stateless note`,
      seen.result?.structuredContent?.notes?.some((n) => n.id === id), show(seen));
    await transport.terminateSession().catch(() => {});
    await client.close();

    // delete_note: an InputRequiredResult, then the retry.
    const elicit = { elicitation: {} };
    const ask = await modern(url, 'tools/call', { name: 'delete_note', arguments: { id } }, { caps: elicit });
    const q = expectComplete(tag, 'delete_note with elicitation declared', ask);
    check(`${tag}: delete_note answers input_required`, q?.resultType === 'input_required', show(q));
    const state = q?.requestState;
    const done = expectComplete(tag, 'delete_note retried with the answer', await modern(url, 'tools/call', {
      name: 'delete_note', arguments: { id },
      inputResponses: { confirm: { action: 'accept', content: {} } }, requestState: state,
    }, { caps: elicit }));
    check(`${tag}: the retry completes the delete`, done?.resultType === 'complete' && !done?.isError, show(done));
    r = expectComplete(tag, 'list_notes after the delete',
      await modern(url, 'tools/call', { name: 'list_notes', arguments: {} }));
    check(`${tag}: the note is gone`, Array.isArray(r?.structuredContent?.notes)
      && !r.structuredContent.notes.some((n) => n.id === id), show(r));

    // A header that disagrees with the body: 400 with -32020.
    const bad = await modern(url, 'tools/call', { name: 'list_notes', arguments: {} },
      { headers: { 'mcp-name': 'get_note' } });
    check(`${tag}: Mcp-Name differing from params.name: 400 with -32020`,
      bad.status === 400 && bad.reply?.error?.code === -32020, `HTTP ${bad.status} ${bad.text.slice(0, 200)}`);
  });
}

// ---- (c) scopes ----------------------------------------------------------------

function expectDenied(tag, what, r, scopes) {
  if (r.result) {
    fail(`${tag}: ${what} is refused`, `got a tool result ${show(r.result)}`);
  } else if (r.error instanceof McpError) {
    check(`${tag}: ${what} refused with JSON-RPC error ${SCOPE_ERROR_CODE}`, r.error.code === SCOPE_ERROR_CODE,
      show(r.error));
    check(`${tag}: ${what} error.data.requiredScopes is ${show(scopes)}`,
      isDeepStrictEqual(r.error.data?.requiredScopes, scopes), show(r.error.data));
  } else if (r.error instanceof StreamableHTTPError) {
    check(`${tag}: ${what} refused with HTTP 403`, r.error.code === 403, show(r.error));
  } else {
    fail(`${tag}: ${what} is refused with a JSON-RPC error or HTTP 403`, show(r.error));
  }
}

async function scenarioScopes() {
  await withServer('read-only', ['--scopes', 'notes:read', '--data', path.join(tmp, 'c.json')], async (server) => {
    const tag = 'read-only';
    const log = [];
    const { client, transport } = await connectSdk(server.url, log);
    await client.listTools(undefined, opts());
    let r = await call(client, 'list_notes', {});
    check(`${tag}: list_notes works with notes:read`, r.result && !r.result.isError, show(r));
    expectDenied(tag, 'add_note', await call(client, 'add_note', { title: 'refused', text: 'x' }), ['notes:write']);
    expectDenied(tag, 'delete_note', await call(client, 'delete_note', { id: '1' }), ['notes:write']);
    r = await call(client, 'list_notes', {});
    check(`${tag}: the refused add_note did not run`,
      Array.isArray(r.result?.structuredContent?.notes) && r.result.structuredContent.notes.length === 0, show(r));
    // The same principal in the stateless era.
    const m = await modern(server.url, 'tools/call', { name: 'add_note', arguments: { title: 'refused', text: 'y' } });
    check(`${tag}: a stateless add_note is refused too (-31403 or HTTP 403)`,
      m.status === 403 || m.reply?.error?.code === SCOPE_ERROR_CODE, `HTTP ${m.status} ${m.text.slice(0, 200)}`);
    await transport.terminateSession().catch(() => {});
    await client.close();
  });
}

// ---- main ------------------------------------------------------------------------

function cleanup() {
  for (const s of live) {
    try { s.child.kill('SIGKILL'); } catch { /* gone */ }
  }
  fs.rmSync(tmp, { recursive: true, force: true });
}

const watchdog = startWatchdog(CONFIG.totalBudgetMs, cleanup);

async function main() {
  console.log(`# notes: ${CONFIG.notes}`);
  console.log(`# launcher: ${CONFIG.launcher.length ? CONFIG.launcher.join(' ') : '(none)'}`);
  console.log(`# @modelcontextprotocol/sdk ${sdkVersion()}`);
  const problem = preflight(CONFIG);
  if (problem) {
    fail('preflight', problem);
    return;
  }
  await scenarioStateful();
  await scenarioStateless();
  await scenarioScopes();
}

main()
  .catch((err) => fail('test driver', err?.stack ?? show(err)))
  .finally(() => {
    clearTimeout(watchdog);
    cleanup();
    finish();
  });
