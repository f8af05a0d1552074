#!/usr/bin/env python3
"""notes --guard and everything --guard, started as a user would and driven
over stdio: the tools still do their work, each ran on the guard's threads
under its hints' rules (the audit lines on stderr say which), and a
read-only tool that tries to write is refused by the kernel. notes'
manage_note runs each call under the hints its resolver gives it: a read
under the read-only rules, an append additive, a delete closed-world only.

    guard_smoke.py notes|everything PATH-TO-EXAMPLE
    guard_smoke.py absent notes|everything PATH-TO-EXAMPLE

The second form is for a build without the guard: --guard must be refused
(exit 2) with a sentence saying it was not built.

MCP_TEST_LAUNCHER (e.g. valgrind ...) prefixes the server. valgrind
implements no Landlock system call, so under a launcher a kernel that seems
to have no Landlock is accepted (the guard says so at start, and the write
then goes through); without one it fails the test.

The input stays open until every reply is in: at the end of its input a
stdio server stops, cancelling what still waits on the guard's threads.
"""
import json
import os
import re
import select
import shlex
import subprocess
import sys
import tempfile
import time

# A hang guard only, generous enough for valgrind.
HANG_GUARD_S = 120

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "guard-smoke", "version": "1"}}}
READY = {"jsonrpc": "2.0", "method": "notifications/initialized"}
NO_LANDLOCK = "filesystem rules need Landlock"


def call(rid, name, arguments=None):
    params = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": params}


class Failure(Exception):
    pass


class Server:
    """The example as a child process whose input stays open."""

    def __init__(self, which, argv, cwd, env):
        self.which = which
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env,
                                     stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.err)
        self.pending = b""

    def stderr(self):
        self.err.seek(0)
        return self.err.read().decode(errors="replace")

    def send(self, msg):
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def reply(self, rid):
        """Reads lines until the reply to rid; returns it."""
        deadline = time.monotonic() + HANG_GUARD_S
        while True:
            while b"\n" in self.pending:
                line, self.pending = self.pending.split(b"\n", 1)
                msg = json.loads(line)
                if msg.get("id") == rid and "method" not in msg:
                    return msg
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failure("no reply to request %d" % rid)
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    raise Failure("output ended before the reply to %d" % rid)
                self.pending += chunk

    def ask(self, msg):
        self.send(msg)
        return self.reply(msg["id"])

    def close(self):
        """Ends the input; the server must exit 0."""
        self.proc.stdin.close()
        try:
            rc = self.proc.wait(timeout=HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise Failure("did not exit at the end of its input")
        if rc != 0:
            raise Failure("exited %d" % rc)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def result(reply, rid):
    if "result" not in reply:
        raise Failure("request %d failed: %s" % (rid, json.dumps(reply)))
    return reply["result"]


def text_of(res):
    return "\n".join(c.get("text", "") for c in res.get("content", []))


def expect_ran_under(log, tool, where):
    """The audit line of tool names where; under best effort the guard adds
    " (best effort)"."""
    rx = re.compile(r'audit: %s ran under "%s( \(best effort\))?"' % (
        re.escape(tool), re.escape(where)))
    if not rx.search(log):
        raise Failure('no audit line "%s ran under %s"' % (tool, where))


def landlock_seen(log, launcher):
    """Whether the guard found Landlock; without it only a launcher (which
    may hide it) is excused."""
    if "libmcp: guard:" not in log:
        raise Failure("the guard said nothing at start")
    if NO_LANDLOCK not in log:
        return True
    if not launcher:
        raise Failure("this kernel shows no Landlock; the guard cannot keep "
                      "read-only tools from writing")
    print("note: under %s the guard sees no Landlock; the refusal is not "
          "checked" % launcher[0])
    return False


def notes(binary, launcher, tmp):
    # A relative --data: the guard is given its folder's absolute path.
    data = os.path.join(tmp, "notes.json")
    srv = Server("notes", launcher + [binary, "--stdio", "--guard", "--data",
                                      "notes.json"], tmp, dict(os.environ))
    try:
        result(srv.ask(INIT), 1)
        srv.send(READY)
        res = result(srv.ask(call(2, "add_note", {"title": "t",
                                                  "text": "kept"})), 2)
        if res.get("structuredContent") != {"id": "n1"}:
            raise Failure("add_note answered %s" % json.dumps(res))
        res = result(srv.ask(call(3, "add_note", {"title": "u",
                                                  "text": "gone"})), 3)
        if res.get("structuredContent") != {"id": "n2"}:
            raise Failure("add_note answered %s" % json.dumps(res))
        res = result(srv.ask(call(4, "list_notes")), 4)
        ids = [n["id"] for n in res.get("structuredContent", {}).get(
            "notes", [])]
        if ids != ["n1", "n2"]:
            raise Failure("list_notes answered %s" % json.dumps(res))
        res = result(srv.ask(call(5, "get_note", {"id": "n1"})), 5)
        if "kept" not in text_of(res) or res.get("isError"):
            raise Failure("get_note answered %s" % json.dumps(res))
        # The client cannot confirm (no elicitation): delete_note goes ahead.
        res = result(srv.ask(call(6, "delete_note", {"id": "n2"})), 6)
        if text_of(res) != "Deleted.":
            raise Failure("delete_note answered %s" % json.dumps(res))
        # manage_note: each call under the hints its resolver gives it.
        res = result(srv.ask(call(7, "manage_note", {
            "action": "append", "id": "n1", "text": "more"})), 7)
        if text_of(res) != "Appended.":
            raise Failure("manage_note append answered %s" % json.dumps(res))
        res = result(srv.ask(call(8, "manage_note", {"action": "read",
                                                     "id": "n1"})), 8)
        if "kept\nmore" not in text_of(res) or res.get("isError"):
            raise Failure("manage_note read answered %s" % json.dumps(res))
        res = result(srv.ask(call(9, "add_note", {"title": "v",
                                                  "text": "gone too"})), 9)
        if res.get("structuredContent") != {"id": "n3"}:
            raise Failure("add_note answered %s" % json.dumps(res))
        res = result(srv.ask(call(10, "manage_note", {"action": "delete",
                                                      "id": "n3"})), 10)
        if text_of(res) != "Deleted.":
            raise Failure("manage_note delete answered %s" % json.dumps(res))
        srv.close()
    except Failure as e:
        srv.kill()
        raise Failure("%s\n--- stderr:\n%s" % (e, srv.stderr()))
    log = srv.stderr()
    landlock_seen(log, launcher)
    expect_ran_under(log, "add_note", "guard: additive, closed-world")
    expect_ran_under(log, "delete_note", "guard: closed-world")
    for tool in ("list_notes", "get_note"):
        expect_ran_under(log, tool, "guard: read-only, closed-world")
    # One tool, three rule sets: a read is held to the read-only rules.
    for where in ("guard: read-only, closed-world",
                  "guard: additive, closed-world", "guard: closed-world"):
        expect_ran_under(log, "manage_note", where)
    # The write tools wrote the file, by rename, and left nothing behind.
    with open(data) as f:
        saved = json.load(f)
    if [(n["id"], n["text"]) for n in saved["notes"]] != [("n1",
                                                             "kept\nmore")]:
        raise Failure("%s holds %s" % (data, json.dumps(saved)))
    left = sorted(n for n in os.listdir(tmp) if n != "notes.json")
    if left:
        raise Failure("notes left %s behind" % left)

    # A folder that is not there is refused before serving.
    p = subprocess.run(launcher + [binary, "--guard", "--data",
                                   os.path.join(tmp, "none", "notes.json")],
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=HANG_GUARD_S)
    if p.returncode == 0 or b"--guard" not in p.stderr:
        raise Failure("--guard with a missing folder: exit %d, %s" % (
            p.returncode, p.stderr.decode(errors="replace")))


def everything(binary, launcher, tmp):
    env = dict(os.environ, TMPDIR=tmp)
    probe = os.path.join(tmp, "everything-try-write")
    srv = Server("everything", launcher + [binary, "--guard"], tmp, env)
    try:
        result(srv.ask(INIT), 1)
        srv.send(READY)
        res = result(srv.ask({"jsonrpc": "2.0", "id": 2,
                              "method": "tools/list"}), 2)
        tool = [t for t in res["tools"] if t["name"] == "try_write"]
        if not tool or tool[0].get("annotations", {}).get(
                "readOnlyHint") is not True:
            raise Failure("no read-only try_write in tools/list")
        write = result(srv.ask(call(3, "try_write")), 3)
        res = result(srv.ask(call(4, "test_simple_text")), 4)
        if "simple text response" not in text_of(res):
            raise Failure("test_simple_text answered %s" % json.dumps(res))
        res = result(srv.ask(call(5, "test_trigger_tool_change")), 5)
        if text_of(res) != "Added test_dynamic_tool.":
            raise Failure("test_trigger_tool_change answered %s" %
                          json.dumps(res))
        srv.close()
    except Failure as e:
        srv.kill()
        raise Failure("%s\n--- stderr:\n%s" % (e, srv.stderr()))
    log = srv.stderr()
    if landlock_seen(log, launcher):
        said = text_of(write)
        if not write.get("isError") or "Permission denied (EACCES)" not in said:
            raise Failure("try_write was not refused: %s\n--- stderr:\n%s" % (
                json.dumps(write), log))
        if os.path.exists(probe):
            raise Failure("try_write created %s" % probe)
    expect_ran_under(log, "try_write", "guard: read-only, closed-world")
    expect_ran_under(log, "test_simple_text", "guard: read-only, closed-world")
    expect_ran_under(log, "test_trigger_tool_change",
                     "guard: additive, closed-world")


def absent(which, binary):
    p = subprocess.run([binary, "--guard"], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=HANG_GUARD_S)
    err = p.stderr.decode(errors="replace")
    if p.returncode != 2 or "not built" not in err:
        raise Failure("--guard without the guard: exit %d, %s" % (
            p.returncode, err))


def main():
    args = sys.argv[1:]
    launcher = shlex.split(os.environ.get("MCP_TEST_LAUNCHER", ""))
    try:
        if len(args) == 3 and args[0] == "absent":
            which = args[1]
            absent(which, args[2])
        elif len(args) == 2 and args[0] in ("notes", "everything"):
            which = args[0]
            with tempfile.TemporaryDirectory() as tmp:
                (notes if which == "notes" else everything)(args[1], launcher,
                                                             tmp)
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except Failure as e:
        print("FAIL: %s --guard: %s" % (which, e), file=sys.stderr)
        return 1
    print("PASS: %s --guard" % which)
    return 0


if __name__ == "__main__":
    sys.exit(main())
