#!/usr/bin/env python3
"""Checks the include graph of lib/ against the layers the build declares.

    layer_graph.py LIB-DIR

The layers are read from the mcp_layer() calls of the top-level
CMakeLists.txt (a layer's folder, and the folders BELOW it its include path
holds). Then every #include "..." of every file in lib/:
  - names a bare header (no directory, no ".."), so no include can step
    out of the include path its folder was given;
  - resolves to exactly one header of lib/, in the file's own folder or a
    folder its layer lists below it;
and the folder graph those includes make has no cycle. Prints the graph,
one line per folder, and exits 1 on any violation.
"""
import os
import re
import sys

LAYER = re.compile(r"mcp_layer\((\w+)\s+BELOW\s+([^)]*?)\s+SOURCES\s+([^)]*)\)",
                   re.S)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layers(cmake):
    """folder -> set of folders its files may include from."""
    allowed = {}
    with open(cmake) as f:
        text = f.read()
    for target, below, sources in LAYER.findall(text):
        dirs = below.split()
        folders = {s.split("/")[1] for s in sources.split()
                   if s.startswith("lib/") and s.count("/") == 2}
        for folder in folders:
            allowed.setdefault(folder, set()).update(dirs)
    return allowed


def main():
    lib = os.path.abspath(sys.argv[1])
    allowed = layers(os.path.join(os.path.dirname(lib), "CMakeLists.txt"))
    headers, files, problems = {}, [], []
    for folder in sorted(os.listdir(lib)):
        path = os.path.join(lib, folder)
        if not os.path.isdir(path):
            problems.append("lib/%s: a file outside every layer's folder" %
                            folder)
            continue
        if folder not in allowed:
            problems.append("lib/%s: no mcp_layer() builds this folder" %
                            folder)
        for name in sorted(os.listdir(path)):
            if name.endswith(".h"):
                if name in headers:
                    problems.append("lib/%s/%s: the header name is also "
                                    "lib/%s's" % (folder, name,
                                                  headers[name]))
                headers[name] = folder
            if name.endswith((".c", ".h")):
                files.append((folder, name))
    graph = {f: set() for f in allowed}
    for folder, name in files:
        with open(os.path.join(lib, folder, name), encoding="utf-8") as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            where = "lib/%s/%s includes \"%s\"" % (folder, name, inc)
            if inc.startswith("mcp/"):
                continue  # the public headers, on every layer's path
            if "/" in inc or ".." in inc:
                problems.append(where + ": a path, not a bare header name")
                continue
            owner = headers.get(inc)
            if owner is None:
                problems.append(where + ": no such header in lib/")
                continue
            if owner != folder and owner not in allowed.get(folder, ()):
                problems.append("%s: lib/%s is not below lib/%s" % (
                    where, owner, folder))
            if owner != folder:
                graph.setdefault(folder, set()).add(owner)
    # A cycle between folders (which the rules above would already forbid,
    # unless the layers declared in CMakeLists.txt had one themselves).
    state = {}

    def visit(f, trail):
        state[f] = 1
        for g in sorted(graph.get(f, ())):
            if state.get(g) == 1:
                problems.append("include cycle: " + " -> ".join(
                    trail + [f, g]))
            elif g not in state:
                visit(g, trail + [f])
        state[f] = 2

    for f in sorted(graph):
        if f not in state:
            visit(f, [])
    for f in sorted(graph):
        print("lib/%-9s includes from %s" % (
            f, ", ".join(sorted(graph[f])) or "(nothing)"))
    for p in problems:
        print("FAIL: " + p, file=sys.stderr)
    print("%d files, %d headers, %d problems" % (len(files), len(headers),
                                                 len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
