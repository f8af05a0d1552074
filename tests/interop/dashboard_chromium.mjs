// MCP Apps end to end: examples/dashboard's view rendered by a real browser.
//
// 1. `dashboard --http 127.0.0.1:0` is started; the official TypeScript
//    client (@modelcontextprotocol/client, pinned in package-lock.json),
//    declaring the io.modelcontextprotocol/ui extension as a host does,
//    lists the tools, follows system_status's _meta.ui.resourceUri, reads
//    the view with resources/read (MIME type text/html;profile=mcp-app) and
//    calls the tool, in both protocol eras.
// 2. This script serves, on 127.0.0.1, a minimal host page of its own. The
//    page uses ext-apps' host side (@modelcontextprotocol/ext-apps/app-bridge,
//    pinned: AppBridge and PostMessageTransport), loaded as ES modules from
//    node_modules through an import map built here from the packages'
//    "exports". It puts the view in a sandboxed iframe (srcdoc, opaque
//    origin, under the spec's default Content-Security-Policy, which allows
//    no network at all), answers the view's ui/initialize, and after
//    ui/notifications/initialized sends ui/notifications/tool-input and
//    ui/notifications/tool-result with the result the client got. The view's
//    tools/call (its Refresh button) comes back here and goes to the server
//    through the client.
// 3. Debian's headless Chromium (/usr/bin/chromium, `cmake/deps.sh --test`
//    installs it; never a downloaded browser), driven over the DevTools
//    protocol on a pipe (--remote-debugging-pipe: no port, no WebSocket),
//    opens the host page; the script reads the rendered view from inside
//    the iframe and compares it with the tool's structuredContent, presses
//    Refresh, and has the host tear the view down.
//
// A desktop-style host: a web host would also put a sandbox proxy on a
// second origin between itself and the view (SEP-1865, "Sandbox proxy"),
// which changes nothing the view sees. Loopback only; every wait is
// bounded. A screenshot of the host page stays in ./dashboard.png here.
//
//   node dashboard_chromium.mjs <path-to-dashboard> [launcher words...]
// Prints PASS/FAIL per check and ends with "N passed, N failed".

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { checkHttpExit, checkListeningUrl, startHttpServer, stopHttpServer } from './http_lib.mjs';
import {
  check, fail, finish, parseCommandLine, preflight, show, sleep, startWatchdog,
} from './lib.mjs';

const CONFIG = parseCommandLine('dashboard_chromium.mjs');
const HERE = path.dirname(fileURLToPath(import.meta.url));
const CHROMIUM = process.env.MCP_TEST_CHROMIUM ?? '/usr/bin/chromium';
const APP_MIME = 'text/html;profile=mcp-app';
const UI_EXTENSION = 'io.modelcontextprotocol/ui';
const STEP_MS = CONFIG.slow ? 60_000 : 20_000; // one browser step
const opts = { timeout: CONFIG.requestTimeoutMs };

// The MCP Apps default policy when a view declares no ui.csp (SEP-1865,
// "Host Behavior"): nothing from the network, inline script and style.
const DEFAULT_CSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; "
  + "style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; "
  + "object-src 'none'; connect-src 'none'";

let server = null;
let browser = null;
let site = null;
const clients = [];
const watchdog = startWatchdog(CONFIG.slow ? 240_000 : CONFIG.totalBudgetMs, () => {
  browser?.kill();
  server?.child.kill('SIGKILL');
});

// ---- the MCP side ----------------------------------------------------------

async function connect(url, mode) {
  const client = new Client({ name: 'libmcp-interop-apps-host', version: '0.0.0' }, {
    capabilities: { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME] } } },
    ...(mode ? { versionNegotiation: { mode } } : {}),
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)), opts);
  clients.push(client);
  return client;
}

// Lists, reads and calls as a host does; returns what the browser needs.
async function discover(tag, client) {
  check(`${tag}: negotiated`, client.getNegotiatedProtocolVersion() === tag,
    client.getNegotiatedProtocolVersion());
  const { tools } = await client.listTools({}, opts);
  const tool = tools.find((t) => typeof t._meta?.ui?.resourceUri === 'string');
  if (!check(`${tag}: tools/list has a tool with _meta.ui.resourceUri`, tool, show(tools))) return null;
  const uri = tool._meta.ui.resourceUri;
  check(`${tag}: ${tool.name} links ui://dashboard/status.html, visible to model and app`,
    uri === 'ui://dashboard/status.html'
      && JSON.stringify(tool._meta.ui.visibility) === '["model","app"]', show(tool._meta));
  check(`${tag}: ${tool.name} is read-only and closed-world, with an outputSchema`,
    tool.annotations?.readOnlyHint === true && tool.annotations?.openWorldHint === false
      && tool.outputSchema?.type === 'object', show(tool));

  const { resources } = await client.listResources({}, opts);
  const listed = resources.find((r) => r.uri === uri);
  check(`${tag}: resources/list lists the view as ${APP_MIME}, prefersBorder`,
    listed?.mimeType === APP_MIME && listed?._meta?.ui?.prefersBorder === true, show(resources));
  const read = await client.readResource({ uri }, opts);
  const item = read.contents?.[0];
  check(`${tag}: resources/read gives one HTML document of ${APP_MIME}, with _meta.ui`,
    read.contents?.length === 1 && item.uri === uri && item.mimeType === APP_MIME
      && /^<!DOCTYPE html>/i.test(item.text ?? '') && item._meta?.ui?.prefersBorder === true,
    show({ ...item, text: item?.text?.slice(0, 80) }));

  // The SDK client checks structuredContent against the outputSchema.
  const result = await client.callTool({ name: tool.name, arguments: {} }, opts);
  const s = result.structuredContent;
  check(`${tag}: ${tool.name} returns structuredContent and a text block`,
    !result.isError && s && result.content?.some((c) => c.type === 'text'), show(result));
  check(`${tag}: the figures are this machine's (hostname, memory)`,
    s?.hostname === os.hostname() && s?.memory?.total_bytes === os.totalmem()
      && s?.load?.length === 3 && s?.cpus >= 1,
    show({ s, hostname: os.hostname(), totalmem: os.totalmem() }));
  return { tool, html: item?.text, result };
}

// ---- the host page and what it loads ---------------------------------------

// Node's package resolution, for a browser: the "exports" of each package
// with the conditions browser, import and default, in the order the package
// lists them.
const CONDITIONS = new Set(['browser', 'import', 'default']);

function pickTarget(target) {
  if (typeof target === 'string') return target;
  if (Array.isArray(target)) return target.map(pickTarget).find(Boolean) ?? null;
  if (target && typeof target === 'object') {
    for (const [condition, value] of Object.entries(target)) {
      const got = CONDITIONS.has(condition) ? pickTarget(value) : null;
      if (got) return got;
    }
  }
  return null;
}

function exportTarget(exports, subpath) {
  const map = typeof exports === 'string' || Array.isArray(exports)
    || !Object.keys(exports).some((k) => k.startsWith('.')) ? { '.': exports } : exports;
  if (subpath in map) return pickTarget(map[subpath]);
  for (const [key, value] of Object.entries(map)) { // "./jwk/*"
    const star = key.indexOf('*');
    const [head, tail] = [key.slice(0, star), key.slice(star + 1)];
    if (star >= 0 && subpath.startsWith(head) && subpath.endsWith(tail)) {
      return pickTarget(value)?.replaceAll('*', subpath.slice(head.length, subpath.length - tail.length));
    }
  }
  return null;
}

// The file a bare specifier names from a file, or null.
function resolvePackage(specifier, from) {
  const parts = specifier.split('/');
  const name = parts.slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
  const subpath = `.${specifier.slice(name.length)}`;
  for (let dir = path.dirname(from); ; dir = path.dirname(dir)) {
    const root = path.join(dir, 'node_modules', name);
    if (fs.existsSync(path.join(root, 'package.json'))) {
      const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
      const target = pkg.exports !== undefined ? exportTarget(pkg.exports, subpath)
        : subpath === '.' ? (pkg.module ?? pkg.main ?? 'index.js') : subpath;
      return target ? path.join(root, target) : null;
    }
    if (dir === path.dirname(dir)) return null;
  }
}

// An import map for entry (a bare specifier the host page imports): every
// module it reaches, statically or dynamically, gets a scope mapping the
// bare specifiers it uses to the files Node would pick.
function importMap(entry) {
  const url = (file) => `/${path.relative(HERE, file).split(path.sep).join('/')}`;
  const scopes = {};
  const seen = new Set();
  const specifiers = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s*)(["'])([^"'\s]+)\1/g;
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const [, , spec] of fs.readFileSync(file, 'utf8').matchAll(specifiers)) {
      if (spec.startsWith('./') || spec.startsWith('../')) {
        const target = path.resolve(path.dirname(file), spec);
        if (fs.existsSync(target)) visit(target);
      } else if (!spec.startsWith('/') && !/^[a-z]+:/.test(spec)) {
        const target = resolvePackage(spec, file);
        if (target && fs.existsSync(target)) {
          (scopes[url(file)] ??= {})[spec] = url(target);
          visit(target);
        }
      }
    }
  };
  const root = resolvePackage(entry, path.join(HERE, 'host.html'));
  visit(root);
  return { imports: { [entry]: url(root) }, scopes, modules: seen.size };
}

// The host page: AppBridge without an MCP client of its own (it passes the
// view's tools/call to /call here), the view in a sandboxed iframe.
// window.hostState is what the script reads back.
function hostPage(map) {
  return `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>libmcp MCP Apps test host</title>
<script type="importmap">${JSON.stringify({ imports: map.imports, scopes: map.scopes })}</script>
</head><body>
<iframe id="view" sandbox="allow-scripts" style="width:520px;height:80px;border:1px solid #999"></iframe>
<script type="module">
import {
  AppBridge, PostMessageTransport, SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/ext-apps/app-bridge';

const state = window.hostState = {
  sizes: [], calls: [], errors: [], fromView: [], supported: SUPPORTED_PROTOCOL_VERSIONS,
};
try {
  const data = await (await fetch('/data.json')).json();
  const iframe = document.getElementById('view');
  // The view's messages as they come, beside the bridge's own handling.
  window.addEventListener('message', (event) => {
    if (event.source !== iframe.contentWindow) return;
    state.fromView.push(event.data?.method ?? 'response');
    if (event.data?.method === 'ui/initialize') state.initialize = event.data.params;
  });
  const bridge = new AppBridge(null, { name: 'libmcp-test-host', version: '0.0.0' },
    { serverTools: {}, logging: {} },
    { hostContext: { theme: 'light', displayMode: 'inline', availableDisplayModes: ['inline'],
      platform: 'web', toolInfo: { tool: data.tool } } });
  bridge.oninitialized = async () => {
    state.initialized = true;
    state.appInfo = bridge.getAppVersion();
    state.appCapabilities = bridge.getAppCapabilities();
    try {
      await bridge.sendToolInput({ arguments: data.arguments });
      await bridge.sendToolResult(data.result);
      state.resultSent = true;
    } catch (err) { state.errors.push(String(err?.stack ?? err)); }
  };
  bridge.onsizechange = ({ width, height }) => {
    state.sizes.push({ width, height });
    if (height) iframe.style.height = height + 'px';
  };
  bridge.oncalltool = async (params) => {
    state.calls.push(params);
    const res = await fetch('/call', { method: 'POST', body: JSON.stringify(params) });
    return res.json();
  };
  window.teardown = () => bridge.teardownResource({ reason: 'test over' });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  // The view under the default policy, set by a meta element as a sandbox
  // proxy does.
  const csp = '<meta http-equiv="Content-Security-Policy" content="' + data.csp + '">';
  iframe.srcdoc = data.html.replace(/<head>/i, (head) => head + csp);
  state.loaded = true;
} catch (err) { state.errors.push(String(err?.stack ?? err)); }
</script></body></html>`;
}

// Serves the host page, the modules under node_modules, the data the page
// starts from, and /call (the view's tools/call, through the MCP client).
function startSite(page, data, callTool) {
  const modules = path.join(HERE, 'node_modules');
  const types = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.cjs': 'text/javascript',
    '.json': 'application/json' };
  const srv = http.createServer(async (req, res) => {
    const reply = (status, type, body) => {
      res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' });
      res.end(body);
    };
    try {
      const { pathname } = new URL(req.url, 'http://127.0.0.1');
      if (pathname === '/host.html') return reply(200, 'text/html; charset=utf-8', page);
      if (pathname === '/data.json') return reply(200, 'application/json', JSON.stringify(data));
      if (pathname === '/favicon.ico') return reply(204, 'image/x-icon', '');
      if (pathname === '/call' && req.method === 'POST') {
        let body = '';
        for await (const chunk of req) body += chunk;
        return reply(200, 'application/json', JSON.stringify(await callTool(JSON.parse(body))));
      }
      const file = path.join(HERE, decodeURIComponent(pathname));
      if (file.startsWith(modules + path.sep) && fs.existsSync(file) && fs.statSync(file).isFile()) {
        return reply(200, types[path.extname(file)] ?? 'application/octet-stream', fs.readFileSync(file));
      }
      return reply(404, 'text/plain', 'not found');
    } catch (err) {
      return reply(500, 'text/plain', String(err));
    }
  });
  return new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => resolve(srv));
  });
}

// ---- the browser -----------------------------------------------------------

// Chromium with the DevTools protocol on fds 3 (commands in) and 4 (replies
// and events out), messages ended by NUL. Every command has a deadline.
class Browser {
  constructor() {
    this.profile = fs.mkdtempSync(path.join(os.tmpdir(), 'libmcp-chromium-'));
    this.child = spawn(CHROMIUM, [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-dev-shm-usage', '--no-proxy-server', '--remote-debugging-pipe',
      `--user-data-dir=${this.profile}`, 'about:blank',
    ], {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
      // Its crash reports and caches go to the throw-away profile too.
      env: { ...process.env, HOME: this.profile, XDG_CONFIG_HOME: this.profile,
        XDG_CACHE_HOME: this.profile },
    });
    this.stderr = '';
    this.child.stderr.on('data', (c) => { this.stderr = (this.stderr + c).slice(-4000); });
    this.exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.once('error', (err) => { this.stderr += `\n${err.message}`; });
    this.nextId = 1;
    this.waiting = new Map();
    this.listeners = [];
    let pending = '';
    this.child.stdio[4].on('data', (chunk) => {
      pending += chunk.toString('utf8');
      let i;
      while ((i = pending.indexOf('\0')) >= 0) {
        const msg = JSON.parse(pending.slice(0, i));
        pending = pending.slice(i + 1);
        if (msg.id !== undefined) {
          const w = this.waiting.get(msg.id);
          this.waiting.delete(msg.id);
          if (msg.error) w?.reject(new Error(`${w.method}: ${msg.error.message}`));
          else w?.resolve(msg.result);
        } else {
          for (const listener of this.listeners) listener(msg);
        }
      }
    });
  }

  send(method, params = {}, sessionId = undefined) {
    const id = this.nextId++;
    this.child.stdio[3].write(`${JSON.stringify({ id, method, params, sessionId })}\0`);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`${method}: no answer within ${STEP_MS} ms`));
      }, STEP_MS);
      this.waiting.set(id, {
        method,
        resolve: (r) => { clearTimeout(timer); resolve(r); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
    });
  }

  on(listener) {
    this.listeners.push(listener);
  }

  async close() {
    await Promise.race([this.send('Browser.close').catch(() => {}), sleep(5000)]);
    if (await Promise.race([this.exited.then(() => true), sleep(10_000).then(() => false)]) === false) {
      this.kill();
      await Promise.race([this.exited, sleep(5000)]);
    }
    fs.rmSync(this.profile, { recursive: true, force: true });
  }

  kill() {
    try { this.child.kill('SIGKILL'); } catch { /* gone */ }
  }
}

// A page of the browser, with its frames' JavaScript contexts: the view's
// iframe is in the page's process or, with site isolation, a target of its
// own, attached here automatically and held until its exceptions and log
// are watched too; either way its context shows up.
async function openPage(b) {
  const { targetId } = await b.send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await b.send('Target.attachToTarget', { targetId, flatten: true });
  const page = { sessionId, contexts: [], exceptions: [], console: [], log: [], mainFrame: null };
  b.on((msg) => {
    if (msg.method === 'Runtime.executionContextCreated' && msg.params.context.auxData?.isDefault) {
      page.contexts.push({ sessionId: msg.sessionId, id: msg.params.context.id,
        frameId: msg.params.context.auxData.frameId });
    } else if (msg.method === 'Runtime.executionContextDestroyed') {
      page.contexts = page.contexts.filter((c) => !(c.sessionId === msg.sessionId
        && c.id === msg.params.executionContextId));
    } else if (msg.method === 'Runtime.executionContextsCleared') {
      page.contexts = page.contexts.filter((c) => c.sessionId !== msg.sessionId);
    } else if (msg.method === 'Runtime.exceptionThrown') {
      page.exceptions.push(msg.params.exceptionDetails);
    } else if (msg.method === 'Runtime.consoleAPICalled') {
      page.console.push(`${msg.params.type}: ${msg.params.args.map((a) => a.value ?? a.description).join(' ')}`);
    } else if (msg.method === 'Log.entryAdded') { // CSP refusals land here
      page.log.push(`${msg.params.entry.source}: ${msg.params.entry.text}`);
    } else if (msg.method === 'Target.attachedToTarget') {
      const child = msg.params.sessionId;
      Promise.all([b.send('Runtime.enable', {}, child), b.send('Log.enable', {}, child)])
        .then(() => b.send('Runtime.runIfWaitingForDebugger', {}, child)).catch(() => {});
    }
  });
  await b.send('Page.enable', {}, sessionId);
  await b.send('Runtime.enable', {}, sessionId);
  await b.send('Log.enable', {}, sessionId);
  await b.send('Target.setAutoAttach',
    { autoAttach: true, waitForDebuggerOnStart: true, flatten: true }, sessionId);
  const { frameTree } = await b.send('Page.getFrameTree', {}, sessionId);
  page.mainFrame = frameTree.frame.id;
  return page;
}

// Evaluates expression (awaiting a promise) in the page or in the view.
async function evaluate(b, page, expression, where = 'page') {
  const ctx = page.contexts.findLast((c) => (where === 'page') === (c.frameId === page.mainFrame));
  if (!ctx) throw new Error(`no JavaScript context in the ${where} yet`);
  const r = await b.send('Runtime.evaluate',
    { expression, contextId: ctx.id, returnByValue: true, awaitPromise: true }, ctx.sessionId);
  if (r.exceptionDetails) throw new Error(`${where}: ${show(r.exceptionDetails.exception?.description ?? r.exceptionDetails.text)}`);
  return r.result.value;
}

// Polls fn until it returns a truthy value or ms pass; returns the last value.
async function until(fn, ms = STEP_MS) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try { last = await fn(); } catch (err) { last = undefined; if (Date.now() >= deadline) throw err; }
    if (last || Date.now() >= deadline) return last;
    await sleep(100);
  }
}

// What the view shows, read from its DOM.
const READ_VIEW = `(() => {
  const t = (id) => document.getElementById(id)?.textContent ?? null;
  return { hostname: t('hostname'), kernel: t('kernel'), cpus: t('cpus'),
    load: [t('load1'), t('load5'), t('load15')], note: t('note'),
    refresh: !document.getElementById('refresh').hidden,
    csp: document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.content ?? null };
})()`;

function shows(view, s) {
  return view && view.hostname === s.hostname && view.kernel === s.kernel
    && view.cpus === String(s.cpus) && view.load.join(' ') === s.load.map((x) => x.toFixed(2)).join(' ');
}

async function inBrowser(found, callTool) {
  const map = importMap('@modelcontextprotocol/ext-apps/app-bridge');
  check('the host page\'s modules resolve from node_modules', map.modules > 5, show(map));
  const data = { html: found.html, tool: found.tool, arguments: {}, result: found.result, csp: DEFAULT_CSP };
  const calls = [];
  site = await startSite(hostPage(map), data, async (params) => {
    const result = await callTool(params);
    calls.push(result);
    return result;
  });
  const url = `http://127.0.0.1:${site.address().port}/host.html`;

  browser = new Browser();
  const page = await openPage(browser);
  await browser.send('Page.navigate', { url }, page.sessionId);
  const s = found.result.structuredContent;

  const state = await until(() => evaluate(browser, page, 'window.hostState?.resultSent && window.hostState'));
  check('host: the view sent ui/initialize, then ui/notifications/initialized',
    state?.initialized === true && state.fromView[0] === 'ui/initialize'
      && state.fromView[1] === 'ui/notifications/initialized',
    show({ state, console: page.console, log: page.log }));
  check(`host: the view speaks a protocol version AppBridge supports (${show(state?.supported)})`,
    state?.supported?.includes(state?.initialize?.protocolVersion), show(state?.initialize));
  check('host: the view named itself (appInfo) and declared inline display (appCapabilities)',
    state?.appInfo?.name === 'dashboard-status' && typeof state?.appInfo?.version === 'string'
      && state?.appCapabilities?.availableDisplayModes?.includes('inline'), show(state));
  check('host: tool-input and tool-result sent', state?.resultSent === true && state?.errors.length === 0,
    show(state));

  const view = await until(async () => {
    const v = await evaluate(browser, page, READ_VIEW, 'view');
    return shows(v, s) ? v : null;
  }).catch((err) => ({ error: err.message }));
  check('view: shows the host name, kernel, CPUs and load averages the tool returned',
    shows(view, s), show({ view, want: s, log: page.log }));
  check('view: runs in a frame of its own under the default policy',
    view?.csp === DEFAULT_CSP, show(view));
  const sized = await until(() => evaluate(browser, page, 'window.hostState.sizes.at(-1)'));
  check('view: reported its size (ui/notifications/size-changed)', sized?.height > 0, show(sized));

  // The interactive part: the view's own tools/call, through this host.
  check('view: offers Refresh (the host declared serverTools)', view?.refresh === true, show(view));
  await evaluate(browser, page, 'document.getElementById("refresh").click(), true', 'view');
  const called = await until(() => evaluate(browser, page, 'window.hostState.calls.length > 0 && window.hostState.calls'));
  check('host: the view called system_status (tools/call)',
    called?.length === 1 && called[0].name === 'system_status', show(called));
  const again = await until(async () => {
    const v = calls.length ? await evaluate(browser, page, READ_VIEW, 'view') : null;
    return shows(v, calls[0].structuredContent) ? v : null;
  }).catch((err) => ({ error: err.message }));
  check('view: renders the refreshed result', calls.length === 1 && shows(again, calls[0].structuredContent),
    show({ again, calls }));

  const shot = await browser.send('Page.captureScreenshot', { format: 'png' }, page.sessionId)
    .catch(() => null);
  if (shot) fs.writeFileSync('dashboard.png', Buffer.from(shot.data, 'base64'));

  const torn = await evaluate(browser, page, 'window.teardown().then((r) => JSON.stringify(r))')
    .catch((err) => err.message);
  check('view: answers ui/resource-teardown', torn === '{}', show(torn));
  check('no JavaScript exception in the host page or the view', page.exceptions.length === 0,
    show(page.exceptions.map((e) => e.exception?.description ?? e.text)));
  const blocked = page.log.filter((line) => /Content Security Policy/.test(line));
  check('the view needs nothing the default policy refuses', blocked.length === 0, show(blocked));
}

// ---- the run ---------------------------------------------------------------

const problem = preflight(CONFIG)
  ?? (fs.existsSync(CHROMIUM) ? null : `${CHROMIUM} is missing: run cmake/deps.sh --test as root`);
if (problem) {
  fail('preflight', problem);
} else {
  try {
    server = await startHttpServer(CONFIG, 'dashboard', []);
    checkListeningUrl('dashboard', server.url);
    const legacy = await connect(server.url);
    const found = await discover('2025-11-25', legacy);
    const modern = await connect(server.url, { pin: '2026-07-28' });
    await discover('2026-07-28', modern);
    if (found?.html && found.result) {
      await inBrowser(found, (params) => legacy.callTool(params, opts));
    }
  } catch (err) {
    fail('dashboard over HTTP and in Chromium', String(err?.stack ?? err));
    if (browser) console.log(`# chromium stderr (last lines):\n${browser.stderr}`);
  } finally {
    await browser?.close();
    site?.closeAllConnections();
    site?.close();
    for (const client of clients) await client.close().catch(() => {});
    if (server) checkHttpExit('dashboard', await stopHttpServer(server, CONFIG), CONFIG);
  }
}
clearTimeout(watchdog);
finish();
