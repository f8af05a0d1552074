// Interop test of notes' skill with the official TypeScript SDK v2 client
// (@modelcontextprotocol/client, pinned in package-lock.json) and its
// skills extension client (SkillsClient): over stdio and over Streamable
// HTTP in a legacy session, and over HTTP with 2026-07-28 requests. In
// each the client must see the extension declared, list the skill, get it
// by URI and read its SKILL.md with verification: the client checks the
// bytes against the entry's size and SHA-256 and parses the frontmatter
// with its own YAML reader, comparing it field by field with the entry's,
// so libmcp's reading of the frontmatter meets another implementation's.
//
//   node skills_v2.mjs <path-to-notes> [launcher words...]

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { checkHttpExit, startHttpServer, stopHttpServer } from './http_lib.mjs';
import {
  check, fail, finish, parseCommandLine, preflight, serverCommand, show, startWatchdog,
} from './lib.mjs';

const CONFIG = parseCommandLine('skills_v2.mjs');
const URI = 'skill://notes-workflow/SKILL.md';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'libmcp-interop-skills-'));
const watchdog = startWatchdog(CONFIG.totalBudgetMs, () => process.exit(1));
const opts = { timeout: CONFIG.requestTimeoutMs };

// The checks of one connected client.
async function checkSkill(tag, client, wantVersion) {
  check(`${tag}: negotiated ${wantVersion}`, client.getNegotiatedProtocolVersion() === wantVersion,
    client.getNegotiatedProtocolVersion());
  const skills = new SkillsClient(client);
  check(`${tag}: the skills extension is declared`, skills.supported, show(client.getServerCapabilities()));
  const listing = await skills.list({}, opts);
  const entry = listing.skills.find((s) => s.uri === URI);
  check(`${tag}: skills/list lists ${URI}, no entry invalid`,
    entry && listing.invalid.length === 0 && entry.frontmatter.name === 'notes-workflow', show(listing));
  if (!entry) return;
  const got = await skills.get(URI, opts);
  check(`${tag}: skills/get answers the same entry`, JSON.stringify(got.skill) === JSON.stringify(entry),
    show(got));
  const file = await skills.read(entry, undefined, opts);
  check(`${tag}: SKILL.md read and verified (size, SHA-256, frontmatter)`,
    file.verified && file.uri === URI && file.bytes.length === entry.resources[0].size, show(file));
  check(`${tag}: the frontmatter the client parsed is the entry's`,
    JSON.stringify(file.frontmatter) === JSON.stringify(entry.frontmatter), show(file.frontmatter));
  check(`${tag}: the body says to list first and to ask before delete_note`,
    /Call `list_notes` first/.test(file.body ?? '') && /Ask the user before you call it/.test(file.body ?? ''),
    (file.body ?? '').slice(0, 200));
}

async function overStdio() {
  const { command, args } = serverCommand(CONFIG, ['--data', path.join(tmp, 'stdio.json')]);
  const transport = new StdioClientTransport({ command, args, stderr: 'inherit' });
  const client = new Client({ name: 'libmcp-interop-skills', version: '0.0.0' });
  try {
    await client.connect(transport, opts);
    await checkSkill('stdio', client, '2025-11-25');
  } catch (err) {
    fail('stdio', String(err?.stack ?? err));
  } finally {
    await client.close().catch(() => {});
  }
}

async function overHttp() {
  const server = await startHttpServer(CONFIG, 'http', ['--data', path.join(tmp, 'http.json')]);
  for (const [tag, mode, version] of [['http legacy', 'legacy', '2025-11-25'],
    ['http 2026-07-28', { pin: '2026-07-28' }, '2026-07-28']]) {
    const client = new Client({ name: 'libmcp-interop-skills', version: '0.0.0' },
      { versionNegotiation: { mode } });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)), opts);
      await checkSkill(tag, client, version);
    } catch (err) {
      fail(tag, String(err?.stack ?? err));
    } finally {
      await client.close().catch(() => {});
    }
  }
  checkHttpExit('http', await stopHttpServer(server, CONFIG), CONFIG);
}

const problem = preflight(CONFIG);
if (problem) {
  fail('preflight', problem);
} else {
  await overStdio();
  await overHttp();
}
clearTimeout(watchdog);
fs.rmSync(tmp, { recursive: true, force: true });
finish();
