// Helpers of the Streamable HTTP interop tests (notes_http.mjs,
// conformance_http.mjs): start `notes --http 127.0.0.1:0` behind the
// launcher, read its URL from the "listening on http://ADDR:PORT/mcp" line
// it prints on stderr, stop it with SIGTERM and check it exited by itself
// with status 0 (valgrind's --error-exitcode is 99). Loopback only.

import { spawn } from 'node:child_process';
import process from 'node:process';

import { fail, forwardLines, pass, serverCommand, shellQuote, show, sleep } from './lib.mjs';

// Starts the server with `--http 127.0.0.1:0` and args; resolves with
// { child, url, tag, exited, status } once it listens.
export function startHttpServer(config, tag, args) {
  const { command, args: full } = serverCommand(config, ['--http', '127.0.0.1:0', ...args]);
  console.log(`# [${tag}] spawn: ${[command, ...full].map(shellQuote).join(' ')}`);
  // stdin stays open (and unused): the server runs until SIGTERM.
  const child = spawn(command, full, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env } });
  const server = { child, tag, url: null, status: null, stderr: '' };
  server.exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      server.status = { code, signal };
      resolve(server.status);
    });
  });
  forwardLines(child.stdout, `${tag} stdout`);
  const startMs = config.slow ? 60_000 : 10_000;
  return new Promise((resolve, reject) => {
    let pending = '';
    let done = false;
    const timer = setTimeout(() => {
      if (done) return;
      done = true;
      child.kill('SIGKILL');
      reject(new Error(`no "listening on" line on stderr within ${startMs} ms`));
    }, startMs);
    child.stderr.on('data', (chunk) => {
      pending += chunk.toString('utf8');
      let i;
      while ((i = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, i);
        pending = pending.slice(i + 1);
        server.stderr += `${line}\n`;
        process.stderr.write(`[${tag}] ${line}\n`);
        const m = /listening on (https?:\/\/\S+)/.exec(line);
        if (m && !done) {
          done = true;
          clearTimeout(timer);
          server.url = m[1];
          resolve(server);
        }
      }
    });
    child.stderr.on('end', () => {
      if (pending) process.stderr.write(`[${tag}] ${pending}\n`);
    });
    child.once('error', (err) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      reject(err);
    });
    server.exited.then((st) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      reject(new Error(`exited before listening: ${show(st)}; stderr: ${server.stderr.trim()}`));
    });
  });
}

// The URL's port is a real one and its host a loopback literal.
export function checkListeningUrl(tag, url) {
  let u;
  try { u = new URL(url); } catch { u = null; }
  const ok = u && u.protocol === 'http:' && u.hostname === '127.0.0.1' && Number(u.port) > 0
    && u.pathname === '/mcp';
  if (ok) pass(`${tag}: listening on ${url}`);
  else fail(`${tag}: prints "listening on http://127.0.0.1:PORT/mcp"`, show(url));
  return Boolean(ok);
}

// SIGTERM, then waits for the exit (SIGKILL after the grace). Returns
// { code, signal, early, timedOut }.
export async function stopHttpServer(server, config) {
  const early = server.status !== null;
  if (!early) server.child.kill('SIGTERM');
  const st = await Promise.race([server.exited, sleep(config.exitGraceMs).then(() => null)]);
  if (st) return { ...st, early, timedOut: false };
  try { server.child.kill('SIGKILL'); } catch { /* gone */ }
  const last = await Promise.race([server.exited, sleep(5000).then(() => null)]);
  return { ...(last ?? { code: null, signal: null }), early, timedOut: true };
}

// Reports whether the server ran until SIGTERM and then exited with 0.
export function checkHttpExit(tag, st, config) {
  if (st.early) {
    fail(`${tag}: server runs until SIGTERM`, `exited early with ${show({ code: st.code, signal: st.signal })}`);
  } else if (st.timedOut) {
    fail(`${tag}: server exits on SIGTERM`, `still running ${config.exitGraceMs} ms after SIGTERM`);
  } else if (st.code !== 0 || st.signal !== null) {
    const why = st.signal ? `killed by ${st.signal}`
      : st.code === 99 && config.slow ? 'exit status 99: the launcher (valgrind) reported errors'
        : `exit status ${st.code}`;
    fail(`${tag}: server exit status after SIGTERM`, why);
  } else {
    pass(`${tag}: server exited with status 0 on SIGTERM`);
  }
}

// The JSON-RPC messages of a fetch Response: its JSON body, or the data of
// each event of its event stream. Returns { status, headers, messages, text }.
export async function readMessages(res) {
  const text = await res.text();
  const type = (res.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  const messages = [];
  if (type === 'text/event-stream') {
    for (const block of text.split(/\r?\n\r?\n/)) {
      const data = block.split(/\r?\n/).filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, '')).join('\n');
      if (data) messages.push(JSON.parse(data));
    }
  } else if (text) {
    messages.push(JSON.parse(text));
  }
  return { status: res.status, headers: res.headers, messages, text, type };
}
