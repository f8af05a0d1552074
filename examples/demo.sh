#!/usr/bin/env bash
# demo.sh: what `make demo` runs once the build is done. It starts the notes
# example over HTTP on 127.0.0.1 as an OAuth 2.1 resource server, with a
# development signing key made fresh for this run and a token holding every
# scope, and prints how to reach it with the MCP Inspector and with curl.
# Ctrl-C stops the server. Nothing leaves the machine.
#
#   demo.sh BUILD-DIR [PORT]      (PORT defaults to 8080; `make demo PORT=N`)
set -euo pipefail
build=${1:?usage: demo.sh BUILD-DIR [PORT]}
port=${2:-8080}
here=$(cd "$(dirname "$0")" && pwd)
dev=$build/demo
url=http://127.0.0.1:$port/mcp
issuer=https://auth.dev.invalid
# The Inspector the printed command runs, pinned: an unpinned npx picks the
# newest release whose "engines" the running Node.js satisfies, and on
# Node.js 20 that is an old one which crashes at start. The Inspector needs
# Node.js 22.19 or newer, so the command also fetches a pinned Node.js from
# npm (the `node` package) and puts it first on the Inspector's PATH; any
# Node.js with npx (18 or newer) can start the command.
inspector=@modelcontextprotocol/inspector@2.12.0
inspector_node=node@22.23.3

rm -rf "$dev"
"$here/dev_token.sh" keys "$dev"
token=$("$here/dev_token.sh" token "$dev" "$issuer" "$url" \
  "notes:read notes:write notes:admin" 86400)
printf '%s\n' "$token" >"$dev/token"

cat <<TEXT

  notes is serving MCP at $url
  Every request needs a bearer token signed by the key in $dev/jwks.json.
  This one holds notes:read notes:write notes:admin for 24 hours
  (also in $dev/token):

$token

  MCP Inspector ${inspector##*@}, in another terminal (it needs Node.js 22.19
  or newer: npx fetches Node.js ${inspector_node##*@} for it, so any Node.js with npx
  starts it; it prints the address of its page):

npx -y --loglevel=error -p $inspector_node -p $inspector mcp-inspector --server-url $url --transport http --header "Authorization: Bearer $token"

  curl, asking for the tools in the 2026-07-28 protocol (no handshake):

curl -s $url -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/list' -H "Authorization: Bearer $token" -d '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'

  Ctrl-C stops the server.

TEXT
exec "$build/examples/notes" --http "127.0.0.1:$port" --jwks "$dev/jwks.json" \
  --issuer "$issuer" --audience "$url" --data "$dev/notes.json"
