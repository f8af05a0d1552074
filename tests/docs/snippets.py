#!/usr/bin/env python3
"""Keeps the code in the documentation equal to real, built files.

    snippets.py SOURCE-DIR [--update]

Every fenced code block in the documents below must follow a marker that
says where it comes from or how a test runs it:

  <!-- include: PATH -->                       the whole file PATH
  <!-- include: PATH from "START" to "END" -->
      PATH's lines from the first one containing START through the next
      one (after it) containing END; the START line alone when END is START;
      the indentation all these lines share is removed
  <!-- sh: ... -->                             a shell block run by
                                               run_commands.py

A c, cmake or sh block without a marker, or an included block that differs
from its file, fails the check. --update rewrites included blocks from
their files instead. Blocks in other languages (text, json) show output and
need no marker. PATH is relative to SOURCE-DIR.
"""
import os
import re
import sys
import textwrap

DOCUMENTS = ["README.md", "docs/tutorial.md", "docs/deployment.md",
             "examples/port_daemon/README.md"]
MUST_MARK = {"c", "cmake", "sh"}
INCLUDE = re.compile(
    r'<!--\s*include:\s*(\S+)(?:\s+from\s+"((?:[^"\\]|\\.)*)"'
    r'\s+to\s+"((?:[^"\\]|\\.)*)")?\s*-->')
SH = re.compile(r"<!--\s*sh:")
FENCE = re.compile(r"^( *)(```+)\s*([\w+-]*)\s*$")


def unquote(s):
    return re.sub(r"\\(.)", r"\1", s)


def dedent(lines):
    """The lines without the indentation they all share."""
    return textwrap.dedent("\n".join(lines)).split("\n")


def region(src, path, start, end):
    """The lines of the included file, or an error string."""
    full = os.path.join(src, path)
    try:
        with open(full, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        return None, "cannot read %s: %s" % (path, e.strerror)
    if start is None:
        return lines, None
    start, end = unquote(start), unquote(end)
    for i, line in enumerate(lines):
        if start in line and start == end:
            return [line.strip()], None  # one line: from "X" to "X"
        if start in line:
            for j in range(i + 1, len(lines)):
                if end in lines[j]:
                    return dedent(lines[i:j + 1]), None
            return None, '%s: no line containing "%s" after "%s"' % (
                path, end, start)
    return None, '%s: no line contains "%s"' % (path, start)


def blocks(lines):
    """Yields (marker line index or None, fence start, fence end, lang,
    indent) for each fenced block; a block inside a list item is indented,
    and its lines are compared without that indentation."""
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3).lower()
        j = i + 1
        while j < len(lines) and lines[j].strip() != fence:
            j += 1
        k = i - 1
        while k >= 0 and lines[k].strip() == "":
            k -= 1
        marker = k if k >= 0 and lines[k].lstrip().startswith("<!--") else None
        yield marker, i, j, lang, indent
        i = j + 1


def body(lines, start, end, indent):
    """A block's lines without the indentation of its fence."""
    return [l[len(indent):] if l.startswith(indent) else l.lstrip(" ")
            for l in lines[start + 1:end]]


def check(src, doc, update):
    path = os.path.join(src, doc)
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    errors, out, last = [], [], 0
    count = 0
    for marker, start, end, lang, indent in blocks(lines):
        where = "%s:%d" % (doc, start + 1)
        text = lines[marker] if marker is not None else ""
        inc = INCLUDE.search(text)
        if inc:
            count += 1
            want, err = region(src, inc.group(1), inc.group(2), inc.group(3))
            if err:
                errors.append("%s: %s" % (where, err))
            elif body(lines, start, end, indent) != want:
                if update:
                    out.extend(lines[last:start + 1])
                    out.extend((indent + w) if w else w for w in want)
                    last = end
                else:
                    errors.append("%s: differs from %s (run %s --update)" % (
                        where, inc.group(1), os.path.basename(sys.argv[0])))
        elif SH.search(text) and lang == "sh":
            count += 1
        elif lang in MUST_MARK:
            errors.append("%s: a %s block with no include or sh marker" % (
                where, lang))
    if update and last:
        out.extend(lines[last:])
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(out) + "\n")
        print("updated %s" % doc)
    return errors, count


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and
                                       sys.argv[2] != "--update"):
        print(__doc__, file=sys.stderr)
        return 2
    src, update = sys.argv[1], len(sys.argv) == 3
    errors, total = [], 0
    for doc in DOCUMENTS:
        e, n = check(src, doc, update)
        errors += e
        total += n
    for e in errors:
        print("FAIL: " + e, file=sys.stderr)
    if not errors:
        print("PASS: %d marked blocks in %d documents" % (total,
                                                          len(DOCUMENTS)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
