#!/usr/bin/env python3
"""An example serving HTTP leaves its command line as it was given: `ps`
(/proc/PID/cmdline) shows the arguments it was started with, byte for
byte, while it serves. Reading the flags must not write to argv (notes
once turned `--http 127.0.0.1:18100` into `--http 127.0.0.1 18100` and
split its --scopes in place).

    cmdline_kept.py NAME PATH [NAME PATH ...]    (notes, everything, dashboard)

The examples run without MCP_TEST_LAUNCHER: under valgrind the kernel's
copy of the arguments is valgrind's, and what the program does to its own
would not show. Their memory is checked by the other example tests.
"""
import os
import re
import signal
import socket
import subprocess
import sys
import time

HANG_GUARD_S = 60
failures = 0


def check(what, ok, detail=""):
    global failures
    print(("PASS: " if ok else "FAIL: ") + what + ("" if ok else f" -- {detail}"))
    failures += 0 if ok else 1


def loopback_v6():
    """Whether [::1] can be bound here."""
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def run(name, path, args):
    """Starts path with args, waits for its listening line, compares its
    /proc cmdline with what was started, and stops it with SIGTERM."""
    argv = [path] + args
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    try:
        deadline = time.time() + HANG_GUARD_S
        line = ""
        while time.time() < deadline:
            line = p.stderr.readline()
            if "listening on" in line or (not line and p.poll() is not None):
                break
        check(f"{name} {' '.join(args)}: prints its listening line",
              re.search(r"listening on https?://\S+:\d+/mcp$", line.strip()),
              line)
        with open(f"/proc/{p.pid}/cmdline", "rb") as f:
            seen = f.read()
        given = b"".join(a.encode() + b"\0" for a in argv)
        check(f"{name}: /proc/PID/cmdline is the command line given",
              seen == given, f"{seen!r} != {given!r}")
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            rc = p.wait(timeout=HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
        p.stderr.close()
    check(f"{name}: exits 0 on SIGTERM", rc == 0, rc)


def main():
    pairs = sys.argv[1:]
    if len(pairs) % 2 or not pairs:
        sys.exit("usage: cmdline_kept.py NAME PATH [NAME PATH ...]")
    v6 = loopback_v6()
    for name, path in zip(pairs[::2], pairs[1::2]):
        run(name, path, ["--http", "127.0.0.1:0"])
        if v6:
            run(name, path, ["--http", "[::1]:0"])
        if name == "notes":
            run(name, path, ["--http", "127.0.0.1:0", "--scopes",
                             "notes:read notes:write", "--node-id", "n1"])
            run(name, path, ["--scopes", " notes:read\tnotes:write ",
                             "--http", "127.0.0.1:0"])
    print(("FAIL" if failures else "PASS") + ": command lines kept")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
