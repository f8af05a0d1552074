#!/usr/bin/env python3
"""Socket activation, as systemd does it: systemd-socket-activate (from
Debian's systemd package) listens on a loopback port and starts
`EXAMPLE --http systemd` on the first connection, passing the socket by
the LISTEN_FDS protocol. The example must print its listening line for
that address and answer a 2026-07-28 tools/list and a legacy session's
initialize on the inherited socket; then SIGTERM ends both. Without
systemd's variables, --http systemd is refused with a clear message.

usage: systemd_smoke.py NAME PATH   (MCP_TEST_LAUNCHER, when set, is put
in front of the example, as for the other example tests)
"""
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request

name, path = sys.argv[1], sys.argv[2]
launcher = shlex.split(os.environ.get("MCP_TEST_LAUNCHER", ""))
slow = bool(launcher)
failures = 0


def check(what, ok, detail=""):
    global failures
    print(("PASS: " if ok else "FAIL: ") + what + ("" if ok else f" -- {detail}"))
    failures += 0 if ok else 1


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def post(url, body, headers):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    req.add_header("Content-Type", "application/json")
    req.add_header("Accept", "application/json, text/event-stream")
    for k, v in headers.items():
        req.add_header(k, v)
    with urllib.request.urlopen(req, timeout=60 if slow else 10) as res:
        return res.status, res.headers, json.loads(res.read())


# Without systemd's variables: refused, exit status 1, saying why.
env = {k: v for k, v in os.environ.items() if not k.startswith("LISTEN_")}
st = subprocess.run(launcher + [path, "--http", "systemd"], env=env, capture_output=True,
                    text=True, timeout=120, stdin=subprocess.DEVNULL)
check("--http systemd without a socket is refused", st.returncode == 1 and
      "LISTEN_FDS is not set" in st.stderr, f"{st.returncode} {st.stderr!r}")

port = free_port()
act = subprocess.Popen(["systemd-socket-activate", "-l", f"127.0.0.1:{port}"] + launcher +
                       [path, "--http", "systemd"], stdin=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, env=env)
# systemd-socket-activate listens at once; wait for its port.
deadline = time.time() + 10
while time.time() < deadline:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        break
    except OSError:
        time.sleep(0.05)
url = f"http://127.0.0.1:{port}/mcp"
modern = "2026-07-28"
try:
    status, _, body = post(url, {
        "jsonrpc": "2.0", "id": 1, "method": "tools/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": modern,
                             "io.modelcontextprotocol/clientCapabilities": {}}}},
        {"MCP-Protocol-Version": modern, "Mcp-Method": "tools/list"})
    check("tools/list on the inherited socket", status == 200 and body["result"]["tools"],
          f"{status} {body}")
    status, headers, body = post(url, {
        "jsonrpc": "2.0", "id": 2, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "systemd-smoke", "version": "1"}}}, {})
    check("a legacy session on the inherited socket",
          status == 200 and headers.get("Mcp-Session-Id"), f"{status} {dict(headers)}")
except Exception as e:  # noqa: BLE001 - any failure is the test's
    check("requests on the inherited socket", False, repr(e))

act.send_signal(signal.SIGTERM)
try:
    _, err = act.communicate(timeout=60 if slow else 15)
except subprocess.TimeoutExpired:
    act.kill()
    _, err = act.communicate()
check(f"{name} prints its listening line for the inherited socket",
      f"listening on http://127.0.0.1:{port}/mcp" in err, err)
check(f"{name} exits 0 on SIGTERM", act.returncode == 0, f"{act.returncode} {err}")
print(f"{'FAIL' if failures else 'PASS'}: {name} under socket activation")
sys.exit(1 if failures else 0)
