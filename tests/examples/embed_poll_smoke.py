#!/usr/bin/env python3
"""Smoke test of examples/embed_poll: its own poll() loop serves MCP over
HTTP on loopback, its admin socket adds a tool at run time, and "quit" ends
it with status 0. MCP_TEST_LAUNCHER (e.g. valgrind ...) prefixes the daemon.

    embed_poll_smoke.py PATH-TO-embed_poll
"""
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
import four_hints  # noqa: E402

DEADLINE = time.monotonic() + 120


def fail(msg):
    print("FAIL: embed_poll: " + msg, file=sys.stderr)
    sys.exit(1)


def post(url, body, session=None):
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-11-25"}
    if session:
        headers["Mcp-Session-Id"] = session
    req = urllib.request.Request(url, json.dumps(body).encode(), headers)
    with urllib.request.urlopen(req, timeout=60) as r:
        text = r.read().decode()
        sid = r.headers.get("Mcp-Session-Id")
        if r.headers.get("Content-Type", "").startswith("text/event-stream"):
            datas = [l[5:].strip() for l in text.splitlines()
                     if l.startswith("data:") and l[5:].strip()]
            text = datas[-1]
        return json.loads(text), sid


def admin(path, command):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(30)
        s.connect(path)
        s.sendall((command + "\n").encode())
        return s.recv(256).decode().strip()


def main():
    tmp = tempfile.mkdtemp()
    sock = os.path.join(tmp, "admin.sock")
    cmd = shlex.split(os.environ.get("MCP_TEST_LAUNCHER", "")) + [
        sys.argv[1], "--http", "127.0.0.1:0", "--admin", sock]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    url = None
    while url is None and time.monotonic() < DEADLINE:
        line = proc.stderr.readline()
        if not line:
            fail("exited before listening")
        m = re.search(r"listening on (http://127\.0\.0\.1:\d+/mcp)", line)
        if m:
            url = m.group(1)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "smoke", "version": "1"}}}
    reply, sid = post(url, init)
    if not sid or reply.get("result", {}).get("protocolVersion") != "2025-11-25":
        fail("initialize: %r" % (reply,))
    reply, _ = post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                          "params": {"name": "ticks"}}, sid)
    if "result" not in reply or reply["result"].get("isError"):
        fail("ticks: %r" % (reply,))
    if admin(sock, "add") != "ok":
        fail("admin add refused")
    reply, _ = post(url, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
                    sid)
    names = [t["name"] for t in reply["result"]["tools"]]
    if "greet" not in names:
        fail("greet not listed after add: %r" % names)
    for problem in four_hints.problems(reply["result"]["tools"], "embed_poll"):
        fail(problem)
    if admin(sock, "quit") != "ok":
        fail("admin quit refused")
    try:
        rc = proc.wait(timeout=max(1, DEADLINE - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        fail("did not stop after quit")
    rest = proc.stderr.read()
    if rc != 0:
        fail("exit status %d\n%s" % (rc, rest))
    print("PASS: embed_poll")


if __name__ == "__main__":
    main()
