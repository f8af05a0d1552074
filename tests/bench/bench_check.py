#!/usr/bin/env python3
"""What observation costs a tool call: mcp-check --observe's wall time per
call against the same calls with the observation left out
(MCP_CHECK_UNOBSERVED: no seccomp filter, no supervisor thread), in one
run, so that the ratio does not depend on the machine.

  bench_check.py MCP_CHECK NOTES [CALLS]

The server is notes over stdio with its notes in a file; the calls are
CALLS (default 200) add_note calls (each opens, writes and renames a file:
three effects) from a --calls file. Per call = (time of CALLS calls - time
of 1 call) / (CALLS - 1), the best of three runs each, observed and
unobserved runs taken in turn, so the server's start is not counted and
both see the same machine. The notes file is on /dev/shm when there is
one: notes fsyncs every change, and a disk's fsync would be most of what
is measured. Prints one table row; asserts nothing about speed."""
import json
import os
import subprocess
import sys
import tempfile
import time

MCP_CHECK, NOTES = sys.argv[1:3]
CALLS = int(sys.argv[3]) if len(sys.argv) > 3 else 200


def run(n, observed, work):
    calls = os.path.join(work, f"calls-{n}.jsonl")
    with open(calls, "w") as f:
        for i in range(n):
            f.write(json.dumps({"name": "add_note", "arguments":
                                {"title": f"t{i}", "text": "x"}}) + "\n")
    data = os.path.join(work, "notes.json")
    if os.path.exists(data):
        os.unlink(data)
    env = dict(os.environ)
    if not observed:
        env["MCP_CHECK_UNOBSERVED"] = "1"
    start = time.monotonic()
    p = subprocess.run([MCP_CHECK, "--json", "--observe", "--calls", calls,
                        "--", NOTES, "--stdio", "--data", data, "--scopes",
                        "notes:read notes:write notes:admin"],
                       capture_output=True, text=True, env=env, timeout=600)
    took = time.monotonic() - start
    doc = json.loads(p.stdout)
    effects = [e for t in doc["tools"] for e in t.get("effects", [])]
    if observed and len(effects) < n:
        sys.exit(f"bench_check: {len(effects)} effects for {n} calls")
    return took


def per_call(work):
    """(unobserved, observed) per call, their runs interleaved."""
    best = {}
    for _ in range(3):
        for n in (1, CALLS):
            for observed in (False, True):
                t = run(n, observed, work)
                key = (n, observed)
                best[key] = min(best.get(key, t), t)
    return tuple((best[(CALLS, o)] - best[(1, o)]) / (CALLS - 1)
                 for o in (False, True))


shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
with tempfile.TemporaryDirectory(dir=shm) as work:
    bare, watched = per_call(work)
print("| mcp-check --observe, per add_note call | %.1f µs | %.1f µs "
      "unobserved | ratio %.2f |" % (watched * 1e6, bare * 1e6,
                                     watched / bare if bare > 0 else 0))
