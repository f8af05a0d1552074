#!/usr/bin/env python3
"""notes --redis: one Redis shared by notes processes, as on several
machines. A redis-server of the test's own (a unix socket and a loopback
port, a password, database 3, its changes appended and synced so that a
restart keeps them) serves two notes over HTTP, one given the socket's
URL and one the TCP URL: a note added through one is listed, read,
appended to, exported and deleted through the other. A third, over stdio
as another subject with notes:read notes:write, sees the first one's note
and is refused its deletion (-31403, a step-up to notes:admin). Redis
stopped: each note tool answers a tool error saying Redis is
unavailable, and the processes live on; Redis back: they work again and
every note answered before the stop is there. Then the command line:
--redis with --db is a usage error (2), an unreachable Redis at start
ends notes with status 1 and says so, --guard takes a unix:// socket
only. Every wait is bounded; everything
started is stopped. MCP_TEST_LAUNCHER, when set, is put in front of each
notes process.

usage: redis_smoke.py PATH-TO-notes PATH-TO-redis-server
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

from notes_proc import LAUNCHER, SLOW, check, modern_call, start
import notes_proc

notes, redis_server = sys.argv[1], sys.argv[2]
PASSWORD = "s3cret/pw"  # a "/" the URLs carry percent-encoded
DB = 3
WAIT = 60 if SLOW else 15


def start_redis(tmp, port):
    """This test's Redis: a password, and an append-only file, so that a
    restart keeps what was answered."""
    return notes_proc.start_redis(redis_server, tmp, port, PASSWORD, aof=True)


def stop(p):
    notes_proc.stop(p, WAIT)


def result(url, name, args):
    return modern_call(url, 1, name, args)["result"]


def text(r):
    return "\n".join(b.get("text", "") for b in r.get("content", []))


def listed(url):
    r = result(url, "list_notes", {})
    return None if r.get("isError") else {n["id"] for n in r["structuredContent"]["notes"]}


class Stdio:
    """notes --stdio, one 2026-07-28 request per line, answered in order."""

    def __init__(self, args):
        self.p = subprocess.Popen(LAUNCHER + [notes, "--stdio"] + args,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)

    def call(self, name, args):
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}
        self.p.stdin.write(json.dumps({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": args, "_meta": meta}}) + "\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline() or "null")

    def close(self):
        self.p.stdin.close()
        return self.p.wait(timeout=WAIT)


tmp = tempfile.mkdtemp(prefix="libmcp-redis-")
procs = []
try:
    port = notes_proc.free_port()
    redis = start_redis(tmp, port)
    procs.append(redis)
    secret = PASSWORD.replace("/", "%2F")
    unix_url = f"unix://:{secret}@{tmp}/redis.sock?db={DB}"
    tcp_url = f"redis://:{secret}@127.0.0.1:{port}/{DB}"
    a, url_a = start(notes, ["--redis", unix_url,
                             "--scopes", "notes:read notes:write"])
    procs.append(a)
    b, url_b = start(notes, ["--redis", tcp_url])
    procs.append(b)

    r = result(url_a, "add_note", {"title": "shared", "text": "from a"})
    nid = r.get("structuredContent", {}).get("id", "")
    check("add_note through a answers an id n<number>",
          nid.startswith("n") and nid[1:].isdigit(), r)
    check("b lists the note a added", nid in (listed(url_b) or set()))
    r = result(url_b, "get_note", {"id": nid})
    check("b reads it", not r.get("isError") and text(r) == "shared\nfrom a", r)
    r = result(url_b, "manage_note", {"action": "append", "id": nid,
                                      "text": "and b"})
    check("b appends to it", text(r) == "Appended.", r)
    r = result(url_a, "get_note", {"id": nid})
    check("a reads b's append", text(r) == "shared\nfrom a\nand b", r)
    r = result(url_b, "export_notes", {"delay_ms": 0})
    exported = {n["id"]: n for n in r.get("structuredContent", {}).get("notes", [])}
    check("b's export holds it, with its owner (a's subject)",
          exported.get(nid, {}).get("owner") == "http" and
          exported[nid]["text"] == "from a\nand b", r)

    # Another subject, on a third process (stdio: subject "stdio").
    c = Stdio(["--redis", unix_url, "--scopes", "notes:read notes:write"])
    procs.append(c.p)
    mine = result(url_a, "add_note", {"title": "a's", "text": "x"})
    mine = mine["structuredContent"]["id"]
    r = c.call("list_notes", {})
    ids = {n["id"] for n in r["result"]["structuredContent"]["notes"]}
    check("another subject on another process lists a's note", mine in ids, r)
    r = c.call("delete_note", {"id": mine})
    error = (r or {}).get("error", {})
    check("and is refused its deletion: a step-up to notes:admin (-31403)",
          error.get("code") == -31403 and
          error.get("data", {}).get("requiredScopes") == ["notes:admin"], r)
    check("the note stays", mine in (listed(url_b) or set()))
    r = c.call("add_note", {"title": "c's", "text": "y"})
    cid = r["result"]["structuredContent"]["id"]
    r = c.call("delete_note", {"id": cid})
    check("it deletes its own note", text(r["result"]) == "Deleted.", r)

    r = result(url_b, "delete_note", {"id": nid})
    check("b deletes a's first note (b holds every scope)",
          text(r) == "Deleted.", r)
    check("a no longer lists it", nid not in (listed(url_a) or {nid}))

    # Redis stops: tool errors, and nothing else. d, connected, is idle
    # meanwhile.
    d, url_d = start(notes, ["--redis", tcp_url])
    procs.append(d)
    before = listed(url_a)
    check("d lists the notes too", listed(url_d) == before)
    stop(redis)
    for url, name, args in ((url_a, "list_notes", {}),
                            (url_b, "add_note", {"title": "t", "text": "x"}),
                            (url_a, "get_note", {"id": mine}),
                            (url_b, "export_notes", {})):
        r = result(url, name, args)
        check(f"Redis stopped: {name} is a tool error saying Redis is "
              "unavailable, and nothing else", r.get("isError") is True and
              "Redis is unavailable" in text(r) and
              len(r.get("content", [])) == 1 and
              "structuredContent" not in r, r)
    r = c.call("manage_note", {"action": "append", "id": mine, "text": "z"})
    check("Redis stopped: manage_note over stdio too",
          r["result"].get("isError") is True and
          "Redis is unavailable" in text(r["result"]), r)
    check("Redis stopped: every notes process is alive",
          a.poll() is None and b.poll() is None and c.p.poll() is None)

    # Redis back: the same processes work again, nothing answered lost.
    redis = start_redis(tmp, port)
    procs.append(redis)
    after = listed(url_d)
    check("Redis back: d, idle through the restart, answers its first call",
          after is not None, after)
    check("Redis back: every note answered before the stop is there",
          after == before and mine in after, (before, after))
    r = result(url_a, "add_note", {"title": "again", "text": "z"})
    again = r.get("structuredContent", {}).get("id")
    check("Redis back: a adds a note, b sees it",
          again and again in (listed(url_b) or set()), r)
    r = c.call("list_notes", {})
    check("Redis back: the stdio process works again",
          again in {n["id"] for n in r["result"]["structuredContent"]["notes"]}, r)

    check("the stdio process exits 0 at the end of its input", c.close() == 0)
    for p, name in ((a, "a"), (b, "b"), (d, "d")):
        p.send_signal(signal.SIGTERM)
        status = p.wait(timeout=WAIT)
        check(f"{name} exits 0 on SIGTERM", status == 0,
              (status, p.stderr.read()[-3000:]))

    # The command line.
    r = subprocess.run(LAUNCHER + [notes, "--redis", unix_url, "--db",
                                   os.path.join(tmp, "x.db")],
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=WAIT)
    check("--redis with --db is a usage error (2) naming both",
          r.returncode == 2 and "--redis" in r.stderr and "--db" in r.stderr,
          (r.returncode, r.stderr))
    r = subprocess.run(LAUNCHER + [notes, "--redis", f"unix://{tmp}/none.sock"],
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=WAIT)
    check("an unreachable Redis at start: status 1, saying so",
          r.returncode == 1 and "Redis is unavailable" in r.stderr,
          (r.returncode, r.stderr))
    r = subprocess.run(LAUNCHER + [notes, "--redis", "redis://host:99999"],
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=WAIT)
    check("a malformed URL: status 1, saying which forms it takes",
          r.returncode == 1 and "redis://" in r.stderr, (r.returncode, r.stderr))
    r = subprocess.run(LAUNCHER + [notes, "--guard", "--redis", tcp_url],
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=WAIT)
    check("--guard with a redis:// URL is a usage error (2): the guard keeps "
          "closed-world tools off the network (or --guard is not built)",
          r.returncode == 2 and ("unix://" in r.stderr or
                                 "guard was not built" in r.stderr),
          (r.returncode, r.stderr))
finally:
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    shutil.rmtree(tmp, ignore_errors=True)
print(f"{'FAIL' if notes_proc.failures else 'PASS'}: notes --redis")
sys.exit(1 if notes_proc.failures else 0)
