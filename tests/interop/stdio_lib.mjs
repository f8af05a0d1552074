// The SDK's stdio transport with exit-status tracking, for the interop tests
// that drive a server with the official TypeScript SDK Client
// (notes_stdio.mjs, everything_stdio.mjs).
//
// StdioClientTransport.close() gives the server only 2 s between stdin EOF and
// SIGTERM (then SIGKILL), which is not enough for valgrind's leak check, and it
// does not expose the exit status. This subclass closes stdin itself, waits up
// to the exit grace for the process to exit (lib.mjs ExitTracker), records
// (code, signal), and only then lets the SDK's close() clean up. It also
// records every message sent and received.
//
// The child process handle is the SDK's private `_process` field (SDK version
// pinned in package-lock.json); start() fails loudly if it is not there, so a
// change in the SDK can never make the exit-status check pass silently.

import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { ExitTracker, sleep } from './lib.mjs';

export class TrackedStdioTransport extends StdioClientTransport {
  constructor(params, label, exitGraceMs) {
    super(params);
    this.label = label;
    this.exitGraceMs = exitGraceMs;
    this.sent = [];
    this.received = [];
    this.tracker = null;
  }

  async start() {
    await super.start();
    try {
      this.tracker = new ExitTracker(this._process, this.exitGraceMs);
    } catch (err) {
      throw new Error(`StdioClientTransport internals changed: ${err.message}`);
    }
  }

  async send(message) {
    this.sent.push(message);
    return super.send(message);
  }

  // Ends stdin and waits for the process to exit by itself (once).
  async shutdown() {
    await this.tracker?.shutdown();
  }

  async close() {
    await this.shutdown();
    await super.close(); // SIGTERM/SIGKILL only if the process is still there
    if (this.tracker && !this.tracker.exitStatus) {
      await Promise.race([this.tracker.exited, sleep(5000)]);
    }
  }

  kill() {
    this.tracker?.kill();
  }
}
