#!/usr/bin/env python3
"""notes --db: one SQLite store shared by two notes processes. 200
add_note calls, concurrent and split between the two, leave exactly 200
notes, each with its own id, seen alike by both; then one process is
killed (SIGKILL) while calls go on, and every add_note it or the other
answered is in the store the survivor reads. Then stores made before
notes kept owners: a database without the column owner (which notes adds)
and a data file without the member, each with a note, load; that note is
nobody's, so a notes:write caller is refused its deletion (-31403, a
step-up to notes:admin), while the note it adds itself is its own, owned in the
database, and its to delete. Loopback only; MCP_TEST_LAUNCHER, when set,
is put in front of each process.

usage: db_smoke.py PATH-TO-NOTES
"""
import concurrent.futures
import os
import shutil
import json
import signal
import sqlite3
import sys
import tempfile
import time

from notes_proc import MODERN, SLOW, check, modern_call, post, start
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

    def delete_status(url, note):
        """The HTTP status of a 2026-07-28 delete_note, and its reply."""
        meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {}}
        status, headers, body = post(url, {
            "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "delete_note", "arguments": {"id": note},
                       "_meta": meta}},
            {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call",
             "Mcp-Name": "delete_note"})
        return status, headers.get("WWW-Authenticate", ""), body

    def older_store(store, what, owned):
        """notes --scopes "notes:read notes:write" (subject "http") on a
        store holding note n1, which nobody owns; owned() says who owns a
        note, read from the store after notes stopped."""
        p, url = start(notes, ["--scopes", "notes:read notes:write"] + store)
        check(f"{what}: the older store loads", listed(url) == {"n1"},
              listed(url))
        # Without authorization (no token, no challenge) the refusal is
        # the JSON-RPC error alone.
        status, _, body = delete_status(url, "n1")
        error = (body or {}).get("error", {})
        check(f"{what}: deleting a note nobody owns needs notes:admin "
              "(-31403)", error.get("code") == -31403 and
              error.get("data", {}).get("requiredScopes") == ["notes:admin"],
              (status, body))
        mine = call(url, 2, "add_note", {"title": "mine", "text": "x"})
        mine = mine["structuredContent"]["id"]
        p.send_signal(signal.SIGTERM)
        check(f"{what}: notes exits 0 on SIGTERM",
              p.wait(timeout=60 if SLOW else 15) == 0)
        check(f"{what}: the added note is owned by the caller's subject, "
              "the older one by nobody",
              owned(mine) == "http" and owned("n1") is None,
              (owned(mine), owned("n1")))
        p, url = start(notes, ["--scopes", "notes:read notes:write"] + store)
        status, _, body = delete_status(url, mine)
        check(f"{what}: after a restart the caller deletes its own note",
              status == 200 and body["result"]["content"][0]["text"] ==
              "Deleted.", (status, body))
        check(f"{what}: the older note stays", listed(url) == {"n1"},
              listed(url))
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=60 if SLOW else 15)

    old = os.path.join(tmp, "old.db")
    with sqlite3.connect(old) as c:
        c.execute("CREATE TABLE notes (n INTEGER PRIMARY KEY AUTOINCREMENT, "
                  "title TEXT NOT NULL, text TEXT NOT NULL)")
        c.execute("INSERT INTO notes (title, text) VALUES ('old', 'kept')")
    c.close()

    def db_owner(note):
        with sqlite3.connect(old) as c:
            row = c.execute("SELECT owner FROM notes WHERE n = ?",
                            (int(note[1:]),)).fetchone()
        c.close()
        return row[0] if row else "(no such note)"

    older_store(["--db", old], "a database without owners", db_owner)

    data = os.path.join(tmp, "old.json")
    with open(data, "w") as f:
        json.dump({"notes": [{"id": "n1", "title": "old", "text": "kept"}],
                   "next_id": 2}, f)

    def file_owner(note):
        with open(data) as f:
            for n in json.load(f)["notes"]:
                if n["id"] == note:
                    return n.get("owner")
        return "(no such note)"

    older_store(["--data", data], "a data file without owners", file_owner)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print(f"{'FAIL' if notes_proc.failures else 'PASS'}: notes --db")
sys.exit(1 if notes_proc.failures else 0)
