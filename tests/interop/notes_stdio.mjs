// Interop test: drives the libmcp example server `notes` over stdio with the
// official MCP TypeScript SDK client (Client + StdioClientTransport): its
// tools, their hints and scopes, persistence, and its skill (the
// io.modelcontextprotocol/skills extension: skills/list, the SKILL.md read
// and its digest checked).
//
// Usage:
//   node notes_stdio.mjs <path-to-notes> [launcher words...]
//   MCP_TEST_LAUNCHER="valgrind --error-exitcode=99 ..." node notes_stdio.mjs <path-to-notes>
//
// A launcher is a command prefix put in front of the server command (words on
// the command line win over MCP_TEST_LAUNCHER, which is split on whitespace).
// Every server process must exit by itself, with status 0, once its stdin is
// closed: a non-zero status (valgrind's --error-exitcode), a signal, or not
// exiting at all counts as a failure. Prints PASS/FAIL per check and ends with
// "N passed, N failed"; the exit status is non-zero on any failure.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { isDeepStrictEqual } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

import {
  check, checkExit, fail, failures, finish, forwardLines, parseCommandLine,
  preflight, sdkVersion, serverCommand, shellQuote, show, startWatchdog,
} from './lib.mjs';
import { TrackedStdioTransport } from './stdio_lib.mjs';

// ---- configuration ---------------------------------------------------------

const NOTES_PROTOCOL_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];
const SCOPE_ERROR_CODE = -31403;

const CONFIG = parseCommandLine('notes_stdio.mjs');
const { notes: NOTES, launcher: LAUNCHER, totalBudgetMs: TOTAL_BUDGET_MS } = CONFIG;
const REQUEST_TIMEOUT_MS = CONFIG.requestTimeoutMs;

// ---- sessions --------------------------------------------------------------

const live = new Set(); // transports still running, for the watchdog
let sessionCount = 0;

// Starts `notes` (behind the launcher) with the given arguments and connects a
// Client to it. Returns { client, transport, label, transportErrors }.
async function startSession(label, args) {
  const n = ++sessionCount;
  const tag = `notes#${n} ${label}`;
  const { command, args: fullArgs } = serverCommand(CONFIG, args);
  console.log(`# [${tag}] spawn: ${[command, ...fullArgs].map(shellQuote).join(' ')}`);

  const transport = new TrackedStdioTransport({
    command,
    args: fullArgs,
    env: { ...process.env }, // keep VALGRIND_OPTS, ASAN_OPTIONS, ...
    stderr: 'pipe',
  }, tag, CONFIG.exitGraceMs);
  // Forward the server's stderr (valgrind reports land there) line by line.
  forwardLines(transport.stderr, tag);

  // Protocol.connect() chains callbacks already set on the transport.
  const transportErrors = [];
  transport.onmessage = (msg) => { transport.received.push(msg); };
  transport.onerror = (err) => { transportErrors.push(err); };

  const client = new Client({ name: 'libmcp-interop', version: '0.0.0' });
  live.add(transport);
  const session = { client, transport, label: tag, transportErrors };
  try {
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
  } catch (err) {
    await endSession(session);
    throw err;
  }
  return session;
}

// Closes the client (stdin EOF), checks the server exited by itself with
// status 0, and that stdout carried nothing but valid JSON-RPC.
async function endSession(session) {
  const { client, transport, label, transportErrors } = session;
  try {
    await transport.shutdown();
    await client.close();
  } catch (err) {
    fail(`${label}: close client`, show(err));
  }
  live.delete(transport);
  if (transport.tracker) checkExit(label, transport.tracker, CONFIG);
  else fail(`${label}: server exit status`, 'the server process was never started');
  check(`${label}: no transport errors (stdout is clean JSON-RPC)`, transportErrors.length === 0,
    transportErrors.map((e) => e?.message ?? String(e)).join('; '));
}

// Runs fn(session) against a fresh server; any exception is a failure.
async function withSession(label, args, fn) {
  let session;
  try {
    session = await startSession(label, args);
  } catch (err) {
    fail(`${label}: connect/initialize`, show(err));
    return;
  }
  try {
    // The client validates structuredContent only against output schemas it
    // has seen in a tools/list of this session, so list the tools first.
    await session.client.listTools(undefined, opts());
    await fn(session);
  } catch (err) {
    fail(`${session.label}: unexpected exception`, err?.stack ?? show(err));
  } finally {
    await endSession(session);
  }
}

// ---- helpers for results ---------------------------------------------------

const opts = () => ({ timeout: REQUEST_TIMEOUT_MS });

async function call(client, name, args) {
  return client.callTool({ name, arguments: args }, undefined, opts());
}

// Calls a tool that may fail either way; returns { result } or { error }.
async function callExpectingError(client, name, args) {
  try {
    const result = await call(client, name, args);
    return { result };
  } catch (err) {
    return { error: err };
  }
}

// Every string reachable from a tool result: text blocks as they are, string
// leaves of text blocks that parse as JSON, and of structuredContent.
function resultStrings(result) {
  const out = [];
  const walk = (v) => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  for (const block of result?.content ?? []) {
    if (block?.type !== 'text' || typeof block.text !== 'string') continue;
    out.push(block.text);
    try { walk(JSON.parse(block.text)); } catch { /* not JSON */ }
  }
  walk(result?.structuredContent);
  return out;
}

// A failed call must be a tool result with isError true, not a JSON-RPC error.
function expectToolError(label, what, r) {
  if (r.error) fail(`${label}: ${what} is a tool result (not a JSON-RPC error)`, show(r.error));
  else check(`${label}: ${what} is a result with isError true`, r.result.isError === true, show(r.result));
}

function textBlocks(result) {
  return (result?.content ?? []).filter((b) => b?.type === 'text' && typeof b.text === 'string');
}

function isNonEmptyString(v) {
  return typeof v === 'string' && v.length > 0;
}

// ---- expectations ----------------------------------------------------------

const EXPECTED_TOOLS = {
  list_notes: {
    hints: { readOnlyHint: true, openWorldHint: false },
    required: [],
    outputSchema: ['notes'],
  },
  get_note: {
    hints: { readOnlyHint: true, openWorldHint: false },
    required: ['id'],
  },
  add_note: {
    hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    required: ['title', 'text'],
    outputSchema: ['id'],
  },
  delete_note: {
    hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    required: ['id'],
  },
  // Its static hints are the worst of read, append and delete; tools/resolve
  // gives each call's (tool_resolution.mjs).
  manage_note: {
    hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    required: ['action', 'id'],
  },
  // A long read, optionally a task (tests/examples/export_task.py).
  export_notes: {
    hints: { readOnlyHint: true, openWorldHint: false },
    required: [],
    outputSchema: ['count', 'notes'],
  },
};

// The raw JSON-RPC result for the request sent with `method` (last one).
function rawResult(transport, method) {
  const req = [...transport.sent].reverse().find((m) => m.method === method && 'id' in m);
  if (!req) return undefined;
  const res = transport.received.find((m) => m.id === req.id && ('result' in m || 'error' in m));
  return { request: req, response: res };
}

function checkInitialize(s) {
  const { client, transport, label } = s;
  const init = rawResult(transport, 'initialize');
  const requested = init?.request?.params?.protocolVersion;
  const negotiated = init?.response?.result?.protocolVersion;
  const firstMethod = transport.sent[0]?.method;
  console.log(`# [${label}] client sent ${firstMethod} first, requesting protocol ${requested}; `
    + `server answered ${negotiated}`);
  check(`${label}: first request is initialize`, firstMethod === 'initialize', `got ${firstMethod}`);
  check(`${label}: negotiated protocol version ${negotiated} is supported by the SDK`,
    SUPPORTED_PROTOCOL_VERSIONS.includes(negotiated),
    `SDK supports ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`);
  if (NOTES_PROTOCOL_VERSIONS.includes(requested)) {
    check(`${label}: server accepts the client's protocol version ${requested}`,
      negotiated === requested, `server answered ${negotiated}`);
  }
  const info = client.getServerVersion();
  check(`${label}: serverInfo.name is "notes"`, info?.name === 'notes', show(info));
  check(`${label}: serverInfo.version is a string`, isNonEmptyString(info?.version), show(info));
  const caps = client.getServerCapabilities();
  check(`${label}: server advertises the tools capability`,
    caps && typeof caps.tools === 'object' && caps.tools !== null, show(caps));
}

async function checkToolList(s) {
  const { client, transport, label } = s;
  const listed = await client.listTools(undefined, opts());
  // Check the wire form too: the SDK's zod parsing drops unknown keys.
  const raw = rawResult(transport, 'tools/list')?.response?.result;
  const rawTools = Array.isArray(raw?.tools) ? raw.tools : [];
  const names = listed.tools.map((t) => t.name).sort();
  check(`${label}: tools/list returns exactly the ${Object.keys(EXPECTED_TOOLS).length} notes tools`,
    isDeepStrictEqual(names, Object.keys(EXPECTED_TOOLS).sort()), `got ${show(names)}`);
  check(`${label}: tools/list has no nextCursor`, raw && !('nextCursor' in raw), show(raw?.nextCursor));

  for (const [name, exp] of Object.entries(EXPECTED_TOOLS)) {
    const t = rawTools.find((x) => x?.name === name);
    if (!t) {
      fail(`${name}: listed`, 'missing from tools/list');
      continue;
    }
    check(`${name}: has a title`, isNonEmptyString(t.title), show(t.title));
    check(`${name}: has a description`, isNonEmptyString(t.description), show(t.description));

    const ann = t.annotations;
    if (!check(`${name}: has annotations`, ann && typeof ann === 'object', show(ann))) continue;
    // Every hint is on the wire, as a directory scan requires: a read-only
    // tool's destructiveHint false and idempotentHint true are derived.
    const hints = exp.hints.readOnlyHint
      ? { ...exp.hints, destructiveHint: false, idempotentHint: true }
      : exp.hints;
    const wantKeys = ['title', ...Object.keys(hints)].sort();
    check(`${name}: annotation keys are exactly ${wantKeys.join(', ')}`,
      isDeepStrictEqual(Object.keys(ann).sort(), wantKeys), `got ${show(ann)}`);
    for (const [hint, value] of Object.entries(hints)) {
      check(`${name}: annotations.${hint} === ${value}`, ann[hint] === value, `got ${show(ann[hint])}`);
    }
    check(`${name}: annotations.title equals the tool title`,
      ann.title === t.title, `annotations.title ${show(ann.title)}, title ${show(t.title)}`);

    const is = t.inputSchema;
    check(`${name}: inputSchema.type is "object"`, is?.type === 'object', show(is));
    for (const arg of exp.required) {
      check(`${name}: inputSchema property ${arg} is a string`,
        is?.properties?.[arg]?.type === 'string', show(is?.properties?.[arg]));
    }
    const req = Array.isArray(is?.required) ? [...is.required].sort() : [];
    check(`${name}: inputSchema.required is ${show(exp.required)}`,
      isDeepStrictEqual(req, [...exp.required].sort()), `got ${show(is?.required)}`);

    if (exp.outputSchema) {
      const os_ = t.outputSchema;
      check(`${name}: has an outputSchema of type "object"`, os_?.type === 'object', show(os_));
      for (const prop of exp.outputSchema) {
        check(`${name}: outputSchema has property ${prop}`, os_?.properties && prop in os_.properties,
          show(os_));
      }
    } else {
      console.log(`# ${name}: outputSchema ${t.outputSchema ? 'present' : 'absent'} (not part of the contract)`);
    }
  }
  return listed;
}

// Calls list_notes and checks its shape; returns the notes array (or null).
async function listNotes(s, what) {
  const { client, label } = s;
  const r = await call(client, 'list_notes', {});
  const notes = r?.structuredContent?.notes;
  const ok = check(`${label}: ${what}: list_notes succeeds with structuredContent.notes[]`,
    !r.isError && Array.isArray(notes), show(r));
  if (!ok) return null;
  check(`${label}: ${what}: every note is {id: string, title: string}`,
    notes.every((x) => isNonEmptyString(x?.id) && typeof x?.title === 'string'), show(notes));
  const blocks = textBlocks(r);
  let parsed;
  try { parsed = blocks.length ? JSON.parse(blocks[0].text) : undefined; } catch { parsed = undefined; }
  check(`${label}: ${what}: list_notes text block holds the same JSON as structuredContent`,
    isDeepStrictEqual(parsed, r.structuredContent), `text ${show(blocks[0]?.text)}`);
  return notes;
}

// ---- the scenarios ---------------------------------------------------------

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'libmcp-interop-'));
const TITLE = 'Interop note';
const BODY = 'Body with "quotes", a backslash \\, a tab\t, a newline\nand UTF-8: é ✓ 🗒';

// (a) full scopes: listing, the CRUD cycle, schema failures.
async function scenarioFull() {
  const data = path.join(tmp, 'a.json');
  await withSession('full', ['--stdio', '--data', data], async (s) => {
    const { client, label } = s;
    checkInitialize(s);
    await checkToolList(s);

    const before = await listNotes(s, 'empty store');
    check(`${label}: a new data file starts empty`, before && before.length === 0, show(before));

    // The client validates structuredContent against the listed outputSchema.
    const added = await call(client, 'add_note', { title: TITLE, text: BODY });
    const id = added?.structuredContent?.id;
    check(`${label}: add_note succeeds`, !added.isError, show(added));
    check(`${label}: add_note returns structuredContent.id (a string)`, isNonEmptyString(id), show(added));

    const after = await listNotes(s, 'after add');
    check(`${label}: list_notes contains the new note`,
      after?.some((x) => x.id === id && x.title === TITLE), show(after));

    const got = await call(client, 'get_note', { id });
    check(`${label}: get_note succeeds`, !got.isError, show(got));
    const strings = resultStrings(got);
    check(`${label}: get_note returns the note text byte for byte`,
      strings.some((x) => x.includes(BODY)), show(got));
    check(`${label}: get_note returns the note title`, strings.some((x) => x.includes(TITLE)), show(got));

    const app = await call(client, 'manage_note', { action: 'append', id, text: 'appended' });
    check(`${label}: manage_note append succeeds`, !app.isError, show(app));
    const read = await call(client, 'manage_note', { action: 'read', id });
    check(`${label}: manage_note read returns the text with the line appended`,
      !read.isError && resultStrings(read).includes(`${BODY}\nappended`), show(read));
    expectToolError(label, 'manage_note append without text',
      await callExpectingError(client, 'manage_note', { action: 'append', id }));
    expectToolError(label, 'manage_note with an unknown action',
      await callExpectingError(client, 'manage_note', { action: 'rename', id }));

    const del = await call(client, 'delete_note', { id });
    check(`${label}: delete_note succeeds`, !del.isError, show(del));

    expectToolError(label, 'get_note of the deleted note',
      await callExpectingError(client, 'get_note', { id }));
    expectToolError(label, 'get_note of an unknown id',
      await callExpectingError(client, 'get_note', { id: 'no-such-note' }));

    const empty = await listNotes(s, 'after delete');
    check(`${label}: list_notes no longer contains the deleted note`,
      empty && !empty.some((x) => x.id === id), show(empty));

    // Arguments that fail the input schema: a tool result, not a JSON-RPC error.
    for (const [what, args] of [
      ['add_note without text', { title: 'no text' }],
      ['add_note with a non-string text', { title: 'bad text', text: 42 }],
      ['get_note without id', {}],
    ]) {
      expectToolError(label, what, await callExpectingError(client, what.split(' ')[0], args));
    }
    const still = await listNotes(s, 'after invalid add_note');
    check(`${label}: invalid add_note calls created no note`, still && still.length === 0, show(still));
  });
}

// (c) persistence: a note added by one process is seen by the next one.
// Returns { data, id } for the scope scenario.
async function scenarioPersistence() {
  const data = path.join(tmp, 'c.json');
  let id;
  await withSession('writer', ['--data', data], async (s) => {
    const r = await call(s.client, 'add_note', { title: 'Persistent', text: 'kept across processes' });
    id = r?.structuredContent?.id;
    check(`${s.label}: add_note succeeds`, !r.isError && isNonEmptyString(id), show(r));
  });
  check('writer: data file exists after the server exited', fs.existsSync(data), data);
  if (!id) return { data, id };
  await withSession('reader', ['--data', data], async (s) => {
    const notes = await listNotes(s, 'second process');
    check(`${s.label}: note added by the first process is listed`,
      notes?.some((x) => x.id === id && x.title === 'Persistent'), show(notes));
    const got = await call(s.client, 'get_note', { id });
    check(`${s.label}: note added by the first process can be read`,
      !got.isError && resultStrings(got).some((x) => x.includes('kept across processes')), show(got));
  });
  return { data, id };
}

function checkScopeError(label, what, r, scopes) {
  if (r.result) {
    fail(`${label}: ${what} is refused with a JSON-RPC error`, `got a tool result ${show(r.result)}`);
    return;
  }
  const e = r.error;
  check(`${label}: ${what} fails with an McpError`, e instanceof McpError, show(e));
  check(`${label}: ${what} error code is ${SCOPE_ERROR_CODE}`, e?.code === SCOPE_ERROR_CODE, show(e?.code));
  check(`${label}: ${what} error.data.requiredScopes is ${show(scopes)}`,
    isDeepStrictEqual(e?.data?.requiredScopes, scopes), show(e?.data));
}

// (b) scopes: refused calls are JSON-RPC errors and their handlers never run.
async function scenarioScopes({ data, id }) {
  if (!id) {
    fail('scopes: skipped', 'no persisted note from the persistence scenario');
    return;
  }
  await withSession('read-only', ['--scopes', 'notes:read', '--data', data], async (s) => {
    const { client, label } = s;
    const before = await listNotes(s, 'notes:read');
    check(`${label}: list_notes works with notes:read`, before?.some((x) => x.id === id), show(before));

    checkScopeError(label, 'add_note', await callExpectingError(client, 'add_note',
      { title: 'refused', text: 'must not be stored' }), ['notes:write']);
    // delete_note and manage_note need notes:write before anything else.
    checkScopeError(label, 'delete_note', await callExpectingError(client, 'delete_note', { id }),
      ['notes:write']);
    checkScopeError(label, 'manage_note read', await callExpectingError(client, 'manage_note',
      { action: 'read', id }), ['notes:write']);

    const after = await listNotes(s, 'after refused calls');
    check(`${label}: refused add_note and delete_note did not run`,
      after && isDeepStrictEqual(after, before), `before ${show(before)}, after ${show(after)}`);
    const got = await call(client, 'get_note', { id });
    check(`${label}: get_note works with notes:read`, !got.isError, show(got));
  });

  // With --scopes the caller's subject is "stdio"; the note id was added by
  // the local user (no --scopes, subject "local"): another subject's note,
  // whose deletion needs notes:admin (a step-up from the handler).
  await withSession('read-write', ['--scopes', 'notes:read notes:write', '--data', data], async (s) => {
    const { client, label } = s;
    const r = await call(client, 'add_note', { title: 'second', text: 'written with notes:write' });
    const own = r.structuredContent?.id;
    check(`${label}: add_note works with "notes:read notes:write"`,
      !r.isError && isNonEmptyString(own), show(r));
    checkScopeError(label, "delete_note of another subject's note",
      await callExpectingError(client, 'delete_note', { id }), ['notes:admin']);
    checkScopeError(label, "manage_note delete of another subject's note",
      await callExpectingError(client, 'manage_note', { action: 'delete', id }), ['notes:admin']);
    const notes = await listNotes(s, 'after refused delete');
    check(`${label}: refused delete_note did not run`, notes?.some((x) => x.id === id), show(notes));
    const del = await call(client, 'delete_note', { id: own });
    check(`${label}: delete_note of its own note works with notes:write`, !del.isError, show(del));
    const left = await listNotes(s, 'after deleting its own');
    check(`${label}: its own note is gone, the other stays`,
      left && !left.some((x) => x.id === own) && left.some((x) => x.id === id), show(left));
  });

  await withSession('admin', ['--scopes', 'notes:read notes:write notes:admin', '--data', data], async (s) => {
    const { client, label } = s;
    const del = await call(client, 'manage_note', { action: 'delete', id });
    check(`${label}: manage_note deletes another subject's note with notes:admin`, !del.isError, show(del));
    const left = await listNotes(s, 'after the admin deleted');
    check(`${label}: the other subject's note is gone`, left && !left.some((x) => x.id === id), show(left));
  });
}

// ---- the skill ---------------------------------------------------------------

// The io.modelcontextprotocol/skills extension: the SDK client sees it
// declared, lists the skill with skills/list (a request the SDK sends as
// any other), reads its SKILL.md with resources/read and checks the entry's
// digest and size against those bytes, hashed here.
const SKILL_URI = 'skill://notes-workflow/SKILL.md';
const SkillListSchema = z.object({
  skills: z.array(z.object({
    uri: z.string(),
    frontmatter: z.object({ name: z.string(), description: z.string() }).passthrough(),
    resources: z.array(z.object({ uri: z.string(), digest: z.string(), size: z.number() })),
  })),
}).passthrough();

async function scenarioSkill() {
  await withSession('skill', ['--data', path.join(tmp, 'skill.json')], async (s) => {
    const { client, label } = s;
    const caps = client.getServerCapabilities();
    check(`${label}: the skills extension is declared`,
      caps?.extensions?.['io.modelcontextprotocol/skills'] !== undefined && caps?.resources,
      show(caps));
    const listed = await client.request({ method: 'skills/list', params: {} }, SkillListSchema, opts());
    const entry = listed.skills.find((k) => k.uri === SKILL_URI);
    check(`${label}: skills/list lists ${SKILL_URI}`, entry && entry.frontmatter.name === 'notes-workflow'
      && /ask the user before you delete/.test(entry.frontmatter.description), show(listed));
    const read = await client.readResource({ uri: SKILL_URI }, opts());
    const text = read.contents?.[0]?.text ?? '';
    const bytes = Buffer.from(text, 'utf8');
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    const file = entry?.resources.find((r) => r.uri === SKILL_URI);
    check(`${label}: resources/read returns the SKILL.md, markdown, starting with its frontmatter`,
      read.contents?.[0]?.mimeType === 'text/markdown' && text.startsWith('---\nname: notes-workflow\n'),
      show(read));
    check(`${label}: the entry's digest and size are those of the bytes read`,
      file && file.digest === digest && file.size === bytes.length,
      `entry ${show(file)}, read ${digest} ${bytes.length}`);
    check(`${label}: list_notes comes first in the skill, and asking before delete_note`,
      text.indexOf('list_notes') > 0 && text.indexOf('list_notes') < text.indexOf('delete_note')
        && /Ask the user before you call it/.test(text), text.slice(0, 200));
  });
}

// ---- main --------------------------------------------------------------------

const watchdog = startWatchdog(TOTAL_BUDGET_MS, cleanup);

async function main() {
  console.log(`# notes: ${NOTES}`);
  console.log(`# launcher: ${LAUNCHER.length ? LAUNCHER.join(' ') : '(none)'}`);
  console.log(`# @modelcontextprotocol/sdk ${sdkVersion()}, protocol versions `
    + `${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`);
  const problem = preflight(CONFIG);
  if (problem) {
    fail('preflight', problem);
    return;
  }
  await scenarioFull();
  const persisted = await scenarioPersistence();
  await scenarioScopes(persisted);
  await scenarioSkill();
}

function cleanup() {
  for (const t of live) t.kill();
  if (failures() === 0 || fs.readdirSync(tmp).length === 0) fs.rmSync(tmp, { recursive: true, force: true });
  else console.log(`# data files kept in ${tmp}`);
}

main()
  .catch((err) => fail('test driver', err?.stack ?? show(err)))
  .finally(() => {
    clearTimeout(watchdog);
    cleanup();
    finish();
  });
