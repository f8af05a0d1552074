// Interop test of tool resolution (the io.modelcontextprotocol/tool-resolution
// extension of the MCP Tool Annotations Interest Group's draft): the
// official MCP TypeScript SDK client (Client + StdioClientTransport, pinned
// in package-lock.json) connects to `notes` over stdio declaring the
// extension in its client capabilities, and
//  (a) sees the server declare it, and manage_note (only) marked resolvable
//      in tools/list (_meta["io.modelcontextprotocol/tool-resolution"]);
//  (b) sends tools/resolve as a custom request (client.request with a zod
//      schema) for manage_note's read, append and delete, and gets the
//      draft's answer: resultType "complete", the tool's name, all four
//      hints (read: read-only; append: writes, not destructive, not
//      idempotent; delete: writes, destructive, idempotent; all closed
//      world) and no title; resolving runs nothing: the note is unchanged;
//  (c) the draft's error rows: an unknown tool, a tool that is not marked
//      (get_note) and arguments the input schema refuses are -32602;
//  (d) a client that does not declare the extension sees no marker and
//      gets -32021 for tools/resolve; a caller without manage_note's scope
//      gets the same refusal as for tools/call (-31403, notes:write).
//
// Usage and launcher as notes_stdio.mjs (see lib.mjs):
//   node tool_resolution.mjs <path-to-notes> [launcher words...]
// Prints PASS/FAIL per check, ends with "N passed, N failed", exits non-zero
// on any failure.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { isDeepStrictEqual } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

import {
  check, checkExit, fail, finish, forwardLines, parseCommandLine, preflight, sdkVersion,
  serverCommand, shellQuote, show, startWatchdog,
} from './lib.mjs';
import { TrackedStdioTransport } from './stdio_lib.mjs';

const CONFIG = parseCommandLine('tool_resolution.mjs');
const opts = () => ({ timeout: CONFIG.requestTimeoutMs });
const EXT = 'io.modelcontextprotocol/tool-resolution';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'libmcp-interop-resolve-'));
const live = new Set();

// The draft's result; passthrough keeps what else comes, to be checked.
const ResolveResultSchema = z.object({
  resultType: z.string(),
  name: z.string(),
  annotations: z.object({}).passthrough(),
}).passthrough();

const RESOLVED = {
  read: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  append: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  delete: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
};
const STATIC = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };

// ---- sessions ------------------------------------------------------------------

// notes over stdio with args, its client declaring capabilities.
async function withSession(tag, args, capabilities, fn) {
  const { command, args: full } = serverCommand(CONFIG, ['--stdio', ...args]);
  console.log(`# [${tag}] spawn: ${[command, ...full].map(shellQuote).join(' ')}`);
  const transport = new TrackedStdioTransport({
    command, args: full, env: { ...process.env }, stderr: 'pipe',
  }, tag, CONFIG.exitGraceMs);
  forwardLines(transport.stderr, tag);
  const errors = [];
  transport.onmessage = (msg) => { transport.received.push(msg); };
  transport.onerror = (err) => { errors.push(err); };
  const client = new Client({ name: 'libmcp-interop-resolve', version: '0.0.0' }, { capabilities });
  live.add(transport);
  try {
    await client.connect(transport, opts());
    await fn(client, transport);
  } catch (err) {
    fail(`${tag}: unexpected exception`, err?.stack ?? show(err));
  } finally {
    try {
      await transport.shutdown();
      await client.close();
    } catch (err) {
      fail(`${tag}: close client`, show(err));
    }
    live.delete(transport);
    if (transport.tracker) checkExit(tag, transport.tracker, CONFIG);
    check(`${tag}: no transport errors (stdout is clean JSON-RPC)`, errors.length === 0,
      errors.map((e) => e?.message ?? String(e)).join('; '));
  }
}

// tools/resolve, sent as any custom request: { result } or { error }.
async function resolve(client, name, args) {
  try {
    return {
      result: await client.request({ method: 'tools/resolve', params: { name, arguments: args } },
        ResolveResultSchema, opts()),
    };
  } catch (err) {
    return { error: err };
  }
}

// The raw tools/list result the server sent last (the SDK's parsing may
// drop members).
function rawToolsList(transport) {
  const req = [...transport.sent].reverse().find((m) => m.method === 'tools/list' && 'id' in m);
  return transport.received.find((m) => req && m.id === req.id && 'result' in m)?.result;
}

function expectError(tag, what, r, code) {
  if (r.result) {
    fail(`${tag}: ${what} is refused`, `got ${show(r.result)}`);
    return null;
  }
  check(`${tag}: ${what} is refused with ${code}`, r.error instanceof McpError && r.error.code === code,
    show(r.error));
  return r.error;
}

// ---- (a)-(c): a client that declares the extension -----------------------------------

async function declared(client, transport) {
  const tag = 'declared';
  const init = transport.sent.find((m) => m.method === 'initialize');
  check(`${tag}: the client declared ${EXT} in initialize`,
    isDeepStrictEqual(init?.params?.capabilities?.extensions?.[EXT], {}), show(init?.params));
  const caps = client.getServerCapabilities();
  check(`${tag}: the server declares ${EXT}`, isDeepStrictEqual(caps?.extensions?.[EXT], {}), show(caps));

  await client.listTools(undefined, opts());
  const tools = rawToolsList(transport)?.tools ?? [];
  const marked = tools.filter((t) => t?._meta?.[EXT]?.resolvable === true).map((t) => t.name);
  check(`${tag}: tools/list marks manage_note, and only it, resolvable`,
    isDeepStrictEqual(marked, ['manage_note']), show(tools.map((t) => [t.name, t._meta])));
  const manage = tools.find((t) => t.name === 'manage_note');
  check(`${tag}: manage_note's static hints are the worst case`,
    isDeepStrictEqual({ ...manage?.annotations, title: undefined }, { ...STATIC, title: undefined }),
    show(manage?.annotations));

  const added = await client.callTool({ name: 'add_note', arguments: { title: 'kept', text: 'as it was' } },
    undefined, opts());
  const id = added.structuredContent?.id;
  if (!check(`${tag}: add_note gives a note to resolve against`, typeof id === 'string', show(added))) return;

  for (const [action, want] of Object.entries(RESOLVED)) {
    const args = action === 'append' ? { action, id, text: 'never appended' } : { action, id };
    const r = await resolve(client, 'manage_note', args);
    if (!check(`${tag}: tools/resolve ${action} answers`, r.result, show(r.error))) continue;
    check(`${tag}: ${action}: resultType is "complete"`, r.result.resultType === 'complete', show(r.result));
    check(`${tag}: ${action}: name is manage_note`, r.result.name === 'manage_note', show(r.result));
    check(`${tag}: ${action}: the four hints, and no title`, isDeepStrictEqual(r.result.annotations, want),
      show(r.result.annotations));
  }
  // Resolving ran nothing: the note is there, its text as added.
  const got = await client.callTool({ name: 'get_note', arguments: { id } }, undefined, opts());
  const texts = (got.content ?? []).map((b) => b.text);
  check(`${tag}: after resolving append and delete, the note is unchanged`,
    isDeepStrictEqual(texts, ['kept', 'as it was']), show(got));

  // The draft's error rows.
  expectError(tag, 'tools/resolve of an unknown tool', await resolve(client, 'no_such_tool', {}), -32602);
  expectError(tag, 'tools/resolve of a tool not marked resolvable (get_note)',
    await resolve(client, 'get_note', { id }), -32602);
  expectError(tag, 'tools/resolve with an action the schema refuses',
    await resolve(client, 'manage_note', { action: 'rename', id }), -32602);
  expectError(tag, 'tools/resolve without the required id',
    await resolve(client, 'manage_note', { action: 'read' }), -32602);
}

// ---- (d): without the extension; without the scope --------------------------------------

async function undeclared(client, transport) {
  const tag = 'undeclared';
  await client.listTools(undefined, opts());
  const tools = rawToolsList(transport)?.tools ?? [];
  check(`${tag}: tools/list carries no resolvable marker`,
    tools.length > 0 && tools.every((t) => t?._meta?.[EXT] === undefined), show(tools.map((t) => t._meta)));
  expectError(tag, 'tools/resolve', await resolve(client, 'manage_note', { action: 'read', id: 'n1' }), -32021);
}

async function reader(client) {
  const tag = 'notes:read only';
  const e = expectError(tag, 'tools/resolve of manage_note',
    await resolve(client, 'manage_note', { action: 'read', id: 'n1' }), -31403);
  check(`${tag}: its data.requiredScopes is ["notes:write"], as for tools/call`,
    isDeepStrictEqual(e?.data?.requiredScopes, ['notes:write']), show(e?.data));
}

// ---- main ----------------------------------------------------------------------------

function cleanup() {
  for (const t of live) t.kill();
  fs.rmSync(tmp, { recursive: true, force: true });
}

const watchdog = startWatchdog(CONFIG.totalBudgetMs, cleanup);

async function main() {
  console.log(`# notes: ${CONFIG.notes}`);
  console.log(`# @modelcontextprotocol/sdk ${sdkVersion()}`);
  const problem = preflight(CONFIG);
  if (problem) {
    fail('preflight', problem);
    return;
  }
  const ext = { extensions: { [EXT]: {} } };
  await withSession('declared', ['--data', path.join(tmp, 'a.json')], ext, declared);
  await withSession('undeclared', ['--data', path.join(tmp, 'b.json')], {}, undeclared);
  await withSession('notes:read only', ['--scopes', 'notes:read', '--data', path.join(tmp, 'c.json')], ext,
    (client) => reader(client));
}

main()
  .catch((err) => fail('test driver', err?.stack ?? show(err)))
  .finally(() => {
    clearTimeout(watchdog);
    cleanup();
    finish();
  });
