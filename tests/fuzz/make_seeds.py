#!/usr/bin/env python3
"""Writes the seed corpora of fuzz_json, fuzz_engine, fuzz_stdio and
fuzz_http into tests/fuzz/corpus/<target>/ (the JWT and JWKS seeds come
from jwt_seeds.py), and the libFuzzer dictionaries tests/fuzz/<target>.dict
(method names, members, versions, headers; JOSE names for fuzz_jwt and
fuzz_jwks). Run from anywhere: python3 tests/fuzz/make_seeds.py

The messages are the golden transcripts of tests/data/transcripts (real MCP
traffic of both eras) plus the sequences below, written for the fixture
server of tests/fuzz/fixture.c. Files are named after what they hold, so a
seed can be found and read; the corpus folders are replaced whole.
"""
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TRANSCRIPTS = os.path.join(ROOT, "tests", "data", "transcripts")
CORPUS = os.path.join(HERE, "corpus")

MODERN = "2026-07-28"


def meta(caps=None, level=None):
    m = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities":
            caps if caps is not None else
            {"elicitation": {}, "sampling": {}, "roots": {}},
    }
    if level is not None:
        m["io.modelcontextprotocol/logLevel"] = level
    return m


def msg(id_, method, params=None):
    m = {"jsonrpc": "2.0"}
    if id_ is not None:
        m["id"] = id_
    m["method"] = method
    if params is not None:
        m["params"] = params
    return json.dumps(m, separators=(",", ":"))


def modern(id_, method, params=None, **kw):
    p = dict(params or {})
    p["_meta"] = meta(**kw)
    return msg(id_, method, p)


def result(id_, value):
    return json.dumps({"jsonrpc": "2.0", "id": id_, "result": value},
                      separators=(",", ":"))


def initialize(version, caps=None):
    return [msg(1, "initialize", {
        "protocolVersion": version,
        "capabilities": caps if caps is not None else
        {"elicitation": {"form": {}, "url": {}}, "sampling": {},
         "roots": {"listChanged": True}},
        "clientInfo": {"name": "fuzz", "version": "1"}}),
        msg(None, "notifications/initialized")]


def call(id_, name, args=None, token=None):
    p = {"name": name}
    if args is not None:
        p["arguments"] = args
    if token is not None:
        p["_meta"] = {"progressToken": token}
    return msg(id_, "tools/call", p)


# requestStates the fixture issued (fixed key, ten-year lifetime) for the
# modern-era "confirm" and "ask" with empty arguments, caller "fuzz".
STATE_CONFIRM = (
    "eyJ2IjoxLCJraW5kIjowLCJ0b29sIjoiY29uZmlybSIsImFyZ3MiOiI0NDEzNmZhMzU1Yj"
    "M2NzhhMTE0NmFkMTZmN2U4NjQ5ZTk0ZmI0ZmMyMWZlNzdlODMxMGMwNjBmNjFjYWFmZjhh"
    "Iiwic3ViIjoiZnV6eiIsImV4cCI6MjExMjI2Mzg0Mywia2V5cyI6eyJvayI6ImVsaWNpdG"
    "F0aW9uL2NyZWF0ZSJ9LCJzdGF0ZSI6InJvdW5kIDAifQ.YCh9yBxdzbB2--0W7S7jhD99X"
    "sbStvls5XqyrkszMc4")
STATE_ASK = (
    "eyJ2IjoxLCJraW5kIjowLCJ0b29sIjoiYXNrIiwiYXJncyI6IjQ0MTM2ZmEzNTViMzY3OG"
    "ExMTQ2YWQxNmY3ZTg2NDllOTRmYjRmYzIxZmU3N2U4MzEwYzA2MGY2MWNhYWZmOGEiLCJz"
    "dWIiOiJmdXp6IiwiZXhwIjoyMTEyMjYzODQzLCJrZXlzIjp7Im1vZGVsIjoic2FtcGxpbm"
    "cvY3JlYXRlTWVzc2FnZSIsInJvb3RzIjoicm9vdHMvbGlzdCJ9fQ.HIf6u2lEIjE8y9h5e"
    "8yCFLcDwIivEN1QuDj1vpWd11s")

ELICIT_OK = {"action": "accept", "content": {"sure": True}}
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "hi"},
           "model": "m"}
ROOTS = {"roots": [{"uri": "file:///home", "name": "home"}]}


def legacy_sequences():
    seqs = {}
    for v in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"):
        tag = v.replace("-", "_")
        seqs["legacy-%s-tools" % tag] = initialize(v) + [
            msg(2, "tools/list"),
            msg(3, "tools/list", {"cursor": "t2"}),
            call(4, "echo", {"text": "hi"}),
            call(5, "add", {"a": 1, "b": 2}),
            call(6, "add", {"a": 9007199254740993, "b": -1, "number": True,
                            "scale": 0.5}),
            call(7, "wipe"),
            call(8, "slow", token="p1"),
            call(9, "media"),
            call(10, "stamp", {"when": "2025-01-01T00:00:00Z",
                               "mail": "a@b.c", "code": "ab-12"}),
            call(11, "echo", {"text": "error"}),
            call(12, "echo", {"text": "fail"}),
            call(13, "echo", {"text": 5}),
            call(14, "nope"),
            call(15, "echo", {"text": "x", "deny": True}),
            msg(16, "ping"),
        ]
        seqs["legacy-%s-surface" % tag] = initialize(v) + [
            msg(2, "prompts/list"),
            msg(3, "prompts/get", {"name": "greet",
                                   "arguments": {"name": "ann"}}),
            msg(4, "prompts/get", {"name": "greet",
                                   "arguments": {"name": "a",
                                                 "style": "rude"}}),
            msg(5, "prompts/get", {"name": "secret",
                                   "arguments": {"topic": "x"}}),
            msg(6, "resources/list"),
            msg(7, "resources/templates/list"),
            msg(8, "resources/read", {"uri": "file:///readme"}),
            msg(9, "resources/read", {"uri": "file:///logo.png"}),
            msg(10, "resources/read", {"uri": "file:///notes/today"}),
            msg(11, "resources/read", {"uri": "file:///notes/missing"}),
            msg(12, "resources/read", {"uri": "file:///docs/a/b/../c"}),
            msg(13, "resources/read", {"uri": "file:///search?q=x&lang=en"}),
            msg(14, "resources/read", {"uri": "file:///private"}),
            msg(15, "resources/subscribe", {"uri": "file:///readme"}),
            msg(16, "resources/unsubscribe", {"uri": "file:///readme"}),
            msg(17, "completion/complete", {
                "ref": {"type": "ref/prompt", "name": "greet"},
                "argument": {"name": "name", "value": "al"},
                "context": {"arguments": {"style": "many"}}}),
            msg(18, "completion/complete", {
                "ref": {"type": "ref/resource",
                        "uri": "file:///notes/{name}"},
                "argument": {"name": "name", "value": "b"}}),
            msg(19, "completion/complete", {
                "ref": {"type": "ref/prompt", "name": "greet"},
                "argument": {"name": "fail", "value": ""}}),
            msg(20, "logging/setLevel", {"level": "debug"}),
            call(21, "echo", {"text": "logged"}),
            msg(None, "notifications/roots/list_changed"),
        ]
        seqs["legacy-%s-input" % tag] = initialize(v) + [
            call(2, "confirm", {}),
            result(1, ELICIT_OK),
            call(3, "ask", {}),
            result(2, SAMPLED),
            result(3, ROOTS),
            call(4, "confirm", {}),
            json.dumps({"jsonrpc": "2.0", "id": 4,
                        "error": {"code": -1, "message": "no"}}),
            result(4, ELICIT_OK),
            result(99, {}),
            call(5, "confirm", {}),
            msg(None, "notifications/cancelled",
                {"requestId": 5, "reason": "bored"}),
        ]
        seqs["legacy-%s-deferred" % tag] = initialize(v) + [
            call(2, "later", {}),
            call(3, "later", {"early": True}),
            call(4, "later", {"fail": True}),
            call(5, "later", {}, token="tok"),
            msg(None, "notifications/cancelled", {"requestId": 5}),
            call(6, "slow", {}, token=7),
            msg(7, "initialize", {"protocolVersion": v, "capabilities": {},
                                  "clientInfo": {"name": "a",
                                                 "version": "1"}}),
        ]
    # Tasks (2025-11-25): "later" and "confirm" may run as tasks; ids are
    # random, so the seeds name unknown ones and let the fuzzer list.
    seqs["legacy-2025_11_25-tasks"] = initialize("2025-11-25") + [
        msg(2, "tools/call", {"name": "later", "arguments": {},
                              "task": {"ttl": 60000}}),
        msg(3, "tools/call", {"name": "confirm", "arguments": {},
                              "task": {}}),
        result(1, ELICIT_OK),
        msg(4, "tasks/list"),
        msg(5, "tasks/list", {"cursor": "k1"}),
        msg(6, "tasks/get", {"taskId": "AAAAAAAAAAAAAAAAAAAAAA"}),
        msg(7, "tasks/result", {"taskId": "AAAAAAAAAAAAAAAAAAAAAA"}),
        msg(8, "tasks/cancel", {"taskId": "AAAAAAAAAAAAAAAAAAAAAA"}),
        msg(9, "tools/call", {"name": "echo", "arguments": {"text": "t"},
                              "task": {}}),
    ]
    seqs["legacy-2025_03_26-batch"] = initialize("2025-03-26") + [
        "[" + ",".join([msg(2, "ping"), call(3, "echo", {"text": "b"}),
                        msg(None, "notifications/initialized"),
                        call(4, "confirm", {})]) + "]",
        "[]",
        "[1,2]",
    ]
    seqs["legacy-no-capabilities"] = initialize("2025-11-25", caps={}) + [
        call(2, "confirm", {}), call(3, "ask", {})]
    seqs["before-initialize"] = [
        call(1, "echo", {"text": "early"}), msg(2, "ping"),
        msg(3, "tools/list")] + initialize("1.0.0") + [msg(4, "tools/list")]
    seqs["reject-and-sink"] = initialize("2025-11-25") + [
        "!message longer than 64 bytes",
        "\t" + call(2, "later", {}),
        "\t" + call(3, "confirm", {}),
        "\t" + result(1, ELICIT_OK),
        "\t" + call(4, "slow", token="x"),
    ]
    return seqs


def modern_sequences():
    seqs = {}
    seqs["modern-tools"] = [
        modern(1, "server/discover"),
        modern(2, "tools/list"),
        modern(3, "tools/list", {"cursor": "t2"}),
        modern(4, "tools/call", {"name": "echo",
                                 "arguments": {"text": "hi"}},
               level="debug"),
        modern(5, "tools/call", {"name": "add", "arguments": {"a": 1,
                                                              "b": 2}}),
        modern(6, "tools/call", {"name": "wipe"}),
        modern(7, "tools/call", {"name": "slow",
                                 "arguments": {}}),
        modern(8, "tools/call", {"name": "later", "arguments": {}}),
        modern(9, "tools/call", {"name": "media"}),
        modern(10, "tools/call", {"name": "nope"}),
        msg(11, "ping"),
    ]
    seqs["modern-surface"] = [
        modern(1, "prompts/list"),
        modern(2, "prompts/get", {"name": "greet",
                                  "arguments": {"name": "x"}}),
        modern(3, "resources/list"),
        modern(4, "resources/templates/list"),
        modern(5, "resources/read", {"uri": "file:///notes/a"}),
        modern(6, "resources/read", {"uri": "file:///nowhere"}),
        modern(7, "completion/complete", {
            "ref": {"type": "ref/resource", "uri": "file:///search{?q,lang}"},
            "argument": {"name": "q", "value": ""}}),
        modern(8, "subscriptions/listen", {"notifications": {
            "toolsListChanged": True,
            "resourceSubscriptions": ["file:///readme"]}}),
        msg(None, "notifications/cancelled", {"requestId": 8}),
    ]
    seqs["modern-input"] = [
        modern(1, "tools/call", {"name": "confirm", "arguments": {}}),
        modern(2, "tools/call", {"name": "confirm", "arguments": {},
                                 "inputResponses": {"ok": ELICIT_OK},
                                 "requestState": STATE_CONFIRM}),
        modern(3, "tools/call", {"name": "ask", "arguments": {},
                                 "inputResponses": {"model": SAMPLED,
                                                    "roots": ROOTS},
                                 "requestState": STATE_ASK}),
        modern(4, "tools/call", {"name": "ask", "arguments": {},
                                 "inputResponses": {"model": {}},
                                 "requestState": STATE_ASK}),
        modern(5, "tools/call", {"name": "confirm", "arguments": {"x": 1},
                                 "inputResponses": {"ok": ELICIT_OK},
                                 "requestState": STATE_CONFIRM}),
        modern(6, "tools/call", {"name": "confirm", "arguments": {}},
               caps={}),
    ]
    tasks = {"extensions": {"io.modelcontextprotocol/tasks": {}},
             "elicitation": {}}
    seqs["modern-tasks"] = [
        modern(1, "tools/call", {"name": "later", "arguments": {}},
               caps=tasks),
        modern(2, "tools/call", {"name": "confirm", "arguments": {}},
               caps=tasks),
        modern(3, "tasks/get", {"taskId": "AAAAAAAAAAAAAAAAAAAAAA"},
               caps=tasks),
        modern(4, "tasks/update", {"taskId": "AAAAAAAAAAAAAAAAAAAAAA",
                                   "inputResponses": {"ok": ELICIT_OK}},
               caps=tasks),
        modern(5, "tasks/cancel", {"taskId": "AAAAAAAAAAAAAAAAAAAAAA"},
               caps=tasks),
        modern(6, "tasks/get", {"taskId": "x"}),
        modern(7, "subscriptions/listen", {"notifications": {
            "taskIds": ["AAAAAAAAAAAAAAAAAAAAAA"]}}, caps=tasks),
        msg(None, "notifications/cancelled", {"requestId": 7}),
    ]
    seqs["dual-era"] = initialize("2025-06-18") + [
        modern(2, "tools/list"),
        call(3, "echo", {"text": "legacy"}),
        modern(4, "server/discover"),
    ]
    return seqs


def transcript_messages():
    """(file stem, [messages]) for every transcript."""
    out = []
    for name in sorted(os.listdir(TRANSCRIPTS)):
        if not name.endswith(".jsonl"):
            continue
        lines = []
        with open(os.path.join(TRANSCRIPTS, name), encoding="utf-8") as f:
            for line in f:
                if line.startswith("> "):
                    lines.append(line[2:].rstrip("\n"))
        out.append((name[:-len(".jsonl")], lines))
    return out


def reset(target):
    d = os.path.join(CORPUS, target)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def put(d, name, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def engine_seeds(transcripts, seqs):
    d = reset("fuzz_engine")
    for stem, lines in transcripts:
        put(d, stem, "\n".join(lines) + "\n")
        for i, m in enumerate(lines):
            if "\n" not in m:
                put(d, "%s-%02d" % (stem, i + 1), m)
    for name, lines in seqs.items():
        put(d, name, "\n".join(lines) + "\n")
        for i, m in enumerate(lines):
            if m.startswith("{") and "initialize" not in m:
                put(d, "%s-%02d" % (name, i + 1), m)


def stdio_seeds(transcripts, seqs):
    """First byte: low four bits = how many chunk-size bytes follow, bits
    4-5 = max_line (default, 64, 512, 4096 bytes)."""
    d = reset("fuzz_stdio")
    chunkings = [b"\x00", b"\x01\x00", b"\x02\x06\x27", b"\x04\x01\x1f\xff\x02",
                 b"\x11\x10", b"\x22\x40\x03", b"\x31\x80"]
    k = 0
    for name, lines in list(seqs.items()) + transcripts:
        ending = ["\n", "\r\n", "\n\n", ""][k % 4]
        kept = [l for l in lines if not l.startswith(("!", "\t"))]
        text = (ending or "\n").join(kept) + ending
        put(d, name, chunkings[k % len(chunkings)] + text.encode())
        k += 1
    long_line = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"%s"}}' % (
        "y" * 700)
    put(d, "oversized-then-ping",
        b"\x21\x50" + (long_line + "\n" + msg(2, "ping") + "\n").encode())
    put(d, "no-final-newline", b"\x01\x05" + msg(1, "ping").encode())
    put(d, "blank-and-crlf", b"\x00" + ("\r\n  \n\t\n" + msg(1, "ping") +
                                        "\r\n").encode())


HTTP_HOST = "Host: localhost\r\n"


def http_request(method, body=None, headers=(), path="/mcp", token="@TOKEN@"):
    h = "%s %s HTTP/1.1\r\n%s" % (method, path, HTTP_HOST)
    if token:
        h += "Authorization: Bearer %s\r\n" % token
    for x in headers:
        h += x + "\r\n"
    if body is not None:
        h += "Content-Type: application/json\r\n"
        h += "Accept: application/json, text/event-stream\r\n"
        h += "Content-Length: @LEN@\r\n"
    return h + "\r\n" + (body or "")


def modern_headers(method, name=None):
    h = ["MCP-Protocol-Version: " + MODERN, "Mcp-Method: " + method]
    if name is not None:
        h.append("Mcp-Name: " + name)
    return h


def http_seeds(transcripts):
    """Raw HTTP requests; the target replaces @TOKEN@ (a valid token with
    every scope), @TOKEN_RO@ (scope data:read only), @SID@ (the id of a
    session it initializes first), @NEXT@ (between pipelined requests) and
    @LEN@ (the length of its request's body, after the first blank
    line)."""
    d = reset("fuzz_http")
    legacy = ["MCP-Protocol-Version: 2025-11-25", "Mcp-Session-Id: @SID@"]
    seeds = {
        "initialize": http_request("POST", initialize("2025-11-25")[0]),
        "initialize-2025-03-26": http_request(
            "POST", initialize("2025-03-26")[0]),
        "initialized": http_request("POST", initialize("2025-11-25")[1],
                                    legacy),
        "tools-list": http_request("POST", msg(2, "tools/list"), legacy),
        "tools-call": http_request("POST", call(3, "echo", {"text": "x"}),
                                   legacy),
        "tools-call-progress": http_request(
            "POST", call(3, "slow", {}, token="p"), legacy),
        "tools-call-deferred": http_request("POST", call(4, "later", {}),
                                            legacy),
        "tools-call-confirm": http_request("POST", call(5, "confirm", {}),
                                           legacy),
        "answer": http_request("POST", result(1, ELICIT_OK), legacy),
        "scope-denied": http_request("POST", call(6, "add", {"a": 1, "b": 2}),
                                     legacy, token="@TOKEN_RO@"),
        "wipe-denied": http_request("POST", call(6, "wipe"), legacy,
                                    token="@TOKEN_RO@"),
        "get-sse": http_request("GET", None, legacy + [
            "Accept: text/event-stream"]),
        "get-resume": http_request("GET", None, legacy + [
            "Accept: text/event-stream", "Last-Event-ID: 1-3"]),
        # Stream 3 of the session (its initialize and initialized took 1
        # and 2): an SSE reply with events 3-1..3-3, then a resumption.
        "sse-then-resume": http_request(
            "POST", call(3, "slow", {}, token="p"), legacy) + "@NEXT@" +
        http_request("GET", None, legacy + [
            "Accept: text/event-stream", "Last-Event-ID: 3-1"]),
        "delete": http_request("DELETE", None, legacy),
        "delete-unknown": http_request("DELETE", None, [
            "Mcp-Session-Id: 0123456789abcdef"]),
        "no-session": http_request("POST", msg(2, "tools/list"),
                                   ["MCP-Protocol-Version: 2025-11-25"]),
        "bad-version": http_request("POST", msg(2, "tools/list"), [
            "MCP-Protocol-Version: 1999-01-01", "Mcp-Session-Id: @SID@"]),
        "no-token": http_request("POST", msg(2, "ping"), token=None),
        "bad-token": http_request("POST", msg(2, "ping"),
                                  token="eyJhbGciOiJub25lIn0.e30."),
        "basic-auth": http_request("POST", msg(2, "ping"), [
            "Authorization: Basic dXNlcjpwYXNz"], token=None),
        "prm": http_request("GET", None, [], token=None,
                            path="/.well-known/oauth-protected-resource/mcp"),
        "prm-root": http_request("GET", None, [], token=None,
                                 path="/.well-known/oauth-protected-resource"),
        "evil-host": "POST /mcp HTTP/1.1\r\nHost: evil.example\r\n"
                     "Content-Length: 2\r\n\r\n{}",
        "evil-origin": http_request("POST", msg(2, "ping"), [
            "Origin: https://evil.example"]),
        "origin-null": http_request("POST", msg(2, "ping"), [
            "Origin: null"]),
        "text-plain": "POST /mcp HTTP/1.1\r\nHost: localhost\r\n"
                      "Authorization: Bearer @TOKEN@\r\n"
                      "Content-Type: text/plain\r\nContent-Length: @LEN@\r\n"
                      "\r\n" + msg(1, "ping"),
        "put": "PUT /mcp HTTP/1.1\r\nHost: localhost\r\n\r\n",
        "options": "OPTIONS /mcp HTTP/1.1\r\nHost: localhost\r\n"
                   "Origin: http://localhost\r\n"
                   "Access-Control-Request-Method: POST\r\n\r\n",
        "http10-no-host": "GET /mcp HTTP/1.0\r\n\r\n",
        "huge-length": "POST /mcp HTTP/1.1\r\nHost: localhost\r\n"
                       "Authorization: Bearer @TOKEN@\r\n"
                       "Content-Type: application/json\r\n"
                       "Content-Length: 104857600\r\n\r\n{",
        "chunked": "POST /mcp HTTP/1.1\r\nHost: localhost\r\n"
                   "Authorization: Bearer @TOKEN@\r\n"
                   "Content-Type: application/json\r\n"
                   "Accept: application/json, text/event-stream\r\n"
                   "Transfer-Encoding: chunked\r\n\r\n"
                   "5\r\n{\"jso\r\n" + "%x\r\n" % len(msg(1, "ping")[5:]) +
                   msg(1, "ping")[5:] + "\r\n0\r\n\r\n",
        "batch": http_request("POST", "[" + msg(1, "ping") + "]", legacy),
        "parse-error": http_request("POST", '{"jsonrpc":', legacy),
        "empty-body": http_request("POST", "", legacy),
        "pipelined": http_request("POST", msg(1, "ping"), legacy) +
        "@NEXT@" + http_request("POST", msg(2, "tools/list"), legacy),
        "modern-discover": http_request(
            "POST", modern(1, "server/discover"),
            modern_headers("server/discover")),
        "modern-tools-list": http_request(
            "POST", modern(2, "tools/list"), modern_headers("tools/list")),
        "modern-tools-call": http_request(
            "POST", modern(3, "tools/call", {"name": "echo",
                                             "arguments": {"text": "hi"}},
                           level="info"),
            modern_headers("tools/call", "echo")),
        "modern-param-header": http_request(
            "POST", modern(3, "tools/call", {"name": "echo",
                                             "arguments": {"text": "hi"}}),
            modern_headers("tools/call", "echo") + [
                "Mcp-Param-text: =?base64?aGk=?="]),
        "modern-deferred": http_request(
            "POST", modern(4, "tools/call", {"name": "later",
                                             "arguments": {}}),
            modern_headers("tools/call", "later")),
        "modern-confirm": http_request(
            "POST", modern(5, "tools/call", {"name": "confirm",
                                             "arguments": {}}),
            modern_headers("tools/call", "confirm")),
        "modern-retry": http_request(
            "POST", modern(5, "tools/call", {
                "name": "confirm", "arguments": {},
                "inputResponses": {"ok": ELICIT_OK},
                "requestState": STATE_CONFIRM}),
            modern_headers("tools/call", "confirm")),
        "modern-mismatch": http_request(
            "POST", modern(6, "tools/call", {"name": "echo",
                                             "arguments": {"text": "x"}}),
            modern_headers("tools/list", "wipe")),
        "modern-read": http_request(
            "POST", modern(7, "resources/read", {"uri": "file:///notes/a"}),
            modern_headers("resources/read", "file:///notes/a")),
        "modern-listen": http_request(
            "POST", modern(8, "subscriptions/listen", {"notifications": {
                "toolsListChanged": True}}),
            modern_headers("subscriptions/listen")),
        "modern-scope-denied": http_request(
            "POST", modern(9, "tools/call", {"name": "add",
                                             "arguments": {"a": 1, "b": 1}}),
            modern_headers("tools/call", "add"), token="@TOKEN_RO@"),
    }
    for name, text in seeds.items():
        put(d, name, text)
    # Every legacy transcript message inside a session, once each.
    for stem, lines in transcripts:
        for i, m in enumerate(lines):
            if "initialize" in m or "\n" in m:
                continue
            if '"2026-07-28"' in m:
                continue
            put(d, "%s-%02d" % (stem, i + 1), http_request("POST", m, legacy))


def json_seeds(transcripts, seqs):
    """First byte: options (0 = default limits)."""
    d = reset("fuzz_json")
    docs = {
        "numbers": '[0,-0,1.5,-1e-7,1E+300,123456789012345678901234567890,'
                   '9223372036854775807,-9223372036854775808,'
                   '9223372036854775808,2.0,1e2]',
        "strings": '["\\u00e9\\ud83d\\ude00\\n\\t\\"\\\\\\/","\u00e9\u4e2d'
                   '\U0001f600","\\u001f"]',
        "nested": '{"a":{"b":{"c":[[[{"d":null}]]]}},"e":true,"f":false}',
        "ids": '{"jsonrpc":"2.0","id":12345678901234567890,"method":"x",'
               '"params":{"requestId":"r-1","id":1.0}}',
        "empty": '  {}  ',
        "scalar": '"just a string"',
        "jwt-header": '{"alg":"RS256","typ":"at+jwt","kid":"rsa-1"}',
        "jwt-payload": '{"iss":"https://auth.example.com","aud":['
                       '"https://mcp.example.com/mcp"],"sub":"u","exp":'
                       '4102444800,"nbf":1.5,"scope":"a b"}',
        "dup-key": '{"a":1,"a":2}',
        "bad-utf8": b'{"a":"\xc3\x28"}',
        "overlong": b'["\xc0\xaf"]',
        "surrogate": '["\\ud800"]',
        "nul-escape": '["\\u0000"]',
        "trailing": '{} x',
        "deep": "[" * 70 + "]" * 70,
    }
    for name, text in docs.items():
        data = text if isinstance(text, bytes) else text.encode()
        put(d, name, b"\x00" + data)
    put(d, "deep-small-limit", b"\x31" + ("[" * 5 + "]" * 5).encode())
    put(d, "members-small-limit", b"\x22" + b'{"a":1,"b":2,"c":3,"d":4}')
    put(d, "string-small-limit", b"\x54" + b'["abcdefghij"]')
    put(d, "number-small-limit", b"\x38" + b'[1234567890.5]')
    for stem, lines in transcripts:
        for i, m in enumerate(lines):
            put(d, "%s-%02d" % (stem, i + 1), b"\x00" + m.encode())


METHODS = ["initialize", "ping", "tools/list", "tools/call", "prompts/list",
           "prompts/get", "resources/list", "resources/read",
           "resources/templates/list", "resources/subscribe",
           "resources/unsubscribe", "completion/complete", "logging/setLevel",
           "server/discover", "subscriptions/listen",
           "notifications/initialized", "notifications/cancelled",
           "notifications/progress", "notifications/roots/list_changed",
           "elicitation/create", "sampling/createMessage", "roots/list",
           "tasks/get", "tasks/update", "tasks/cancel", "tasks/result",
           "tasks/list"]
MEMBERS = ["jsonrpc", "id", "method", "params", "result", "error", "code",
           "message", "data", "_meta", "name", "arguments", "cursor",
           "progressToken", "requestId", "reason", "protocolVersion",
           "capabilities", "clientInfo", "elicitation", "sampling", "roots",
           "form", "url", "tools", "listChanged", "uri", "ref", "argument",
           "value", "context", "level", "action", "content", "requestState",
           "inputResponses", "notifications", "resourceSubscriptions",
           "toolsListChanged", "io.modelcontextprotocol/protocolVersion",
           "io.modelcontextprotocol/clientInfo",
           "io.modelcontextprotocol/clientCapabilities",
           "io.modelcontextprotocol/logLevel", "ref/prompt", "ref/resource",
           "task", "ttl", "taskId", "taskIds", "extensions",
           "io.modelcontextprotocol/tasks"]
VALUES = ["2.0", MODERN, "2025-11-25", "2025-06-18", "2025-03-26",
          "2024-11-05", "echo", "add", "wipe", "slow", "confirm", "ask",
          "later", "media", "stamp", "greet", "secret", "file:///readme",
          "file:///notes/{name}", "file:///docs/{+path}",
          "file:///search{?q,lang}", "debug", "accept", "decline", "cancel",
          "early", "fail", "deny", "number", "scale"]
HEADERS = ["Host: localhost", "Authorization: Bearer @TOKEN@",
           "Authorization: Bearer @TOKEN_RO@", "Mcp-Session-Id: @SID@",
           "Content-Length: @LEN@", "@NEXT@", "Content-Type: application/json",
           "Accept: application/json, text/event-stream",
           "Accept: text/event-stream", "MCP-Protocol-Version: ",
           "Mcp-Method: ", "Mcp-Name: ", "Mcp-Param-", "Last-Event-ID: ",
           "Origin: ", "Transfer-Encoding: chunked", "Connection: close",
           "Expect: 100-continue", "=?base64?", "?=", "POST /mcp HTTP/1.1",
           "GET /mcp HTTP/1.1", "DELETE /mcp HTTP/1.1",
           "/.well-known/oauth-protected-resource", "\r\n\r\n"]


JOSE = ["keys", "kty", "RSA", "EC", "OKP", "oct", "crv", "P-256", "P-384",
        "P-521", "Ed25519", "X25519", "n", "e", "x", "y", "d", "k", "kid",
        "alg", "use", "sig", "enc", "key_ops", "verify", "sign", "x5c", "jku",
        "jwk", "x5u", "crit", "typ", "JWT", "at+jwt", "RS256", "RS384",
        "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512",
        "EdDSA", "HS256", "none", "iss", "aud", "sub", "exp", "nbf", "iat",
        "scope", "scp", "https://auth.example.com",
        "https://mcp.example.com/mcp"]


def dictionaries():
    def entry(text):
        return '"%s"' % "".join(
            c if 0x20 <= ord(c) < 0x7f and c not in '"\\' else
            "\\x%02x" % ord(c) for c in text)
    words = ['"%s"' % m for m in METHODS] + \
        [entry('"%s"' % m) for m in MEMBERS + VALUES]
    for target, extra in (("fuzz_engine", []), ("fuzz_stdio", []),
                          ("fuzz_http", [entry(h.replace("\\r\\n", "\r\n"))
                                         for h in HEADERS])):
        with open(os.path.join(HERE, target + ".dict"), "w") as f:
            f.write("# Generated by make_seeds.py.\n")
            f.write("\n".join(words + extra) + "\n")
    jose = [entry('"%s"' % w) for w in JOSE] + ['"eyJ"', '"."']
    for target in ("fuzz_jwt", "fuzz_jwks"):
        with open(os.path.join(HERE, target + ".dict"), "w") as f:
            f.write("# Generated by make_seeds.py.\n")
            f.write("\n".join(jose) + "\n")


def main():
    transcripts = transcript_messages()
    seqs = legacy_sequences()
    seqs.update(modern_sequences())
    engine_seeds(transcripts, seqs)
    stdio_seeds(transcripts, seqs)
    http_seeds(transcripts)
    json_seeds(transcripts, seqs)
    dictionaries()
    for t in ("fuzz_json", "fuzz_engine", "fuzz_stdio", "fuzz_http"):
        print(t, len(os.listdir(os.path.join(CORPUS, t))))


if __name__ == "__main__":
    main()
