#!/usr/bin/env python3
"""Checks that a shared library exports exactly its public API.

Usage: exports_check.py MAP LIBRARY HEADER...

The names declared MCP_API in the headers, the names of the version
script MAP and the names the built LIBRARY exports (nm -D) must be the
same three sets; every exported name must carry the script's version node.
"""
import re
import subprocess
import sys


def declared(headers):
    names = set()
    for h in headers:
        text = open(h, encoding="utf-8").read()
        for m in re.finditer(r"MCP_API\b([^;]*?)\b(mcp_\w+)\s*\(", text, re.S):
            names.add(m.group(2))
    return names


def scripted(path):
    text = open(path, encoding="utf-8").read()
    node = re.search(r"^(\w+)\s*\{", text, re.M).group(1)
    body = text[text.index("global:"):text.index("local:")]
    return node, set(re.findall(r"\b(mcp_\w+)\s*;", body))


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    names = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBRW" and "@" in parts[2]:
            name, _, version = parts[2].partition("@")
            names[name] = version.lstrip("@")
        elif len(parts) == 3 and parts[1] != "A":
            names[parts[2]] = ""
    return names


def main():
    map_path, lib, headers = sys.argv[1], sys.argv[2], sys.argv[3:]
    api = declared(headers)
    node, script = scripted(map_path)
    built = exported(lib)
    problems = []
    for name in sorted(api - script):
        problems.append(f"{name} is declared MCP_API but not in {map_path}")
    for name in sorted(script - api):
        problems.append(f"{name} is in {map_path} but no header declares it")
    for name in sorted(set(built) - script):
        problems.append(f"{lib} exports {name}, which is no public API")
    for name in sorted(script - set(built)):
        problems.append(f"{lib} does not export {name}")
    for name, version in sorted(built.items()):
        if name in script and version != node:
            problems.append(f"{name} is versioned '{version}', not {node}")
    for p in problems:
        print("exports:", p)
    print(f"exports: {len(built)} names exported, {len(api)} declared, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
