#!/usr/bin/env python3
"""Runs every shell command of the README, the tutorial, the deployment
chapter and the port_daemon walkthrough, the way a reader would, so that
none of them can rot.

    run_commands.py SOURCE-DIR BUILD-DIR [--without FEATURE]...

Each ```sh block follows a marker (snippets.py checks that there is one):

  <!-- sh: run [expect="TEXT"]... -->
      run to completion as a bash script; it must exit 0 and its output
      (stdout and stderr) must contain each TEXT
  <!-- sh: server [ready="REGEX"] -->
      a server the reader leaves running in its own terminal: started in
      the background until its output matches REGEX (default
      "listening on"); stopped like Ctrl-C (SIGINT to its process group)
      before the next server block and at the end of the document, and it
      must then exit 0
  <!-- sh: inspector -->
      an MCP Inspector command line, pinned as examples/demo.sh pins the
      one it prints (npx -y --loglevel=error -p node@X -p
      @modelcontextprotocol/inspector@Y mcp-inspector ..., the same X and
      Y). The Inspector itself is not run (docs.demo_inspector runs
      demo.sh's); what it would connect to is:
      a stdio server command is started and must answer initialize and
      tools/list, and for --server-url the URL is sent an initialize
      request with the command's --header values, which must succeed
  <!-- sh: skip reason="..." -->
      not run here; the reason names what covers it
  <!-- include: ... -->
      a block copied from a file that another test runs

A run, server or inspector marker may say needs="FEATURE" (e.g. "guard",
for --guard): with --without FEATURE, for a build without it, the block is
not run (and said to be skipped).

The commands run in a scratch directory laid out like the source tree:
examples/ is a copy of the source's (so commands may write there) and
build/examples is the build's examples folder. Every "127.0.0.1:8080" and
"localhost:8080", in the commands and in the copied examples/**/*.conf, is
rewritten to a free loopback port, and so is "--port 8080"
(examples/deploy/cluster.sh). Everything is bounded in time.
"""
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import snippets  # noqa: E402  (the document list and block parser)

MARKER = re.compile(r"<!--\s*sh:\s*(\w[\w-]*)(.*?)-->")
ATTR = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')

def pinned_inspector(src):
    """The Inspector command's prefix, with the versions examples/demo.sh
    pins (its inspector= and inspector_node= lines)."""
    with open(os.path.join(src, "examples", "demo.sh")) as f:
        pins = dict(re.findall(r"^(inspector|inspector_node)=(\S+)$",
                               f.read(), re.M))
    return "npx -y --loglevel=error -p %s -p %s mcp-inspector" % (
        pins["inspector_node"], pins["inspector"])


INSPECTOR = pinned_inspector(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
        __file__)))))
TIMEOUT = 120


class Failure(Exception):
    pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bash(script):
    return ["bash", "-c", "set -euo pipefail\n" + script]


class Server:
    def __init__(self, cmd, cwd, ready, where):
        self.where, self.log = where, os.path.join(cwd, ".server.log")
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(bash(cmd), cwd=cwd, stdout=out,
                                         stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL,
                                         start_new_session=True)
        deadline, rx = time.monotonic() + 60, re.compile(ready)
        while not rx.search(self.output()):
            if self.proc.poll() is not None:
                raise Failure("%s: the server exited (%d) before /%s/:\n%s" % (
                    where, self.proc.returncode, ready, self.output()))
            if time.monotonic() > deadline:
                self.kill()
                raise Failure("%s: no /%s/ in 60 s:\n%s" % (
                    where, ready, self.output()))
            time.sleep(0.05)

    def output(self):
        with open(self.log, errors="replace") as f:
            return f.read()

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()

    def stop(self):
        """Ctrl-C: SIGINT to the process group; the server must exit 0."""
        try:
            os.killpg(self.proc.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
        try:
            rc = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
            raise Failure("%s: the server ignored Ctrl-C" % self.where)
        if rc != 0:
            raise Failure("%s: the server exited %d on Ctrl-C:\n%s" % (
                self.where, rc, self.output()))


def run_block(cmd, cwd, expects, where):
    try:
        p = subprocess.run(bash(cmd), cwd=cwd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                           timeout=TIMEOUT, text=True, errors="replace")
    except subprocess.TimeoutExpired:
        raise Failure("%s: did not finish in %d s" % (where, TIMEOUT))
    if p.returncode != 0:
        raise Failure("%s: exit status %d:\n%s" % (where, p.returncode,
                                                     p.stdout))
    for e in expects:
        if e not in p.stdout:
            raise Failure('%s: output lacks "%s":\n%s' % (where, e, p.stdout))


def inspector_words(cmd, cwd, where):
    """The Inspector's arguments after shell expansion, as the shell would
    pass them."""
    if not cmd.startswith(INSPECTOR):
        raise Failure("%s: an inspector block starts with %s" % (
            where, INSPECTOR))
    script = "args=(%s)\nprintf '%%s\\0' \"${args[@]}\"" % cmd[len(INSPECTOR):]
    p = subprocess.run(bash(script), cwd=cwd, stdout=subprocess.PIPE,
                       timeout=TIMEOUT)
    if p.returncode != 0:
        raise Failure("%s: the command line does not expand" % where)
    return [w.decode() for w in p.stdout.split(b"\0")[:-1]]


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "docs", "version": "1"}}}


def inspector_block(cmd, cwd, where):
    words = inspector_words(cmd, cwd, where)
    options, target, i = {}, [], 0
    while i < len(words):
        w = words[i]
        if w in ("--server-url", "--transport", "--header", "-e", "--method"):
            if i + 1 == len(words):
                raise Failure("%s: %s wants a value" % (where, w))
            options.setdefault(w, []).append(words[i + 1])
            i += 2
        elif w == "--":
            i += 1
        else:
            target.append(w)
            i += 1
    if "--server-url" in options:
        if options.get("--transport") != ["http"] or target:
            raise Failure("%s: --server-url wants --transport http and no "
                          "command" % where)
        headers = {"Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream"}
        for h in options.get("--header", []):
            name, _, value = h.partition(":")
            headers[name.strip()] = value.strip()
        req = urllib.request.Request(options["--server-url"][0],
                                     json.dumps(INIT).encode(), headers)
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                body = r.read().decode()
        except (urllib.error.URLError, OSError) as e:
            raise Failure("%s: initialize at %s failed: %s" % (
                where, options["--server-url"][0], e))
        if '"protocolVersion"' not in body:
            raise Failure("%s: initialize answered %s" % (where, body))
        return
    if not target:
        raise Failure("%s: no server command" % where)
    stdin = "\n".join(json.dumps(m) for m in [
        INIT, {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]) + "\n"
    try:
        p = subprocess.run(target, cwd=cwd, input=stdin, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Failure("%s: %s: %s" % (where, shlex.join(target), e))
    if p.returncode != 0 or '"id":2,"result":{"tools":[' not in p.stdout:
        raise Failure("%s: %s answered (exit %d):\n%s%s" % (
            where, shlex.join(target), p.returncode, p.stdout, p.stderr))


def prepare(src, build, port):
    work = tempfile.mkdtemp(prefix="libmcp-docs-")
    shutil.copytree(os.path.join(src, "examples"),
                    os.path.join(work, "examples"), symlinks=True)
    for root, _, files in os.walk(os.path.join(work, "examples")):
        for name in files:
            if name.endswith(".conf"):
                p = os.path.join(root, name)
                with open(p) as f:
                    text = f.read()
                with open(p, "w") as f:
                    f.write(substitute(text, port))
    os.makedirs(os.path.join(work, "build"))
    os.symlink(os.path.join(os.path.abspath(build), "examples"),
               os.path.join(work, "build", "examples"))
    os.symlink(os.path.join(os.path.abspath(build), "mcp-check"),
               os.path.join(work, "build", "mcp-check"))
    return work


def substitute(text, port):
    return (text.replace("127.0.0.1:8080", "127.0.0.1:%d" % port)
            .replace("localhost:8080", "localhost:%d" % port)
            .replace("--port 8080", "--port %d" % port))


def run_document(src, doc, work, port, without=()):
    with open(os.path.join(src, doc), encoding="utf-8") as f:
        lines = f.read().splitlines()
    server, ran = None, 0
    try:
        for marker, start, end, lang, indent in snippets.blocks(lines):
            if lang != "sh":
                continue
            where = "%s:%d" % (doc, start + 1)
            text = lines[marker] if marker is not None else ""
            if snippets.INCLUDE.search(text):
                continue
            m = MARKER.search(text)
            if not m:
                raise Failure("%s: no sh marker" % where)
            kind = m.group(1)
            attrs = [(k, snippets.unquote(v)) for k, v in
                     ATTR.findall(m.group(2))]
            cmd = substitute("\n".join(snippets.body(lines, start, end, indent)),
                             port)
            if kind == "skip":
                if not any(k == "reason" for k, _ in attrs):
                    raise Failure("%s: skip without a reason" % where)
                continue
            missing = [v for k, v in attrs if k == "needs" and v in without]
            if missing:
                print("skip: %s: this build has no %s" % (
                    where, ", ".join(missing)))
                continue
            ran += 1
            if kind == "run":
                run_block(cmd, work, [substitute(v, port) for k, v in attrs
                                      if k == "expect"], where)
            elif kind == "server":
                if server:
                    server.stop()
                ready = dict(attrs).get("ready", "listening on")
                server = Server(cmd, work, ready, where)
            elif kind == "inspector":
                inspector_block(cmd, work, where)
            else:
                raise Failure("%s: unknown marker sh: %s" % (where, kind))
        if server:
            server.stop()
            server = None
    finally:
        if server:
            server.kill()
    return ran


def main():
    args = sys.argv[1:]
    without = args[3::2]
    if len(args) < 2 or len(args) % 2 or any(a != "--without"
                                             for a in args[2::2]):
        print(__doc__, file=sys.stderr)
        return 2
    src, build = args[0], args[1]
    port = free_port()
    work = prepare(src, build, port)
    failed = 0
    try:
        for doc in snippets.DOCUMENTS:
            try:
                n = run_document(src, doc, work, port, without)
                print("PASS: %s (%d shell blocks run)" % (doc, n))
            except Failure as e:
                failed += 1
                print("FAIL: %s" % e, file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (len(snippets.DOCUMENTS) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
