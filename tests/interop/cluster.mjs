// Interop test of examples/deploy/cluster.sh: two notes processes behind
// nginx (TLS at the proxy, legacy sessions routed by the node id in their
// Mcp-Session-Id, everything else round-robin, one SQLite store, one state
// key), driven by the official TypeScript SDK client (v1: legacy sessions)
// and by fetch for 2026-07-28 requests (the v1 SDK does not speak it).
//
//   node cluster.mjs <path-to-notes> <path-to-cluster.sh> [--redis]
//
// The script starts `cluster.sh --backends 2 --port P --notes NOTES --dir
// DIR` on a free loopback port, waits for the `listening on
// https://127.0.0.1:P/mcp` line, and runs itself again with
// NODE_EXTRA_CA_CERTS naming the certificate the cluster made (Node reads
// it at start). That second run checks, against nginx's access log where a
// check is about which process answered:
//   - 50 calls in one legacy session all succeed, all answered by the
//     process that owns the session;
//   - a legacy delete_note asks through elicitation/create and completes;
//   - 2026-07-28 input_required round trips complete when the retry lands
//     on the other process (the requestState signed with the shared key);
//   - 200 concurrent add_note calls leave exactly 200 new notes;
//   - kill -9 of one process while adds go on loses no accepted note, its
//     legacy session answers 404 and a new session works, and once nginx
//     has marked it down modern requests go on without an error;
//   - with --redis (cluster.sh --redis: the notes in a Redis of the
//     cluster's own instead of SQLite), all of the above, and a note added
//     through nginx is listed by every process asked directly.
// Then the first run stops the cluster with SIGTERM and checks it exits 0.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { readMessages } from './http_lib.mjs';
import { check, fail, failures, finish, pass, show, sleep, startWatchdog } from './lib.mjs';

const MODERN = '2026-07-28';
const BUDGET_MS = 240_000;
const REQUEST_MS = 20_000;
let clusterProc = null; // the first run's cluster.sh
const watchdog = startWatchdog(BUDGET_MS, () => clusterProc?.kill('SIGTERM'));


// ---- the first run: the cluster's process ----------------------------------

// A loopback port nobody listens on right now.
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// Resolves with the first line of stream matching re, or rejects after ms
// or when the process exits first.
function awaitLine(proc, stream, re, ms) {
  return new Promise((resolve, reject) => {
    let pending = '';
    const timer = setTimeout(() => reject(new Error(`no ${re} within ${ms} ms`)), ms);
    const onExit = (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`cluster.sh ended (${code ?? signal}) before ${re}`));
    };
    proc.once('exit', onExit);
    stream.on('data', (chunk) => {
      pending += chunk.toString('utf8');
      let i;
      while ((i = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, i);
        pending = pending.slice(i + 1);
        console.log(`# [cluster stdout] ${line}`);
        const m = re.exec(line);
        if (m) {
          clearTimeout(timer);
          proc.off('exit', onExit);
          resolve(m);
        }
      }
    });
  });
}

async function parent() {
  const [notes, script, flag] = process.argv.slice(2);
  const redis = flag === '--redis';
  if (!notes || !script || (flag && !redis)) {
    console.error('usage: node cluster.mjs <path-to-notes> <path-to-cluster.sh> [--redis]');
    process.exit(2);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'libmcp-interop-cluster-'));
  const port = await freePort();
  const cluster = spawn('bash', [script, '--backends', '2', '--port', String(port),
    '--notes', path.resolve(notes), '--dir', dir, ...(redis ? ['--redis'] : [])],
  { stdio: ['ignore', 'pipe', 'pipe'] });
  clusterProc = cluster;
  cluster.stderr.on('data', (c) => process.stderr.write(`[cluster] ${c}`));
  const exited = new Promise((resolve) => cluster.once('exit', (code, signal) => resolve({ code, signal })));
  let url = null;
  try {
    const m = await awaitLine(cluster, cluster.stdout, /^listening on (https:\/\/127\.0\.0\.1:(\d+)\/mcp)$/, 120_000);
    url = m[1];
    check('cluster.sh prints "listening on https://127.0.0.1:P/mcp" for the port it was given',
      Number(m[2]) === port, m[0]);
  } catch (err) {
    fail('cluster.sh prints its listening line', String(err));
  }
  if (url) {
    const checks = spawn(process.execPath, process.argv.slice(1), {
      stdio: 'inherit',
      env: {
        ...process.env,
        MCP_TEST_CLUSTER_URL: url,
        MCP_TEST_CLUSTER_DIR: dir,
        MCP_TEST_CLUSTER_REDIS: redis ? '1' : '',
        NODE_EXTRA_CA_CERTS: path.join(dir, 'cert.pem'),
      },
    });
    const st = await new Promise((resolve) => checks.once('exit', (status, signal) => resolve({ status, signal })));
    check('the checks against the cluster pass', st.status === 0, `status ${st.status} ${st.signal ?? ''}`);
  }
  cluster.kill('SIGTERM');
  const timer = setTimeout(() => cluster.kill('SIGKILL'), 20_000);
  const st = await exited;
  clearTimeout(timer);
  check('cluster.sh stops everything and exits 0 on SIGTERM', st.code === 0, show(st));
  const left = ['n1', 'n2', 'nginx', ...(redis ? ['redis'] : [])].filter((name) => {
    try {
      const pid = Number(fs.readFileSync(path.join(dir, `${name}.pid`), 'utf8'));
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  });
  check('no process of the cluster is left', left.length === 0, left.join());
  fs.rmSync(dir, { recursive: true, force: true });
}

// ---- the second run: the checks ------------------------------------------

// Each process's address ("127.0.0.1:PORT") from its log's listening line.
function backendAddrs(dir) {
  const addrs = {};
  for (const name of ['n1', 'n2']) {
    const log = fs.readFileSync(path.join(dir, `${name}.log`), 'utf8');
    addrs[name] = /listening on http:\/\/(127\.0\.0\.1:\d+)\/mcp/.exec(log)?.[1];
  }
  return addrs;
}

// nginx's access log as records (cluster.sh's log_format mcp: time, status,
// upstream address(es), upstream status(es), "Mcp-Method", owner=…).
function accessLog(dir) {
  const text = fs.readFileSync(path.join(dir, 'access.log'), 'utf8');
  return text.split('\n').filter(Boolean).map((line) => {
    const m = /^\S+ (\d+) (\S+(?:, \S+)*) (\S+(?:, \S+)*) "([^"]*)" owner=(\S*) /.exec(line);
    return m ? { status: Number(m[1]), upstream: m[2], method: m[4], owner: m[5], line } : { line };
  });
}

// nginx writes a request's line once the response is out, so a client can
// read the log before the last lines of what it just did are there: reads
// until enough(records) holds, for at most two seconds, and returns the
// last read.
async function accessLogSettled(dir, enough) {
  const until = Date.now() + 2000;
  let log = accessLog(dir);
  while (!enough(log) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    log = accessLog(dir);
  }
  return log;
}

function modernMeta(capabilities = {}) {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'libmcp-interop-cluster', version: '0.0.0' },
    'io.modelcontextprotocol/clientCapabilities': capabilities,
  };
}

let rawId = 0;

// One 2026-07-28 request; resolves with { status, reply } (reply: the last
// JSON-RPC message), or { status: 0, error } when no answer came.
async function modern(url, method, params, caps = {}) {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
  };
  if (method === 'tools/call') headers['mcp-name'] = params.name;
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: `c-${++rawId}`, method, params: { ...params, _meta: modernMeta(caps) } }),
      signal: AbortSignal.timeout(REQUEST_MS),
    });
    const r = await readMessages(res);
    return { status: r.status, reply: r.messages.at(-1), text: r.text };
  } catch (err) {
    return { status: 0, error: String(err) };
  }
}

// The result of a completed modern tools/call that is not a tool error, or
// undefined.
function okResult(r) {
  const res = r.status === 200 ? r.reply?.result : undefined;
  return res && !res.isError && res.resultType !== 'input_required' ? res : undefined;
}

async function listTitles(url) {
  const r = await modern(url, 'tools/call', { name: 'list_notes', arguments: {} });
  const notes = okResult(r)?.structuredContent?.notes;
  return Array.isArray(notes) ? notes.map((n) => n.title) : undefined;
}

// An SDK v1 client with a legacy session; elicitations are accepted and
// counted.
async function connectLegacy(url) {
  const client = new Client({ name: 'libmcp-interop-cluster', version: '0.0.0' },
    { capabilities: { elicitation: {} } });
  client.elicitations = 0;
  client.setRequestHandler(ElicitRequestSchema, async () => {
    client.elicitations++;
    return { action: 'accept', content: {} };
  });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  transport.onerror = () => {};
  await client.connect(transport, { timeout: REQUEST_MS });
  return { client, transport };
}

const opts = { timeout: REQUEST_MS };

async function legacySession(url, dir, addrs) {
  let client;
  try {
    const c = await connectLegacy(url);
    client = c.client;
    const sid = c.transport.sessionId ?? '';
    const node = /^(n[12])\./.exec(sid)?.[1];
    check('a legacy session id carries its node id ("n1." or "n2.")', node, sid.slice(0, 8));
    let ok = 0;
    for (let i = 0; i < 50; i++) {
      const r = i % 2
        ? await client.callTool({ name: 'list_notes', arguments: {} }, undefined, opts)
        : await client.callTool({ name: 'add_note', arguments: { title: `legacy-${i}`, text: 'one session' } },
          undefined, opts);
      if (!r.isError) ok++;
    }
    check('50 calls in one legacy session through nginx all succeed', ok === 50, `${ok} of 50`);
    const ownedBy = (log) => log.filter((e) => e.owner === `node_${node}`);
    const mine = ownedBy(await accessLogSettled(dir, (log) => ownedBy(log).length >= 50));
    const elsewhere = mine.filter((e) => e.upstream !== addrs[node]);
    check('every request of the session reached the process that owns it',
      mine.length >= 50 && elsewhere.length === 0,
      `${mine.length} requests, ${elsewhere.length} elsewhere: ${show(elsewhere.slice(0, 3).map((e) => e.line))}`);

    const added = await client.callTool({ name: 'add_note', arguments: { title: 'to delete', text: 'x' } },
      undefined, opts);
    const id = added.structuredContent?.id;
    const del = await client.callTool({ name: 'delete_note', arguments: { id } }, undefined, opts);
    check('legacy delete_note through nginx: asked once through elicitation/create, then done',
      client.elicitations === 1 && !del.isError, `${client.elicitations} elicitation(s) ${show(del)}`);
  } catch (err) {
    fail('legacy session through nginx', String(err?.stack ?? err));
  } finally {
    await client?.close().catch(() => {});
  }
}

// Ten input_required round trips: the question on one process, the retry
// (requestState, inputResponses) on whichever nginx picks next.
async function inputRequired(url, dir, addrs) {
  const elicit = { elicitation: {} };
  const before = accessLog(dir).length;
  let done = 0;
  const rounds = 10;
  for (let i = 0; i < rounds; i++) {
    const add = okResult(await modern(url, 'tools/call', { name: 'add_note', arguments: { title: `ir-${i}`, text: 'x' } }));
    const id = add?.structuredContent?.id;
    const ask = await modern(url, 'tools/call', { name: 'delete_note', arguments: { id } }, elicit);
    const q = ask.reply?.result;
    if (q?.resultType !== 'input_required' || typeof q.requestState !== 'string') {
      fail(`input_required round trip ${i}: the question`, `${ask.status} ${show(ask.reply ?? ask.error)}`);
      continue;
    }
    const retry = await modern(url, 'tools/call', {
      name: 'delete_note', arguments: { id }, requestState: q.requestState,
      inputResponses: { confirm: { action: 'accept', content: {} } },
    }, elicit);
    if (okResult(retry)) done++;
    else fail(`input_required round trip ${i}: the retry`, `${retry.status} ${show(retry.reply ?? retry.error)}`);
  }
  check(`${rounds} input_required round trips through nginx complete`, done === rounds, `${done} of ${rounds}`);
  // Sequential requests: the log's new tools/call lines are, in order, the
  // add, the question and the retry of each round.
  const callsIn = (log) => log.slice(before).filter((e) => e.method === 'tools/call' && e.owner === '');
  const calls = callsIn(await accessLogSettled(dir, (log) => callsIn(log).length >= 3 * rounds));
  let moved = 0;
  for (let i = 0; i + 2 < calls.length; i += 3) {
    if (calls[i + 1].upstream !== calls[i + 2].upstream) moved++;
  }
  const names = Object.fromEntries(Object.entries(addrs).map(([k, v]) => [v, k]));
  check('retries landed on the other process than their question', calls.length === 3 * rounds && moved > 0,
    `${moved} of ${rounds} moved; ${show(calls.map((e) => names[e.upstream] ?? e.upstream))}`);
  const titles = await listTitles(url);
  check('each confirmed delete_note removed its note', titles && !titles.some((t) => t.startsWith('ir-')),
    show(titles));
}

// Runs fn(i) for i < n with at most width at a time.
async function pool(n, width, fn) {
  let next = 0;
  const out = new Array(n);
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < n) {
      const i = next++;
      out[i] = await fn(i);
    }
  }));
  return out;
}

async function concurrentAdds(url, dir, addrs) {
  const n = 200;
  const results = await Promise.all(Array.from({ length: n }, (_, i) =>
    modern(url, 'tools/call', { name: 'add_note', arguments: { title: `many-${i}`, text: 'concurrent' } })));
  const ok = results.filter((r) => okResult(r)?.structuredContent?.id).length;
  check(`${n} concurrent add_note calls through nginx all succeed`, ok === n,
    `${ok} of ${n}; first failure ${show(results.find((r) => !okResult(r)))}`);
  const titles = await listTitles(url);
  const many = (titles ?? []).filter((t) => t.startsWith('many-'));
  check(`exactly ${n} notes after them, each once`, many.length === n && new Set(many).size === n,
    `${many.length} notes, ${new Set(many).size} distinct`);
  const served = new Set(accessLog(dir).filter((e) => e.method === 'tools/call' && e.owner === '')
    .map((e) => e.upstream));
  check('both processes served them', served.has(addrs.n1) && served.has(addrs.n2), show([...served]));
}

// A legacy client whose session the process node owns (round robin gives
// one within a few tries).
async function legacyOn(url, node) {
  for (let i = 0; i < 6; i++) {
    const c = await connectLegacy(url);
    if (c.transport.sessionId?.startsWith(`${node}.`)) return c;
    await c.client.close().catch(() => {});
  }
  return undefined;
}

async function killOne(url, dir, addrs) {
  const held = await legacyOn(url, 'n1');
  check('a legacy session on n1', held, '');
  const pid = Number(fs.readFileSync(path.join(dir, 'n1.pid'), 'utf8'));
  const n = 120;
  let killed = false;
  const results = await pool(n, 8, async (i) => {
    if (i === n / 3 && !killed) {
      killed = true;
      process.kill(pid, 'SIGKILL');
    }
    const r = await modern(url, 'tools/call', { name: 'add_note', arguments: { title: `kill-${i}`, text: 'during' } });
    return okResult(r)?.structuredContent?.id ? `kill-${i}` : undefined;
  });
  const accepted = results.filter(Boolean);
  pass(`adds while n1 was killed: ${accepted.length} of ${n} accepted`);
  const titles = new Set(await listTitles(url) ?? []);
  const lost = accepted.filter((t) => !titles.has(t));
  check('no accepted note was lost when n1 died', accepted.length > n / 3 && lost.length === 0,
    `${accepted.length} accepted, lost ${show(lost)}`);

  if (held && process.env.MCP_TEST_CLUSTER_REDIS) {
    // With Redis the session's state outlives n1: nginx sends it to n2,
    // which adopts it, and the client goes on with the same id.
    const sid = held.transport.sessionId;
    const mark = accessLog(dir).length;
    const answers = [];
    for (let i = 0; i < 5; i++) {
      try {
        const r = await held.client.callTool({ name: 'list_notes', arguments: {} }, undefined, opts);
        answers.push(r.isError ? `tool error ${JSON.stringify(r.content)}` : 'answered');
      } catch (err) {
        answers.push(`thrown ${err?.code ?? ''} ${String(err?.message ?? err).slice(0, 120)}`);
      }
    }
    check("--redis: n1's legacy session goes on on n2: 5 calls answered (SDK 1.32.2)",
      answers.every((a) => a === 'answered'), show(answers));
    check('--redis: with the same session id', held.transport.sessionId === sid,
      show([sid?.slice(0, 3), held.transport.sessionId?.slice(0, 3)]));
    const moved = (await accessLogSettled(dir, (log) => log.slice(mark)
      .filter((e) => e.owner === 'node_n1' && e.status === 200).length >= 5))
      .slice(mark).filter((e) => e.owner === 'node_n1');
    check("--redis: nginx sent the session's requests to n2 (n1's backup), none answered by n1",
      moved.filter((e) => e.status === 200).length >= 5
      && moved.every((e) => e.upstream?.split(', ').at(-1) === addrs.n2),
      show(moved.map((e) => e.line)));
    await held.client.close().catch(() => {});
  } else if (held) {
    let status;
    try {
      await held.client.callTool({ name: 'list_notes', arguments: {} }, undefined, opts);
      status = 'answered';
    } catch (err) {
      status = err?.code ?? String(err);
    }
    check("n1's legacy session answers 404 (the client must start a new one)", status === 404, show(status));
    await held.client.close().catch(() => {});
    try {
      const fresh = await connectLegacy(url);
      const r = await fresh.client.callTool({ name: 'list_notes', arguments: {} }, undefined, opts);
      check('a new legacy session works, on n2', !r.isError && fresh.transport.sessionId?.startsWith('n2.'),
        fresh.transport.sessionId?.slice(0, 3));
      await fresh.client.close().catch(() => {});
    } catch (err) {
      fail('a new legacy session after n1 died', String(err));
    }
  }

  // nginx marks n1 down at its first refused connection; from then on
  // every request goes to n2.
  await sleep(500);
  let ok = 0;
  const errors = [];
  for (let i = 0; i < 20; i++) {
    const r = await modern(url, 'tools/call', { name: 'list_notes', arguments: {} });
    if (okResult(r)) ok++;
    else errors.push(`${r.status} ${r.text ?? r.error}`.slice(0, 200));
  }
  check('after n1 died, 20 modern calls in a row succeed', ok === 20, show(errors));
}

// --redis: a note added through nginx is in every process's list, each
// asked directly (their own loopback addresses, no proxy).
async function seenByEvery(url, addrs) {
  const title = `everywhere-${process.pid}`;
  const r = await modern(url, 'tools/call', { name: 'add_note', arguments: { title, text: 'x' } });
  check('--redis: add_note through nginx', okResult(r), show(r.reply ?? r.error));
  for (const [name, addr] of Object.entries(addrs)) {
    const titles = await listTitles(`http://${addr}/mcp`);
    check(`--redis: ${name}, asked directly, lists the note`, titles?.includes(title), show(titles));
  }
}

async function child() {
  const url = process.env.MCP_TEST_CLUSTER_URL;
  const dir = process.env.MCP_TEST_CLUSTER_DIR;
  const addrs = backendAddrs(dir);
  check('both notes processes listen on loopback', addrs.n1 && addrs.n2 && addrs.n1 !== addrs.n2, show(addrs));
  if (process.env.MCP_TEST_CLUSTER_REDIS) await seenByEvery(url, addrs);
  await legacySession(url, dir, addrs);
  await inputRequired(url, dir, addrs);
  await concurrentAdds(url, dir, addrs);
  await killOne(url, dir, addrs);
  if (failures()) {
    console.log('# nginx access log, last lines:');
    for (const e of accessLog(dir).slice(-20)) console.log(`#   ${e.line}`);
  }
}

// ---- main ------------------------------------------------------------------

if (!process.env.MCP_TEST_CLUSTER_URL) await parent();
else await child();
clearTimeout(watchdog);
finish();
// A session the SDK could not close (its process killed) may hold a socket.
process.exit(process.exitCode);
