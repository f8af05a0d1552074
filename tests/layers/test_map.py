#!/usr/bin/env python3
"""Checks the table of tests/README.md that maps lib/ to its tests.

    test_map.py SOURCE-DIR

The section "Which test covers each lib/ file" holds one row per file of
lib/*/*.c: the file, then the test file(s) that call it directly (paths
under tests/, in backquotes). The check fails when a file of lib/ has no
row or two, when a row names a file of lib/ that is gone, and when a test
file a row names does not exist. Prints every problem, exits 1 on any.
"""
import glob
import os
import re
import sys

SECTION = "## Which test covers each lib/ file"
ROW = re.compile(r"^\|\s*`(lib/[^`]+)`\s*\|([^|]*)\|")
PATH = re.compile(r"`([^`]+)`")


def rows(readme):
    """(lib file, [test files], line number) of each row of the section."""
    with open(readme) as f:
        lines = f.read().split("\n")
    try:
        start = lines.index(SECTION)
    except ValueError:
        return None
    out = []
    for n, line in enumerate(lines[start + 1:], start + 2):
        if line.startswith("## "):
            break
        m = ROW.match(line)
        if m:
            out.append((m.group(1), PATH.findall(m.group(2)), n))
    return out


def main():
    root = os.path.abspath(sys.argv[1])
    readme = os.path.join(root, "tests", "README.md")
    table = rows(readme)
    if table is None:
        print(f"tests/README.md: no section \"{SECTION}\"")
        return 1
    lib = sorted(os.path.relpath(p, root)
                 for p in glob.glob(os.path.join(root, "lib", "*", "*.c")))
    problems = []
    seen = {}
    for name, tests, line in table:
        where = f"tests/README.md:{line}"
        if name in seen:
            problems.append(f"{where}: a second row for {name} "
                            f"(the first is at line {seen[name]})")
        seen[name] = line
        if name not in lib:
            problems.append(f"{where}: {name} is not a file of lib/ "
                            "(renamed or removed? mend the row)")
        if not tests:
            problems.append(f"{where}: {name} names no test file")
        for t in tests:
            if not os.path.isfile(os.path.join(root, "tests", t)):
                problems.append(f"{where}: {name}: tests/{t} does not exist")
    for name in lib:
        if name not in seen:
            problems.append(f"{name} has no row in tests/README.md "
                            f"(\"{SECTION[3:]}\"): name the test that "
                            "calls it directly")
    for p in problems:
        print(p)
    print(f"test map: {len(lib)} files of lib/, {len(table)} rows, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
