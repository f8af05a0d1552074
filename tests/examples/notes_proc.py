"""What the notes process tests share (replicas_smoke.py, db_smoke.py):
checks counted as they pass or fail, a notes process started with
`--http 127.0.0.1:0` (behind MCP_TEST_LAUNCHER, when set) and its URL read
from its listening line, and JSON POSTs to it in either era.
"""
import json
import os
import re
import shlex
import subprocess
import time
import urllib.error
import urllib.request

LAUNCHER = shlex.split(os.environ.get("MCP_TEST_LAUNCHER", ""))
SLOW = bool(LAUNCHER)
TIMEOUT = 60 if SLOW else 10
MODERN = "2026-07-28"
failures = 0


def check(what, ok, detail=""):
    """Prints PASS or FAIL for what; counts the failures."""
    global failures
    print(("PASS: " if ok else "FAIL: ") + what + ("" if ok else f" -- {detail}"))
    failures += 0 if ok else 1


def start(notes, args):
    """Starts notes --http 127.0.0.1:0 with args; returns (process, url)."""
    p = subprocess.Popen(LAUNCHER + [notes, "--http", "127.0.0.1:0"] + args,
                         stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + (60 if SLOW else 10)
    line = ""
    while time.time() < deadline:
        line = p.stderr.readline()
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            return p, m.group(1)
        if not line and p.poll() is not None:
            break
    p.kill()
    raise SystemExit(f"FAIL: notes {' '.join(args)} did not start: {line!r}")


def post(url, body, headers=None):
    """POSTs body (JSON); returns (status, headers, parsed body or None)."""
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    req.add_header("Content-Type", "application/json")
    req.add_header("Accept", "application/json, text/event-stream")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as res:
            return res.status, res.headers, json.loads(res.read())
    except urllib.error.HTTPError as e:
        return e.code, e.headers, None


def modern_call(url, rid, name, args, caps=None, extra=None):
    """A 2026-07-28 tools/call; returns its parsed reply."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": caps or {}}
    params = {"name": name, "arguments": args, "_meta": meta}
    params.update(extra or {})
    _, _, body = post(url, {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                            "params": params},
                      {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call",
                       "Mcp-Name": name})
    return body
