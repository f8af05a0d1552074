#!/usr/bin/env python3
"""mcp-check over the planted-mistakes server (tests/check/planted.c): one
wrong hint of each kind, each tool doing what its hint denies. The findings
must be exactly those five:

  stamp       behaviour  readOnlyHint     writes DIR/stamp.txt
  add_entry   behaviour  destructiveHint  removes DIR/old.txt
  lookup      behaviour  openWorldHint    connects to the port we listen on
  append_log  behaviour  idempotentHint   appends to DIR/log.txt each call
  purge       scopes     scopes           a read-only token runs it

over HTTP with the examples' OAuth setup (a token with every scope for the
calls, --read-token-cmd minting one with planted:read only), the server
--launch'ed under --observe. Over stdio with a caller holding planted:read
only, add_entry and append_log are refused on scope and so not observed:
the findings are stamp's, lookup's and purge's.

  check_planted.py MCP_CHECK PLANTED DEV_TOKEN_SH"""

import json
import os
import shlex
import socket
import subprocess
import sys
import tempfile

MCP_CHECK, PLANTED, DEV_TOKEN = sys.argv[1:4]
ISSUER = "https://auth.dev.invalid"
FIVE = {("behaviour", "stamp", "readOnlyHint"),
        ("behaviour", "add_entry", "destructiveHint"),
        ("behaviour", "lookup", "openWorldHint"),
        ("behaviour", "append_log", "idempotentHint"),
        ("scopes", "purge", "scopes")}
failures = []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_case(name, args, want, listener_port):
    p = subprocess.run([MCP_CHECK, "--json", "--observe", "--timeout", "30"] +
                       args, capture_output=True, text=True, timeout=600)
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
    print(("PASS: " if ok else "FAIL: ") + name)
    if not ok:
        print(f"  rc={p.returncode} stderr={p.stderr[-1500:]}")
        print(f"  unexpected: {sorted(set(found) - want, key=str)}")
        print(f"  missing: {sorted(want - set(found), key=str)}")
        for f in doc.get("findings", []):
            print("   ", f["tool"], f["hint"], f["evidence"][:200])
        failures.append(name)


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
                 FIVE, lport)

    # stdio, a caller holding planted:read only.
    with tempfile.TemporaryDirectory() as d:
        want = {f for f in FIVE if f[1] in ("stamp", "lookup", "purge")}
        run_case("planted.stdio", ["--", PLANTED, "--dir", d, "--port",
                                   str(lport), "--stdio", "--scopes",
                                   "planted:read"],
                 want, lport)

if failures:
    print(f"{len(failures)} failed: {' '.join(failures)}")
    sys.exit(1)
print("all passed")
