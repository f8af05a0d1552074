#!/usr/bin/env python3
"""The complexity gate of lib/: clang-tidy's
readability-function-cognitive-complexity at threshold 50 over every file
of lib/*/*.c.

    complexity.py --clang-tidy PATH --allow FILE [--build DIR] SOURCE-DIR
                  [-- COMPILE-FLAGS...]

With DIR/compile_commands.json (a build configured with
-DCMAKE_EXPORT_COMPILE_COMMANDS=ON), clang-tidy takes the flags of each
file it lists from it (-p DIR); the other files (all of them without it)
get COMPILE-FLAGS. Only that check runs, with
--warnings-as-errors. The gate fails for a function over the threshold
that FILE does not list, for a line of FILE whose function is no longer
over it (so the list only shrinks), and when clang-tidy cannot read a
file. Prints every function over the threshold with its score.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

CHECK = "readability-function-cognitive-complexity"
THRESHOLD = 50
CONFIG = ("{Checks: '-*,%s', WarningsAsErrors: '%s', CheckOptions: ["
          "{key: %s.Threshold, value: %d}, "
          "{key: %s.DescribeBasicIncrements, value: false}]}"
          % (CHECK, CHECK, CHECK, THRESHOLD, CHECK))
FOUND = re.compile(r"^(.*?):\d+:\d+: (?:warning|error): function '([^']+)' "
                   r"has cognitive complexity of (\d+) \(threshold \d+\)")
ERROR = re.compile(r"^(.*?):\d+:\d+: error: (.*)$")
ENTRY = re.compile(r"^(\S+)\s+(\S+):\s*(\S.*)$")


def allowlist(path):
    """{(file, function): line number} of the allowlist."""
    allowed, problems = {}, []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            m = ENTRY.match(line)
            if m is None:
                problems.append(f"{path}:{n}: not '<file> <function>: why'")
                continue
            allowed[(m.group(1), m.group(2))] = n
    return allowed, problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clang-tidy", required=True)
    ap.add_argument("--allow", required=True)
    ap.add_argument("--build")
    ap.add_argument("source")
    ap.add_argument("flags", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    root = os.path.abspath(a.source)
    flags = a.flags[1:] if a.flags[:1] == ["--"] else a.flags
    files = sorted(glob.glob(os.path.join(root, "lib", "*", "*.c")))
    cmd = [a.clang_tidy, "--quiet", "--config=" + CONFIG,
           "--warnings-as-errors=" + CHECK]
    in_db = set()
    db = a.build and os.path.join(a.build, "compile_commands.json")
    if db and os.path.isfile(db):
        with open(db) as f:
            in_db = {os.path.abspath(os.path.join(e["directory"], e["file"]))
                     for e in json.load(f)}
    listed = [f for f in files if f in in_db]
    rest = [f for f in files if f not in in_db]
    runs = []
    if listed:
        # The build's own flags, warnings not made errors: only the
        # check's findings count here.
        runs.append(cmd + ["-p", a.build, "--extra-arg=-Wno-error"] + listed)
    if rest:
        runs.append(cmd + rest + ["--"] + flags)
    output, codes = [], []
    for c in runs:
        r = subprocess.run(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True, cwd=root)
        output += r.stdout.splitlines()
        codes.append(r.returncode)
    found, problems = {}, []
    for line in output:
        m = FOUND.match(line)
        if m:
            rel = os.path.relpath(os.path.abspath(os.path.join(root, m.group(1))),
                                  root)
            found[(rel, m.group(2))] = int(m.group(3))
            continue
        m = ERROR.match(line)
        if m:
            problems.append(f"clang-tidy could not read {line}")
    if any(c not in (0, 1) for c in codes) or (any(codes) and not found
                                                and not problems):
        problems.append(f"clang-tidy failed ({codes}):\n" + "\n".join(output))
    allowed, bad_lines = allowlist(a.allow)
    problems += bad_lines
    allow_name = os.path.relpath(os.path.abspath(a.allow), root)
    for (f, fn), score in sorted(found.items()):
        ok = (f, fn) in allowed
        print(f"{f} {fn}: {score}{'' if ok else '  NOT ALLOWED'}")
        if not ok:
            problems.append(f"{f}: {fn} has cognitive complexity {score} "
                            f"(over {THRESHOLD}): split it, or add a line "
                            f"'{f} {fn}: why' to {allow_name}")
    for (f, fn), n in sorted(allowed.items(), key=lambda e: e[1]):
        if (f, fn) not in found:
            problems.append(f"{allow_name}:{n}: {f} {fn} is no longer over "
                            f"{THRESHOLD} (or gone): remove its line")
    for p in problems:
        print(p)
    print(f"complexity: {len(files)} files, {len(found)} functions over "
          f"{THRESHOLD}, {len(allowed)} allowed, {len(problems)} problems"
          f" ({len(listed)} with the flags of compile_commands.json)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
