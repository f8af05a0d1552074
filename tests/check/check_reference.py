#!/usr/bin/env python3
"""mcp-check --observe over the official reference servers, against what
was verified by hand (tests/check/reference/<server>.expect.json: per tool,
what it writes, removes, renames and makes in the scratch folder, whether
it connects, and the findings its hints deserve).

  check_reference.py MCP_CHECK REFERENCE_DIR NODE_MODULES

Each server runs under observation in a fresh scratch folder (@DIR@ in the
calls and expectations); the calls are <server>.calls. Compared per tool,
first call only (the repeat of an idempotent tool is judged by its
findings): the files written or created, removed, renamed (pairs), the
folders made, all under @DIR@ (a temporary name's random part matched by
*), whether it used the network, and its behaviour findings by hint.

One deviation from the expectations, by DESIGN.md section 8 (an additive
tool that replaced a file is a finding only when some earlier bytes are not
in the new file): server-memory's create_relations renames a rewritten
graph over memory.jsonl whose earlier lines are all kept at its start (the
relation's line is appended), so mcp-check rightly finds nothing there;
add_observations changes an existing line, a possible finding."""
import fnmatch
import json
import os
import subprocess
import sys
import tempfile

MCP_CHECK, REF, MODULES = sys.argv[1:4]
NOT_FOUND = {("server-memory", "create_relations", "destructiveHint")}
SERVERS = {
    "server-filesystem": lambda d: (["node", os.path.join(
        MODULES, "@modelcontextprotocol/server-filesystem/dist/index.js"), d],
        {}),
    "server-memory": lambda d: (["node", os.path.join(
        MODULES, "@modelcontextprotocol/server-memory/dist/index.js")],
        {"MEMORY_FILE_PATH": os.path.join(d, "memory.jsonl")}),
}
failures = []


def under(path, d):
    return path == d or path.startswith(d + "/")


def seen(tool, d):
    """What the first call of a tool did in d, in the expectations' terms."""
    out = {"writes": set(), "removes": set(), "renames": set(),
           "mkdirs": set(), "connects": False}
    for e in tool.get("effects", []):
        if e["call"] == "repeated":
            continue
        op, t = e["op"], e["target"].replace(d, "@DIR@")
        t2 = e.get("target2", "").replace(d, "@DIR@")
        if op in ("socket", "connect", "send"):
            out["connects"] = True
        if not under(e["target"], d):
            continue
        if e["syscall"].startswith("mkdir"):
            out["mkdirs"].add(t)
        elif op in ("write", "create", "truncate"):
            out["writes"].add(t)
        elif op == "remove":
            out["removes"].add(t)
        elif op == "rename":
            out["renames"].add((t, t2))
    return out


def matches(got, want):
    """Each expected pattern matches something seen, and each thing seen
    matches an expected pattern."""
    def m(g, w):
        if isinstance(w, list):
            return all(fnmatch.fnmatchcase(a, b) for a, b in zip(g, w))
        return fnmatch.fnmatchcase(g, w)
    return (all(any(m(g, w) for g in got) for w in want) and
            all(any(m(g, w) for w in want) for g in got))


def check_server(name):
    with tempfile.TemporaryDirectory() as d:
        d = os.path.realpath(d)
        with open(os.path.join(REF, name + ".calls")) as f:
            calls_text = f.read().replace("@DIR@", d)
        calls = os.path.join(d, "..", os.path.basename(d) + ".calls")
        with open(calls, "w") as f:
            f.write(calls_text)
        with open(os.path.join(REF, name + ".expect.json")) as f:
            expect = json.load(f)
        cmd, env = SERVERS[name](d)
        try:
            p = subprocess.run([MCP_CHECK, "--json", "--observe", "--calls",
                                calls, "--timeout", "30", "--"] + cmd,
                               capture_output=True, text=True, timeout=600,
                               env=dict(os.environ, **env), cwd=d)
        finally:
            os.unlink(calls)
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            print(f"FAIL: {name}: no report (rc {p.returncode}): {p.stderr}")
            failures.append(name)
            return
        tools = {t["name"]: t for t in doc["tools"]}
        findings = {(f["tool"], f["hint"]) for f in doc["findings"]
                    if f["check"] == "behaviour"}
        for tool, want in expect.items():
            got = seen(tools.get(tool, {}), d)
            wrong = []
            for key in ("writes", "removes", "mkdirs"):
                if not matches(got[key], want[key]):
                    wrong.append(f"{key} {sorted(got[key])} != {want[key]}")
            if not matches(got["renames"], want["renames"]):
                wrong.append(f"renames {sorted(got['renames'])} != "
                             f"{want['renames']}")
            if got["connects"] != want["connects"]:
                wrong.append(f"connects {got['connects']}")
            hints = {f["hint"] for f in want["findings"]
                     if (name, tool, f["hint"]) not in NOT_FOUND}
            have = {h for (t, h) in findings if t == tool}
            if hints != have:
                wrong.append(f"findings {sorted(have)} != {sorted(hints)}")
            if tools.get(tool, {}).get("checks", {}).get("behaviour") not in (
                    "passed", "failed"):
                wrong.append("not called")
            label = f"{name}.{tool}"
            if wrong:
                print(f"FAIL: {label}: " + "; ".join(wrong))
                failures.append(label)
            else:
                print(f"PASS: {label}")
        extra = {t for (t, _) in findings} - set(expect)
        if extra:
            print(f"FAIL: {name}: findings for tools not expected: {extra}")
            failures.append(name)


for server in SERVERS:
    check_server(server)
if failures:
    print(f"{len(failures)} failed")
    sys.exit(1)
print("all passed")
