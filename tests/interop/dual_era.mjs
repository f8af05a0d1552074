// Interop test: ONE `notes --stdio` process serves both protocol eras on the
// same stdin/stdout (digest §3.2 "Dual-era server", versioning.mdx).
//
//  (a) Raw 2026-07-28 requests, with no initialize: server/discover,
//      tools/list and tools/call with the per-request _meta; an unsupported
//      version (-32022) and missing _meta keys (-32602); a delete_note that
//      asks for confirmation (InputRequiredResult), refused when retried with
//      a tampered or foreign requestState, done when retried properly.
//  (b) Then, on the same process, the official SDK Client (pinned in
//      package-lock.json) connects through a small custom Transport that
//      shares the child's stdin/stdout, performs the legacy initialize
//      handshake, lists the tools and the notes (seeing what the modern
//      requests stored), adds a note, and deletes one with a real
//      elicitation/create round trip; modern requests interleaved with the
//      legacy session see the legacy changes.
//
// Raw requests use string ids "raw-N", which the SDK never uses (its ids are
// integers): answers to them are taken off the stream, every other line goes
// to the SDK's transport. Before the SDK connects, nothing but answers to raw
// requests may appear (the modern era never sends a server-to-client request).
//
// Usage and launcher as notes_stdio.mjs (see lib.mjs):
//   node dual_era.mjs <path-to-notes> [launcher words...]
//   MCP_TEST_LAUNCHER="valgrind --error-exitcode=99 ..." node dual_era.mjs <path-to-notes>
// Prints PASS/FAIL per check, ends with "N passed, N failed", and exits
// non-zero on any failure; bounded by a watchdog well under two minutes.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { isDeepStrictEqual } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  ElicitRequestSchema, JSONRPCMessageSchema, LATEST_PROTOCOL_VERSION,
} from '@modelcontextprotocol/sdk/types.js';

import {
  check, checkExit, ExitTracker, fail, failures, finish, forwardLines, parseCommandLine, pass,
  preflight, sdkVersion, serverCommand, shellQuote, show, startWatchdog,
} from './lib.mjs';

// ---- configuration ---------------------------------------------------------

const CONFIG = parseCommandLine('dual_era.mjs');
const REQUEST_TIMEOUT_MS = CONFIG.requestTimeoutMs;

const MODERN = '2026-07-28';
const VERSIONS_DISCOVERED = [MODERN, '2025-11-25', '2025-06-18', '2025-03-26'];
const NOTES_TOOLS = ['add_note', 'delete_note', 'export_notes', 'get_note', 'list_notes', 'manage_note'];
const CLIENT_INFO = { name: 'libmcp-dual-era-raw', version: '0.0.0' };

// The per-request _meta of the modern era.
function modernMeta(capabilities = {}, extra = {}) {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
    'io.modelcontextprotocol/clientCapabilities': capabilities,
    ...extra,
  };
}

// ---- one process, one stream, two clients ----------------------------------

// Owns the child process: writes lines to its stdin, splits its stdout into
// lines, hands answers to raw requests to their waiters and everything else
// to the SDK transport once one is attached.
class SharedStdio {
  constructor(child, tag) {
    this.child = child;
    this.tag = tag;
    this.nextRaw = 0;
    this.pending = new Map(); // raw id -> { resolve, timer }
    this.sdk = null; // the SdkTransport once attached
    this.unexpected = []; // messages nobody was waiting for
    this.badLines = []; // stdout lines that are not JSON-RPC
    this.wire = []; // every message read, in order
    this.writeErrors = [];
    let buf = Buffer.alloc(0);
    child.stdout.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      let i;
      while ((i = buf.indexOf(0x0a)) >= 0) {
        const line = buf.subarray(0, i).toString('utf8');
        buf = buf.subarray(i + 1);
        this._line(line);
      }
    });
    child.stdout.on('end', () => {
      if (buf.length) this.badLines.push(`unterminated: ${buf.toString('utf8')}`);
      buf = Buffer.alloc(0);
      for (const [id, w] of this.pending) w.resolve({ lost: `stdout closed before the answer to ${id}` });
      this.pending.clear();
      this.sdk?._closed();
    });
    child.stdin.on('error', (err) => this.writeErrors.push(err));
  }

  _line(line) {
    if (line.trim() === '') return;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      this.badLines.push(line);
      return;
    }
    this.wire.push(msg);
    const id = msg?.id;
    if (typeof id === 'string' && id.startsWith('raw-') && !('method' in msg)) {
      const w = this.pending.get(id);
      if (w) {
        this.pending.delete(id);
        clearTimeout(w.timer);
        w.resolve(msg);
      } else {
        this.unexpected.push(msg);
      }
      return;
    }
    if (this.sdk) this.sdk._deliver(msg);
    else this.unexpected.push(msg);
  }

  write(message) {
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  // Sends a raw request and resolves with its answer, or with { lost } after
  // the timeout; never rejects.
  raw(method, params) {
    const id = `raw-${++this.nextRaw}`;
    const message = { jsonrpc: '2.0', id, method };
    if (params !== undefined) message.params = params;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve({ lost: `no answer to ${method} (${id}) within ${REQUEST_TIMEOUT_MS} ms` });
      }, REQUEST_TIMEOUT_MS);
      timer.unref();
      this.pending.set(id, { resolve, timer });
      this.write(message);
    });
  }
}

// The SDK side of the stream: an object with the SDK's Transport interface
// (start/send/close and the onmessage/onerror/onclose callbacks, see
// @modelcontextprotocol/sdk/dist/esm/shared/transport.d.ts). Closing it
// detaches the SDK; the process's stdin stays open for the raw side.
class SdkTransport {
  constructor(shared) {
    this.shared = shared;
    this.sent = [];
    this.received = [];
    this.errors = [];
    this.started = false;
    this.closed = false;
    this.protocolVersion = undefined;
    this.onmessage = undefined;
    this.onerror = undefined;
    this.onclose = undefined;
  }

  async start() {
    if (this.started) throw new Error('SdkTransport already started');
    this.started = true;
    this.shared.sdk = this;
  }

  async send(message) {
    if (this.closed) throw new Error('SdkTransport is closed');
    this.sent.push(message);
    this.shared.write(message);
  }

  async close() {
    if (this.closed) return;
    this.closed = true;
    if (this.shared.sdk === this) this.shared.sdk = null;
    this.onclose?.();
  }

  setProtocolVersion(version) {
    this.protocolVersion = version;
  }

  _deliver(msg) {
    // Validate as the SDK's own stdio transport does.
    let parsed;
    try {
      parsed = JSONRPCMessageSchema.parse(msg);
    } catch (err) {
      this.errors.push(err);
      this.onerror?.(err);
      return;
    }
    this.received.push(parsed);
    this.onmessage?.(parsed);
  }

  _closed() {
    if (!this.closed) this.close();
  }
}

// ---- helpers ---------------------------------------------------------------

function serverInfoOf(result) {
  return result?._meta?.['io.modelcontextprotocol/serverInfo'];
}

// Checks a raw answer is a modern result of the given resultType carrying
// serverInfo in _meta; returns the result or undefined.
function expectModernResult(what, answer, resultType = 'complete') {
  if (answer.lost) {
    fail(`${what}: answered`, answer.lost);
    return undefined;
  }
  if (!check(`${what}: is a result`, answer.result && !answer.error, show(answer))) return undefined;
  const r = answer.result;
  check(`${what}: resultType is "${resultType}"`, r.resultType === resultType, show(r.resultType));
  const info = serverInfoOf(r);
  check(`${what}: _meta serverInfo names notes`,
    info?.name === 'notes' && typeof info?.version === 'string', show(r._meta));
  return r;
}

function expectError(what, answer, code) {
  if (answer.lost) {
    fail(`${what}: answered`, answer.lost);
    return undefined;
  }
  check(`${what}: is a JSON-RPC error ${code}`, answer.error?.code === code && !('result' in answer),
    show(answer));
  return answer.error;
}

function expectCacheable(what, r) {
  check(`${what}: ttlMs is an integer >= 0`, Number.isInteger(r?.ttlMs) && r.ttlMs >= 0, show(r?.ttlMs));
  check(`${what}: cacheScope is "public"`, r?.cacheScope === 'public', show(r?.cacheScope));
}

// The last raw wire answer the SDK received for its request `method`.
function sdkWireResult(t, method) {
  const req = [...t.sent].reverse().find((m) => m.method === method && 'id' in m);
  return req && t.received.find((m) => m.id === req.id && ('result' in m || 'error' in m));
}

function expectLegacyShape(what, response) {
  const r = response?.result;
  if (!check(`${what}: answered with a result`, r && typeof r === 'object', show(response))) return;
  check(`${what}: legacy reply has no resultType`, !('resultType' in r), show(r.resultType));
  check(`${what}: legacy reply has no ttlMs, cacheScope or serverInfo _meta`,
    !('ttlMs' in r) && !('cacheScope' in r) && serverInfoOf(r) === undefined, show(r));
}

// ---- the scenario ----------------------------------------------------------

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'libmcp-dual-era-'));
const DATA = path.join(tmp, 'notes.json');
let tracker = null;

async function rawListNotes(shared, what) {
  const r = expectModernResult(`modern list_notes ${what}`,
    await shared.raw('tools/call', { name: 'list_notes', arguments: {}, _meta: modernMeta() }));
  const notes = r?.structuredContent?.notes;
  check(`modern list_notes ${what}: structuredContent.notes is an array`, Array.isArray(notes), show(r));
  return Array.isArray(notes) ? notes : [];
}

async function rawAddNote(shared, title, text) {
  const r = expectModernResult(`modern add_note "${title}"`,
    await shared.raw('tools/call', { name: 'add_note', arguments: { title, text }, _meta: modernMeta() }));
  const id = r?.structuredContent?.id;
  check(`modern add_note "${title}": not an error, returns structuredContent.id`,
    r && !r.isError && typeof id === 'string' && id.length > 0, show(r));
  return id;
}

// (a) modern requests, no initialize.
async function modernPhase(shared) {
  // server/discover as the very first message of the process.
  const first = await shared.raw('server/discover', { _meta: modernMeta() });
  if (first.lost) {
    fail('server/discover (first message): answered', `${first.lost}; not going on`);
    return null;
  }
  const d = expectModernResult('server/discover (first message)', first);
  if (d) {
    const versions = Array.isArray(d.supportedVersions) ? d.supportedVersions : [];
    for (const v of VERSIONS_DISCOVERED) {
      check(`server/discover: supportedVersions contains ${v}`, versions.includes(v), show(versions));
    }
    check('server/discover: capabilities.tools is an object',
      d.capabilities?.tools && typeof d.capabilities.tools === 'object', show(d.capabilities));
    check('server/discover: has instructions', typeof d.instructions === 'string', show(d.instructions));
    expectCacheable('server/discover', d);
  }

  const l = expectModernResult('modern tools/list',
    await shared.raw('tools/list', { _meta: modernMeta() }));
  if (l) {
    const names = (Array.isArray(l.tools) ? l.tools : []).map((t) => t?.name).sort();
    check(`modern tools/list: exactly the ${NOTES_TOOLS.length} notes tools`, isDeepStrictEqual(names, NOTES_TOOLS), show(names));
    check('modern tools/list: no nextCursor', !('nextCursor' in l), show(l.nextCursor));
    expectCacheable('modern tools/list', l);
  }

  const idA = await rawAddNote(shared, 'Modern note A', 'kept by both eras');
  const idB = await rawAddNote(shared, 'Modern note B', 'to be deleted after confirmation');
  let notes = await rawListNotes(shared, 'after two adds');
  check('modern list_notes sees both modern notes',
    notes.some((n) => n.id === idA) && notes.some((n) => n.id === idB), show(notes));

  // Refusals.
  const v = expectError('unsupported protocol version 1900-01-01',
    await shared.raw('tools/list', {
      _meta: { ...modernMeta(), 'io.modelcontextprotocol/protocolVersion': '1900-01-01' },
    }), -32022);
  if (v) {
    const supported = v.data?.supported;
    check('-32022: data.supported lists the served versions',
      Array.isArray(supported) && VERSIONS_DISCOVERED.every((x) => supported.includes(x)), show(v.data));
    check('-32022: data.requested echoes 1900-01-01', v.data?.requested === '1900-01-01', show(v.data));
  }
  const noCaps = modernMeta();
  delete noCaps['io.modelcontextprotocol/clientCapabilities'];
  expectError('modern add_note without clientCapabilities',
    await shared.raw('tools/call', {
      name: 'add_note', arguments: { title: 'refused', text: 'no capabilities' }, _meta: noCaps,
    }), -32602);
  const noVersion = modernMeta();
  delete noVersion['io.modelcontextprotocol/protocolVersion'];
  expectError('modern tools/list without protocolVersion',
    await shared.raw('tools/list', { _meta: noVersion }), -32602);
  expectError('modern ping (removed in 2026-07-28)',
    await shared.raw('ping', { _meta: modernMeta() }), -32601);

  // delete_note asks for confirmation when the request declares elicitation.
  const elicit = { elicitation: {} };
  const ask = expectModernResult('modern delete_note with elicitation',
    await shared.raw('tools/call', { name: 'delete_note', arguments: { id: idB }, _meta: modernMeta(elicit) }),
    'input_required');
  const question = ask?.inputRequests?.confirm;
  check('input_required: inputRequests.confirm is an elicitation/create',
    question?.method === 'elicitation/create' && typeof question?.params?.message === 'string'
      && question?.params?.requestedSchema?.type === 'object', show(ask?.inputRequests));
  const state = ask?.requestState;
  check('input_required: requestState is a non-empty string', typeof state === 'string' && state.length > 0,
    show(state));
  check('input_required: no tool content yet', ask && !('content' in ask), show(ask));
  notes = await rawListNotes(shared, 'after the question');
  check('asking for confirmation deleted nothing', notes.some((n) => n.id === idB), show(notes));

  const accept = { confirm: { action: 'accept', content: {} } };
  if (typeof state === 'string' && state.length > 12) {
    // One character changed near the start and one near the end (not the
    // very last, whose low bits may be base64 padding).
    for (const i of [10, state.length - 5]) {
      const tampered = state.slice(0, i) + (state[i] === 'A' ? 'B' : 'A') + state.slice(i + 1);
      expectError(`retry with a requestState tampered at character ${i}`,
        await shared.raw('tools/call', {
          name: 'delete_note', arguments: { id: idB }, inputResponses: accept, requestState: tampered,
          _meta: modernMeta(elicit),
        }), -32602);
    }
    // The genuine state, but for another note: bound to the arguments.
    expectError('retry with the requestState of another call (foreign arguments)',
      await shared.raw('tools/call', {
        name: 'delete_note', arguments: { id: idA }, inputResponses: accept, requestState: state,
        _meta: modernMeta(elicit),
      }), -32602);
    notes = await rawListNotes(shared, 'after refused retries');
    check('refused retries deleted nothing',
      notes.some((n) => n.id === idA) && notes.some((n) => n.id === idB), show(notes));

    const done = expectModernResult('retry with requestState and inputResponses',
      await shared.raw('tools/call', {
        name: 'delete_note', arguments: { id: idB }, inputResponses: accept, requestState: state,
        _meta: modernMeta(elicit),
      }));
    check('retry: delete_note succeeded', done && !done.isError && Array.isArray(done.content), show(done));
    notes = await rawListNotes(shared, 'after the confirmed delete');
    check('the confirmed delete removed note B only',
      notes.some((n) => n.id === idA) && !notes.some((n) => n.id === idB), show(notes));
  } else {
    fail('retries skipped', 'no requestState to retry with');
  }

  check('modern phase: no message on stdout but the answers (no server-to-client request)',
    shared.unexpected.length === 0, show(shared.unexpected));
  return { idA, idB };
}

// (b) the SDK's legacy session on the same process, interleaved with modern
// requests.
async function legacyPhase(shared, { idA, idB }) {
  const transport = new SdkTransport(shared);
  let elicitations = 0;
  const client = new Client({ name: 'libmcp-dual-era-sdk', version: '0.0.0' },
    { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => {
    elicitations++;
    return { action: 'accept', content: {} };
  });
  const opts = { timeout: REQUEST_TIMEOUT_MS };
  try {
    await client.connect(transport, opts);
    pass('SDK Client connects (legacy initialize) on the process that served modern requests');
  } catch (err) {
    fail('SDK Client connects (legacy initialize)', err?.stack ?? show(err));
    await client.close().catch(() => {});
    return;
  }
  try {
    const init = sdkWireResult(transport, 'initialize');
    check(`initialize negotiates ${LATEST_PROTOCOL_VERSION}`,
      init?.result?.protocolVersion === LATEST_PROTOCOL_VERSION, show(init?.result?.protocolVersion));
    check('initialize result has no resultType', init?.result && !('resultType' in init.result), show(init));
    check('serverInfo.name is notes', client.getServerVersion()?.name === 'notes', show(client.getServerVersion()));

    const listed = await client.listTools(undefined, opts);
    check(`legacy tools/list: the same ${NOTES_TOOLS.length} tools`,
      isDeepStrictEqual(listed.tools.map((t) => t.name).sort(), NOTES_TOOLS), show(listed.tools.map((t) => t.name)));
    expectLegacyShape('legacy tools/list', sdkWireResult(transport, 'tools/list'));

    // A legacy and a modern request in flight together on the one stream.
    const [legacyList, modernList] = await Promise.all([
      client.callTool({ name: 'list_notes', arguments: {} }, undefined, opts),
      shared.raw('tools/list', { _meta: modernMeta() }),
    ]);
    const seen = legacyList?.structuredContent?.notes;
    check('legacy list_notes sees the note the modern requests added',
      Array.isArray(seen) && seen.some((n) => n.id === idA && n.title === 'Modern note A'), show(legacyList));
    check('legacy list_notes does not see the note the modern retry deleted',
      Array.isArray(seen) && !seen.some((n) => n.id === idB), show(seen));
    expectLegacyShape('legacy tools/call list_notes', sdkWireResult(transport, 'tools/call'));
    const ml = expectModernResult('modern tools/list interleaved with a legacy call', modernList);
    if (ml) expectCacheable('modern tools/list interleaved with a legacy call', ml);

    const added = await client.callTool({ name: 'add_note', arguments: { title: 'Legacy note C', text: 'from the SDK' } },
      undefined, opts);
    const idC = added?.structuredContent?.id;
    check('legacy add_note succeeds', !added.isError && typeof idC === 'string', show(added));
    expectLegacyShape('legacy tools/call add_note', sdkWireResult(transport, 'tools/call'));

    // Modern requests after the handshake still work and see legacy changes.
    let notes = await rawListNotes(shared, 'after the legacy add');
    check('modern list_notes after initialize sees the note the legacy session added',
      notes.some((n) => n.id === idC && n.title === 'Legacy note C') && notes.some((n) => n.id === idA),
      show(notes));
    const d = expectModernResult('server/discover after initialize',
      await shared.raw('server/discover', { _meta: modernMeta() }));
    if (d) expectCacheable('server/discover after initialize', d);

    // The legacy era keeps ping; the same handler asks through a real
    // elicitation/create request, answered by the SDK.
    await client.ping(opts);
    pass('legacy ping still answered');
    const del = await client.callTool({ name: 'delete_note', arguments: { id: idC } }, undefined, opts);
    check('legacy delete_note asked the SDK client once (elicitation/create)', elicitations === 1,
      `${elicitations} elicitation(s)`);
    check('legacy delete_note succeeded after the confirmation', !del.isError, show(del));
    notes = await rawListNotes(shared, 'after the legacy delete');
    check('modern list_notes sees the legacy delete',
      !notes.some((n) => n.id === idC) && notes.some((n) => n.id === idA), show(notes));
  } catch (err) {
    fail('legacy phase: unexpected exception', err?.stack ?? show(err));
  } finally {
    await client.close().catch((err) => fail('close the SDK client', show(err)));
    check('SDK transport: every line it received was valid JSON-RPC', transport.errors.length === 0,
      transport.errors.map((e) => e?.message ?? String(e)).join('; '));
  }
}

async function main() {
  console.log(`# notes: ${CONFIG.notes}`);
  console.log(`# launcher: ${CONFIG.launcher.length ? CONFIG.launcher.join(' ') : '(none)'}`);
  console.log(`# @modelcontextprotocol/sdk ${sdkVersion()}, legacy protocol ${LATEST_PROTOCOL_VERSION}`);
  const problem = preflight(CONFIG);
  if (problem) {
    fail('preflight', problem);
    return;
  }
  const tag = 'notes dual-era';
  const { command, args } = serverCommand(CONFIG, ['--stdio', '--data', DATA]);
  console.log(`# [${tag}] spawn: ${[command, ...args].map(shellQuote).join(' ')}`);
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env } });
  const spawnError = new Promise((resolve) => child.once('error', resolve));
  forwardLines(child.stderr, tag);
  tracker = new ExitTracker(child, CONFIG.exitGraceMs);
  const shared = new SharedStdio(child, tag);

  const started = await Promise.race([spawnError, new Promise((r) => setImmediate(() => r(null)))]);
  if (started) {
    fail('spawn the server', show(started));
    return;
  }
  try {
    const ids = await modernPhase(shared);
    if (ids) await legacyPhase(shared, ids);
  } catch (err) {
    fail('test driver', err?.stack ?? show(err));
  } finally {
    await tracker.stop();
    checkExit(tag, tracker, CONFIG);
    check(`${tag}: stdout carried only JSON lines`, shared.badLines.length === 0, show(shared.badLines));
    check(`${tag}: no message arrived that nobody asked for`, shared.unexpected.length === 0,
      show(shared.unexpected));
    check(`${tag}: writing to the server never failed`, shared.writeErrors.length === 0,
      show(shared.writeErrors));
  }
  // What the process saved: note A only (B deleted by the modern retry, C by
  // the legacy session).
  try {
    const saved = JSON.parse(fs.readFileSync(DATA, 'utf8'));
    const titles = (saved?.notes ?? []).map((n) => n.title);
    check('the data file holds exactly the surviving note', isDeepStrictEqual(titles, ['Modern note A']),
      show(titles));
  } catch (err) {
    fail('the data file is readable JSON', show(err));
  }
}

function cleanup() {
  tracker?.kill();
  if (failures() === 0 || fs.readdirSync(tmp).length === 0) fs.rmSync(tmp, { recursive: true, force: true });
  else console.log(`# data files kept in ${tmp}`);
}

const watchdog = startWatchdog(CONFIG.totalBudgetMs, cleanup);

main()
  .catch((err) => fail('test driver', err?.stack ?? show(err)))
  .finally(() => {
    clearTimeout(watchdog);
    cleanup();
    finish();
  });
