// Interop test of tasks with the official ext-tasks client
// (@modelcontextprotocol/ext-tasks, on the SDK v2 Client of
// @modelcontextprotocol/client; both pinned in package-lock.json) against
// everything's archive_notes: over stdio and over Streamable HTTP, each in
// both generations of tasks. 2025-11-25 ("v1"): the client initializes with
// 2025-11-25, asks for a task (params.task), the server sends its question
// as an elicitation/create carrying the related-task _meta, and the result
// comes from tasks/result. 2026-07-28 ("v2", the io.modelcontextprotocol/
// tasks extension): the server decides, the question is inlined in
// tasks/get and answered with tasks/update; ext-tasks sends these requests
// through rawDispatch (this script's own request coordinator on the SDK's
// transport) with the v2RequestFraming _meta.
//
// Each of the four runs: create (the call becomes a task), poll (working
// and input_required seen, tasks/get sent), input (the elicitation answered
// through onInputRequest: accept, confirm true), result (settle; archived
// is the number of notes), cancel (a long second call, answered, cancelled
// through the execution; the task ends cancelled) and a later call that
// still works.
//
//   node tasks_ext.mjs <path-to-everything> [launcher words...]

import process from 'node:process';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import {
  createApplicationInputHandler, createTaskSessionFromClient, DispatchError,
} from '@modelcontextprotocol/ext-tasks/client';

import { checkHttpExit, checkListeningUrl, startHttpServer, stopHttpServer } from './http_lib.mjs';
import {
  check, checkExit, ExitTracker, fail, finish, forwardLines, parseCommandLine, preflight,
  serverCommand, shellQuote, show, sleep, startWatchdog,
} from './lib.mjs';

const CONFIG = parseCommandLine('tasks_ext.mjs');
const RPC_MS = CONFIG.requestTimeoutMs;
const RELATED = 'io.modelcontextprotocol/related-task';
const CLIENT_INFO = { name: 'libmcp-interop-tasks', version: '0.0.0' };
const CLIENT_CAPABILITIES = { elicitation: { form: {} } };
const STATUS_MESSAGE = /^archived \d+ of \d+ parts$/;
const RESULT_NOTES = ['groceries', 'meeting', 'ideas'];
const RESULT_SECONDS = 2; // long enough for ext-tasks to poll while it works
const CANCEL_NOTES = ['one', 'two', 'three', 'four', 'five'];
const CANCEL_SECONDS = 120; // never reached: the task is cancelled first
const LATER_NOTES = ['after'];
const V1_RETENTION_MS = 120_000;

const live = new Set(); // what the watchdog kills: { kill() }
const watchdog = startWatchdog(CONFIG.totalBudgetMs, () => { for (const x of live) x.kill(); });
process.on('unhandledRejection', (err) => fail('no unhandled promise rejection', String(err?.stack ?? err)));

// Rejects when promise does not settle within ms.
function within(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

// ---- transports ------------------------------------------------------------

// The SDK v2 stdio transport with the child's exit status recorded
// (lib.mjs ExitTracker): close() ends stdin and waits the exit grace before
// the SDK's own close (SIGTERM/SIGKILL after 2 s) runs. The child is the
// transport's `_process` (SDK version pinned); start() fails loudly without.
class TrackedStdioTransport extends StdioClientTransport {
  async start() {
    await super.start();
    this.tracker = new ExitTracker(this._process, CONFIG.exitGraceMs);
  }

  async close() {
    await this.tracker?.shutdown();
    await super.close();
    if (this.tracker && !this.tracker.exitStatus) await Promise.race([this.tracker.exited, sleep(5000)]);
  }

  kill() {
    this.tracker?.kill();
  }
}

// The task a server-to-client message belongs to: the related-task _meta of
// a request, or the taskId of notifications/tasks/status.
function taskOfMessage(msg) {
  if (!msg || typeof msg !== 'object' || typeof msg.method !== 'string') return undefined;
  const related = msg.params?._meta?.[RELATED]?.taskId;
  if (typeof related === 'string') return related;
  if (msg.method === 'notifications/tasks/status' && typeof msg.params?.taskId === 'string') {
    return msg.params.taskId;
  }
  return undefined;
}

// Sits between a connected transport and the SDK Client (installed after
// connect, which sets the transport's onmessage): records every message
// both ways, and
// - 2026-07-28: is ext-tasks' rawDispatch, the host coordinator that owns
//   the ids of the requests it sends ("ext-tasks-N", never the Client's
//   numbers) and takes their responses off the transport before the Client
//   sees them. The SDK transport derives MCP-Protocol-Version, Mcp-Method
//   and Mcp-Name from the request's framing _meta over HTTP.
// - 2025-11-25: holds a server message about a task until ext-tasks has
//   returned that task's execution (release), then passes the held ones on
//   in order. ext-tasks 0.2.2 matches a related-task request only to an
//   execution it already tracks, and it tracks one only once callTool has
//   resolved: a question the server sends right after the CreateTaskResult
//   (allowed: 2025-11-25 lets task messages go on any stream; stdio has only
//   one) would otherwise be answered "cancel" with an InputCorrelationError.
//   Held at most one request timeout, then passed on anyway.
class Wire {
  constructor(transport, tag) {
    this.transport = transport;
    this.tag = tag;
    this.log = []; // { dir: 'in' | 'out', msg }
    this.pending = new Map(); // raw id -> settle(response)
    this.next = 0;
    this.released = new Set();
    this.held = [];
    this.heldCount = 0;
    const inner = transport.onmessage;
    if (typeof inner !== 'function') throw new Error('the Client set no onmessage on its transport');
    transport.onmessage = (msg, extra) => {
      this.log.push({ dir: 'in', msg });
      const waiter = msg && typeof msg === 'object' && !('method' in msg) ? this.pending.get(msg.id) : undefined;
      if (waiter) {
        this.pending.delete(msg.id);
        waiter(msg);
        return;
      }
      const task = taskOfMessage(msg);
      if (task !== undefined && !this.released.has(task)) {
        this.heldCount++;
        const entry = { task, deliver: () => inner(msg, extra) };
        entry.timer = setTimeout(() => {
          console.log(`# [${tag}] gate: task ${task} not released within ${RPC_MS} ms, passing ${msg.method} on`);
          this._flush((e) => e === entry);
        }, RPC_MS);
        this.held.push(entry);
        return;
      }
      inner(msg, extra);
    };
    const send = transport.send.bind(transport);
    transport.send = (msg, options) => {
      this.log.push({ dir: 'out', msg });
      return send(msg, options);
    };
  }

  // Passes on, in arrival order, the held messages that pick selects.
  _flush(pick) {
    const go = this.held.filter(pick);
    this.held = this.held.filter((e) => !go.includes(e));
    for (const e of go) {
      clearTimeout(e.timer);
      e.deliver();
    }
  }

  release(taskId) {
    this.released.add(taskId);
    const n = this.held.filter((e) => e.task === taskId).length;
    if (n) console.log(`# [${this.tag}] gate: ${n} message(s) of task ${taskId} held until ext-tasks tracked it`);
    this._flush((e) => e.task === taskId);
  }

  // ext-tasks' RawClientDispatch: sends request (method and params; the id
  // is ours) and resolves with its response, bounded by the request's
  // timeout and its abort signal.
  dispatch = (request, options = {}) => new Promise((resolve, reject) => {
    const id = `ext-tasks-${++this.next}`;
    const ms = options.context?.requestTimeoutMs ?? RPC_MS;
    const done = () => {
      this.pending.delete(id);
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      done();
      reject(options.signal.reason ?? new DOMException('The operation was aborted', 'AbortError'));
    };
    const timer = setTimeout(() => {
      done();
      reject(new DispatchError(`${request.method}: no response within ${ms} ms`));
    }, ms);
    if (options.signal?.aborted) {
      onAbort();
      return;
    }
    options.signal?.addEventListener('abort', onAbort, { once: true });
    this.pending.set(id, (msg) => {
      done();
      resolve('error' in msg ? { kind: 'error', error: msg.error } : { kind: 'result', result: msg.result });
    });
    this.transport.send({ jsonrpc: '2.0', id, ...request }, { headers: options.context?.headers })
      .catch((err) => {
        done();
        reject(new DispatchError(`${request.method}: send failed: ${err?.message ?? err}`, false, { cause: err }));
      });
  });

  // Requests we sent with method (and, when given, that taskId).
  sent(method, taskId) {
    return this.log.filter((e) => e.dir === 'out' && e.msg.method === method
      && (taskId === undefined || e.msg.params?.taskId === taskId)).map((e) => e.msg);
  }

  received(method) {
    return this.log.filter((e) => e.dir === 'in' && e.msg.method === method).map((e) => e.msg);
  }

  // The response to the request we sent with id.
  responseTo(id) {
    return this.log.find((e) => e.dir === 'in' && !('method' in e.msg) && e.msg.id === id)?.msg;
  }
}

// ---- one execution ---------------------------------------------------------

// Settles execution while recording its events; waitFor(pred) resolves with
// the first task view pred accepts.
function observe(execution) {
  const views = [];
  const waiters = new Set();
  const settlement = execution.settle({
    onEvent: (event) => {
      if (event.type !== 'task') return;
      views.push(event.task);
      for (const w of [...waiters]) {
        if (w.pred(event.task)) {
          waiters.delete(w);
          w.resolve(event.task);
        }
      }
    },
  });
  settlement.catch(() => {});
  return {
    views,
    settlement,
    statuses: () => views.map((v) => v.status),
    waitFor: (pred, ms, what) => {
      const seen = views.find(pred);
      if (seen) return Promise.resolve(seen);
      return within(new Promise((resolve) => waiters.add({ pred, resolve })), ms, what);
    },
  };
}

// ---- one era on one connected client ----------------------------------------

async function runEra(tag, era, client, wire) {
  const v1 = era === '2025-11-25';
  check(`${tag}: negotiated ${era}`, client.getNegotiatedProtocolVersion() === era,
    client.getNegotiatedProtocolVersion());
  const inputs = []; // { request, context }
  const errors = []; // what ext-tasks reported in the background
  const onInputRequest = createApplicationInputHandler({
    elicitation: (request, context) => {
      inputs.push({ request, context });
      return { action: 'accept', content: { confirm: true } };
    },
    sampling: (request) => {
      inputs.push({ request });
      throw new Error('archive_notes asks no sampling');
    },
    roots: (request) => {
      inputs.push({ request });
      return { roots: [] };
    },
  });
  const session = createTaskSessionFromClient(client, {
    endpointId: `libmcp-everything-${tag}`,
    onInputRequest,
    onError: (err) => errors.push(err),
    ...(v1 ? {} : {
      rawDispatch: wire.dispatch,
      v2RequestFraming: {
        protocolVersion: era, clientInfo: CLIENT_INFO, clientCapabilities: CLIENT_CAPABILITIES,
      },
    }),
  });
  try {
    const caps = session.capabilities;
    check(`${tag}: ext-tasks sees task support (execution, cancellation${v1 ? ', tasks/list' : ', tasks/update'})`,
      caps.execution && caps.cancellation && (v1 ? caps.inventory === 'server-list' : caps.inputResponses),
      show(caps));

    // Starts a call and checks it became a task; returns the execution.
    const start = async (label, notes, seconds) => {
      const execution = await within(session.callTool('archive_notes', { notes, seconds }, {
        requestTimeoutMs: RPC_MS,
        task: v1 ? { preference: 'prefer', retentionMs: V1_RETENTION_MS } : { preference: 'prefer' },
      }), 2 * RPC_MS, `${label}: tools/call`);
      const id = execution.handle?.taskId;
      if (id) wire.release(id);
      check(`${tag} ${label}: create: the call became a task with an id`,
        execution.kind === 'task' && typeof id === 'string' && id.length > 0, show(execution.handle));
      return execution;
    };

    // ---- result ----
    const before = inputs.length;
    const ex = await start('result', RESULT_NOTES, RESULT_SECONDS);
    const id = ex.handle.taskId;
    check(`${tag} result: create: taskSupport ${v1 ? '"optional" in tools/list' : 'not in the 2026-07-28 tools/list'}`,
      ex.declaration?.taskSupport === (v1 ? 'optional' : undefined), show(ex.declaration));
    const obs = observe(ex);
    const first = await obs.waitFor(() => true, RPC_MS, 'result: the first task view');
    if (v1) {
      check(`${tag} result: create: the task keeps the requested ttl (${V1_RETENTION_MS} ms)`,
        first?.retentionMs === V1_RETENTION_MS, show(first));
    } else {
      const created = wire.responseTo(wire.sent('tools/call').at(-1)?.id)?.result;
      check(`${tag} result: create: CreateTaskResult resultType "task" with ttlMs and pollIntervalMs`,
        created?.resultType === 'task' && created.taskId === id && Number.isInteger(created.ttlMs)
          && Number.isInteger(created.pollIntervalMs), show(created));
    }
    const { outcome } = await within(obs.settlement, RESULT_SECONDS * 1000 + 4 * RPC_MS, 'result: settle');
    const statuses = obs.statuses();
    check(`${tag} result: poll: input_required, then working, then completed observed`,
      statuses.includes('input_required') && statuses.lastIndexOf('working') > statuses.indexOf('input_required')
        && statuses.at(-1) === 'completed', show(statuses));
    const gets = wire.sent('tasks/get', id);
    const progress = obs.views.find((v) => v.status === 'working' && STATUS_MESSAGE.test(v.statusMessage ?? ''));
    check(`${tag} result: poll: tasks/get sent, working with statusMessage "archived k of n parts" seen`,
      gets.length > 0 && progress !== undefined,
      `${gets.length} tasks/get; ${show(obs.views.map((v) => [v.status, v.statusMessage]))}`);

    const asked = inputs.slice(before);
    const q = asked[0];
    const schema = q?.request?.params?.requestedSchema;
    check(`${tag} result: input: one elicitation for the task, form with boolean "confirm"`,
      asked.length === 1 && q.request.kind === 'elicitation' && q.context?.scope === 'task'
        && q.context.taskId === id && schema?.properties?.confirm?.type === 'boolean'
        && /Archive 3 notes\?/.test(q.request.params.message ?? ''),
      show(asked));
    if (v1) {
      const wireAsk = wire.received('elicitation/create').at(-1);
      check(`${tag} result: input: elicitation/create came to the client with the related-task _meta`,
        q?.context?.delivery === 'peer-request' && wireAsk?.params?._meta?.[RELATED]?.taskId === id,
        show(wireAsk));
      const answer = wire.log.find((e) => e.dir === 'out' && !('method' in e.msg) && e.msg.id === wireAsk?.id)?.msg;
      check(`${tag} result: input: the client answered accept, confirm true`,
        answer?.result?.action === 'accept' && answer.result.content?.confirm === true, show(answer));
    } else {
      const updates = wire.sent('tasks/update', id);
      check(`${tag} result: input: inputRequests "confirm" on tasks/get, answered by tasks/update`,
        q?.context?.delivery === 'task-update' && q.context.inputId === 'confirm' && updates.length === 1
          && updates[0].params.inputResponses?.confirm?.action === 'accept'
          && updates[0].params.inputResponses.confirm.content?.confirm === true,
        show(updates));
    }

    const result = outcome.status === 'completed' ? outcome.result : undefined;
    check(`${tag} result: result: completed, structuredContent.archived is ${RESULT_NOTES.length}`,
      result?.structuredContent?.archived === RESULT_NOTES.length && result.isError !== true, show(outcome));
    if (v1) {
      check(`${tag} result: result: tasks/result sent, its result carries the related-task _meta`,
        wire.sent('tasks/result', id).length === 1 && result?._meta?.[RELATED]?.taskId === id, show(result?._meta));
    } else {
      check(`${tag} result: result: inlined in tasks/get with resultType "complete"`,
        result?.resultType === 'complete', show(result));
    }

    // ---- cancel ----
    const cx = await start('cancel', CANCEL_NOTES, CANCEL_SECONDS);
    const cid = cx.handle.taskId;
    const cobs = observe(cx);
    const working = await cobs.waitFor((v) => v.status === 'working' && STATUS_MESSAGE.test(v.statusMessage ?? ''),
      6 * RPC_MS, 'cancel: working after the answer');
    check(`${tag} cancel: answered, then working (${working.statusMessage})`,
      inputs.some((i) => i.context?.taskId === cid), show(inputs.map((i) => i.context)));
    await within(cx.cancel(), 2 * RPC_MS, 'cancel: execution.cancel()');
    const cancelled = await within(cobs.settlement, 2 * RPC_MS, 'cancel: settle');
    check(`${tag} cancel: the execution's outcome is cancelled`, cancelled.outcome.status === 'cancelled',
      show(cancelled.outcome));
    const cancels = wire.sent('tasks/cancel', cid);
    const ack = wire.responseTo(cancels[0]?.id);
    if (v1) {
      check(`${tag} cancel: tasks/cancel answered with the task, status cancelled`,
        cancels.length === 1 && ack?.result?.taskId === cid && ack.result.status === 'cancelled', show(ack));
    } else {
      check(`${tag} cancel: tasks/cancel acknowledged with resultType "complete"`,
        cancels.length === 1 && ack?.result?.resultType === 'complete' && !ack.error, show(ack));
    }
    // The server's own view: cancellation is cooperative in 2026-07-28, so
    // poll (bounded) until the work stops; 2025-11-25 must say cancelled
    // before tasks/cancel returns.
    const controller = session.task(cid, { requestTimeoutMs: RPC_MS });
    let view = await within(controller.snapshot(), 2 * RPC_MS, 'cancel: tasks/get');
    for (const endAt = Date.now() + 2 * RPC_MS; !v1 && view.status !== 'cancelled' && Date.now() < endAt;) {
      await sleep(100);
      view = await within(controller.snapshot(), 2 * RPC_MS, 'cancel: tasks/get');
    }
    check(`${tag} cancel: tasks/get says cancelled`, view.status === 'cancelled', show(view.raw));
    await sleep(300);
    view = await within(controller.snapshot(), 2 * RPC_MS, 'cancel: tasks/get');
    check(`${tag} cancel: still cancelled 300 ms later`, view.status === 'cancelled', show(view.raw));

    if (v1) {
      const page = await within(session.listTasks(), 2 * RPC_MS, 'tasks/list');
      const listed = new Map(page.tasks.map((t) => [t.taskId, t.status]));
      check(`${tag} tasks/list: the completed and the cancelled task`,
        listed.get(id) === 'completed' && listed.get(cid) === 'cancelled', show([...listed]));
    }

    // ---- a later call ----
    const lx = await start('later', LATER_NOTES, 0);
    const later = await within(observe(lx).settlement, 6 * RPC_MS, 'later: settle');
    check(`${tag} later: after the cancel a new task still runs to archived ${LATER_NOTES.length}`,
      later.outcome.status === 'completed'
        && later.outcome.result?.structuredContent?.archived === LATER_NOTES.length, show(later.outcome));

    check(`${tag}: no input request other than elicitation`,
      inputs.every((i) => i.request.kind === 'elicitation'), show(inputs.map((i) => i.request.kind)));
    check(`${tag}: ext-tasks reported no background error`, errors.length === 0,
      errors.map((e) => String(e?.stack ?? e)).join('\n'));
    if (wire.heldCount) console.log(`# [${tag}] gate: ${wire.heldCount} server message(s) held in all`);
  } finally {
    await within(session.close(), RPC_MS, 'session.close()').catch((err) => fail(`${tag}: session closes`, String(err)));
  }
}

// A Client of era; mode 'legacy' initializes with 2025-11-25, a pin sends
// 2026-07-28 requests.
function newClient(era) {
  return new Client(CLIENT_INFO, {
    capabilities: CLIENT_CAPABILITIES,
    versionNegotiation: { mode: era === '2025-11-25' ? 'legacy' : { pin: era } },
  });
}

// ---- stdio -----------------------------------------------------------------

// Connects a client of era over transport, runs the era's checks and
// closes the client, each step bounded in time.
async function driveEra(tag, era, transport) {
  const client = newClient(era);
  try {
    await within(client.connect(transport, { timeout: RPC_MS }), 2 * RPC_MS, `${tag}: connect`);
    await runEra(tag, era, client, new Wire(transport, tag));
  } catch (err) {
    fail(tag, String(err?.stack ?? err));
  } finally {
    await within(client.close(), RPC_MS, `${tag}: close`).catch(() => {});
  }
}

async function overStdio(era) {
  const tag = `stdio ${era}`;
  const { command, args } = serverCommand(CONFIG, ['--stdio']);
  console.log(`# [${tag}] spawn: ${[command, ...args].map(shellQuote).join(' ')}`);
  const transport = new TrackedStdioTransport({ command, args, env: { ...process.env }, stderr: 'pipe' });
  forwardLines(transport.stderr, tag);
  live.add(transport);
  await driveEra(tag, era, transport);
  await transport.close().catch(() => {});
  live.delete(transport);
  if (transport.tracker) checkExit(tag, transport.tracker, CONFIG);
  else fail(`${tag}: server started`, 'no process');
}

// ---- HTTP ------------------------------------------------------------------

async function overHttp() {
  let server;
  try {
    server = await startHttpServer(CONFIG, 'http', []);
  } catch (err) {
    fail('http: server starts', String(err?.message ?? err));
    return;
  }
  live.add({ kill: () => server.child.kill('SIGKILL') });
  if (checkListeningUrl('http', server.url)) {
    for (const era of ['2025-11-25', '2026-07-28']) {
      await driveEra(`http ${era}`, era, new StreamableHTTPClientTransport(new URL(server.url)));
    }
  }
  checkHttpExit('http', await stopHttpServer(server, CONFIG), CONFIG);
}

const problem = preflight(CONFIG);
if (problem) {
  fail('preflight', problem);
} else {
  const t0 = Date.now();
  await overStdio('2025-11-25');
  await overStdio('2026-07-28');
  await overHttp();
  console.log(`# all runs: ${Date.now() - t0} ms`);
}
clearTimeout(watchdog);
finish();
