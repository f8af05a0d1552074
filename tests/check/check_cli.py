#!/usr/bin/env python3
"""mcp-check's command line: --help, --version, usage errors (exit 2),
servers that cannot be started or spoken to (exit 3, with the reason),
findings (exit 1) and a clean server (exit 0), the --json shape, the JUnit
XML, and the man page rendering without a warning.

  check_cli.py MCP_CHECK BAD_SERVER MAN_PAGE

MCP_TEST_LAUNCHER (valgrind in that build) runs mcp-check when set."""
import json
import os
import shlex
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

MCP_CHECK, BAD, MAN = sys.argv[1:4]
LAUNCHER = shlex.split(os.environ.get("MCP_TEST_LAUNCHER", ""))
PY = sys.executable
failures = []


def run(args, timeout=120):
    p = subprocess.run(LAUNCHER + [MCP_CHECK] + args, capture_output=True,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def expect(name, cond, detail=""):
    if cond:
        print("PASS:", name)
    else:
        print("FAIL:", name, detail)
        failures.append(name)


def server(mode):
    return ["--", PY, BAD, mode]


# --help documents the exit codes; --version.
rc, out, err = run(["--help"])
expect("help", rc == 0 and "exit status" in out and
       all(f"  {c}  " in out for c in "0123"), out + err)
rc, out, err = run(["--version"])
expect("version", rc == 0 and out.startswith("mcp-check "), out + err)

# Usage errors: exit 2 and a word on what is wrong.
usage = {
    "no_target": ([], "give a URL"),
    "unknown_option": (["--frobnicate"] + server("chatty"), "unknown option"),
    "url_and_command": (["http://127.0.0.1:1/mcp"] + server("chatty"),
                        "not both"),
    "bad_timeout": (["--timeout", "0"] + server("chatty"), "whole seconds"),
    "observe_url": (["--observe", "http://127.0.0.1:1/mcp"], "--launch"),
    "token_stdio": (["--token", "x"] + server("chatty"), "for a URL"),
    "not_http": (["ftp://example/"], "not an http"),
    "calls_missing": (["--calls", "/nonexistent/calls.jsonl"] +
                      server("chatty"), "calls.jsonl"),
    "dash_dash_alone": (["--"], "command"),
    "read_token_cmd_fails": (["--read-token-cmd", "exit 1",
                              "http://127.0.0.1:1/mcp"], "no token"),
}
for name, (args, word) in usage.items():
    rc, out, err = run(args)
    expect("usage." + name, rc == 2 and word in err, f"rc={rc} {err!r}")

# Exit 3: the server could not be started or spoken to, and why.
bad = {
    "no_such_command": (["--", "/nonexistent/server"], "No such file"),
    "garbage": (server("garbage"), "not JSON"),
    "huge": (server("huge"), "longer than"),
    "dies": (server("die"), "exited with status 7"),
    "dies_last_words": (server("die"), "giving up on purpose"),
    "hangs": (["--timeout", "1"] + server("hang"), "no answer"),
    "errors": (server("errors"), "always failing"),
    "unreachable": (["--timeout", "2", "http://127.0.0.1:1/mcp"],
                    "cannot speak MCP"),
    "launch_dies": (["--launch", "exit 4", "--launch-timeout", "5",
                     "http://127.0.0.1:1/mcp"], "exited with status 4"),
}
for name, (args, word) in bad.items():
    rc, out, err = run(args)
    expect("server." + name, rc == 3 and word in err, f"rc={rc} {err!r}")

# A clean server: exit 0, and the --json shape.
rc, out, err = run(["--json"] + server("chatty"))
try:
    doc = json.loads(out)
except ValueError:
    doc = {}
expect("clean.exit", rc == 0, f"rc={rc} {out} {err}")
expect("json.shape", set(doc) == {"server", "tools", "findings",
                                  "outsideCalls", "notes", "exitCode"},
       out)
tool = (doc.get("tools") or [{}])[0]
expect("json.tool", tool.get("name") == "peek" and
       tool.get("tier") == "run silently" and
       tool.get("hints", {}).get("readOnlyHint") is True and
       set(tool.get("checks", {})) == {"hints", "scopes", "behaviour"} and
       tool["checks"]["hints"] == "passed", json.dumps(tool))
expect("json.server", doc.get("server", {}).get("name") ==
       "bad_server-chatty" and doc["server"]["transport"] == "stdio" and
       doc["server"]["protocolVersion"] == "2025-11-25", out)
expect("json.exit", doc.get("exitCode") == 0, out)

# Findings: exit 1; a tool without hints has four, the stdio server
# without authorization one more; JUnit XML with them.
with tempfile.TemporaryDirectory() as d:
    junit = os.path.join(d, "report.xml")
    rc, out, err = run(["--json", "--junit", junit] + server("nohints"))
    doc = json.loads(out) if rc == 1 else {}
    found = sorted((f["check"], f["tool"], f["hint"])
                   for f in doc.get("findings", []))
    want = sorted([("hints", "bare", h) for h in
                   ("readOnlyHint", "destructiveHint", "idempotentHint",
                    "openWorldHint")] +
                  [("scopes", None, "authorization")])
    expect("findings.exit", rc == 1, f"rc={rc} {err}")
    expect("findings.exact", found == want, f"{found}")
    expect("findings.fields", all(f["evidence"] and f["fix"] and f["grade"]
                                  for f in doc.get("findings", [])), out)
    expect("findings.tier", doc.get("tools", [{}])[0].get("tier") ==
           "block unless pre-authorized", out)
    try:
        root = ET.parse(junit).getroot()
        cases = root.findall(".//testcase")
        fails = root.findall(".//failure")
        expect("junit.wellformed", root.tag == "testsuites" and
               len(cases) == 6 and len(fails) == 5,
               f"{len(cases)} cases, {len(fails)} failures")
    except (ET.ParseError, OSError) as e:
        expect("junit.wellformed", False, str(e))
    # The table for people: no colour when not on a terminal, or asked.
    rc, out, err = run(["--no-color"] + server("nohints"))
    expect("table", rc == 1 and "\033[" not in out and "bare" in out and
           "5 findings" in out, out)

# One tool that never answers is noted and the others are still checked:
# exit 1 (its findings), not 3.
rc, out, err = run(["--json", "--timeout", "1"] + server("slowtool"))
doc = json.loads(out) if out.strip().startswith("{") else {}
states = {t["name"]: t["checks"]["scopes"] for t in doc.get("tools", [])}
expect("slow_tool", rc == 1 and states == {"stuck": "skipped",
                                          "fine": "skipped"} and
       any("stuck: scopes not checked: no answer" in n
           for n in doc.get("notes", [])) and
       ("scopes", None, "authorization") in
       [(f["check"], f["tool"], f["hint"]) for f in doc["findings"]],
       f"rc={rc} {out} {err}")

# Tool resolution (bad_server.py resolving): mcp-check declares it, so the
# tool is marked resolvable; a resolution that fails or answers looser
# than the static hints is a finding of the hints check; one that meets
# the refusal the call meets too (invalid arguments) is not; a call
# resolved read-only is not held to a scope (and so not checked). calm,
# resolvable but read-only and closed world, has nothing to resolve (a
# note).
RESOLVING = {
    "looser": ([("hints", "flip", "resolution"),
                ("scopes", None, "authorization")],
               "looser than the static hints (openWorldHint"),
    "error": ([("hints", "flip", "resolution"),
               ("scopes", None, "authorization")],
              "tools/resolve failed: JSON-RPC -32603: refused: error"),
    "invalid": ([("scopes", "flip", "scopes")],
                "not resolved (JSON-RPC -32602: refused: invalid)"),
    "fine": ([], "flip: scopes not checked: every call mcp-check has for it "
             "resolved read-only"),
}
with tempfile.TemporaryDirectory() as d:
    for how, (want, word) in RESOLVING.items():
        calls = os.path.join(d, how + ".calls")
        junit = os.path.join(d, how + ".xml")
        with open(calls, "w") as f:
            f.write(json.dumps({"name": "flip", "arguments": {"how": how}}) +
                    "\n")
        rc, out, err = run(["--json", "--junit", junit, "--calls", calls] +
                           server("resolving"))
        doc = json.loads(out) if out.strip().startswith("{") else {}
        found = sorted(((f["check"], f["tool"], f["hint"])
                        for f in doc.get("findings", [])), key=str)
        text = json.dumps(doc.get("findings", [])) + json.dumps(
            doc.get("notes", []))
        flip = (doc.get("tools") or [{}])[0]
        hints = "failed" if ("hints", "flip", "resolution") in want else \
            "passed"
        notes = doc.get("notes", [])
        try:
            xml = open(junit).read()
        except OSError:
            xml = ""
        expect("resolving." + how,
               rc == (1 if want else 0) and found == sorted(want, key=str)
               and word in text and flip.get("resolvable") is True and
               flip.get("resolutions", [{}])[0].get("resolved") ==
               (how == "fine") and
               flip.get("checks", {}).get("hints") == hints and
               "tool resolution: 2 resolvable tools (flip, calm)" in
               " ".join(notes) and
               any(n.startswith("calm: resolvable, but its static hints are "
                                "already the tightest") for n in notes) and
               '<property name="resolvable" value="true"/>' in xml,
               f"rc={rc} {found} {out} {err}")

# The man page renders without a warning.
p = subprocess.run(["man", "--warnings", "-l", MAN], capture_output=True,
                   text=True, env=dict(os.environ, MANWIDTH="80"),
                   timeout=60)
expect("man", p.returncode == 0 and p.stderr == "" and
       "EXIT STATUS" in p.stdout, p.stderr)

if failures:
    print(f"{len(failures)} failed: {' '.join(failures)}")
    sys.exit(1)
print("all passed")
