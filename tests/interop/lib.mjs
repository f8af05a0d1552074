// Shared helpers of the interop tests: command line and launcher, time
// budgets, PASS/FAIL reporting, and the server process checks every test
// makes (it runs until stdin EOF, then exits by itself with status 0).
//
// A launcher is a command prefix put in front of the server command: words
// after the server path on the command line win over MCP_TEST_LAUNCHER,
// which is split on whitespace (tests/CMakeLists.txt sets it to valgrind
// when MCP_VALGRIND is ON).

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import process from 'node:process';
import { inspect } from 'node:util';

// ---- command line ----------------------------------------------------------

// Reads `node <script> <path-to-notes> [launcher words...]`; exits with a
// usage message when the path is missing. Returns the server path, the
// launcher words, whether a launcher slows the server down, and the time
// budget: the whole script stays under two minutes even under valgrind.
export function parseCommandLine(script) {
  const argv = process.argv.slice(2);
  if (argv.length < 1 || argv[0] === '-h' || argv[0] === '--help') {
    console.error(`usage: node ${script} <path-to-notes> [launcher words...]`);
    process.exit(2);
  }
  const launcher = argv.length > 1
    ? argv.slice(1)
    : (process.env.MCP_TEST_LAUNCHER ?? '').split(/\s+/).filter(Boolean);
  const slow = launcher.length > 0;
  return {
    notes: path.resolve(argv[0]),
    launcher,
    slow,
    totalBudgetMs: 110_000,
    requestTimeoutMs: slow ? 30_000 : 10_000, // one JSON-RPC round trip
    exitGraceMs: slow ? 20_000 : 10_000, // stdin EOF -> process exit
  };
}

// The command and arguments that run the server behind the launcher.
export function serverCommand(config, args) {
  const { notes, launcher } = config;
  return launcher.length
    ? { command: launcher[0], args: [...launcher.slice(1), notes, ...args] }
    : { command: notes, args };
}

export function shellQuote(word) {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

// Checks that the server can run at all; returns a problem or null.
export function preflight(config) {
  const { notes, launcher } = config;
  let st;
  try {
    st = fs.statSync(notes);
  } catch (err) {
    return `cannot stat ${notes}: ${err.message}`;
  }
  if (!st.isFile()) return `${notes} is not a file`;
  try { fs.accessSync(notes, fs.constants.X_OK); } catch { return `${notes} is not executable`; }
  if (launcher.length) {
    const which = spawnSync('sh', ['-c', 'command -v "$1"', 'sh', launcher[0]], { encoding: 'utf8' });
    if (which.status !== 0) return `launcher ${launcher[0]} not found`;
  }
  return null;
}

// The installed @modelcontextprotocol/sdk version (this file sits next to
// node_modules in the build directory).
export function sdkVersion() {
  try {
    const entry = createRequire(import.meta.url).resolve('@modelcontextprotocol/sdk/client/index.js');
    for (let dir = path.dirname(entry); dir !== path.dirname(dir); dir = path.dirname(dir)) {
      const file = path.join(dir, 'package.json');
      if (!fs.existsSync(file)) continue;
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (pkg.name === '@modelcontextprotocol/sdk') return pkg.version;
    }
  } catch { /* fall through */ }
  return '(version unknown)';
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

// ---- reporting -------------------------------------------------------------

const counts = { passed: 0, failed: 0 };

export function pass(name, detail) {
  counts.passed++;
  console.log(`PASS: ${name}${detail ? ` (${detail})` : ''}`);
}

export function fail(name, detail) {
  counts.failed++;
  console.log(`FAIL: ${name}${detail ? ` -- ${detail}` : ''}`);
}

export function check(name, cond, detail) {
  if (cond) pass(name);
  else fail(name, detail);
  return Boolean(cond);
}

export function failures() {
  return counts.failed;
}

export function show(v) {
  return inspect(v, { depth: 6, breakLength: Infinity, compact: true });
}

// Prints the summary line and sets the exit status.
export function finish() {
  console.log(`${counts.passed} passed, ${counts.failed} failed`);
  process.exitCode = counts.failed > 0 ? 1 : 0;
}

// Fails and exits when the whole test outlives its budget; onTimeout runs
// first (kill the servers). Returns the timer, to clear at the end.
export function startWatchdog(budgetMs, onTimeout) {
  return setTimeout(() => {
    fail('whole test within the time budget', `still running after ${budgetMs} ms`);
    try { onTimeout?.(); } catch { /* best effort */ }
    finish();
    process.exit(1);
  }, budgetMs);
}

// ---- the server process ----------------------------------------------------

// Forwards a child's stderr (valgrind reports land there) line by line,
// each prefixed with the tag.
export function forwardLines(stream, tag) {
  let pending = '';
  stream.on('data', (chunk) => {
    pending += chunk.toString('utf8');
    let i;
    while ((i = pending.indexOf('\n')) >= 0) {
      process.stderr.write(`[${tag}] ${pending.slice(0, i)}\n`);
      pending = pending.slice(i + 1);
    }
  });
  stream.on('end', () => {
    if (pending) process.stderr.write(`[${tag}] ${pending}\n`);
    pending = '';
  });
}

// Watches a child process from the moment it is handed over: records its
// exit status, and whether it exited by itself after stdin EOF or before.
export class ExitTracker {
  constructor(child, exitGraceMs) {
    if (!child || typeof child.once !== 'function' || !('exitCode' in child)) {
      throw new Error('no child process handle: the server exit status cannot be checked');
    }
    this.child = child;
    this.exitGraceMs = exitGraceMs;
    this.exitStatus = null; // { code, signal } once the process has exited
    this.exitedByItself = null; // true: exited after stdin EOF within the grace
    this.diedEarly = null; // true: exited before stdin was closed
    this.exited = new Promise((resolve) => {
      const record = (code, signal) => {
        if (!this.exitStatus) this.exitStatus = { code, signal };
        resolve();
      };
      if (child.exitCode !== null || child.signalCode !== null) record(child.exitCode, child.signalCode);
      else child.once('exit', record);
    });
  }

  // Ends stdin and waits for the process to exit by itself (once).
  shutdown() {
    this._shutdown ??= this._doShutdown();
    return this._shutdown;
  }

  async _doShutdown() {
    if (this.exitStatus) {
      this.diedEarly ??= this.exitedByItself === null; // exited before stdin EOF
      this.exitedByItself ??= false;
      return;
    }
    try { this.child.stdin?.end(); } catch { /* already closed */ }
    const timedOut = await Promise.race([
      this.exited.then(() => false),
      sleep(this.exitGraceMs).then(() => true),
    ]);
    this.exitedByItself = !timedOut;
  }

  // Shuts down, then SIGKILLs a process that would not exit and waits a
  // little for it to go.
  async stop() {
    await this.shutdown();
    if (!this.exitStatus) {
      this.kill();
      await Promise.race([this.exited, sleep(5000)]);
    }
  }

  kill() {
    try { this.child.kill('SIGKILL'); } catch { /* gone */ }
  }
}

// Reports whether the server ran until stdin EOF and then exited by itself
// with status 0 (call after shutdown/stop).
export function checkExit(label, tracker, config) {
  const st = tracker.exitStatus;
  if (!st) {
    fail(`${label}: server exits on stdin EOF`, 'process still running after SIGTERM/SIGKILL');
  } else if (tracker.diedEarly) {
    fail(`${label}: server runs until stdin EOF`, `exited early with ${show(st)}`);
  } else if (!tracker.exitedByItself) {
    fail(`${label}: server exits on stdin EOF`,
      `did not exit within ${config.exitGraceMs} ms of stdin EOF (ended with ${show(st)})`);
  } else if (st.code !== 0 || st.signal !== null) {
    const why = st.signal ? `killed by ${st.signal}`
      : st.code === 99 && config.slow ? 'exit status 99: the launcher (valgrind) reported errors'
        : `exit status ${st.code}`;
    fail(`${label}: server exit status`, why);
  } else {
    pass(`${label}: server exited with status 0 on stdin EOF`);
  }
}
