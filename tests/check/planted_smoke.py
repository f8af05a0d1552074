#!/usr/bin/env python3
"""The planted server (planted.c) does what its hints deny, and only that:
stamp writes, add_entry removes a file that existed, lookup connects to the
loopback port it is given, append_log appends again on a second identical
call, purge runs with a read-only principal while the writing tools are
refused on scope, read_note only reads, and memo, the resolvable tool,
does what each action says but for "peek", which its resolver calls
read-only and which writes memo-seen.txt. Its tools/list says exactly the
hints planted.c documents, and tools/resolve memo's per action. Over stdio, and over HTTP when built with it.
MCP_TEST_LAUNCHER (e.g. valgrind ...) prefixes the server.

    planted_smoke.py PATH-TO-mcpc_planted
"""
import base64
import json
import os
import re
import select
import shlex
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

# A hang guard only, generous enough for valgrind.
HANG_GUARD_S = 120

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "planted-smoke", "version": "1"}}}
READY = {"jsonrpc": "2.0", "method": "notifications/initialized"}

HINTS = {
    "stamp": {"readOnlyHint": True, "destructiveHint": False,
             "idempotentHint": True, "openWorldHint": False},
    "add_entry": {"readOnlyHint": False, "destructiveHint": False,
                  "idempotentHint": False, "openWorldHint": False},
    "lookup": {"readOnlyHint": True, "destructiveHint": False,
              "idempotentHint": True, "openWorldHint": False},
    "append_log": {"readOnlyHint": False, "destructiveHint": False,
                   "idempotentHint": True, "openWorldHint": False},
    "purge": {"readOnlyHint": False, "destructiveHint": True,
              "idempotentHint": True, "openWorldHint": False},
    "read_note": {"readOnlyHint": True, "destructiveHint": False,
                 "idempotentHint": True, "openWorldHint": False},
    "memo": {"readOnlyHint": False, "destructiveHint": True,
             "idempotentHint": False, "openWorldHint": False},
}
RESOLUTION = "io.modelcontextprotocol/tool-resolution"
READ_ONLY = HINTS["read_note"]
# What memo's resolver answers per action.
MEMO = {"read": READ_ONLY, "peek": READ_ONLY,
        "append": {"readOnlyHint": False, "destructiveHint": False,
                   "idempotentHint": False, "openWorldHint": False},
        "clear": {"readOnlyHint": False, "destructiveHint": True,
                  "idempotentHint": True, "openWorldHint": False}}

bin_path = sys.argv[1]
launcher = shlex.split(os.environ.get("MCP_TEST_LAUNCHER", ""))


def fail(msg):
    print("FAIL: planted: " + msg, file=sys.stderr)
    sys.exit(1)


def call(rid, name, arguments=None):
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": name, "arguments": arguments or {}}}


def stdio(args, requests):
    """Runs the server over stdio with requests; returns replies by id."""
    text = "".join(json.dumps(m) + "\n" for m in requests)
    p = subprocess.run(launcher + [bin_path] + args, input=text,
                       capture_output=True, text=True, timeout=HANG_GUARD_S)
    if p.returncode != 0:
        fail("exit %d: %s" % (p.returncode, p.stderr))
    return {m["id"]: m for m in map(json.loads, p.stdout.splitlines())
            if "id" in m}


def text_of(reply):
    if "result" not in reply or reply["result"].get("isError"):
        fail("call failed: %s" % json.dumps(reply))
    return reply["result"]["content"][0]["text"]


def refused_on_scope(reply):
    return reply.get("error", {}).get("code") == -31403


def read(d, name):
    with open(os.path.join(d, name)) as f:
        return f.read()


def listener():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    s.listen(4)
    return s


def connected(s):
    ready, _, _ = select.select([s], [], [], HANG_GUARD_S)
    if not ready:
        return False
    s.accept()[0].close()
    return True


def every_tool(d):
    """All scopes: each tool does what planted.c says."""
    lst = listener()
    port = str(lst.getsockname()[1])
    r = stdio(["--dir", d, "--port", port,
               "--scopes", "planted:read planted:write"],
              [INIT, READY, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
               call(3, "stamp"), call(4, "add_entry"), call(5, "lookup"),
               call(6, "append_log", {"line": "x"}),
               call(7, "append_log", {"line": "x"}),
               call(8, "purge"), call(9, "read_note")])
    tools = {t["name"]: t for t in r[2]["result"]["tools"]}
    if sorted(tools) != sorted(HINTS):
        fail("tools %s" % sorted(tools))
    for name, hints in HINTS.items():
        got = tools[name].get("annotations", {})
        if got != hints:
            fail("%s: annotations %s, want %s" % (name, got, hints))
    for rid in range(3, 10):
        text_of(r[rid])
    if "_meta" in tools["memo"]:
        fail("memo marked resolvable for a client that did not declare it")
    if read(d, "stamp.txt") != "stamped\n":
        fail("stamp wrote %r" % read(d, "stamp.txt"))
    if os.path.exists(os.path.join(d, "old.txt")):
        fail("add_entry left old.txt")
    if read(d, "entry-1.txt") != "an entry\n":
        fail("add_entry made no entry")
    if read(d, "log.txt") != "x\nx\n":
        fail("append_log: %r" % read(d, "log.txt"))
    if os.path.exists(os.path.join(d, "trash.txt")):
        fail("purge left trash.txt")
    if text_of(r[9]) != "kept\n":
        fail("read_note: %r" % text_of(r[9]))
    if not connected(lst):
        fail("lookup did not connect")
    lst.close()


def memo_actions(d):
    """A client declaring tool resolution: memo alone is marked resolvable,
    tools/resolve gives each action's hints, and each call does what
    planted.c says (peek writes, which its resolved hints deny)."""
    init = json.loads(json.dumps(INIT))
    init["params"]["capabilities"] = {"extensions": {RESOLUTION: {}}}
    msgs = [init, READY, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    for i, action in enumerate(MEMO):
        msgs.append({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/resolve",
                     "params": {"name": "memo",
                                "arguments": {"action": action}}})
    msgs += [call(20, "memo", {"action": "read"}),
             call(21, "memo", {"action": "peek"}),
             call(22, "memo", {"action": "append", "text": "more"})]
    r = stdio(["--dir", d, "--scopes", "planted:write"], msgs)
    marked = [t["name"] for t in r[2]["result"]["tools"]
              if t.get("_meta", {}).get(RESOLUTION) == {"resolvable": True}]
    if marked != ["memo"]:
        fail("resolvable tools %s, want memo" % marked)
    for i, (action, want) in enumerate(MEMO.items()):
        got = r[10 + i].get("result", {}).get("annotations")
        if got != want:
            fail("memo %s resolved %s, want %s" % (action, got, want))
    if not text_of(r[20]).startswith("kept\n"):
        fail("memo read: %r" % text_of(r[20]))
    text_of(r[21])
    if read(d, "memo-seen.txt") != "seen\n":
        fail("memo peek did not write memo-seen.txt")
    text_of(r[22])
    if read(d, "memo.txt") != "kept\nmore\n":
        fail("memo append: %r" % read(d, "memo.txt"))
    r = stdio(["--dir", d], [INIT, READY, call(2, "memo", {"action": "clear"})])
    text_of(r[2])
    if os.path.exists(os.path.join(d, "memo.txt")):
        fail("memo clear left memo.txt")


def read_only_principal(d):
    """planted:read only: the writing tools are refused, purge runs."""
    r = stdio(["--dir", d, "--scopes", "planted:read"],
              [INIT, READY, call(2, "add_entry"),
               call(3, "append_log", {"line": "y"}), call(4, "purge"),
               call(5, "read_note")])
    if not refused_on_scope(r[2]) or not refused_on_scope(r[3]):
        fail("writing tools not refused on scope: %s %s" % (r[2], r[3]))
    text_of(r[4])
    text_of(r[5])
    if os.path.exists(os.path.join(d, "trash.txt")):
        fail("purge did not run for a read-only principal")
    if os.path.exists(os.path.join(d, "log.txt")):
        fail("append_log ran without its scope")


def post(url, msg, session=None, token=None):
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-11-25"}
    if session:
        headers["Mcp-Session-Id"] = session
    if token:
        headers["Authorization"] = "Bearer " + token
    req = urllib.request.Request(url, json.dumps(msg).encode(), headers)
    try:
        with urllib.request.urlopen(req, timeout=HANG_GUARD_S) as resp:
            body = resp.read().decode()
            sid = resp.headers.get("Mcp-Session-Id")
            status = resp.status
    except urllib.error.HTTPError as e:
        return e.code, None, None
    if body.startswith("event:") or body.startswith("data:"):
        data = [l[5:] for l in body.splitlines() if l.startswith("data:")]
        body = data[-1] if data else ""
    return status, sid, json.loads(body) if body.strip() else None


def start_http(d, extra):
    """Starts the server over HTTP on a free loopback port; returns the
    process and its URL."""
    proc = subprocess.Popen(launcher + [bin_path, "--dir", d, "--http",
                                        "127.0.0.1:0"] + extra,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    # Blocking reads: the line comes at once, or the server exits (EOF);
    # ctest's timeout guards a hang.
    for _ in range(200):
        line = proc.stderr.readline()
        if not line:
            break
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            return proc, m.group(1)
    proc.kill()
    fail("http: no 'listening on' line: " + proc.stderr.read())


def stop(proc):
    proc.terminate()
    if proc.wait(timeout=HANG_GUARD_S) != 0:
        fail("http: exit %d: %s" % (proc.returncode, proc.stderr.read()))


def http_read_only(d, extra, token=None):
    """Over HTTP as a caller holding planted:read only: purge runs,
    add_entry is refused on scope."""
    proc, url = start_http(d, extra)
    try:
        _, sid, _ = post(url, INIT, None, token)
        post(url, READY, sid, token)
        _, _, purge = post(url, call(2, "purge"), sid, token)
        text_of(purge)
        status, _, add = post(url, call(3, "add_entry"), sid, token)
        if status != 403 and not (add and refused_on_scope(add)):
            fail("http: add_entry not refused on scope (%s %s)" % (status, add))
        if os.path.exists(os.path.join(d, "trash.txt")):
            fail("http: purge did not run")
        if not os.path.exists(os.path.join(d, "old.txt")):
            fail("http: add_entry ran without its scope")
        return url
    finally:
        stop(proc)


def http(d):
    http_read_only(d, ["--scopes", "planted:read"])


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def http_jwt(d):
    """With --jwks, --issuer and --audience (as examples/notes.c takes
    them): a token's scopes decide; no token is refused with 401."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding, rsa
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pub = key.public_key().public_numbers()
    jwk = {"kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig",
           "n": b64url(pub.n.to_bytes((pub.n.bit_length() + 7) // 8, "big")),
           "e": b64url(pub.e.to_bytes(3, "big"))}
    jwks = os.path.join(d, "jwks.json")
    with open(jwks, "w") as f:
        json.dump({"keys": [jwk]}, f)
    issuer, audience = "https://issuer.example", "https://planted.example/mcp"
    now = int(time.time())
    head = b64url(json.dumps({"alg": "RS256", "typ": "at+jwt",
                              "kid": "k1"}).encode())
    body = b64url(json.dumps({"iss": issuer, "aud": audience, "sub": "reader",
                              "scope": "planted:read", "iat": now,
                              "exp": now + 3600, "jti": "t1"}).encode())
    sig = key.sign(("%s.%s" % (head, body)).encode(), padding.PKCS1v15(),
                   hashes.SHA256())
    token = "%s.%s.%s" % (head, body, b64url(sig))
    extra = ["--jwks", jwks, "--issuer", issuer, "--audience", audience]
    http_read_only(d, extra, token)
    proc, url = start_http(d, extra)
    try:
        status, _, _ = post(url, INIT)
        if status != 401:
            fail("http: no token answered %s, want 401" % status)
    finally:
        stop(proc)


def bad_command_lines(d):
    for args in ([], ["--dir"], ["--dir", d, "--port", "0"],
                 ["--dir", d, "--bogus"]):
        p = subprocess.run([bin_path] + args, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=HANG_GUARD_S)
        if p.returncode != 2 or b"usage:" not in p.stderr:
            fail("%s: exit %d" % (args, p.returncode))


def has_http():
    p = subprocess.run([bin_path, "--dir", "/nonexistent", "--http", "x"],
                       stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=HANG_GUARD_S)
    return b"--http wants" in p.stderr


def main():
    for test in (every_tool, memo_actions, read_only_principal,
                 bad_command_lines):
        with tempfile.TemporaryDirectory() as d:
            test(d)
    if has_http():
        with tempfile.TemporaryDirectory() as d:
            http(d)
        try:
            import cryptography  # noqa: F401 (python3-cryptography)
        except ImportError:
            print("planted: no python3-cryptography; JWT part skipped")
            return
        with tempfile.TemporaryDirectory() as d:
            http_jwt(d)
    else:
        print("planted: built without HTTP; stdio only")


if __name__ == "__main__":
    main()
