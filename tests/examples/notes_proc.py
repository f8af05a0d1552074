"""What the notes process tests share (replicas_smoke.py, db_smoke.py,
redis_smoke.py, notes_subscribe.py): checks counted as they pass or fail, a
notes process started with `--http 127.0.0.1:0` (behind MCP_TEST_LAUNCHER,
when set) and its URL read from its listening line, JSON POSTs to it in
either era, and a redis-server of the test's own, ready once it answers.
"""
import json
import os
import re
import shlex
import signal
import socket
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


def free_port():
    """A loopback TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_answers(sock, password=None):
    """Whether the Redis on the unix socket sock answers PING (after AUTH
    with password, when given)."""
    hello = (f"AUTH {password}\r\n" if password else "") + "PING\r\n"
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(2)
            s.connect(sock)
            s.sendall(hello.encode())
            got = b""
            while b"+PONG" not in got and len(got) < 1024:
                chunk = s.recv(1024)
                if not chunk:
                    break
                got += chunk
            return b"+PONG" in got
    except OSError:
        return False


def start_redis(redis_server, tmp, port, password=None, aof=False):
    """Starts redis-server in tmp on the loopback port and tmp/redis.sock
    (with password and an append-only file synced on every write, when
    asked); returns it once it answers PING there (its socket file appears
    before it listens), within the wait a slow run allows."""
    sock = os.path.join(tmp, "redis.sock")
    args = [redis_server, "--port", str(port), "--bind", "127.0.0.1",
            "--unixsocket", sock, "--unixsocketperm", "700", "--save", "",
            "--dir", tmp, "--logfile", os.path.join(tmp, "redis.log")]
    args += ["--requirepass", password] if password else []
    args += (["--appendonly", "yes", "--appendfsync", "always"] if aof
             else ["--appendonly", "no"])
    p = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + (60 if SLOW else 15)
    while time.time() < deadline and p.poll() is None:
        if redis_answers(sock, password):
            return p
        time.sleep(0.05)
    p.kill()
    p.wait()
    with open(os.path.join(tmp, "redis.log")) as f:
        raise SystemExit("FAIL: redis-server did not answer PING:\n" + f.read())


def stop(p, wait=TIMEOUT):
    """Ends p with SIGTERM (SIGKILL after wait seconds)."""
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
