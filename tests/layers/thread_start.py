#!/usr/bin/env python3
"""Every thread of the library starts through mcp__thread_start.

Usage: thread_start.py OBJECT... (an argument may hold several, joined by
";")

A signal sent to the process goes to any thread that does not block it; on
one of the library's, its default action ends the process while the
application waits for the signal in sigwait. lib/base/thread.c starts a
thread with every signal blocked but the faults; so no other object of
lib/ may call pthread_create (a thread started by libmicrohttpd inherits
the mask mcp__signals_quiet sets around its start).
"""
import subprocess
import sys


def main():
    objects = [o for arg in sys.argv[1:] for o in arg.split(";") if o]
    problems, starters = [], 0
    for obj in objects:
        out = subprocess.run(["nm", "-u", obj], check=True,
                             capture_output=True, text=True).stdout
        names = {line.split()[-1] for line in out.splitlines()}
        if "pthread_create" not in names:
            continue
        if obj.rsplit("/", 1)[-1].removesuffix(".o") == "thread.c":
            starters += 1
        else:
            problems.append(obj.split("/lib/", 1)[-1])
    for p in problems:
        print(f"thread_start: {p} calls pthread_create; use mcp__thread_start")
    print(f"thread_start: {len(objects)} objects, {len(problems)} problems")
    return 1 if problems or starters == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
