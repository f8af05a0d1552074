#!/usr/bin/env python3
"""Smoke test of examples/port_daemon, started as a user would start it.

    port_daemon_smoke.py before PATH-TO-port_daemon_before
    port_daemon_smoke.py after PATH-TO-port_daemon

Both: a listening socket on 127.0.0.1 is reported up and a closed port
down; SIGHUP re-reads the file; SIGTERM stops the daemon with status 0.
"after" also drives the MCP endpoint over loopback HTTP: the hints of
tools/list, list_ports, check_port (finished by a worker thread), a scope
refusal of reload_config for a ports:read caller, and reload_config for a
ports:admin one. MCP_TEST_LAUNCHER (e.g. valgrind ...) prefixes the daemon.
"""
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
import four_hints  # noqa: E402

DEADLINE = time.monotonic() + 240


def fail(msg):
    print("FAIL: port_daemon: " + msg, file=sys.stderr)
    sys.exit(1)


class Daemon:
    """The daemon, with its stderr collected by a thread."""

    def __init__(self, binary, conf):
        cmd = shlex.split(os.environ.get("MCP_TEST_LAUNCHER", "")) + [
            binary, "-c", conf]
        self.proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stderr:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.lines.append(None)
            self.cond.notify_all()

    def wait_for(self, pattern):
        """Returns the match of the first line that matches pattern."""
        rx = re.compile(pattern)
        with self.cond:
            while True:
                for line in self.lines:
                    if line is None:
                        fail("exited before logging /%s/:\n%s" % (
                            pattern, "\n".join(l for l in self.lines if l)))
                    m = rx.search(line)
                    if m:
                        return m
                left = DEADLINE - time.monotonic()
                if left <= 0:
                    fail("no line matched /%s/" % pattern)
                self.cond.wait(left)

    def signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=max(1, DEADLINE - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail("did not stop on SIGTERM")
        self.wait_for(r"port_daemon: stopped")
        if rc != 0:
            fail("exit status %d after SIGTERM:\n%s" % (
                rc, "\n".join(l for l in self.lines if l)))


class Client:
    """A legacy-era (2025-11-25) MCP session over Streamable HTTP."""

    def __init__(self, url):
        self.url, self.sid, self.next_id = url, None, 1
        reply = self.request("initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "smoke", "version": "1"}})
        if reply.get("result", {}).get("protocolVersion") != "2025-11-25":
            fail("initialize: %r" % reply)
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def post(self, body):
        headers = {"Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream",
                   "MCP-Protocol-Version": "2025-11-25"}
        if self.sid:
            headers["Mcp-Session-Id"] = self.sid
        req = urllib.request.Request(self.url, json.dumps(body).encode(),
                                     headers)
        with urllib.request.urlopen(req, timeout=120) as r:
            self.sid = r.headers.get("Mcp-Session-Id") or self.sid
            text = r.read().decode()
            if r.headers.get("Content-Type", "").startswith(
                    "text/event-stream"):
                datas = [l[5:].strip() for l in text.splitlines()
                         if l.startswith("data:") and l[5:].strip()]
                text = datas[-1] if datas else ""
            return json.loads(text) if text else None

    def request(self, method, params=None):
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            body["params"] = params
        self.next_id += 1
        return self.post(body)

    def call(self, tool, arguments=None):
        return self.request("tools/call",
                            {"name": tool, "arguments": arguments or {}})


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_conf(path, ports, extra=""):
    with open(path, "w") as f:
        f.write("interval_ms 200\ntimeout_ms 2000\nworkers 2\n")
        for name, port in ports:
            f.write("port %s %d\n" % (name, port))
        f.write(extra)


def text_of(reply):
    return "".join(c.get("text", "") for c in
                   reply.get("result", {}).get("content", []))


def check_hints(tools):
    want = {
        "list_ports": {"readOnlyHint": True, "openWorldHint": False},
        "check_port": {"readOnlyHint": True, "openWorldHint": False},
        "reload_config": {"readOnlyHint": False, "destructiveHint": True,
                          "idempotentHint": True, "openWorldHint": False},
    }
    for problem in four_hints.problems(tools, "port_daemon"):
        fail(problem)
    got = {t["name"]: t.get("annotations", {}) for t in tools}
    for name, hints in want.items():
        for k, v in hints.items():
            if got.get(name, {}).get(k) is not v:
                fail("%s: %s is %r, want %r" % (
                    name, k, got.get(name, {}).get(k), v))


def main():
    which, binary = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp()
    conf = os.path.join(tmp, "port_daemon.conf")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    up, down = listener.getsockname()[1], free_port()
    mcp = "mcp_listen 127.0.0.1:0\nmcp_scopes ports:read\n"
    write_conf(conf, [("web", up), ("closed", down)],
               mcp if which == "after" else "")

    d = Daemon(binary, conf)
    d.wait_for(r"web \(127\.0\.0\.1:%d\) is up" % up)
    d.wait_for(r"closed \(127\.0\.0\.1:%d\) is down" % down)
    if which == "after":
        url = d.wait_for(r"MCP at (http://127\.0\.0\.1:\d+/mcp)").group(1)
        c = Client(url)
        check_hints(c.request("tools/list")["result"]["tools"])
        ports = c.call("list_ports")["result"]["structuredContent"]["ports"]
        states = {p["name"]: p["state"] for p in ports}
        if states != {"web": "up", "closed": "down"}:
            fail("list_ports: %r" % ports)
        if not text_of(c.call("check_port", {"name": "web"})).startswith("up"):
            fail("check_port web is not up")
        if not text_of(c.call("check_port",
                              {"name": "closed"})).startswith("down"):
            fail("check_port closed is not down")
        r = c.call("check_port", {"name": "nope"})
        if not r.get("result", {}).get("isError"):
            fail("check_port of an unknown name: %r" % r)
        r = c.call("reload_config")
        if r.get("error", {}).get("code") != -31403:
            fail("reload_config without ports:admin: %r" % r)
    # SIGHUP re-reads the file: "closed" is gone.
    write_conf(conf, [("web", up)], mcp if which == "after" else "")
    d.signal(signal.SIGHUP)
    d.wait_for(r"re-read .*: 1 ports")
    if which == "after":
        ports = c.call("list_ports")["result"]["structuredContent"]["ports"]
        if [p["name"] for p in ports] != ["web"]:
            fail("list_ports after SIGHUP: %r" % ports)
    d.stop()

    if which == "after":
        # A caller holding ports:admin may reload over MCP.
        write_conf(conf, [("web", up), ("again", down)],
                   "mcp_listen 127.0.0.1:0\n"
                   "mcp_scopes ports:read ports:admin\n")
        d = Daemon(binary, conf)
        url = d.wait_for(r"MCP at (http://127\.0\.0\.1:\d+/mcp)").group(1)
        c = Client(url)
        write_conf(conf, [("web", up)], "")
        r = c.call("reload_config")
        if "re-read" not in text_of(r) or r["result"].get("isError"):
            fail("reload_config with ports:admin: %r" % r)
        d.wait_for(r"asked over MCP")
        d.stop()
    listener.close()
    print("PASS: port_daemon %s" % which)


if __name__ == "__main__":
    main()
