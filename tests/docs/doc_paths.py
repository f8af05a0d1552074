#!/usr/bin/env python3
"""Every path a document names exists.

Usage: doc_paths.py SOURCE_DIR DOCUMENT...

A path is a `code span` that names a file or a folder of the repository:
it contains a '/' and starts with one of the top-level folders, or it is
a top-level file. Spans like `mcp_call_finish` or `-32602` are not paths.
"""
import os
import re
import sys

TOP = ("include/", "lib/", "examples/", "tests/", "cmake/", "docs/", ".ci/")
FILES = ("CMakeLists.txt", "README.md", "Makefile")


def main():
    root, docs = sys.argv[1], sys.argv[2:]
    missing, seen = [], 0
    for doc in docs:
        text = open(os.path.join(root, doc), encoding="utf-8").read()
        for span in re.findall(r"`([^`\n]+)`", text):
            if not (span.startswith(TOP) or span in FILES):
                continue
            seen += 1
            if not os.path.exists(os.path.join(root, span)):
                missing.append(f"{doc}: {span}")
    for m in missing:
        print("doc_paths: no such path:", m)
    print(f"doc_paths: {seen} paths named, {len(missing)} missing")
    return 1 if missing or seen == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
