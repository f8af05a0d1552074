#!/usr/bin/env python3
"""notes' note:///{id} resources, subscribed to across processes: two
notes processes on one Redis (a redis-server of the test's own, on a
loopback port) serve HTTP. resources/templates/list names note:///{id},
resources/read returns a note as JSON and an unknown id is not found.
Two legacy sessions on a open their GET streams: one subscribes to
note:///N1, the other to note:///N2, and both to a sentinel note S. A
change made through b (an append, then a delete) and one made through a
itself are each told to the first session exactly once, and the second
hears nothing of N1; adding a note sends no resources list_changed.
"Exactly once" needs no quiet period: the store delivers a server's
changes in order, so when the sentinel's update (made after the change)
reaches a stream, every earlier one has. Every wait is bounded;
everything started is stopped. MCP_TEST_LAUNCHER, when set, is put in
front of each notes process.

usage: notes_subscribe.py PATH-TO-notes PATH-TO-redis-server
"""
import http.client
import json
import shutil
import signal
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

from notes_proc import SLOW, check, modern_call, post, start
import notes_proc

notes, redis_server = sys.argv[1], sys.argv[2]
WAIT = 60 if SLOW else 15
LEGACY = "2025-11-25"


def start_redis(tmp, port):
    return notes_proc.start_redis(redis_server, tmp, port)


class Session:
    """A legacy (2025-11-25) session on url with its GET stream, whose
    messages a thread of its own collects."""

    def __init__(self, url):
        self.url = url
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": LEGACY, "capabilities": {},
                           "clientInfo": {"name": "subscriber", "version": "1"}}}
        status, headers, _ = post(url, init)
        self.sid = headers.get("Mcp-Session-Id", "") if headers else ""
        check("a legacy session starts", status == 200 and self.sid, status)
        status, _, _ = self.send({"jsonrpc": "2.0",
                                  "method": "notifications/initialized"})
        check("notifications/initialized is accepted (202)", status == 202, status)
        self.messages = []
        self.cond = threading.Condition()
        self.rid = 10

    def headers(self):
        return {"Mcp-Session-Id": self.sid, "MCP-Protocol-Version": LEGACY}

    def send(self, body):
        """POSTs body; a notification's answer (202) has no body."""
        if "id" in body:
            return post(self.url, body, self.headers())
        req = urllib.request.Request(self.url, data=json.dumps(body).encode(),
                                     method="POST", headers=dict(
                                         self.headers(),
                                         Accept="application/json, text/event-stream"))
        req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=WAIT) as res:
            return res.status, res.headers, None

    def request(self, method, params):
        self.rid += 1
        _, _, body = self.send({"jsonrpc": "2.0", "id": self.rid,
                                "method": method, "params": params})
        return body or {}

    def open_stream(self):
        """Opens the GET stream; returns its status once its headers came."""
        u = urllib.parse.urlsplit(self.url)
        self.conn = http.client.HTTPConnection(u.hostname, u.port,
                                               timeout=WAIT * 4)
        self.conn.request("GET", u.path, headers=dict(
            self.headers(), Accept="text/event-stream"))
        res = self.conn.getresponse()
        if res.status == 200:
            threading.Thread(target=self.read, args=(res,), daemon=True).start()
        return res.status

    def read(self, res):
        data = []
        try:
            for _ in range(100000):
                line = res.readline()  # chunks decoded
                if not line:
                    break
                line = line.decode().rstrip("\r\n")
                if line.startswith("data:"):
                    data.append(line[5:].lstrip())
                elif line == "" and "".join(data):  # not the priming event
                    with self.cond:
                        self.messages.append(json.loads("\n".join(data)))
                        self.cond.notify_all()
                    data = []
                elif line == "":
                    data = []
        except (OSError, ValueError):
            pass

    def updated(self, uri):
        """How many notifications/resources/updated for uri it heard."""
        with self.cond:
            return self.updated_locked(uri)

    def wait_for(self, uri, count):
        """Waits (bounded) until uri's update was heard count times."""
        deadline = time.time() + WAIT
        with self.cond:
            while time.time() < deadline:
                if self.updated_locked(uri) >= count:
                    return True
                self.cond.wait(timeout=0.2)
        return False

    def updated_locked(self, uri):
        return sum(1 for m in self.messages
                   if m.get("method") == "notifications/resources/updated"
                   and m.get("params", {}).get("uri") == uri)

    def methods(self):
        with self.cond:
            return [m.get("method") for m in self.messages]


def call(url, name, args):
    return (modern_call(url, 1, name, args) or {}).get("result", {})


def add(url, title):
    return call(url, "add_note", {"title": title, "text": "x"}).get(
        "structuredContent", {}).get("id", "")


tmp = tempfile.mkdtemp(prefix="libmcp-subscribe-")
procs = []
try:
    port = notes_proc.free_port()
    procs.append(start_redis(tmp, port))
    redis_url = f"redis://127.0.0.1:{port}/0"
    a, url_a = start(notes, ["--redis", redis_url])
    procs.append(a)
    b, url_b = start(notes, ["--redis", redis_url])
    procs.append(b)

    n1, n2, sentinel = add(url_b, "one"), add(url_b, "two"), add(url_b, "s")
    check("b adds three notes", n1 and n2 and sentinel, (n1, n2, sentinel))
    u1, u2, us = (f"note:///{n}" for n in (n1, n2, sentinel))

    first, second = Session(url_a), Session(url_a)
    r = first.request("resources/templates/list", {})
    templates = r.get("result", {}).get("resourceTemplates", [])
    check("resources/templates/list names note:///{id}, JSON, as \"note\"",
          any(t.get("uriTemplate") == "note:///{id}" and t.get("name") == "note"
              and t.get("mimeType") == "application/json" for t in templates),
          templates)
    r = first.request("resources/read", {"uri": u1})
    contents = r.get("result", {}).get("contents", [{}])
    check("resources/read on a returns b's note as JSON",
          contents[0].get("uri") == u1 and
          json.loads(contents[0].get("text", "null")) ==
          {"id": n1, "title": "one", "text": "x"}, r)
    r = first.request("resources/read", {"uri": "note:///n999999"})
    check("an unknown note is the protocol's not-found error",
          "result" not in r and r.get("error", {}).get("code") in (-32002, -32602),
          r)

    for s, uris in ((first, (u1, us)), (second, (u2, us))):
        for uri in uris:
            r = s.request("resources/subscribe", {"uri": uri})
            check(f"resources/subscribe {uri}", r.get("result") == {}, r)
        check("its GET stream opens", s.open_stream() == 200)

    # An append through b: told once on a, to note:///N1's subscriber only.
    r = call(url_b, "manage_note", {"action": "append", "id": n1, "text": "y"})
    check("b appends to N1", r.get("content", [{}])[0].get("text") == "Appended.", r)
    call(url_b, "manage_note", {"action": "append", "id": sentinel, "text": "."})
    check("both streams hear the sentinel's change",
          first.wait_for(us, 1) and second.wait_for(us, 1))
    check("the subscriber to N1 heard b's append exactly once",
          first.updated(u1) == 1, first.messages)
    check("the subscriber to N2 heard nothing of N1 (nor of N2)",
          second.updated(u1) == 0 and second.updated(u2) == 0, second.messages)

    # A change made on a itself: told once too, not again through Redis.
    call(url_a, "manage_note", {"action": "append", "id": n1, "text": "z"})
    call(url_b, "manage_note", {"action": "append", "id": sentinel, "text": "."})
    check("a's own append is heard once",
          first.wait_for(us, 2) and first.updated(u1) == 2, first.messages)

    # Adding a note is no change to the resource lists.
    n3 = add(url_b, "three")
    r = call(url_b, "delete_note", {"id": n1})
    check("b deletes N1", r.get("content", [{}])[0].get("text") == "Deleted.", r)
    call(url_b, "manage_note", {"action": "append", "id": sentinel, "text": "."})
    check("N1's subscriber hears its deletion once",
          first.wait_for(us, 3) and first.updated(u1) == 3, first.messages)
    check("adding a note sent no resources list_changed",
          n3 and "notifications/resources/list_changed" not in first.methods(),
          first.methods())
    check("the subscriber to N2 still heard nothing of N1",
          second.wait_for(us, 3) and second.updated(u1) == 0, second.messages)

    for p, name in ((a, "a"), (b, "b")):
        p.send_signal(signal.SIGTERM)
        status = p.wait(timeout=WAIT)
        check(f"{name} exits 0 on SIGTERM", status == 0, status)
finally:
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    shutil.rmtree(tmp, ignore_errors=True)
print(f"{'FAIL' if notes_proc.failures else 'PASS'}: notes subscriptions")
sys.exit(1 if notes_proc.failures else 0)
