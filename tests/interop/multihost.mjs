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
//   kill -9     of n3: every request through nginx is answered by n1 or
//               n2 (nginx tried n3 and moved on: its log says so).
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
// Not covered yet: tasks across nodes, session adoption.

import process from 'node:process';
import readline from 'node:readline';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { check, fail, finish, pass, show, sleep, startWatchdog } from './lib.mjs';

const NGINX = process.env.MH_NGINX;
const NODES = JSON.parse(process.env.MH_NODES ?? '{}');
const [LIMIT] = (process.env.MH_LIMIT ?? '').split('/').map(Number);
const BUDGET_MS = Number(process.env.MH_BUDGET_MS ?? 120_000);
const opts = { timeout: 15_000 };
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
  const client = new Client({ name: 'libmcp-interop-multihost', version: '0.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } });
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

async function killNode(client) {
  const before = await addNotes(client, 'before-kill', 3);
  const mark = (await logSince(0)).count;
  await ask('kill_node', { node: 'n3' });
  const ids = await addNotes(client, 'after-kill', 12);
  check('kill -9 n3: 12 add_note calls through nginx, all answered', ids.length === 12, show(ids));
  const entries = (await logSince(mark)).entries.filter((e) => e.method === 'tools/call');
  const dead = addrOf('n3');
  check('kill -9 n3: no call answered by n3, every one by n1 or n2 with 200',
    entries.length === 12 && entries.every((e) => e.status === 200 && e.tried.at(-1) !== dead),
    show(entries));
  check('kill -9 n3: nginx tried n3 and moved on to another node',
    entries.some((e) => e.tried.length > 1 && e.tried[0] === dead), show(entries));
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
