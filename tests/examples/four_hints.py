#!/usr/bin/env python3
"""Every tool of a stdio example carries the four hints explicitly, in
every protocol version that has annotations, as a directory scan requires.

usage: four_hints.py NAME BINARY [ARGS...]

Each version is a separate run of the example (the legacy handshake, or
2026-07-28's single requests); tools/list is followed through its pages.
The HTTP-only examples (embed_poll, port_daemon) apply the same check
(tests/common/four_hints.py) from their own smoke tests."""
import json
import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "common"))
import four_hints  # noqa: E402

LEGACY = ("2025-03-26", "2025-06-18", "2025-11-25")
MODERN = "2026-07-28"
MAX_PAGES = 50
TIMEOUT_S = 60


def modern_meta():
    return {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {}}


class Server:
    def __init__(self, argv):
        cmd = shlex.split(os.environ.get("MCP_TEST_LAUNCHER", "")) + argv
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.next_id = 1

    def request(self, method, params=None):
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.next_id += 1
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        for _ in range(1000):  # notifications may come first
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit("FAIL: the server ended during " + method)
            reply = json.loads(line)
            if reply.get("id") == msg["id"]:
                if "result" not in reply:
                    raise SystemExit("FAIL: %s: %r" % (method, reply))
                return reply["result"]
        raise SystemExit("FAIL: no reply to " + method)

    def notify(self, method):
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0",
                                          "method": method}) + "\n")
        self.proc.stdin.flush()

    def close(self):
        self.proc.stdin.close()
        rc = self.proc.wait(timeout=TIMEOUT_S)
        if rc != 0:
            raise SystemExit("FAIL: exit status %d" % rc)


def list_tools(server, extra):
    tools, cursor = [], None
    for _ in range(MAX_PAGES):
        params = dict(extra)
        if cursor:
            params["cursor"] = cursor
        result = server.request("tools/list", params)
        tools += result.get("tools", [])
        cursor = result.get("nextCursor")
        if not cursor:
            return tools
    raise SystemExit("FAIL: tools/list has more than %d pages" % MAX_PAGES)


def main():
    name, argv = sys.argv[1], sys.argv[2:]
    found = []
    for version in LEGACY + (MODERN,):
        s = Server(argv)
        if version == MODERN:
            tools = list_tools(s, {"_meta": modern_meta()})
        else:
            s.request("initialize", {
                "protocolVersion": version, "capabilities": {},
                "clientInfo": {"name": "four_hints", "version": "1"}})
            s.notify("notifications/initialized")
            tools = list_tools(s, {})
        s.close()
        if not tools:
            found.append("%s %s: no tools listed" % (name, version))
        found += four_hints.problems(tools, "%s %s" % (name, version))
    for f in found:
        print("FAIL: " + f)
    if found:
        return 1
    print("PASS: %s: every tool states all four hints in %d versions"
          % (name, len(LEGACY) + 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
