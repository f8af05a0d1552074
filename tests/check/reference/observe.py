#!/usr/bin/env python3
"""How the expectations of the reference servers were verified by hand.

    observe.py CALLS DIR -- COMMAND...   (COMMAND may contain @DIR@)

Runs COMMAND (an MCP server over stdio) once per line of CALLS (mcp-check's
--calls format, @DIR@ replaced by DIR, a fresh empty folder), each time in
a fresh process under `strace -f -e trace=%file,%network`, sending
initialize and that one tools/call. A tool whose idempotentHint is true is
called a second time, as mcp-check does. Prints, per tool, what the trace
shows it did in DIR (files opened for writing or created, removed, renamed,
directories made), whether it connected anywhere but a unix socket, which
files that existed before the call changed content, and whether the second
call changed anything again. Paths are written with @DIR@, and the random
part of a temporary name as *.

Not run by the tests: its output was read, checked against the servers'
source, and written down in <server>.expect.json.
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "observe", "version": "1"}}}
READY = {"jsonrpc": "2.0", "method": "notifications/initialized"}

CALL = re.compile(r'^(?:\[pid\s+)?(\d+)\]?\s+(\w+)\((.*)\)\s+=\s+(-?\d+)')
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC")


def digests(root):
    out = {}
    for base, _, files in os.walk(root):
        for f in files:
            p = os.path.join(base, f)
            with open(p, "rb") as fh:
                out[p] = hashlib.sha256(fh.read()).hexdigest()
    return out


def norm(path, root):
    path = path.replace(root, "@DIR@")
    return re.sub(r"\.[0-9a-f]{32}\.tmp$", ".*.tmp", path)


def parse(trace, root):
    seen = {"writes": set(), "removes": set(), "renames": set(),
            "mkdirs": set(), "connects": set()}
    for line in trace.splitlines():
        m = CALL.match(line)
        if not m or int(m.group(4)) < 0:
            continue
        name, args = m.group(2), m.group(3)
        paths = [p for p in STRING.findall(args) if p.startswith(root)]
        if name in ("open", "openat", "creat") and paths:
            if name == "creat" or any(f in args for f in WRITE_FLAGS):
                seen["writes"].add(norm(paths[0], root))
        elif name in ("unlink", "unlinkat", "rmdir") and paths:
            seen["removes"].add(norm(paths[0], root))
        elif name.startswith("rename") and len(paths) == 2:
            seen["renames"].add((norm(paths[0], root), norm(paths[1], root)))
        elif name in ("mkdir", "mkdirat") and paths:
            seen["mkdirs"].add(norm(paths[0], root))
        elif name == "connect" and "AF_UNIX" not in args:
            seen["connects"].add(args)
    return seen


def run(command, env, call, root, log):
    msgs = [INIT, READY, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                          "params": call}]
    text = "".join(json.dumps(m) + "\n" for m in msgs)
    before = digests(root)
    trace = os.path.join(log, "trace")
    p = subprocess.run(["strace", "-f", "-qq", "-s", "512",
                        "-e", "trace=%file,%network", "-o", trace] + command,
                       input=text, capture_output=True, text=True,
                       timeout=120, env=env)
    with open(trace) as fh:
        seen = parse(fh.read(), root)
    after = digests(root)
    changed = sorted(norm(p, root) for p in before
                     if p in after and after[p] != before[p])
    reply = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
    result = next((m for m in reply if m.get("id") == 2), {})
    return seen, changed, ("error" in result or
                           result.get("result", {}).get("isError", False))


def main():
    calls_path, root = sys.argv[1], os.path.realpath(sys.argv[2])
    command = [a.replace("@DIR@", root) for a in sys.argv[4:]]
    env = {k: v.replace("@DIR@", root) for k, v in os.environ.items()}
    hints = {}
    with tempfile.TemporaryDirectory() as log:
        listed = subprocess.run(
            command, capture_output=True, text=True, timeout=120, env=env,
            input="".join(json.dumps(m) + "\n" for m in [
                INIT, READY,
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]))
        for line in listed.stdout.splitlines():
            m = json.loads(line)
            if m.get("id") == 2:
                for t in m["result"]["tools"]:
                    hints[t["name"]] = t.get("annotations", {})
        report = {}
        for line in open(calls_path):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            call = json.loads(line.replace("@DIR@", root))
            seen, changed, failed = run(command, env, call, root, log)
            entry = {"hints": hints.get(call["name"], {}),
                     "failed": failed,
                     "writes": sorted(seen["writes"]),
                     "removes": sorted(seen["removes"]),
                     "renames": sorted(list(r) for r in seen["renames"]),
                     "mkdirs": sorted(seen["mkdirs"]),
                     "connects": bool(seen["connects"]),
                     "changed": changed}
            if hints.get(call["name"], {}).get("idempotentHint"):
                _, again, _ = run(command, env, call, root, log)
                entry["second_call_changed"] = again
            report[call["name"]] = entry
    json.dump(report, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
