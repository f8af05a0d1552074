// Interop test over HTTPS: the official MCP TypeScript SDK client (Client +
// StreamableHTTPClientTransport, pinned in package-lock.json) drives
// `notes --http 127.0.0.1:0 --tls-cert C --tls-key K` with a certificate
// this script makes (the openssl command) and Node trusts
// (NODE_EXTRA_CA_CERTS, which Node reads at start: the script runs itself
// again with it set). Checks the "listening on https://..." line, a legacy
// session (tools/list, add_note, list_notes), a stateless 2026-07-28
// tools/list with fetch, that plain http to the port gets no answer, and
// the exit on SIGTERM.
//
//   node notes_https.mjs <path-to-notes> [launcher words...]

import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { checkHttpExit, startHttpServer, stopHttpServer } from './http_lib.mjs';
import { check, fail, finish, parseCommandLine, pass, preflight, show, startWatchdog } from './lib.mjs';

if (!process.env.MCP_TEST_TLS_DIR) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'libmcp-interop-https-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256',
    '-nodes', '-days', '2', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' });
  const st = spawnSync(process.execPath, process.argv.slice(1), {
    stdio: 'inherit',
    env: { ...process.env, MCP_TEST_TLS_DIR: dir, NODE_EXTRA_CA_CERTS: path.join(dir, 'cert.pem') },
  });
  fs.rmSync(dir, { recursive: true, force: true });
  process.exit(st.status ?? 1);
}

const CONFIG = parseCommandLine('notes_https.mjs');
const DIR = process.env.MCP_TEST_TLS_DIR;
const MODERN = '2026-07-28';
const watchdog = startWatchdog(CONFIG.totalBudgetMs, () => process.exit(1));

const problem = preflight(CONFIG);
if (problem) {
  fail('preflight', problem);
  finish();
  process.exit(1);
}

const server = await startHttpServer(CONFIG, 'https', [
  '--tls-cert', path.join(DIR, 'cert.pem'), '--tls-key', path.join(DIR, 'key.pem'),
  '--data', path.join(DIR, 'notes.json')]);
const url = new URL(server.url);
check('prints "listening on https://127.0.0.1:PORT/mcp"',
  url.protocol === 'https:' && url.hostname === '127.0.0.1' && Number(url.port) > 0
    && url.pathname === '/mcp', server.url);

const opts = { timeout: CONFIG.requestTimeoutMs };
try {
  const client = new Client({ name: 'libmcp-interop-https', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url), opts);
  const tools = (await client.listTools({}, opts)).tools.map((t) => t.name).sort();
  check('SDK session over TLS: tools/list', tools.join() === 'add_note,delete_note,export_notes,get_note,list_notes,manage_note',
    show(tools));
  const added = await client.callTool({ name: 'add_note', arguments: { title: 't', text: 'over tls' } },
    undefined, opts);
  check('SDK session over TLS: add_note', !added.isError && added.structuredContent?.id, show(added));
  const listed = await client.callTool({ name: 'list_notes', arguments: {} }, undefined, opts);
  check('SDK session over TLS: list_notes sees it',
    listed.structuredContent?.notes?.some((n) => n.title === 't'), show(listed));
  await client.close();
} catch (err) {
  fail('SDK session over TLS', String(err?.stack ?? err));
}

try {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': MODERN,
      'Mcp-Method': 'tools/list',
    },
    body: JSON.stringify({
      jsonrpc: '2.0', id: 1, method: 'tools/list',
      params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientCapabilities': {} } },
    }),
  });
  const body = await res.json();
  check('stateless 2026-07-28 tools/list over TLS', res.status === 200 && body.result?.tools?.length === 6,
    `${res.status} ${show(body)}`);
} catch (err) {
  fail('stateless 2026-07-28 tools/list over TLS', String(err));
}

try {
  const plain = new URL(url);
  plain.protocol = 'http:';
  const res = await fetch(plain, { method: 'POST', body: '{}', signal: AbortSignal.timeout(5000) });
  fail('plain http to the TLS port gets no MCP answer', `HTTP ${res.status}`);
} catch {
  pass('plain http to the TLS port gets no MCP answer');
}

checkHttpExit('https', await stopHttpServer(server, CONFIG), CONFIG);
clearTimeout(watchdog);
finish();
