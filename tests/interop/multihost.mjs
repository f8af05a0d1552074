// The client of interop.multihost (multihost.py, whose header draws the
// hosts): the official TypeScript SDK v2 client (Client +
// StreamableHTTPClientTransport, pinned to 2026-07-28) in the client's
// namespace, through nginx's round-robin port or its port for one node. It
// asks the harness for each fault with a line "@@ JSON" on standard output
// and reads the answer, one JSON line, on standard input. It checks, in
// this order:
//
//   rate limit  the nodes run with --scopes (every caller the subject
//               "http") and --rate-limit 6/3600, counted in Redis: 18
//               calls through nginx, spread over the three nodes (nginx's
//               log says which answered each), are answered 6 times and
//               refused 12 times ("rate limited"); counted per process
//               they would all be answered. Then the harness restarts the
//               nodes with 100000/3600 and without --scopes (each request
//               its own anonymous caller, never refused, every token still
//               taken in Redis); each exits 0 on SIGTERM.
//   subscriber  a client on n1 (its own nginx port) listens to note:///N
//               (subscriptions/listen, 2026-07-28) and to a sentinel note;
//               a client on n2 appends to N, then to the sentinel: once
//               the sentinel's notifications/resources/updated reaches n1's
//               stream (bounded wait), N's has come exactly once (each node
//               hears the others' changes in the order Redis got them).
//   tasks       (2026-07-28 tasks through the pinned ext-tasks client, as
//               tasks_ext.mjs drives it; the nodes run with --node-lease
//               1500.) Ten notes added, so that an export walks enough.
//               Via nginx: export_notes started through the round-robin
//               port becomes a task; tasks/get through that port (nginx's
//               log: at least two nodes answered them, so most polls
//               reached one that does not run it) answers completed within
//               20 s, never "Task not found", the export inlined
//               (result.structuredContent); each node's own port then
//               answers it completed with the same export.
//               Cancel: an export started on n3's port (300 ms a note),
//               seen working through n1, is cancelled through n1
//               (tasks/cancel acknowledged); nginx then answers it
//               cancelled, and after the time the export would have
//               needed n3 and nginx still do.
//   kill -9     of n3, an export of 1 s a note running on it (started on
//               its port): every request through nginx is answered by n1
//               or n2 (nginx tried n3 and moved on: its log says so); the
//               task, polled through nginx, answers failed within the
//               lease and 5 s of the kill (statusMessage "the node running
//               this task was lost", error -32603 "Internal error: the
//               node running this task was lost"), never "Task not found"
//               meanwhile, and stays failed.
//               And a legacy session (TypeScript SDK 1.32.2, protocol
//               2025-06-18) made through nginx on n3 before the kill (a
//               few tries of initialize: round robin), with a call in
//               flight on n3 as it dies: that call fails, and the
//               client's next calls are answered (nginx sends them to n1,
//               n3's backup, which adopts the session from Redis) under
//               the same session id.
//   Redis restarted (kill -9, then started again on its AOF, appendfsync
//               always): meanwhile every note call, through nginx or
//               to one node, is a tool error saying Redis is unavailable
//               (notes') or "rate limit unavailable" (the library's
//               store); no node died; once Redis is back (bounded
//               wait) the calls work, every note answered as added before
//               is there and none of those refused is.
//   cut off     n1's link to Redis down: a note added through n2 is not
//               silently missing from n1's list: n1 answers list_notes
//               and get_note with one of those two tool errors; once the
//               link is up again (bounded wait) n1 lists it.
//
import process from 'node:process';
import readline from 'node:readline';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, DispatchError } from '@modelcontextprotocol/ext-tasks/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { check, fail, finish, pass, show, sleep, startWatchdog } from './lib.mjs';

const NGINX = process.env.MH_NGINX;
const NODES = JSON.parse(process.env.MH_NODES ?? '{}');
const [LIMIT] = (process.env.MH_LIMIT ?? '').split('/').map(Number);
const BUDGET_MS = Number(process.env.MH_BUDGET_MS ?? 120_000);
const LEASE_MS = Number(process.env.MH_LEASE_MS ?? 0);
const opts = { timeout: 15_000 };
const CLIENT_INFO = { name: 'libmcp-interop-multihost', version: '0.0.0' };
const watchdog = startWatchdog(BUDGET_MS, () => {});

// ---- the harness -----------------------------------------------------------
const answers = [];
const waiting = [];
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const w = waiting.shift();
  if (w) w(JSON.parse(line));
  else answers.push(JSON.parse(line));
});
async function ask(op, args = {}) {
  process.stdout.write(`@@ ${JSON.stringify({ op, ...args })}\n`);
  const ans = answers.length ? answers.shift() : await new Promise((r) => waiting.push(r));
  if (!ans.ok) throw new Error(`harness: ${op}: ${ans.error}`);
  return ans;
}

// ---- the client --------------------------------------------------------------
async function connect(url) {
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)), opts);
  return client;
}

// One tools/call: { result } or { thrown } (a transport or JSON-RPC error).
async function call(client, name, args = {}) {
  try {
    return { result: await client.callTool({ name, arguments: args }, opts) };
  } catch (err) {
    return { thrown: String(err?.message ?? err) };
  }
}
// The two clear answers while Redis cannot be reached: notes' own, and the
// library's when the call's rate-limit token cannot be taken.
const UNAVAILABLE = /^rate limit unavailable|Redis is unavailable/;
const unavailable = (r) => r.result?.isError === true && UNAVAILABLE.test(text(r));
const text = (r) => (r.result?.content ?? []).map((c) => c.text ?? '').join(' ');
const ok = (r) => r.result && !r.result.isError;
const listed = (r) => (r.result?.structuredContent?.notes ?? []).map((n) => n.id);

// nginx's access log: its line count, and the lines of the round-robin
// server (port 80) written since mark (a line count), as
// { port, status, tried: [upstream addr...], method }.
async function logSince(mark) {
  const { lines } = await ask('access_log');
  return {
    count: lines.length,
    entries: lines.slice(mark).map((l) => {
      const m = /^(\d+) (\d+) (.*) "([^"]*)"$/.exec(l);
      return m ? { port: Number(m[1]), status: Number(m[2]), tried: m[3].split(', '), method: m[4] }
        : { raw: l };
    }).filter((e) => e.port === 80), // the round-robin server, not the one-node ones
  };
}
const addrOf = (node) => NODES[node].addr;

// Calls fn every 250 ms until it returns a truthy value or ms passed.
async function until(ms, fn) {
  const end = Date.now() + ms;
  for (let i = 0; Date.now() < end && i < 1000; i++) {
    const v = await fn();
    if (v) return v;
    await sleep(250);
  }
  return null;
}

// ---- tasks (ext-tasks, as tasks_ext.mjs drives it) --------------------------

// A 2026-07-28 client on url with the pinned ext-tasks client on top: its
// requests go out through rawDispatch, this script's own ids on the SDK's
// transport (which derives the MCP-* headers from the framing _meta), and
// their responses are taken off the transport before the Client sees them.
// Every response is kept in .log as { method, taskId, msg }.
async function taskClient(url, tag) {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(transport, opts);
  const pending = new Map();
  const log = [];
  let next = 0;
  const inner = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    const settle = msg && typeof msg === 'object' && !('method' in msg) ? pending.get(msg.id) : undefined;
    if (settle) settle(msg);
    else inner?.(msg, extra);
  };
  const dispatch = (request, options = {}) => new Promise((resolve, reject) => {
    const id = `mh-${tag}-${++next}`;
    const ms = options.context?.requestTimeoutMs ?? opts.timeout;
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(new DispatchError(`${request.method}: no response within ${ms} ms`));
    }, ms);
    pending.set(id, (msg) => {
      pending.delete(id);
      clearTimeout(timer);
      log.push({ method: request.method, taskId: request.params?.taskId, msg });
      resolve('error' in msg ? { kind: 'error', error: msg.error } : { kind: 'result', result: msg.result });
    });
    transport.send({ jsonrpc: '2.0', id, ...request }, { headers: options.context?.headers }).catch((err) => {
      pending.delete(id);
      clearTimeout(timer);
      reject(new DispatchError(`${request.method}: send failed: ${err?.message ?? err}`, false, { cause: err }));
    });
  });
  const errors = [];
  const session = createTaskSessionFromClient(client, {
    endpointId: `libmcp-multihost-${tag}`,
    onError: (err) => errors.push(err),
    rawDispatch: dispatch,
    v2RequestFraming: { protocolVersion: '2026-07-28', clientInfo: CLIENT_INFO, clientCapabilities: {} },
  });
  return {
    tag, client, session, log, errors,
    async close() {
      await session.close().catch(() => {});
      await client.close().catch(() => {});
    },
  };
}

// Starts export_notes as a task through tc (delay_ms a note); returns its
// id, or null after failing the check. ext-tasks keeps no hold on it.
async function startExport(tc, label, delayMs) {
  let execution;
  try {
    execution = await tc.session.callTool('export_notes', { delay_ms: delayMs },
      { requestTimeoutMs: opts.timeout, task: { preference: 'prefer' } });
  } catch (err) {
    fail(`${label}: export_notes through ${tc.tag} becomes a task`, String(err?.stack ?? err));
    return null;
  }
  const id = execution.handle?.taskId;
  check(`${label}: export_notes (delay_ms ${delayMs}) through ${tc.tag} became a task`,
    execution.kind === 'task' && typeof id === 'string' && id.length > 0, show(execution.handle));
  await execution.detach().catch(() => {});
  return execution.kind === 'task' ? id : null;
}

// One tasks/get of id through tc: the tasks/get result as the server sent
// it ({ status, statusMessage, result, error, ... }), or { thrown } (a
// JSON-RPC error such as "Task not found", or no answer).
async function taskGet(tc, id) {
  const before = tc.log.length;
  try {
    await tc.session.task(id, { requestTimeoutMs: opts.timeout }).snapshot();
  } catch (err) {
    const sent = tc.log.slice(before).find((e) => e.method === 'tasks/get');
    return { thrown: sent?.msg?.error ? show(sent.msg.error) : String(err?.message ?? err) };
  }
  const got = tc.log.slice(before).find((e) => e.method === 'tasks/get');
  return got?.msg?.result ?? { thrown: 'no tasks/get response logged' };
}
const notFound = (g) => /not found/i.test(g.thrown ?? '');
const LOST = /the node running this task was lost/;

// Polls id through tc every 250 ms until pred(answer), at most ms; returns
// { last, answers }.
async function pollTask(tc, id, ms, pred) {
  const answers = [];
  const last = await until(ms, async () => {
    const g = await taskGet(tc, id);
    answers.push(g);
    return pred(g) ? g : null;
  });
  return { last, answers };
}

// The notes an export walks: count titled prefix-i through client, so a
// run at delay_ms d lasts about (all notes) x d.
async function notesFor(client, prefix, count) {
  await addNotes(client, prefix, count);
  return listed(await call(client, 'list_notes')).length;
}

// a: a task created through nginx's round-robin port completes when polled
// through it (most polls reach a node that does not run it), its result
// inlined; then each node, on its own port, answers the same.
async function tasksEverywhere() {
  const mark = (await logSince(0)).count;
  const any = await taskClient(NGINX, 'nginx');
  const id = await startExport(any, 'tasks via nginx', 100);
  if (!id) return any.close();
  const { last, answers } = await pollTask(any, id, 20_000, (g) => g.status && g.status !== 'working');
  check('tasks via nginx: tasks/get through the round-robin port answers completed within 20 s, never "Task not found"',
    last?.status === 'completed' && !answers.some(notFound), show(answers.slice(-6)));
  const notes = last?.result?.structuredContent;
  check('tasks via nginx: the completed tasks/get inlines the export (result.structuredContent.count = its notes)',
    Number.isInteger(notes?.count) && notes.count > 0 && notes.notes?.length === notes.count, show(last));
  console.log(`# tasks via nginx: ${answers.length} tasks/get: ${show(answers.map((g) => g.status ?? g.thrown))}`);
  const gets = (await logSince(mark)).entries.filter((e) => e.method === 'tasks/get');
  const by = new Set(gets.map((e) => e.tried.at(-1)));
  check('tasks via nginx: the tasks/get went to at least two nodes (nginx\'s log), each answered 200',
    gets.length >= 2 && by.size >= 2 && gets.every((e) => e.status === 200), show(gets));
  for (const n of Object.keys(NODES)) {
    const one = await taskClient(NODES[n].url, n);
    const g = await taskGet(one, id);
    check(`tasks via nginx: ${n}'s own port answers completed with the same export`,
      g.status === 'completed' && g.result?.structuredContent?.count === notes?.count, show(g));
    await one.close();
  }
  check('tasks via nginx: ext-tasks reported no background error', any.errors.length === 0,
    any.errors.map(String).join('\n'));
  await any.close();
}

// c: tasks/cancel through n1 of a task running on n3: nginx then answers
// cancelled, and n3's does too once the export would have ended.
async function cancelElsewhere(count) {
  const delay = 300;
  const n3 = await taskClient(NODES.n3.url, 'n3');
  const n1 = await taskClient(NODES.n1.url, 'n1');
  const any = await taskClient(NGINX, 'nginx');
  const started = Date.now();
  const id = await startExport(n3, 'cancel on n1', delay);
  if (id) {
    const working = await pollTask(n1, id, 10_000, (g) => g.status === 'working');
    check('cancel on n1: n1 answers the task running on n3 working', working.last, show(working.answers));
    let ack;
    try {
      await n1.session.task(id, { requestTimeoutMs: opts.timeout }).cancel();
      ack = n1.log.findLast((e) => e.method === 'tasks/cancel')?.msg;
    } catch (err) {
      ack = n1.log.findLast((e) => e.method === 'tasks/cancel')?.msg ?? { thrown: String(err?.message ?? err) };
    }
    check('cancel on n1: tasks/cancel through n1 acknowledged', ack?.result && !ack.error, show(ack));
    const { last, answers } = await pollTask(any, id, 10_000, (g) => g.status && g.status !== 'working');
    check('cancel on n1: tasks/get through nginx answers cancelled', last?.status === 'cancelled', show(answers.slice(-6)));
    // The export would have ended by now had it not stopped.
    await sleep(Math.max(0, started + count * delay + 1000 - Date.now()));
    const after = [await taskGet(n3, id), await taskGet(any, id)];
    check(`cancel on n1: after the ${count * delay} ms the export needed, n3 and nginx still answer cancelled`,
      after.every((g) => g.status === 'cancelled'), show(after));
  }
  for (const c of [n3, n1, any]) await c.close();
}

// b (with kill -9 n3): a long task on n3, started before the kill, turns
// failed through nginx within the lease and 5 s, saying its node was lost;
// never "Task not found" meanwhile.
async function lostTask(id, killedAt) {
  const any = await taskClient(NGINX, 'nginx-lost');
  const bound = killedAt + LEASE_MS + 5000 - Date.now();
  const { last, answers } = await pollTask(any, id, Math.max(bound, 1000),
    (g) => notFound(g) || (g.status && g.status !== 'working'));
  console.log(`# kill -9 n3: the task, through nginx: ${show(answers.map((g) => g.status ?? g.thrown))}`);
  check(`kill -9 n3: its task answers failed through nginx within the lease (${LEASE_MS} ms) and 5 s`,
    last?.status === 'failed', show(answers.slice(-6)));
  check('kill -9 n3: and never "Task not found" meanwhile', !answers.some(notFound), show(answers.filter(notFound)));
  if (last?.status === 'failed') {
    check('kill -9 n3: its statusMessage says the node was lost', LOST.test(last.statusMessage ?? ''), show(last));
    check('kill -9 n3: its error is -32603 "Internal error: the node running this task was lost"',
      last.error?.code === -32603 && last.error.message === 'Internal error: the node running this task was lost',
      show(last));
    const again = [await taskGet(any, id), await taskGet(any, id)];
    check('kill -9 n3: it stays failed', again.every((g) => g.status === 'failed'), show(again));
  }
  await any.close();
}

// ---- the checks ---------------------------------------------------------------
async function rateLimit() {
  const mark = (await logSince(0)).count;
  const client = await connect(NGINX);
  const results = [];
  for (let i = 0; i < 3 * LIMIT; i++) results.push(await call(client, 'list_notes'));
  await client.close().catch(() => {});
  const answered = results.filter(ok).length;
  const refused = results.filter((r) => r.result?.isError && /^rate limited/.test(text(r))).length;
  check(`rate limit: ${3 * LIMIT} calls of one subject through nginx: ${LIMIT} answered, the rest "rate limited"`,
    answered === LIMIT && refused === 2 * LIMIT, show({ answered, refused, results: results.slice(0, 8) }));
  const calls = (await logSince(mark)).entries.filter((e) => e.method === 'tools/call');
  const by = new Set(calls.map((e) => e.tried.at(-1)));
  check('rate limit: the calls were spread over the three nodes (nginx\'s log)',
    calls.length === 3 * LIMIT && Object.keys(NODES).every((n) => by.has(addrOf(n))), show(calls));
  const { exits } = await ask('restart_nodes', { limit: '100000/3600', one_subject: false });
  check('the three nodes exit 0 on SIGTERM (restarted with a limit the test never reaches)',
    Object.values(exits).length === 3 && Object.values(exits).every((s) => s === 0), show(exits));
}

// Adds n notes titled prefix-i through client; returns the ids answered.
async function addNotes(client, prefix, n) {
  const ids = [];
  for (let i = 0; i < n; i++) {
    const r = await call(client, 'add_note', { title: `${prefix}-${i}`, text: 'multihost' });
    if (ok(r) && r.result.structuredContent?.id) ids.push(r.result.structuredContent.id);
    else fail(`${prefix}: add_note ${i} answered`, show(r));
  }
  return ids;
}

// A subscriber on n1 hears a change made through n2, once.
async function subscriber() {
  const n1 = await connect(NODES.n1.url);
  const n2 = await connect(NODES.n2.url);
  const [id, sentinel] = await addNotes(n2, 'subscribed', 2);
  const uri = `note:///${id}`;
  const last = `note:///${sentinel}`;
  const heard = [];
  let wake = () => {};
  n1.setNotificationHandler('notifications/resources/updated', (n) => {
    heard.push(n.params.uri);
    wake();
  });
  const sub = await n1.listen({ resourceSubscriptions: [uri, last] }, opts);
  const appended = await call(n2, 'manage_note', { action: 'append', id, text: 'from n2' });
  check('subscriber: manage_note append through n2 answered', text(appended) === 'Appended.', show(appended));
  await call(n2, 'manage_note', { action: 'append', id: sentinel, text: 'after' });
  const end = Date.now() + 10_000;
  for (let i = 0; i < 100 && !heard.includes(last) && Date.now() < end; i++) {
    await new Promise((r) => { wake = r; setTimeout(r, 250); });
  }
  check('subscriber: n1\'s listener hears the sentinel\'s change within 10 s', heard.includes(last), show(heard));
  check('subscriber: and the append made through n2 exactly once, before it',
    heard.filter((u) => u === uri).length === 1 && heard.indexOf(uri) < heard.indexOf(last), show(heard));
  await sub.close().catch(() => {});
  await n1.close().catch(() => {});
  await n2.close().catch(() => {});
}

// A v1 client whose legacy session (2025-06-18) n3 holds: initialize
// through nginx's round robin until n3 mints it (bounded).
async function legacyOnN3() {
  for (let i = 0; i < 9; i++) {
    const client = new ClientV1(CLIENT_INFO, { capabilities: {} });
    const transport = new TransportV1(new URL(NGINX));
    transport.onerror = () => {};
    await client.connect(transport, opts);
    if (transport.sessionId?.startsWith('n3.')) return { client, transport };
    await client.close().catch(() => {});
  }
  return undefined;
}

// The legacy session of n3 after the kill: the call in flight failed, the
// next ones are answered under the same id.
async function legacyGoesOn(held, inFlight) {
  const sid = held.transport.sessionId;
  const lost = await inFlight;
  check('kill -9 n3: the legacy call in flight on n3 ended with an error', lost.thrown || lost.result?.isError,
    show(lost));
  const after = [];
  for (let i = 0; i < 5; i++) {
    try {
      const r = await held.client.callTool({ name: 'list_notes', arguments: {} }, undefined, opts);
      after.push(r.isError ? `tool error: ${text({ result: r })}` : 'answered');
    } catch (err) {
      after.push(`thrown: ${String(err?.message ?? err).slice(0, 160)}`);
    }
  }
  check('kill -9 n3: its legacy session goes on: the next 5 calls answered (SDK 1.32.2)',
    after.every((a) => a === 'answered'), show(after));
  check('kill -9 n3: under the same session id', held.transport.sessionId === sid,
    show([sid?.slice(0, 3), held.transport.sessionId?.slice(0, 3)]));
  await held.client.close().catch(() => {});
}

async function killNode(client) {
  const before = await addNotes(client, 'before-kill', 3);
  const n3 = await taskClient(NODES.n3.url, 'n3');
  const task = await startExport(n3, 'kill -9 n3', 1000); // (all notes) s
  const held = await legacyOnN3();
  check('kill -9 n3: a legacy session on n3 (a few initializes through nginx)', held, '');
  const inFlight = held
    ? held.client.callTool({ name: 'export_notes', arguments: { delay_ms: 1000 } }, undefined, opts)
      .then((result) => ({ result }), (err) => ({ thrown: String(err?.message ?? err) }))
    : null;
  if (held) await sleep(300); // on its way to n3
  await ask('kill_node', { node: 'n3' });
  const killedAt = Date.now();
  // (The session's requests go through its own upstream: the round-robin
  // one has not tried n3 yet.)
  if (held) await legacyGoesOn(held, inFlight);
  const mark = (await logSince(0)).count;
  const ids = await addNotes(client, 'after-kill', 12);
  check('kill -9 n3: 12 add_note calls through nginx, all answered', ids.length === 12, show(ids));
  const entries = (await logSince(mark)).entries.filter((e) => e.method === 'tools/call');
  const dead = addrOf('n3');
  check('kill -9 n3: no call answered by n3, every one by n1 or n2 with 200',
    entries.length === 12 && entries.every((e) => e.status === 200 && e.tried.at(-1) !== dead),
    show(entries));
  check('kill -9 n3: nginx tried n3 and moved on to another node',
    entries.some((e) => e.tried.length > 1 && e.tried[0] === dead), show(entries));
  if (task) await lostTask(task, killedAt);
  await n3.client.close().catch(() => {});
  return [...before, ...ids];
}

async function restartRedis(client, added) {
  const direct = { n1: await connect(NODES.n1.url), n2: await connect(NODES.n2.url) };
  const ids = await addNotes(client, 'before-restart', 3);
  added.push(...ids);
  await ask('redis_kill');
  const during = [];
  for (let i = 0; i < 4; i++) during.push(await call(client, 'add_note', { title: `outage-${i}`, text: 'refused' }));
  for (const [n, c] of Object.entries(direct)) during.push(await call(c, 'list_notes'));
  check('Redis down: every note call (4 adds through nginx, a list on n1 and n2) is a tool error '
    + 'saying Redis (or the rate limit) is unavailable', during.every(unavailable), show(during));
  console.log(`# Redis down, the answers: ${show(during.map(text))}`);
  const alive = await ask('alive');
  check('Redis down: n1 and n2 are still running', alive.n1 && alive.n2, show(alive));
  await ask('redis_start');
  const back = await until(30_000, async () => {
    const rs = [await call(direct.n1, 'list_notes'), await call(direct.n2, 'list_notes')];
    return rs.every(ok) ? rs : null;
  });
  check('Redis back: n1 and n2 list the notes again within 30 s', back, 'still failing');
  if (back) {
    const seen = new Set(listed(back[0]));
    const lost = added.filter((id) => !seen.has(id));
    check(`Redis back: all ${added.length} notes answered as added are there (AOF, appendfsync always)`,
      lost.length === 0 && listed(back[1]).length === listed(back[0]).length, show({ lost, seen: [...seen] }));
    const titles = back[0].result.structuredContent.notes.map((n) => n.title);
    check('Redis back: none of the refused adds is there', !titles.some((t) => /^outage-/.test(t)), show(titles));
  }
  const after = await addNotes(client, 'after-restart', 2);
  check('Redis back: add_note through nginx works', after.length === 2, show(after));
  const alive2 = await ask('alive');
  check('Redis back: n1 and n2 are still running', alive2.n1 && alive2.n2, show(alive2));
  for (const c of Object.values(direct)) await c.close().catch(() => {});
}

async function cutOff() {
  const n1 = await connect(NODES.n1.url);
  const n2 = await connect(NODES.n2.url);
  const warm = await call(n1, 'list_notes');
  check('cut off: n1 lists before the cut', ok(warm), show(warm));
  await ask('link', { node: 'n1', up: false });
  const added = await call(n2, 'add_note', { title: 'while-n1-cut', text: 'only n2 sees Redis' });
  const id = added.result?.structuredContent?.id;
  check('cut off: add_note on n2 answered', ok(added) && id, show(added));
  const list = await call(n1, 'list_notes');
  check('cut off: n1 answers list_notes with a tool error saying Redis is unavailable, not a stale list',
    unavailable(list), show(list));
  const get = await call(n1, 'get_note', { id });
  check('cut off: n1 answers get_note of that note with a tool error saying Redis is unavailable',
    unavailable(get), show(get));
  console.log(`# cut off, n1's answers: ${show([text(list), text(get)])}`);
  await ask('link', { node: 'n1', up: true });
  const back = await until(30_000, async () => {
    const r = await call(n1, 'list_notes');
    return ok(r) ? r : null;
  });
  check('cut off: n1 lists again within 30 s of the link coming back', back, 'still failing');
  if (back) check('cut off: and its list has the note added through n2', listed(back).includes(id), show(back));
  const alive = await ask('alive');
  check('cut off: n1 is still running', alive.n1, show(alive));
  await n1.close().catch(() => {});
  await n2.close().catch(() => {});
}

try {
  if (!NGINX || !NODES.n1 || !(LIMIT > 0)) throw new Error('run by multihost.py, which sets MH_NGINX, MH_NODES, MH_LIMIT');
  await rateLimit();
  await subscriber();
  const client = await connect(NGINX);
  const count = await notesFor(client, 'exported', 10);
  await tasksEverywhere();
  await cancelElsewhere(count);
  const added = await killNode(client);
  await restartRedis(client, added);
  await cutOff();
  await client.close().catch(() => {});
  pass('multihost: every check ran');
} catch (err) {
  fail('multihost', String(err?.stack ?? err));
}
clearTimeout(watchdog);
finish();
process.exit(process.exitCode ?? 0);
