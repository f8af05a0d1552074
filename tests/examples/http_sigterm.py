#!/usr/bin/env python3
"""I5 over HTTP: everything serving HTTP is stopped with SIGTERM while a
2025-11-25 task (slow_compute, an hour of work done on a thread of the
example) is still working. The stop must cancel the task, so that its
thread ends early, rather than wait for the work: the example exits 0 by
itself, long before the hour is up. The time the exit took is printed,
never asserted (the bound is a hang guard, generous enough for
valgrind). MCP_TEST_LAUNCHER (e.g. valgrind ...) prefixes the server, so
its exit status also carries memory errors.

    http_sigterm.py PATH-TO-everything
"""
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.request

HANG_GUARD_S = 120


def fail(msg, err=""):
    print("FAIL: " + msg + ("\n--- stderr:\n" + err if err else ""),
          file=sys.stderr)
    sys.exit(1)


def post(url, body, headers):
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 method="POST")
    req.add_header("Content-Type", "application/json")
    req.add_header("Accept", "application/json, text/event-stream")
    for k, v in headers.items():
        req.add_header(k, v)
    with urllib.request.urlopen(req, timeout=HANG_GUARD_S) as res:
        return res.headers, json.loads(res.read())


def main():
    binary = sys.argv[1]
    launcher = shlex.split(os.environ.get("MCP_TEST_LAUNCHER", ""))
    p = subprocess.Popen(launcher + [binary, "--http", "127.0.0.1:0"],
                         stdin=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    try:
        deadline = time.time() + HANG_GUARD_S
        url = None
        while time.time() < deadline and url is None:
            line = p.stderr.readline()
            m = re.search(r"listening on (http://\S+)", line)
            url = m.group(1) if m else None
            if not line and p.poll() is not None:
                break
        if url is None:
            fail("everything did not say where it listens")
        headers, _ = post(url, {
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25",
                       "capabilities": {"tasks": {}},
                       "clientInfo": {"name": "http-sigterm", "version": "1"}}},
            {})
        session = {"Mcp-Session-Id": headers["Mcp-Session-Id"],
                   "MCP-Protocol-Version": "2025-11-25"}
        req = urllib.request.Request(url, method="POST", data=json.dumps(
            {"jsonrpc": "2.0", "method": "notifications/initialized"}).encode())
        req.add_header("Content-Type", "application/json")
        req.add_header("Accept", "application/json, text/event-stream")
        for k, v in session.items():
            req.add_header(k, v)
        urllib.request.urlopen(req, timeout=HANG_GUARD_S).read()
        _, reply = post(url, {
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "slow_compute",
                       "arguments": {"seconds": 3600, "label": "an hour"},
                       "task": {"ttl": 7200000}}}, session)
        status = reply.get("result", {}).get("task", {}).get("status")
        if status != "working":
            fail(f"the task is not working: {reply}")
        start = time.monotonic()
        p.send_signal(signal.SIGTERM)
        try:
            rc = p.wait(timeout=HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            fail(f"still running {HANG_GUARD_S} s after SIGTERM: the task's "
                 "work was waited for, not cancelled", p.stderr.read())
        took = time.monotonic() - start
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    err = p.stderr.read()
    p.stderr.close()
    if rc != 0:
        fail(f"exit status {rc} after SIGTERM", err)
    print(f"PASS: everything --http: SIGTERM with a task working: exit 0 "
          f"after {took * 1000:.0f} ms (not asserted)")


if __name__ == "__main__":
    main()
