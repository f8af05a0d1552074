#!/usr/bin/env python3
"""notes' export_notes, a long read that may run as a task, in both
protocol eras, over stdio with three notes in the store:
- tools/list: read-only, closed world, taskSupport "optional" (2025-11-25);
- 2025-11-25, with a task param and a progressToken: a working task at
  once, a progress notification per note (1, 2, 3 of 3, related to the
  task), the status notification "completed", tasks/get completed,
  tasks/result the export of the three notes;
- 2025-11-25, tasks/cancel while it works: cancelled, and stays so;
- 2026-07-28 with the tasks extension: a task (resultType "task"), polled
  with tasks/get until completed, its result the export; tasks/cancel
  while it works: cancelled;
- 2026-07-28 without the extension, and 2025-11-25 without a task param:
  an ordinary call answering the export.
Every wait is bounded; nothing is timed. MCP_TEST_LAUNCHER, when set, is
put in front of each notes process.

usage: export_task.py PATH-TO-notes
"""
import json
import os
import queue
import shlex
import subprocess
import sys
import threading
import time

LAUNCHER = shlex.split(os.environ.get("MCP_TEST_LAUNCHER", ""))
WAIT = 120 if LAUNCHER else 20
MODERN = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
failures = 0


def check(what, ok, detail=""):
    global failures
    print(("PASS: " if ok else "FAIL: ") + what + ("" if ok else f" -- {detail}"))
    failures += 0 if ok else 1


class Notes:
    """notes --stdio; every line it writes, in a queue."""

    def __init__(self, path):
        self.p = subprocess.Popen(LAUNCHER + [path, "--stdio"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        self.lines = queue.Queue()
        self.seen = []  # every message read so far
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 100

    def _read(self):
        for line in self.p.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()

    def wait_for(self, pred, what):
        """The first message (seen or coming) pred accepts; bounded."""
        for m in self.seen:
            if pred(m):
                return m
        deadline = time.time() + WAIT
        while time.time() < deadline:
            try:
                m = self.lines.get(timeout=max(0.01, deadline - time.time()))
            except queue.Empty:
                break
            if m is None:
                break
            self.seen.append(m)
            if pred(m):
                return m
        raise SystemExit(f"FAIL: no {what} from notes")

    def ask(self, method, params):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method,
                   "params": params})
        return self.wait_for(lambda m: m.get("id") == rid, f"reply to {method}")

    def close(self):
        self.p.stdin.close()
        return self.p.wait(timeout=WAIT)


def meta(extensions):
    caps = {"extensions": {TASKS: {}}} if extensions else {}
    return {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": caps}


def add_three(n, modern):
    for i in range(3):
        params = {"name": "add_note",
                  "arguments": {"title": f"t{i}", "text": f"text {i}"}}
        if modern:
            params["_meta"] = meta(False)
        r = n.ask("tools/call", params)
        assert r["result"]["structuredContent"]["id"] == f"n{i + 1}", r


def is_export(result, what):
    notes = (result or {}).get("structuredContent", {}).get("notes", [])
    check(f"{what}: the export of the three notes",
          result.get("structuredContent", {}).get("count") == 3 and
          [x["id"] for x in notes] == ["n1", "n2", "n3"] and
          [x["text"] for x in notes] == ["text 0", "text 1", "text 2"],
          result)


def legacy(path):
    n = Notes(path)
    r = n.ask("initialize", {"protocolVersion": "2025-11-25",
                             "capabilities": {"tasks": {}},
                             "clientInfo": {"name": "export_task", "version": "1"}})
    n.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools = n.ask("tools/list", {})["result"]["tools"]
    t = next((t for t in tools if t["name"] == "export_notes"), {})
    ann = t.get("annotations", {})
    check("tools/list: export_notes is read-only, closed world, idempotent",
          ann.get("readOnlyHint") is True and ann.get("openWorldHint") is False
          and ann.get("destructiveHint") is False and
          ann.get("idempotentHint") is True, t)
    check("tools/list: export_notes's taskSupport is optional",
          t.get("execution", {}).get("taskSupport") == "optional", t)
    add_three(n, False)

    r = n.ask("tools/call", {"name": "export_notes",
                             "arguments": {"delay_ms": 20},
                             "task": {"ttl": 60000},
                             "_meta": {"progressToken": "export"}})
    task = r.get("result", {}).get("task", {})
    tid = task.get("taskId")
    check("2025-11-25: a task param makes it a working task",
          tid and task.get("status") in ("working", "completed"), r)
    n.wait_for(lambda m: m.get("method") == "notifications/tasks/status" and
               m["params"].get("taskId") == tid and
               m["params"].get("status") == "completed", "completed status")
    progress = [m["params"] for m in n.seen
                if m.get("method") == "notifications/progress" and
                m["params"].get("progressToken") == "export"]
    check("2025-11-25: progress per note, 1 to 3 of 3, related to the task",
          [(p["progress"], p["total"]) for p in progress] ==
          [(1, 3), (2, 3), (3, 3)] and
          all(p.get("_meta", {}).get(RELATED, {}).get("taskId") == tid
              for p in progress), progress)
    r = n.ask("tasks/get", {"taskId": tid})
    check("2025-11-25: tasks/get says completed",
          r.get("result", {}).get("status") == "completed", r)
    r = n.ask("tasks/result", {"taskId": tid})
    is_export(r.get("result", {}), "2025-11-25 tasks/result")

    r = n.ask("tools/call", {"name": "export_notes",
                             "arguments": {"delay_ms": 1000},
                             "task": {"ttl": 60000}})
    tid = r.get("result", {}).get("task", {}).get("taskId")
    r = n.ask("tasks/cancel", {"taskId": tid})
    check("2025-11-25: tasks/cancel while it works: cancelled",
          r.get("result", {}).get("status") == "cancelled", r)
    r = n.ask("tasks/get", {"taskId": tid})
    check("2025-11-25: and tasks/get says cancelled",
          r.get("result", {}).get("status") == "cancelled", r)

    r = n.ask("tools/call", {"name": "export_notes",
                             "arguments": {"delay_ms": 0}})
    is_export(r.get("result", {}), "2025-11-25 without a task param")
    check("2025-11-25: notes exits 0 at the end of its input", n.close() == 0)


def poll(n, tid, want):
    """tasks/get until the status is want (bounded); the last reply."""
    deadline = time.time() + WAIT
    r = {}
    while time.time() < deadline:
        r = n.ask("tasks/get", {"taskId": tid, "_meta": meta(True)})
        if r.get("result", {}).get("status") == want:
            break
        time.sleep(0.05)
    return r


def modern(path):
    n = Notes(path)
    add_three(n, True)
    r = n.ask("tools/call", {"name": "export_notes",
                             "arguments": {"delay_ms": 20},
                             "_meta": meta(True)})
    res = r.get("result", {})
    tid = res.get("taskId")
    check("2026-07-28 with the tasks extension: a task",
          res.get("resultType") == "task" and tid, r)
    r = poll(n, tid, "completed")
    res = r.get("result", {})
    check("2026-07-28: tasks/get comes to completed, with the last status",
          res.get("status") == "completed" and
          res.get("statusMessage") == "exported 3 of 3 notes", r)
    is_export(res.get("result", {}), "2026-07-28 tasks/get")

    r = n.ask("tools/call", {"name": "export_notes",
                             "arguments": {"delay_ms": 1000},
                             "_meta": meta(True)})
    tid = r.get("result", {}).get("taskId")
    n.ask("tasks/cancel", {"taskId": tid, "_meta": meta(True)})
    r = poll(n, tid, "cancelled")
    check("2026-07-28: tasks/cancel while it works: cancelled",
          r.get("result", {}).get("status") == "cancelled", r)

    r = n.ask("tools/call", {"name": "export_notes", "arguments": {},
                             "_meta": meta(False)})
    check("2026-07-28 without the extension: an ordinary result",
          r.get("result", {}).get("resultType") == "complete", r)
    is_export(r.get("result", {}), "2026-07-28 without the extension")
    r = n.ask("tools/call", {"name": "export_notes",
                             "arguments": {"delay_ms": 1001},
                             "_meta": meta(False)})
    check("delay_ms above 1000 is refused by the schema (a tool error)",
          r.get("result", {}).get("isError") is True, r)
    check("2026-07-28: notes exits 0 at the end of its input", n.close() == 0)


legacy(sys.argv[1])
modern(sys.argv[1])
print(f"{'FAIL' if failures else 'PASS'}: export_notes as a task")
sys.exit(1 if failures else 0)
