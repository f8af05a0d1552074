#!/usr/bin/env python3
"""I5 on stdio: an example serving stdio is stopped with SIGTERM while its
client still holds its input open, as a client's shutdown sequence does
after it has its answers. The example must exit 0 by itself, with the
replies it made on its output and nothing after them cut short; notes must
have saved what it acknowledged. MCP_TEST_LAUNCHER (e.g. valgrind ...)
prefixes the server, so its exit status also carries memory errors.

    stdio_sigterm.py hello|notes|everything PATH-TO-EXAMPLE
"""
import json
import os
import select
import shlex
import signal
import subprocess
import sys
import tempfile
import time

# A hang guard only, generous enough for valgrind: the test asserts no
# timing beyond "exits by itself".
HANG_GUARD_S = 120

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "sigterm", "version": "1"}}}
READY = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(rid, name, arguments):
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}


def fail(which, msg, err_path=None):
    print("FAIL: %s: %s" % (which, msg), file=sys.stderr)
    if err_path:
        with open(err_path, errors="replace") as f:
            sys.stderr.write("--- stderr:\n" + f.read())
    sys.exit(1)


def read_until_reply(proc, rid, which, err_path):
    """Reads whole lines from proc's stdout until the reply to rid."""
    deadline = time.monotonic() + HANG_GUARD_S
    pending = b""
    lines = []
    while True:
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            msg = json.loads(line)
            lines.append(msg)
            if msg.get("id") == rid and "method" not in msg:
                return lines, pending
        left = deadline - time.monotonic()
        if left <= 0:
            fail(which, "no reply to request %d" % rid, err_path)
        ready, _, _ = select.select([proc.stdout], [], [], left)
        if ready:
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                fail(which, "output ended before the reply to %d" % rid,
                     err_path)
            pending += chunk


def main():
    which, binary = sys.argv[1], sys.argv[2]
    launcher = shlex.split(os.environ.get("MCP_TEST_LAUNCHER", ""))
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "notes.json")
        args, requests = [], [INIT, READY]
        if which == "hello":
            requests.append(call(2, "greet", {"name": "Ada"}))
        elif which == "notes":
            args = ["--stdio", "--data", data]
            requests.append(call(2, "add_note", {"title": "t", "text": "kept"}))
        elif which == "everything":
            args = ["--stdio"]
            requests.append(call(2, "test_simple_text", {}))
        else:
            fail(which, "unknown example")
        err_path = os.path.join(tmp, "stderr")
        with open(err_path, "wb") as err:
            proc = subprocess.Popen(launcher + [binary] + args,
                                    stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=err)
        try:
            proc.stdin.write(b"".join(json.dumps(r).encode() + b"\n"
                                      for r in requests))
            proc.stdin.flush()
            lines, pending = read_until_reply(proc, 2, which, err_path)
            if "result" not in lines[-1] or lines[-1]["result"].get("isError"):
                fail(which, "request 2 failed: %s" % lines[-1], err_path)
            if which == "everything":
                # A deferred call still running when the signal comes: it
                # sees the cancellation, and main waits for its thread.
                proc.stdin.write(json.dumps(call(3, "test_tool_with_logging",
                                                 {})).encode() + b"\n")
                proc.stdin.flush()
            proc.send_signal(signal.SIGTERM)
            # Input stays open until the process has ended: only the signal
            # can end it.
            try:
                rc = proc.wait(timeout=HANG_GUARD_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                fail(which, "still running %d s after SIGTERM" % HANG_GUARD_S,
                     err_path)
            rest = pending + proc.stdout.read()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdin.close()
            proc.stdout.close()
        if rc != 0:
            fail(which, "exit status %d after SIGTERM" % rc, err_path)
        # Whatever came after the reply is whole JSON lines.
        if rest and not rest.endswith(b"\n"):
            fail(which, "output cut short: %r" % rest[-80:], err_path)
        for line in rest.splitlines():
            json.loads(line)
        if which == "notes":
            with open(data) as f:
                saved = json.load(f)
            if "kept" not in json.dumps(saved):
                fail(which, "the acknowledged note was not saved: %s" % saved)
    print("%s: SIGTERM on stdio: exit 0, replies written" % which)


if __name__ == "__main__":
    main()
