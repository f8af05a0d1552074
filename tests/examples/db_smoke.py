#!/usr/bin/env python3
"""notes --db: one SQLite store shared by two notes processes. 200
add_note calls, concurrent and split between the two, leave exactly 200
notes, each with its own id, seen alike by both; then one process is
killed (SIGKILL) while calls go on, and every add_note it or the other
answered is in the store the survivor reads. Loopback only;
MCP_TEST_LAUNCHER, when set, is put in front of each process.

usage: db_smoke.py PATH-TO-NOTES
"""
import concurrent.futures
import os
import shutil
import signal
import sys
import tempfile
import time

from notes_proc import SLOW, check, modern_call, start
import notes_proc

notes = sys.argv[1]


def call(url, rid, name, args):
    return modern_call(url, rid, name, args)["result"]


def listed(url):
    return {n["id"] for n in call(url, 1, "list_notes", {})["structuredContent"]["notes"]}


tmp = tempfile.mkdtemp(prefix="libmcp-db-")
try:
    db = os.path.join(tmp, "notes.db")
    a, url_a = start(notes, ["--db", db])
    b, url_b = start(notes, ["--db", db])

    def add(i):
        url = url_a if i % 2 else url_b
        r = call(url, i, "add_note", {"title": f"t{i}", "text": "shared"})
        return None if r.get("isError") else r["structuredContent"]["id"]

    n = 200
    with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
        ids = list(pool.map(add, range(n)))
    check(f"{n} concurrent add_note across two processes all answered",
          all(ids), [i for i in ids if not i][:5])
    check("each note got its own id", len(set(ids)) == n, len(set(ids)))
    seen_a, seen_b = listed(url_a), listed(url_b)
    check(f"both processes see exactly the {n} notes",
          seen_a == seen_b == set(ids), (len(seen_a), len(seen_b)))

    # b dies in the middle of more calls; what was answered stays.
    answered = []

    def add_more(i):
        try:
            r = call(url_a if i % 2 else url_b, 1000 + i, "add_note",
                     {"title": f"late{i}", "text": "x"})
            if not r.get("isError"):
                answered.append(r["structuredContent"]["id"])
        except Exception:  # noqa: BLE001 - the killed process's calls fail
            pass

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        futures = [pool.submit(add_more, i) for i in range(60)]
        time.sleep(0.05)
        b.send_signal(signal.SIGKILL)
        concurrent.futures.wait(futures)
    b.wait()
    survivor = listed(url_a)
    check("no answered note was lost when a process was killed",
          set(answered) <= survivor and set(ids) <= survivor,
          sorted(set(answered) - survivor)[:5])
    a.send_signal(signal.SIGTERM)
    check("the survivor exits 0 on SIGTERM", a.wait(timeout=60 if SLOW else 15) == 0)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print(f"{'FAIL' if notes_proc.failures else 'PASS'}: notes --db")
sys.exit(1 if notes_proc.failures else 0)
