#!/usr/bin/env python3
"""mcp-check over the planted-mistakes server (tests/check/planted.c): one
wrong hint of each kind, each tool doing what its hint denies, called as
planted.calls says. The findings must be exactly those six:

  stamp       behaviour  readOnlyHint     writes DIR/stamp.txt
  add_entry   behaviour  destructiveHint  removes DIR/old.txt
  lookup      behaviour  openWorldHint    connects to the port we listen on
  append_log  behaviour  idempotentHint   appends to DIR/log.txt each call
  purge       scopes     scopes           a read-only token runs it
  memo        behaviour  readOnlyHint     its "peek" (planted.calls line
                                          PEEK_LINE), resolved read-only,
                                          writes DIR/memo-seen.txt

memo is resolvable: each of its four calls is judged against the hints
tools/resolve gives for its arguments (no finding for "read", "append"
and "clear", which resolve honestly), and the scopes check calls it with
"append", the first of its calls that resolves writing, which the
read-only token must see refused.

Over HTTP with the examples' OAuth setup (a token with every scope for the
calls, --read-token-cmd minting one with planted:read only), the server
--launch'ed under --observe. Over stdio with a caller holding planted:read
only, add_entry, append_log and memo are refused on scope (memo's
tools/resolve too, which is no finding: the call met the same refusal) and
so not observed: the findings are stamp's, lookup's and purge's.

Last, bad_server.py's resolving mode with a resolver that writes a file:
exactly one finding (behaviour, resolution) naming the file, which is not
listed as an effect outside any call.

  check_planted.py MCP_CHECK PLANTED DEV_TOKEN_SH CALLS"""

import json
import os
import shlex
import socket
import subprocess
import sys
import tempfile

MCP_CHECK, PLANTED, DEV_TOKEN, CALLS = sys.argv[1:5]
PEEK_LINE = 11  # planted.calls: memo's peek
ISSUER = "https://auth.dev.invalid"
SIX = {("behaviour", "stamp", "readOnlyHint"),
        ("behaviour", "add_entry", "destructiveHint"),
        ("behaviour", "lookup", "openWorldHint"),
        ("behaviour", "append_log", "idempotentHint"),
        ("scopes", "purge", "scopes"),
        ("behaviour", "memo", "readOnlyHint")}
failures = []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_case(name, args, want, listener_port):
    p = subprocess.run([MCP_CHECK, "--json", "--observe", "--timeout", "30",
                        "--calls", CALLS] + args,
                       capture_output=True, text=True, timeout=600)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = {}
    found = [(f["check"], f["tool"], f["hint"])
             for f in doc.get("findings", [])]
    ok = p.returncode == 1 and sorted(found) == sorted(want)
    # lookup's evidence names the port we listen on.
    ev = [f["evidence"] for f in doc.get("findings", [])
          if f["tool"] == "lookup"]
    if ("behaviour", "lookup", "openWorldHint") in want:
        ok = ok and any(f"127.0.0.1:{listener_port}" in e for e in ev)
    why = resolution_wrong(doc, want)
    ok = ok and why is None
    print(("PASS: " if ok else "FAIL: ") + name)
    if why:
        print("  " + why)
    if not ok:
        print(f"  rc={p.returncode} stderr={p.stderr[-1500:]}")
        print(f"  unexpected: {sorted(set(found) - want, key=str)}")
        print(f"  missing: {sorted(want - set(found), key=str)}")
        for f in doc.get("findings", []):
            print("   ", f["tool"], f["hint"], f["evidence"][:200])
        failures.append(name)


def resolution_wrong(doc, want):
    """What is wrong with how the run reported tool resolution, or None:
    memo alone resolvable, in the tools and the hints report's notes; over
    HTTP its four behaviour calls resolved (peek read-only), and its one
    finding judged against the resolved hints of the peek's line."""
    tools = {t["name"]: t for t in doc.get("tools", [])}
    if not tools:
        return "no tools in the report"
    marked = sorted(n for n, t in tools.items() if t.get("resolvable"))
    if marked != ["memo"]:
        return f"resolvable tools {marked}, want ['memo']"
    if not any(n.startswith("tool resolution: 1 resolvable tool (memo)")
               for n in doc.get("notes", [])):
        return "the hints report does not list memo as resolvable"
    if ("behaviour", "memo", "readOnlyHint") not in want:
        return None
    calls = [r for r in tools["memo"].get("resolutions", [])
             if r["call"].startswith("call of --calls line")]
    peek = [r for r in calls if r["arguments"].get("action") == "peek"]
    if len(calls) != 4 or not all(r["resolved"] for r in calls):
        return f"memo's calls not all resolved: {calls}"
    if not peek or peek[0]["hints"]["readOnlyHint"] is not True:
        return f"memo's peek not resolved read-only: {peek}"
    f = [f for f in doc["findings"] if f["tool"] == "memo"]
    if len(f) != 1 or not f[0]["resolved"] or \
            f"--calls line {PEEK_LINE} " not in f[0]["evidence"] or \
            "resolved read-only" not in f[0]["evidence"] or \
            "memo-seen.txt" not in f[0]["evidence"]:
        return f"memo's finding is not the resolved peek's: {f}"
    if any(f["resolved"] for f in doc["findings"] if f["tool"] != "memo"):
        return "a finding of a tool that is not resolvable says resolved"
    # The scopes check skips memo's read and peek (resolved read-only: a
    # reader may run them) and has its append refused on scope.
    scoped = [r["arguments"].get("action")
              for r in tools["memo"].get("resolutions", [])
              if r["call"].startswith("scopes check")]
    if scoped != ["read", "peek", "append"] or \
            tools["memo"]["checks"]["scopes"] != "passed":
        return (f"memo's scopes check: resolved {scoped}, "
                f"{tools['memo']['checks']['scopes']}")
    return None


with tempfile.TemporaryDirectory() as keys, \
        socket.socket() as listener:
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    lport = listener.getsockname()[1]
    subprocess.run(["bash", DEV_TOKEN, "keys", keys], check=True,
                   capture_output=True)

    # HTTP: the five findings.
    with tempfile.TemporaryDirectory() as d:
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        token = subprocess.run(
            ["bash", DEV_TOKEN, "token", keys, ISSUER, url,
             "planted:read planted:write"],
            check=True, capture_output=True, text=True).stdout.strip()
        mint = (f"bash {shlex.quote(DEV_TOKEN)} token {keys} {ISSUER} {url} "
                f"planted:read")
        launch = (f"exec {shlex.quote(PLANTED)} --dir {d} --port {lport} "
                  f"--http 127.0.0.1:{port} --jwks {keys}/jwks.json "
                  f"--issuer {ISSUER} --audience {url}")
        run_case("planted.http", ["--token", token, "--read-token-cmd", mint,
                                  "--launch", launch, url],
                 SIX, lport)

    # stdio, a caller holding planted:read only.
    with tempfile.TemporaryDirectory() as d:
        want = {f for f in SIX if f[1] in ("stamp", "lookup", "purge")}
        run_case("planted.stdio", ["--protocol-version", "2025-11-25",
                                   "--", PLANTED, "--dir", d, "--port",
                                   str(lport), "--stdio", "--scopes",
                                   "planted:read"],
                 want, lport)

# A resolver with an effect (bad_server.py resolving, "writes"): under
# observation what the server does while it resolves is a finding of its
# own, and not an effect outside any call.
with tempfile.TemporaryDirectory() as d:
    target = os.path.join(os.path.realpath(d), "resolved.txt")
    calls = os.path.join(d, "writes.calls")
    with open(calls, "w") as f:
        f.write(json.dumps({"name": "flip", "arguments": {
            "how": "writes", "path": target}}) + "\n")
    bad = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "bad_server.py")
    p = subprocess.run([MCP_CHECK, "--json", "--observe", "--timeout", "30",
                        "--calls", calls, "--", sys.executable, bad,
                        "resolving"],
                       capture_output=True, text=True, timeout=600)
    doc = json.loads(p.stdout) if p.stdout.startswith("{") else {}
    found = [(f["check"], f["tool"], f["hint"])
             for f in doc.get("findings", [])]
    ev = " ".join(f["evidence"] for f in doc.get("findings", []))
    ok = (p.returncode == 1 and
          found == [("behaviour", "flip", "resolution")] and
          target in ev and
          not any(target in o for o in doc.get("outsideCalls", [])))
    print(("PASS: " if ok else "FAIL: ") + "resolver_effects")
    if not ok:
        print(f"  rc={p.returncode} {found} {ev} {p.stderr[-1500:]}")
        failures.append("resolver_effects")

if failures:
    print(f"{len(failures)} failed: {' '.join(failures)}")
    sys.exit(1)
print("all passed")
