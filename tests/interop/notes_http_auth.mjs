// Interop test of the OAuth 2.1 resource server: the official MCP
// TypeScript SDK client (Client + StreamableHTTPClientTransport, pinned in
// package-lock.json) sends bearer tokens to
//   notes --http 127.0.0.1:0 --jwks FILE --issuer ISSUER --audience AUDIENCE
// The tokens are JWTs this script signs itself (node:crypto, RS256) with a
// key whose JWKS it writes to FILE; the audience is a canonical https URI
// the server would have behind a proxy.
//
//  (a) no token: 401 with WWW-Authenticate: Bearer resource_metadata="...",
//      which the SDK's own parser reads; the SDK's metadata discovery finds
//      the protected resource metadata (RFC 9728) without a token; the SDK
//      client cannot connect; a token in the query string is not accepted.
//  (b) a read-only token (notes:read) in requestInit headers: the SDK lists
//      the tools and reads, and add_note / delete_note (annotated
//      non-destructive / destructive) are both refused on scope with HTTP
//      403 whose body is the JSON-RPC error -31403 and whose challenge
//      names the scope; nothing was written.
//  (c) a token with every scope writes and deletes (delete_note confirmed
//      through elicitation); an expired token gets 401 invalid_token;
//      another subject's token on the first session gets 404.
//  (d) step-up: a notes:write token deletes its own note, but another
//      subject's only with notes:admin: delete_note and manage_note's
//      delete are refused with HTTP 403 insufficient_scope whose challenge
//      names notes:admin (the SDK session, 2025-11-25) and with 403 and
//      -31403 whose requiredScopes is ["notes:admin"] (2026-07-28), and
//      the note stays; a notes:admin token deletes it.
//  (e) the same with --db (SQLite, when notes has it): the owner a note
//      was added with survives a restart of the server.
//
// Usage and launcher as notes_stdio.mjs (see lib.mjs):
//   node notes_http_auth.mjs <path-to-notes> [launcher words...]
// Prints PASS/FAIL per check, ends with "N passed, N failed", exits non-zero
// on any failure; loopback only, bounded by a watchdog.

import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { ElicitRequestSchema, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

import { checkHttpExit, checkListeningUrl, startHttpServer, stopHttpServer } from './http_lib.mjs';
import { check, fail, finish, parseCommandLine, preflight, sdkVersion, show, startWatchdog } from './lib.mjs';

const CONFIG = parseCommandLine('notes_http_auth.mjs');
const opts = () => ({ timeout: CONFIG.requestTimeoutMs });
const ISSUER = 'https://as.notes.example';
const AUDIENCE = 'https://notes.example/mcp';
const PRM_URL = 'https://notes.example/.well-known/oauth-protected-resource/mcp';
// The metadata's scopes_supported: the tools' own scopes, and notes:admin,
// which only a handler asks for (step-up), listed by notes itself.
const TOOL_SCOPES = ['notes:read', 'notes:write', 'notes:admin'];
const SCOPE_ERROR_CODE = -31403;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'libmcp-interop-auth-'));
const live = new Set();

// ---- keys and tokens ----------------------------------------------------------

const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const KID = 'interop-rs256';
const jwksFile = path.join(tmp, 'jwks.json');
fs.writeFileSync(jwksFile, JSON.stringify({
  keys: [{ ...publicKey.export({ format: 'jwk' }), kid: KID, alg: 'RS256', use: 'sig' }],
}));

const b64url = (buf) => Buffer.from(buf).toString('base64url');

function sign({ sub, scope, ttl = 600, aud = AUDIENCE }) {
  const now = Math.floor(Date.now() / 1000);
  const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'at+jwt', kid: KID }));
  const payload = b64url(JSON.stringify({
    iss: ISSUER, aud, sub, scope, iat: ttl < 0 ? now + ttl - 600 : now, exp: now + ttl,
    jti: crypto.randomUUID(),
  }));
  const sig = crypto.sign('sha256', Buffer.from(`${header}.${payload}`), privateKey);
  return `${header}.${payload}.${b64url(sig)}`;
}

// ---- plumbing --------------------------------------------------------------------

// A fetch that records method, status and challenge of every exchange.
function recordingFetch(log) {
  return async (url, init) => {
    const res = await fetch(url, init);
    log.push({
      method: init?.method ?? 'GET',
      status: res.status,
      challenge: res.headers.get('www-authenticate'),
      contentType: res.headers.get('content-type'),
    });
    return res;
  };
}

// An SDK client sending token on every request (requestInit headers);
// elicitation requests are accepted.
async function connectSdk(url, token, log = []) {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers }, fetch: recordingFetch(log),
  });
  const client = new Client({ name: 'libmcp-interop-auth', version: '0.0.0' },
    { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: {} }));
  transport.errors = [];
  transport.onerror = (err) => transport.errors.push(err);
  await client.connect(transport, opts());
  return { client, transport, log };
}

async function call(client, name, args) {
  try {
    return { result: await client.callTool({ name, arguments: args }, undefined, opts()) };
  } catch (err) {
    return { error: err };
  }
}

function post(url, body, headers = {}) {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers,
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(CONFIG.requestTimeoutMs),
  });
}

const INIT = {
  jsonrpc: '2.0', id: 0, method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};

async function withServer(tag, fn, store = ['--data', path.join(tmp, `${tag}.json`)]) {
  let server;
  try {
    server = await startHttpServer(CONFIG, tag, [
      '--jwks', jwksFile, '--issuer', ISSUER, '--audience', AUDIENCE, ...store,
    ]);
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

// ---- (a) no token ------------------------------------------------------------------

async function scenarioNoToken(server) {
  const tag = 'no token';
  const res = await post(server.url, INIT);
  await res.text();
  check(`${tag}: initialize without Authorization gets 401`, res.status === 401, `HTTP ${res.status}`);
  const challenge = res.headers.get('www-authenticate');
  check(`${tag}: WWW-Authenticate is exactly Bearer resource_metadata="${PRM_URL}"`,
    challenge === `Bearer resource_metadata="${PRM_URL}"`, show(challenge));
  const params = extractWWWAuthenticateParams(res);
  check(`${tag}: the SDK's parser reads resource_metadata from it`,
    params.resourceMetadataUrl?.href === PRM_URL && params.error === undefined, show(params));

  // The SDK's discovery, from the server's URL: path-inserted well-known URI.
  let prm;
  try {
    prm = await discoverOAuthProtectedResourceMetadata(server.url);
  } catch (err) {
    fail(`${tag}: the SDK discovers the protected resource metadata`, err?.message ?? show(err));
  }
  if (prm) {
    check(`${tag}: metadata resource is the audience, byte for byte`, prm.resource === AUDIENCE, show(prm));
    check(`${tag}: metadata authorization_servers is [issuer]`,
      isDeepStrictEqual(prm.authorization_servers, [ISSUER]), show(prm));
    check(`${tag}: metadata scopes_supported lists every scope notes uses`,
      isDeepStrictEqual(prm.scopes_supported, TOOL_SCOPES), show(prm));
    check(`${tag}: metadata bearer_methods_supported is ["header"]`,
      isDeepStrictEqual(prm.bearer_methods_supported, ['header']), show(prm));
  }
  const origin = new URL(server.url).origin;
  const root = await fetch(`${origin}/.well-known/oauth-protected-resource`);
  const rootDoc = await root.json().catch(() => null);
  check(`${tag}: the root well-known URI serves the same document`,
    root.status === 200 && rootDoc?.resource === AUDIENCE, `HTTP ${root.status} ${show(rootDoc)}`);

  // The SDK client cannot connect without a token.
  try {
    const { client } = await connectSdk(server.url, null);
    fail(`${tag}: the SDK client without a token is refused`, 'connected');
    await client.close();
  } catch (err) {
    check(`${tag}: the SDK client without a token is refused with 401`,
      err instanceof StreamableHTTPError && err.code === 401, show(err));
  }

  // RFC 6750 §2.3 is not offered: a token in the query is not read.
  const q = await post(`${server.url}?access_token=${sign({ sub: 'alice', scope: 'notes:read' })}`, INIT);
  await q.text();
  check(`${tag}: ?access_token= is not accepted (401)`, q.status === 401, `HTTP ${q.status}`);
}

// ---- (b) a read-only token -------------------------------------------------------------

function expectScopeRefusal(tag, what, r, log, scope) {
  if (r.result) {
    fail(`${tag}: ${what} is refused`, `got a tool result ${show(r.result)}`);
    return;
  }
  const err = r.error;
  check(`${tag}: ${what} refused with HTTP 403`, err instanceof StreamableHTTPError && err.code === 403, show(err));
  check(`${tag}: ${what}: the 403 body is the JSON-RPC error ${SCOPE_ERROR_CODE}`,
    String(err?.message ?? '').includes(`"code":${SCOPE_ERROR_CODE}`), show(err?.message));
  const last = log.at(-1);
  const want = `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${PRM_URL}"`;
  check(`${tag}: ${what}: WWW-Authenticate is exactly ${want}`, last?.challenge === want, show(last));
  check(`${tag}: ${what}: the 403 is application/json (no stream was opened)`,
    /^application\/json/.test(last?.contentType ?? ''), show(last));
}

async function scenarioReadOnly(server) {
  const tag = 'read-only token';
  const token = sign({ sub: 'alice', scope: 'notes:read' });
  const { client, transport, log } = await connectSdk(server.url, token);
  check(`${tag}: the SDK connects and gets an Mcp-Session-Id`, typeof transport.sessionId === 'string',
    show(transport.sessionId));
  const listed = await client.listTools(undefined, opts());
  const names = listed.tools.map((t) => t.name).sort();
  check(`${tag}: tools/list shows all six tools (step-up stays discoverable)`,
    isDeepStrictEqual(names, ['add_note', 'delete_note', 'export_notes', 'get_note', 'list_notes', 'manage_note']), show(names));
  const del = listed.tools.find((t) => t.name === 'delete_note');
  check(`${tag}: delete_note is annotated destructive`, del?.annotations?.destructiveHint === true, show(del));

  let r = await call(client, 'list_notes', {});
  check(`${tag}: list_notes works`, r.result && !r.result.isError
    && Array.isArray(r.result.structuredContent?.notes), show(r));
  r = await call(client, 'get_note', { id: 'n404' });
  check(`${tag}: get_note runs (a tool error for a missing note)`, r.result?.isError === true, show(r));

  r = await call(client, 'add_note', { title: 'refused', text: 'x' });
  expectScopeRefusal(tag, 'add_note', r, log, 'notes:write');
  r = await call(client, 'delete_note', { id: 'n1' });
  expectScopeRefusal(tag, 'delete_note', r, log, 'notes:write');
  r = await call(client, 'manage_note', { action: 'read', id: 'n1' });
  expectScopeRefusal(tag, 'manage_note, even to read', r, log, 'notes:write');

  r = await call(client, 'list_notes', {});
  check(`${tag}: the refused add_note did not run`, r.result?.structuredContent?.notes?.length === 0, show(r));
  await client.ping(opts());
  check(`${tag}: the session still works after the refusals`, true);
  return { client, transport, token };
}

// ---- (c) every scope, expiry, another subject ------------------------------------------

async function scenarioWriterAndOthers(server, first) {
  const tag = 'all scopes';
  const token = sign({ sub: 'bob', scope: 'notes:read notes:write notes:admin' });
  const { client, transport } = await connectSdk(server.url, token);
  let r = await call(client, 'add_note', { title: 'by bob', text: 'written with notes:write' });
  const id = r.result?.structuredContent?.id;
  check(`${tag}: add_note works`, r.result && !r.result.isError && typeof id === 'string', show(r));
  r = await call(first.client, 'get_note', { id });
  check(`read-only token: get_note reads bob's note`, r.result && !r.result.isError, show(r));
  r = await call(client, 'delete_note', { id });
  check(`${tag}: delete_note works (confirmed by elicitation)`, r.result && !r.result.isError, show(r));
  check(`${tag}: no transport errors`, transport.errors.length === 0,
    transport.errors.map((e) => e?.message ?? String(e)).join('; '));

  // Bob's valid token on Alice's session: as if it did not exist.
  const cross = await post(server.url, { jsonrpc: '2.0', id: 5, method: 'ping' }, {
    authorization: `Bearer ${token}`,
    'mcp-session-id': first.transport.sessionId,
    'mcp-protocol-version': first.transport.protocolVersion ?? LATEST_PROTOCOL_VERSION,
  });
  await cross.text();
  check('another subject\'s token on a session gets 404', cross.status === 404, `HTTP ${cross.status}`);

  const expired = sign({ sub: 'alice', scope: 'notes:read', ttl: -3600 });
  const ex = await post(server.url, INIT, { authorization: `Bearer ${expired}` });
  await ex.text();
  check('an expired token gets 401 with error="invalid_token"',
    ex.status === 401 && ex.headers.get('www-authenticate')
      === `Bearer error="invalid_token", resource_metadata="${PRM_URL}"`,
    `HTTP ${ex.status} ${ex.headers.get('www-authenticate')}`);
  const wrongAud = sign({ sub: 'alice', scope: 'notes:read', aud: 'https://other.example/mcp' });
  const wa = await post(server.url, INIT, { authorization: `Bearer ${wrongAud}` });
  await wa.text();
  check('a token for another audience gets 401', wa.status === 401, `HTTP ${wa.status}`);

  await transport.terminateSession().catch(() => {});
  await client.close();
  await first.transport.terminateSession().catch(() => {});
  await first.client.close();
}

// ---- (d) step-up: another subject's note needs notes:admin ---------------------------

// A 2026-07-28 tools/call with token: { status, challenge, body }.
async function modernCall(url, token, name, args) {
  const res = await post(url, {
    jsonrpc: '2.0', id: 1, method: 'tools/call',
    params: {
      name, arguments: args,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  }, {
    authorization: `Bearer ${token}`, 'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call', 'mcp-name': name,
  });
  const text = await res.text();
  let body = null;
  try { body = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, challenge: res.headers.get('www-authenticate'), body, text };
}

// The note ids list_notes shows to client.
async function noteIds(client) {
  const r = await call(client, 'list_notes', {});
  return (r.result?.structuredContent?.notes ?? []).map((x) => x.id);
}

// The step-up's challenge: every scope the call needs, the tool's first.
const STEP_UP = `Bearer error="insufficient_scope", scope="notes:write notes:admin", `
  + `resource_metadata="${PRM_URL}"`;

// alice (notes:write) may not delete carolNote, carol's: the SDK session's
// delete_note and manage_note delete get 403 naming notes:admin, so does a
// 2026-07-28 request, and the note stays.
async function expectStepUp(tag, server, alice, aliceToken, carolNote) {
  for (const [what, name, args] of [
    ['delete_note', 'delete_note', { id: carolNote }],
    ['manage_note delete', 'manage_note', { action: 'delete', id: carolNote }],
  ]) {
    const r = await call(alice.client, name, args);
    if (r.result) {
      fail(`${tag}: ${what} of carol's note is refused`, show(r.result));
      continue;
    }
    check(`${tag}: ${what} of carol's note: HTTP 403`,
      r.error instanceof StreamableHTTPError && r.error.code === 403, show(r.error));
    check(`${tag}: ${what} of carol's note: the body is -31403 naming notes:admin`,
      String(r.error?.message ?? '').includes(`"code":${SCOPE_ERROR_CODE}`)
        && String(r.error?.message ?? '').includes('"requiredScopes":["notes:admin"]'), show(r.error?.message));
    const last = alice.log.at(-1);
    check(`${tag}: ${what} of carol's note: WWW-Authenticate is exactly ${STEP_UP}`,
      last?.challenge === STEP_UP, show(last));
  }
  const m = await modernCall(server.url, aliceToken, 'delete_note', { id: carolNote });
  check(`${tag}: 2026-07-28 delete_note of carol's note: HTTP 403 insufficient_scope`,
    m.status === 403 && m.challenge === STEP_UP, `HTTP ${m.status} ${m.challenge}`);
  check(`${tag}: 2026-07-28 delete_note of carol's note: -31403 with requiredScopes ["notes:admin"]`,
    m.body?.error?.code === SCOPE_ERROR_CODE
      && isDeepStrictEqual(m.body?.error?.data?.requiredScopes, ['notes:admin']), m.text);
  check(`${tag}: carol's note is still there`, (await noteIds(alice.client)).includes(carolNote));
}

async function scenarioStepUp(server) {
  const tag = 'step-up';
  const aliceToken = sign({ sub: 'alice', scope: 'notes:read notes:write' });
  const carolToken = sign({ sub: 'carol', scope: 'notes:read notes:write' });
  const adminToken = sign({ sub: 'dave', scope: 'notes:read notes:write notes:admin' });
  const alice = await connectSdk(server.url, aliceToken);
  const carol = await connectSdk(server.url, carolToken);
  const admin = await connectSdk(server.url, adminToken);
  try {
    let r = await call(alice.client, 'add_note', { title: "alice's", text: 'mine' });
    const aliceNote = r.result?.structuredContent?.id;
    r = await call(carol.client, 'add_note', { title: "carol's", text: 'hers' });
    const carolNote = r.result?.structuredContent?.id;
    if (!check(`${tag}: alice and carol each add a note`,
      typeof aliceNote === 'string' && typeof carolNote === 'string', show(r))) return;

    await expectStepUp(tag, server, alice, aliceToken, carolNote);

    r = await call(alice.client, 'delete_note', { id: aliceNote });
    check(`${tag}: alice deletes her own note with notes:write`, r.result && !r.result.isError, show(r));
    check(`${tag}: alice's note is gone`, !(await noteIds(alice.client)).includes(aliceNote));
    r = await call(admin.client, 'manage_note', { action: 'delete', id: carolNote });
    check(`${tag}: notes:admin deletes carol's note (manage_note, confirmed by elicitation)`,
      r.result && !r.result.isError, show(r));
    check(`${tag}: carol's note is gone`, !(await noteIds(alice.client)).includes(carolNote));
  } finally {
    for (const c of [alice, carol, admin]) {
      await c.transport.terminateSession().catch(() => {});
      await c.client.close();
    }
  }
}

// ---- (e) the owner survives a restart (SQLite) -------------------------------------------

// Whether this notes has --db: without SQLite it says so and exits 2.
function hasSqlite() {
  const p = spawnSync(CONFIG.notes, ['--db', path.join(tmp, 'probe.db'), '--no-such-flag'],
    { encoding: 'utf8', timeout: 30_000 });
  return !/built without SQLite/.test(p.stderr ?? '');
}

async function scenarioDbRestart() {
  const db = ['--db', path.join(tmp, 'notes.db')];
  const aliceToken = sign({ sub: 'alice', scope: 'notes:read notes:write' });
  const carolToken = sign({ sub: 'carol', scope: 'notes:read notes:write' });
  let carolNote;
  await withServer('db first run', async (server) => {
    const carol = await connectSdk(server.url, carolToken);
    const r = await call(carol.client, 'add_note', { title: "carol's", text: 'in SQLite' });
    carolNote = r.result?.structuredContent?.id;
    check('db first run: carol adds a note', typeof carolNote === 'string', show(r));
    await carol.transport.terminateSession().catch(() => {});
    await carol.client.close();
  }, db);
  if (!carolNote) return;
  await withServer('db restarted', async (server) => {
    const alice = await connectSdk(server.url, aliceToken);
    await expectStepUp('db restarted', server, alice, aliceToken, carolNote);
    const carol = await connectSdk(server.url, carolToken);
    const r = await call(carol.client, 'delete_note', { id: carolNote });
    check('db restarted: carol still owns her note and deletes it with notes:write',
      r.result && !r.result.isError, show(r));
    check('db restarted: the note is gone', !(await noteIds(alice.client)).includes(carolNote));
    for (const c of [alice, carol]) {
      await c.transport.terminateSession().catch(() => {});
      await c.client.close();
    }
  }, db);
}

// ---- main ------------------------------------------------------------------------------

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
  await withServer('auth', async (server) => {
    await scenarioNoToken(server);
    const first = await scenarioReadOnly(server);
    await scenarioWriterAndOthers(server, first);
  });
  await withServer('step-up', scenarioStepUp);
  if (hasSqlite()) await scenarioDbRestart();
  else console.log('# notes was built without SQLite: (e) is not run');
}

main()
  .catch((err) => fail('test driver', err?.stack ?? show(err)))
  .finally(() => {
    clearTimeout(watchdog);
    cleanup();
    finish();
  });
