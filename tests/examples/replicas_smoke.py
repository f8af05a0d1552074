#!/usr/bin/env python3
"""Two notes processes as replicas behind a proxy would run them: each with
its own --node-id, both with the same --state-key. A legacy session id
names the node that minted it (and is unknown to the other); a 2026-07-28
delete_note started on one (its InputRequiredResult's requestState) is
finished by a retry on the other; a third process with another key refuses
that state. Loopback only; MCP_TEST_LAUNCHER, when set, is put in front of
each process.

usage: replicas_smoke.py PATH-TO-NOTES
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile

from notes_proc import SLOW, check, modern_call, post, start
import notes_proc

notes = sys.argv[1]
ELICIT = {"elicitation": {}}


def stop(p):
    p.send_signal(signal.SIGTERM)
    try:
        return p.wait(timeout=60 if SLOW else 15)
    except subprocess.TimeoutExpired:
        p.kill()
        return None


tmp = tempfile.mkdtemp(prefix="libmcp-replicas-")
try:
    key = os.path.join(tmp, "state.key")
    with open(key, "wb") as f:
        f.write(os.urandom(32))
    other_key = os.path.join(tmp, "other.key")
    with open(other_key, "wb") as f:
        f.write(os.urandom(32))
    data_a = os.path.join(tmp, "a.json")
    a, url_a = start(notes, ["--node-id", "a", "--state-key", key, "--data", data_a])
    body = modern_call(url_a, 1, "add_note", {"title": "shared", "text": "x"})
    note = body["result"]["structuredContent"]["id"]
    # b and c start from a's store, as replicas sharing one would.
    data_b = os.path.join(tmp, "b.json")
    shutil.copy(data_a, data_b)
    b, url_b = start(notes, ["--node-id", "b", "--state-key", key, "--data", data_b])
    c, url_c = start(notes, ["--node-id", "c", "--state-key", other_key, "--data", data_b])

    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "replicas", "version": "1"}}}
    status, headers, _ = post(url_a, init)
    sid = headers.get("Mcp-Session-Id", "")
    check("a's session id names node a", status == 200 and sid.startswith("a."), sid)
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    status, _, _ = post(url_b, ping, {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
    check("a's session is unknown to b (404)", status == 404, status)

    body = modern_call(url_a, 3, "delete_note", {"id": note}, ELICIT)
    result = body["result"]
    check("delete_note on a asks for confirmation", result.get("resultType") == "input_required",
          result)
    state = result.get("requestState")
    answer = {"requestState": state,
              "inputResponses": {"confirm": {"action": "accept", "content": {}}}}
    body = modern_call(url_c, 4, "delete_note", {"id": note}, ELICIT, answer)
    check("c, with another key, refuses a's requestState",
          body.get("error", {}).get("code") == -32602, body)
    body = modern_call(url_b, 5, "delete_note", {"id": note}, ELICIT, answer)
    text = (body.get("result", {}).get("content") or [{}])[0].get("text")
    check("b, with the same key, finishes the retry a started", text == "Deleted.", body)

    for name, p in (("a", a), ("b", b), ("c", c)):
        check(f"{name} exits 0 on SIGTERM", stop(p) == 0)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print(f"{'FAIL' if notes_proc.failures else 'PASS'}: replicas")
sys.exit(1 if notes_proc.failures else 0)
