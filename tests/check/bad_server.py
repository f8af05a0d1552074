#!/usr/bin/env python3
"""A stdio MCP server that misbehaves in one way, for mcp-check's tests.

  bad_server.py MODE

garbage   answers initialize with a line that is not JSON
huge      answers with a line of 9 MiB (over mcp-check's 8 MiB limit)
die       exits with status 7 on its first request, after a word on stderr
hang      reads its requests and never answers
errors    answers every request with a JSON-RPC error
chatty    a correct server that sends a ping request and notifications
          before each answer, one read-only tool with all four hints
nohints   a correct server whose one tool has no annotations at all
slowtool  a server that never answers a call of its tool "stuck" (and
          answers everything else, "fine" included, at once)
resolving one tool "flip" (writes, destructive, not idempotent, closed
          world), marked resolvable when the client declared tool
          resolution at initialize; tools/resolve answers by its argument
          "how": "fine" read-only, "looser" open-world (looser than the
          static hints), "error" a JSON-RPC internal error, "invalid"
          -32602 (and tools/call refuses "invalid" with -32602 too),
          "writes" read-only after writing the file named by its argument
          "path" (a resolver with an effect);
          and "calm", read-only and closed world, marked resolvable too
          (nothing to resolve: never called)
"""
import json
import sys
import time


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


TOOL_OK = {
    "name": "peek",
    "description": "reads nothing at all",
    "inputSchema": {"type": "object", "properties": {}},
    "annotations": {"readOnlyHint": True, "destructiveHint": False,
                    "idempotentHint": True, "openWorldHint": False},
}
TOOL_BARE = {"name": "bare", "inputSchema": {"type": "object"}}
TOOL_FINE = {
    "name": "fine",
    "inputSchema": {"type": "object"},
    "annotations": {"readOnlyHint": False, "destructiveHint": False,
                    "idempotentHint": True, "openWorldHint": False},
}


RESOLUTION = "io.modelcontextprotocol/tool-resolution"
TOOL_FLIP = {
    "name": "flip",
    "inputSchema": {"type": "object", "properties": {"how": {"type": "string"}}},
    "annotations": {"readOnlyHint": False, "destructiveHint": True,
                    "idempotentHint": False, "openWorldHint": False},
}
declared = []


def resolving(msg):
    """Mode resolving: the answer to msg, or None for the others'."""
    method = msg.get("method")
    params = msg.get("params") or {}
    how = (params.get("arguments") or {}).get("how")
    if method == "initialize":
        ext = params.get("capabilities", {}).get("extensions", {})
        declared.append(ext.get(RESOLUTION) == {})
        return None
    if method == "tools/list":
        tools = [dict(TOOL_FLIP), dict(TOOL_OK, name="calm")]
        for tool in tools:
            if declared and declared[0]:
                tool["_meta"] = {RESOLUTION: {"resolvable": True}}
        return {"result": {"tools": tools}}
    if how == "invalid" or (method == "tools/resolve" and how == "error"):
        code = -32602 if how == "invalid" else -32603
        return {"error": {"code": code, "message": "refused: " + how}}
    if method == "tools/resolve" and how == "writes":
        with open(params["arguments"]["path"], "w") as f:
            f.write("resolved\n")
        how = "fine"
    if method == "tools/resolve":
        ann = {"readOnlyHint": True} if how == "fine" else \
            {"readOnlyHint": False, "destructiveHint": True,
             "idempotentHint": False, "openWorldHint": True}
        return {"result": {"resultType": "complete", "name": "flip",
                           "annotations": ann}}
    return None


def result_for(mode, msg):
    method = msg.get("method")
    if method == "initialize":
        return {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "bad_server-" + mode, "version": "1"}}
    if method == "tools/list":
        if mode == "slowtool":
            return {"tools": [dict(TOOL_BARE, name="stuck"), TOOL_FINE]}
        return {"tools": [TOOL_BARE if mode == "nohints" else TOOL_OK]}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": "ok"}]}
    return None


def main():
    mode = sys.argv[1]
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg or "method" not in msg:
            continue
        if mode == "garbage":
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
            continue
        if mode == "huge":
            sys.stdout.write('{"x":"' + "a" * (9 << 20) + '"}\n')
            sys.stdout.flush()
            continue
        if mode == "die":
            sys.stderr.write("bad_server: giving up on purpose\n")
            sys.exit(7)
        if mode == "hang":
            time.sleep(3600)
        if (mode == "slowtool" and msg["method"] == "tools/call" and
                msg["params"]["name"] == "stuck"):
            continue
        if mode == "errors":
            send({"jsonrpc": "2.0", "id": msg["id"],
                  "error": {"code": -32603, "message": "always failing"}})
            continue
        if mode == "chatty":
            send({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"})
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "info", "data": "hello"}})
        answer = resolving(msg) if mode == "resolving" else None
        if answer is not None:
            send(dict(answer, jsonrpc="2.0", id=msg["id"]))
            continue
        result = result_for(mode, msg)
        if result is None:
            send({"jsonrpc": "2.0", "id": msg["id"],
                  "error": {"code": -32601, "message": "no such method"}})
        else:
            send({"jsonrpc": "2.0", "id": msg["id"], "result": result})


if __name__ == "__main__":
    main()
