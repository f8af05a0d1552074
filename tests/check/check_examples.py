#!/usr/bin/env python3
"""mcp-check over libmcp's own examples, both transports: the findings
must be exactly those written here.

  check_examples.py MCP_CHECK NOTES EVERYTHING DEV_TOKEN_SH [--observe]

With --observe (check.examples_observe, plain build only) notes and
everything run over stdio under observation instead: notes with its notes
in a file and a principal holding every scope (so every tool runs: the
finding "authorization"), and its add_note must be seen renaming its
temporary file over that file; neither may have a behaviour finding.

notes over stdio runs with a principal holding only notes:read, so its two
tools that write must be refused on scope; over HTTP it is the OAuth
resource server of the tutorial (a development key, a token with every
scope for listing, and one with notes:read only, minted by
--read-token-cmd). everything gives no tool a scope: over stdio that is
the finding "authorization", over HTTP with a read-only token each of its
tools that write is a scopes finding.

libmcp states all four hints of every tool (a read-only tool's
destructiveHint and idempotentHint derived), so no example has a hints
finding."""

import json
import os
import shlex
import socket
import subprocess
import sys
import tempfile

MCP_CHECK, NOTES, EVERYTHING, DEV_TOKEN = sys.argv[1:5]
OBSERVE = sys.argv[5:] == ["--observe"]
LAUNCHER = shlex.split(os.environ.get("MCP_TEST_LAUNCHER", ""))
ISSUER = "https://auth.dev.invalid"
failures = []


def check(args):
    p = subprocess.run(LAUNCHER + [MCP_CHECK, "--json", "--timeout", "30"] +
                       args, capture_output=True, text=True, timeout=600)
    try:
        return p.returncode, json.loads(p.stdout), p.stderr
    except ValueError:
        return p.returncode, {}, p.stdout + p.stderr


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def expected(doc, extra):
    """The findings of a case: its extra ones, and no hints finding."""
    del doc
    return set(extra)


def writers(doc):
    return [t["name"] for t in doc.get("tools", [])
            if t["effective"]["readOnlyHint"] is False]


def run_case(name, args, extra_fn, expect_tools):
    rc, doc, err = check(args)
    found = {(f["check"], f["tool"], f["hint"])
             for f in doc.get("findings", [])}
    want = expected(doc, extra_fn(doc))
    names = {t["name"] for t in doc.get("tools", [])}
    ok = (rc == (1 if want else 0) and found == want and
          len(doc.get("findings", [])) == len(want) and
          expect_tools <= names)
    print(("PASS: " if ok else "FAIL: ") + name)
    if not ok:
        print(f"  rc={rc} stderr={err[-2000:]}")
        print(f"  unexpected: {sorted(found - want, key=str)}")
        print(f"  missing: {sorted(want - found, key=str)}")
        failures.append(name)
    return doc


NOTES_TOOLS = {"list_notes", "get_note", "add_note", "delete_note",
               "manage_note", "export_notes"}
AUTHORIZATION = {("scopes", None, "authorization")}

if OBSERVE:
    with tempfile.TemporaryDirectory() as d:
        data = os.path.join(os.path.realpath(d), "notes.json")
        doc = run_case("notes.observe", [
            "--observe", "--", NOTES, "--stdio", "--data", data, "--scopes",
            "notes:read notes:write notes:admin"],
            lambda d: AUTHORIZATION, NOTES_TOOLS)
        adds = [t for t in doc.get("tools", []) if t["name"] == "add_note"]
        renamed = [e for t in adds for e in t.get("effects", [])
                   if e["op"] == "rename" and e.get("target2") == data]
        if not renamed:
            print("FAIL: notes.observe: add_note's rename over", data,
                  "not seen:", adds)
            failures.append("notes.observe.rename")
    run_case("everything.observe", ["--observe", "--", EVERYTHING],
             lambda d: AUTHORIZATION, {"greet"})
    if failures:
        print(f"{len(failures)} failed: {' '.join(failures)}")
        sys.exit(1)
    print("all passed")
    sys.exit(0)

doc = run_case("notes.stdio", ["--", NOTES, "--stdio", "--scopes",
                               "notes:read"], lambda d: set(), NOTES_TOOLS)
scopes = {t["name"]: t["checks"]["scopes"] for t in doc.get("tools", [])}
if any(scopes.get(t) != "passed"
       for t in ("add_note", "delete_note", "manage_note")):
    print("FAIL: notes.stdio refused on scope", scopes)
    failures.append("notes.stdio.scopes")

# The legacy era too (the default, 2026-07-28, is what notes speaks first);
# under valgrind (a launcher) its newest version only, for time.
LEGACY = ("2025-11-25",) if LAUNCHER else ("2025-11-25", "2025-06-18",
                                           "2025-03-26")
for version in LEGACY:
    doc = run_case(f"notes.stdio.{version}",
                   ["--protocol-version", version, "--", NOTES, "--stdio",
                    "--scopes", "notes:read"], lambda d: set(), NOTES_TOOLS)
    if doc.get("server", {}).get("protocolVersion") != version:
        print(f"FAIL: notes.stdio.{version}: spoke",
              doc.get("server", {}).get("protocolVersion"))
        failures.append(f"notes.stdio.{version}.version")

run_case("everything.stdio", ["--", EVERYTHING],
         lambda d: {("scopes", None, "authorization")}, {"greet"})

with tempfile.TemporaryDirectory() as keys:
    subprocess.run(["bash", DEV_TOKEN, "keys", keys], check=True,
                   capture_output=True)
    for example, path, scope_all, read in (
            ("notes", NOTES, "notes:read notes:write notes:admin",
             "notes:read"),
            ("everything", EVERYTHING, "", "")):
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        token = subprocess.run(
            ["bash", DEV_TOKEN, "token", keys, ISSUER, url, scope_all],
            check=True, capture_output=True, text=True).stdout.strip()
        launch = (f"exec {shlex.quote(path)} --http 127.0.0.1:{port} "
                  f"--jwks {keys}/jwks.json --issuer {ISSUER} "
                  f"--audience {url}")
        mint = (f"bash {shlex.quote(DEV_TOKEN)} token {keys} {ISSUER} {url} "
                f"{shlex.quote(read)}")
        if example == "notes":
            extra = lambda d: set()
        else:
            extra = lambda d: {("scopes", w, "scopes") for w in writers(d)}
        for version in ("2026-07-28", "2025-11-25"):
            run_case(f"{example}.http.{version}",
                     ["--protocol-version", version, "--token", token,
                      "--read-token-cmd", mint, "--launch", launch, url],
                     extra, NOTES_TOOLS if example == "notes" else {"greet"})

if failures:
    print(f"{len(failures)} failed: {' '.join(failures)}")
    sys.exit(1)
print("all passed")
