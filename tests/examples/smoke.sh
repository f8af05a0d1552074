#!/usr/bin/env bash
# Smoke tests of the examples: each is started as a user would start it and
# driven over stdio. $MCP_TEST_LAUNCHER (e.g. valgrind ...) prefixes the
# server command when set; its exit status must be 0.
#   smoke.sh hello PATH-TO-hello
#   smoke.sh notes PATH-TO-notes
#   smoke.sh everything PATH-TO-everything
#   smoke.sh dashboard PATH-TO-dashboard
set -euo pipefail
which=$1
bin=$2
launcher=${MCP_TEST_LAUNCHER:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"smoke","version":"1"}}}'
ready='{"jsonrpc":"2.0","method":"notifications/initialized"}'

# run ARGS... < input: runs the server, keeps stdout in $tmp/out.
run() {
  # shellcheck disable=SC2086
  if ! timeout 120 $launcher "$bin" "$@" >"$tmp/out" 2>"$tmp/err"; then
    echo "FAIL: $which $* exited non-zero" >&2
    cat "$tmp/err" >&2
    exit 1
  fi
}

expect() {
  if ! grep -qF -- "$1" "$tmp/out"; then
    echo "FAIL: $which: expected output containing: $1" >&2
    echo "--- stdout:" >&2; cat "$tmp/out" >&2
    echo "--- stderr:" >&2; cat "$tmp/err" >&2
    exit 1
  fi
}

case $which in
hello)
  printf '%s\n' "$init" "$ready" \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}}' \
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet"}}' | run
  expect '"id":2,"result":{"content":[{"type":"text","text":"Hello, Ada!"}]}'
  expect '"text":"Hello, world!"'
  ;;
notes)
  data=$tmp/notes.json
  printf '%s\n' "$init" "$ready" \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_note","arguments":{"title":"t","text":"kept"}}}' |
    run --data "$data"
  expect '"structuredContent":{"id":"n1"}'
  # A second process sees the note; a reader cannot add.
  printf '%s\n' "$init" "$ready" \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_note","arguments":{"id":"n1"}}}' \
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add_note","arguments":{"title":"x","text":"y"}}}' |
    run --stdio --scopes notes:read --data "$data"
  expect '"text":"kept"'
  expect '"id":3,"error":{"code":-31403'
  # No temporary file is left behind by the atomic writes.
  if ls "$tmp"/notes.json.* >/dev/null 2>&1; then
    echo "FAIL: notes left a temporary file" >&2
    exit 1
  fi
  # Bad command lines are refused with usage, not served.
  if "$bin" --bogus </dev/null >/dev/null 2>&1; then
    echo "FAIL: notes accepted --bogus" >&2
    exit 1
  fi
  # --rate-limit 2/3600: the third tool call of the caller is refused
  # before its handler runs (so no second note is added).
  printf '%s\n' "$init" "$ready" \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_notes"}}' \
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_note","arguments":{"id":"n1"}}}' \
    '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add_note","arguments":{"title":"over","text":"limit"}}}' |
    run --rate-limit 2/3600 --data "$data"
  expect '"id":3,"result":{"content":[{"type":"text","text":"t"},{"type":"text","text":"kept"}]'
  expect '"id":4,"result":{"content":[{"type":"text","text":"rate limited'
  if grep -qF '"title":"over"' "$data"; then
    echo "FAIL: notes ran a call over its --rate-limit" >&2
    exit 1
  fi
  # A --rate-limit that is not N/SECONDS (two whole numbers from 1 on) is
  # a usage error (status 2, saying what it wants), never served.
  for bad in 5 0/60 60/0 /60 60/ -1/60 " 5/60" 5/60x 5//60 99999999999/1 x; do
    status=0
    "$bin" --stdio --rate-limit "$bad" </dev/null >/dev/null 2>"$tmp/err" || status=$?
    if [ "$status" -ne 2 ] || ! grep -qF -- "--rate-limit wants N/SECONDS" "$tmp/err"; then
      echo "FAIL: notes --rate-limit '$bad': status $status, not 2 with its usage" >&2
      cat "$tmp/err" >&2
      exit 1
    fi
  done
  status=0
  "$bin" --stdio --rate-limit </dev/null >/dev/null 2>"$tmp/err" || status=$?
  if [ "$status" -ne 2 ] || ! grep -qF "usage: notes" "$tmp/err"; then
    echo "FAIL: notes --rate-limit without a value: status $status" >&2
    exit 1
  fi
  ;;
everything)
  # A client that declares sampling: the tool asks, the answer comes back
  # (id 1 is the server's own request), and the call completes with it.
  caps='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"smoke","version":"1"}}}'
  printf '%s\n' "$caps" "$ready" \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_simple_text"}}' \
    '{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"test://template/42/data"}}' \
    '{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"test_prompt_with_arguments","arguments":{"arg1":"a","arg2":"b"}}}' \
    '{"jsonrpc":"2.0","id":5,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg1","value":"test"}}}' \
    '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"2+2?"}}}' \
    '{"jsonrpc":"2.0","id":1,"result":{"role":"assistant","content":{"type":"text","text":"4"},"model":"m","stopReason":"endTurn"}}' \
    '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_error_handling"}}' |
    run --stdio
  expect '"id":2,"result":{"content":[{"type":"text","text":"This is a simple text response for testing."}]}'
  expect '\"id\":\"42\"'
  expect "arg1='a', arg2='b'"
  expect '"values":["testValue1","test"]'
  expect '"method":"sampling/createMessage"'
  expect '"text":"LLM response: 4"'
  expect '"id":7,"result":{"content":[{"type":"text","text":"This tool intentionally returns an error for testing."}],"isError":true}'
  # Icons (2025-11-25 and later): on the server and on test_simple_text,
  # and to a 2025-06-18 client on neither.
  icon='"icons":[{"src":"data:image/svg+xml;base64,PHN2Zy'
  printf '%s\n' "$init" "$ready" \
    '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' | run --stdio
  expect "\"serverInfo\":{\"name\":\"everything\""
  expect "\"title\":\"Everything\",$icon"
  expect "\"name\":\"test_simple_text\",\"description\":\"Returns one text block.\""
  expect "\"openWorldHint\":false},$icon"
  printf '%s\n' "${init/2025-11-25/2025-06-18}" "$ready" \
    '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' | run --stdio
  expect '"protocolVersion":"2025-06-18"'
  expect '"name":"test_simple_text"'
  if grep -qF '"icons"' "$tmp/out"; then
    echo "FAIL: everything sent icons to a 2025-06-18 client" >&2
    exit 1
  fi
  # Bad command lines are refused with usage, not served.
  if "$bin" --bogus </dev/null >/dev/null 2>&1; then
    echo "FAIL: everything accepted --bogus" >&2
    exit 1
  fi
  ;;
dashboard)
  # The tool names its view, reads this machine, and the view is served
  # with MCP Apps' MIME type.
  printf '%s\n' "$init" "$ready" \
    '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"system_status"}}' \
    '{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"ui://dashboard/status.html"}}' |
    run --stdio
  expect '"_meta":{"ui":{"resourceUri":"ui://dashboard/status.html"'
  expect "\"structuredContent\":{\"hostname\":\"$(uname -n)\""
  expect '"mimeType":"text/html;profile=mcp-app","_meta":{"ui":{"prefersBorder":true}},"text":"<!DOCTYPE html>'
  if "$bin" --bogus </dev/null >/dev/null 2>&1; then
    echo "FAIL: dashboard accepted --bogus" >&2
    exit 1
  fi
  ;;
*)
  echo "unknown example $which" >&2
  exit 2
  ;;
esac
echo "PASS: $which"
