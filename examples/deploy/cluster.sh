#!/usr/bin/env bash
# cluster.sh: several notes processes behind nginx on this machine, the way
# docs/deployment.md explains them ("Several processes behind nginx").
#
#   cluster.sh --backends N --port P [--redis] [--notes PATH] [--dir DIR]
#   cluster.sh --help       (prints this)
#
# It installs nginx if it is missing (cmake/deps.sh --cluster, which
# brings redis-server too), builds notes if PATH is not given and the
# build has none, and then starts:
#   - with --redis, a redis-server of its own on the unix socket
#     DIR/redis.sock (no TCP port, nothing saved to disk), ready once it
#     answers PING;
#   - N notes processes on loopback ports of their own, named n1 ... nN
#     (--node-id), signing 2026-07-28 requestStates with one shared secret
#     (--state-key) and keeping their notes in one SQLite database (--db),
#     or with --redis in that Redis (--redis unix://DIR/redis.sock), which
#     shares libmcp's own state between them too (resource and list
#     changes); a notes built without libmcp's Redis store refuses --redis;
#   - nginx on 127.0.0.1:P, terminating TLS with a certificate made here for
#     localhost and 127.0.0.1 (DIR/cert.pem is what a client must trust),
#     sending a legacy session's requests to the process whose node id
#     prefixes its Mcp-Session-Id and every other request to any process.
# When every part answers it prints `listening on https://127.0.0.1:P/mcp`
# on standard output. SIGTERM or SIGINT stops them all; a notes process
# that dies on its own is left dead (nginx sends its share to the others),
# nginx dying ends the cluster with status 1.
#
# The files (the key, the certificate, the database, nginx.conf, each
# process's log as NAME.log and pid as NAME.pid, nginx's access.log) are in
# DIR, which is kept; without --dir they are in a temporary folder removed
# at the end. With --redis, Redis's log is DIR/redis.log and its pid
# DIR/redis.pid; it is stopped last.
# Loopback only: nothing listens on another address.
#
# --notes PATH runs the program at PATH instead of the notes example (the
# notes of another build, or a daemon of your own that keeps this
# contract). Each process is started as
#
#   PATH --http 127.0.0.1:0 --node-id NAME --state-key FILE --db FILE
#
# or, with --redis,
#
#   PATH --http 127.0.0.1:0 --node-id NAME --state-key FILE --redis URL
#
# with standard input /dev/null and standard error in DIR/NAME.log, so the
# program must take:
#   --http 127.0.0.1:0  serve Streamable HTTP at /mcp on a loopback port it
#                       picks (0: any free one);
#   --node-id NAME      start every legacy session id it mints with "NAME."
#                       (nginx routes a session to its owner by it);
#   --state-key FILE    sign and check 2026-07-28 requestStates with the
#                       secret in FILE, which every process shares;
#   --db FILE           keep its data in the SQLite file FILE, which every
#                       process shares;
#   --redis URL         (with --redis) keep its data in the Redis at URL
#                       (unix://PATH), which every process shares;
# and, once it serves, write this line to standard error (within 60 s),
# with the port it picked:
#
#   listening on http://127.0.0.1:PORT/mcp
#
# SIGTERM must stop it. A program that takes its flags with
# mcp_http_serve_arg and serves with mcp_http_serve_until_signal
# (include/mcp/http.h), as notes does, has --http, --node-id and the line
# from libmcp; --state-key, --db and --redis are its own (notes.c shows
# them).
set -euo pipefail

usage() {
  echo "usage: cluster.sh --backends N --port P [--redis] [--notes PATH] [--dir DIR]" >&2
  echo "       cluster.sh --help" >&2
  exit 2
}

backends="" port="" notes="" dir="" redis=0
while [ $# -gt 0 ]; do
  case "$1" in
  --backends) [ $# -ge 2 ] || usage; backends=$2; shift 2 ;;
  --port) [ $# -ge 2 ] || usage; port=$2; shift 2 ;;
  --notes) [ $# -ge 2 ] || usage; notes=$2; shift 2 ;;
  --dir) [ $# -ge 2 ] || usage; dir=$2; shift 2 ;;
  --redis) redis=1; shift ;;
  --help | -h)
    # The comment at the top of this file, without its marks.
    sed -n '2,/^set -euo pipefail$/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
    exit 0
    ;;
  *) usage ;;
  esac
done
[[ $backends =~ ^[0-9]+$ ]] && [ "$backends" -ge 1 ] && [ "$backends" -le 32 ] ||
  { echo "cluster.sh: --backends wants 1 to 32" >&2; exit 2; }
[[ $port =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] ||
  { echo "cluster.sh: --port wants 1 to 65535" >&2; exit 2; }

root=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ] ||
  ! command -v openssl >/dev/null ||
  { [ "$redis" = 1 ] && ! command -v redis-server >/dev/null &&
    [ ! -x /usr/bin/redis-server ]; }; then
  bash "$root/cmake/deps.sh" --cluster
fi
if [ -z "$notes" ]; then
  notes=$root/build/examples/notes
  [ -x "$notes" ] || make -C "$root" build >&2
fi
[ -x "$notes" ] || { echo "cluster.sh: no notes program at $notes" >&2; exit 1; }
nginx=$(command -v nginx || echo /usr/sbin/nginx)

keep=1
if [ -z "$dir" ]; then
  dir=$(mktemp -d "${TMPDIR:-/tmp}/libmcp-cluster.XXXXXX")
  keep=0
fi
mkdir -p "$dir/tmp"
dir=$(cd "$dir" && pwd)

pids=()
redis_pid=""
stopping=0
stop_all() {
  stopping=1
  trap - TERM INT
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  # Redis last: the notes processes may use it until they end.
  if [ -n "$redis_pid" ]; then
    kill -TERM "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
  fi
  [ "$keep" = 1 ] || rm -rf "$dir"
}
trap 'stop_all; exit 0' TERM INT
trap '[ "$stopping" = 1 ] || stop_all' EXIT

# Waits up to 60 s for FILE to hold a line matching the pattern; prints the
# first match. Fails when the process PID ends first.
await_line() {
  local file=$1 pattern=$2 pid=$3 i
  for ((i = 0; i < 600; i++)); do
    if grep -Eo "$pattern" "$file" 2>/dev/null | head -1 | grep .; then
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "cluster.sh: no '$pattern' from $(basename "$file" .log); its log:" >&2
  cat "$file" >&2 || true
  return 1
}

# The secret every process signs and checks requestStates with, and the
# certificate clients see.
head -c 32 /dev/urandom >"$dir/state.key"
chmod 600 "$dir/state.key"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -days 30 -subj /CN=localhost \
  -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
  -keyout "$dir/key.pem" -out "$dir/cert.pem" 2>/dev/null
chmod 600 "$dir/key.pem"

# --redis: a Redis of this cluster's own, on a unix socket only this user
# may open (no TCP port), saving nothing to disk; ready once it answers
# PING (up to 10 s). Its socket path must fit a sockaddr_un.
store=(--db "$dir/notes.db")
if [ "$redis" = 1 ]; then
  [ "${#dir}" -le 90 ] ||
    { echo "cluster.sh: --redis needs a --dir path of 90 bytes or less" >&2; exit 2; }
  redis_server=$(command -v redis-server || echo /usr/bin/redis-server)
  "$redis_server" --port 0 --unixsocket "$dir/redis.sock" --unixsocketperm 700 \
    --save "" --appendonly no --dir "$dir" --logfile "$dir/redis.log" \
    --pidfile "$dir/redis.pid" </dev/null >/dev/null 2>&1 &
  redis_pid=$!
  for ((i = 0; i < 100; i++)); do
    [ "$(redis-cli -s "$dir/redis.sock" ping 2>/dev/null)" = PONG ] && break
    kill -0 "$redis_pid" 2>/dev/null || break
    sleep 0.1
  done
  [ "$(redis-cli -s "$dir/redis.sock" ping 2>/dev/null)" = PONG ] || {
    echo "cluster.sh: redis-server did not answer on $dir/redis.sock:" >&2
    cat "$dir/redis.log" >&2 2>/dev/null || true
    exit 1
  }
  echo "cluster.sh: redis on unix://$dir/redis.sock (pid $redis_pid)" >&2
  store=(--redis "unix://$dir/redis.sock")
fi

owners="" servers="" upstreams="" addrs=()
for ((i = 1; i <= backends; i++)); do
  name=n$i
  "$notes" --http 127.0.0.1:0 --node-id "$name" --state-key "$dir/state.key" \
    "${store[@]}" </dev/null 2>"$dir/$name.log" &
  pid=$!
  pids+=("$pid")
  echo "$pid" >"$dir/$name.pid"
  url=$(await_line "$dir/$name.log" 'listening on http://127\.0\.0\.1:[0-9]+/mcp' "$pid")
  addr=${url#listening on http://}
  addr=${addr%/mcp}
  echo "cluster.sh: $name on $addr (pid $pid)" >&2
  owners+="    \"~^$name\\.\" node_$name;"$'\n'
  servers+="    server $addr max_fails=1 fail_timeout=5s;"$'\n'
  addrs+=("$addr")
done
# A session goes to its owner. With --redis its state is in Redis, so
# when the owner cannot be connected to (refused, or not accepted within
# proxy_connect_timeout) nginx sends the request to the next node, which
# adopts the session: one backup, always the same, so that the session
# does not wander. After fail_timeout nginx tries the owner again; once it
# is back, it adopts the session back. A request the owner had already
# been sent is not sent again (a POST is not idempotent): its client gets
# an error, and the session goes on.
for ((i = 1; i <= backends; i++)); do
  upstreams+="  upstream node_n$i {"$'\n'"    server ${addrs[i - 1]};"$'\n'
  if [ "$redis" = 1 ] && [ "$backends" -gt 1 ]; then
    upstreams+="    server ${addrs[i % backends]} backup;"$'\n'
  fi
  upstreams+="    keepalive 8;"$'\n'"  }"$'\n'
done
# A legacy session whose node is gone: without Redis it is gone too (404:
# the client starts a new one); with Redis it is only unreachable now.
gone_status=404
gone_body='{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Not Found: no such session"}}'
retry_after=""
if [ "$redis" = 1 ]; then
  gone_status=503
  retry_after="add_header Retry-After 1 always;"
  gone_body='{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Service Unavailable: the nodes of this session cannot be reached; try again"}}'
fi

user=""
if [ "$(id -u)" -eq 0 ]; then
  # nginx's workers leave root for nobody; they only need the temp folder.
  user="user nobody nogroup;"
  chown nobody:nogroup "$dir/tmp"
fi

# Each directive, and why it is there: docs/deployment.md.
cat >"$dir/nginx.conf" <<CONF
$user
daemon off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/nginx-error.log warn;
events {
  worker_connections 4096;
}
http {
  # Which process answered each request, and how (never the session id:
  # it is the session's only credential when there is no token).
  log_format mcp '\$time_iso8601 \$status \$upstream_addr \$upstream_status '
                 '"\$http_mcp_method" owner=\$mcp_owner \$request_time';
  access_log $dir/access.log mcp;
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  default_type application/json;

  # A legacy session belongs to the process that minted it: its id starts
  # with that process's node id and a dot.
  map \$http_mcp_session_id \$mcp_owner {
    default "";
$owners  }
  # Everything else (initialize, 2026-07-28 requests) goes to any process.
  map \$mcp_owner \$mcp_upstream {
    "" notes_any;
    default \$mcp_owner;
  }
  upstream notes_any {
$servers    keepalive 32;
  }
$upstreams
  server {
    listen 127.0.0.1:$port ssl;
    ssl_certificate $dir/cert.pem;
    ssl_certificate_key $dir/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    client_header_timeout 10s;
    client_body_timeout 10s;
    client_max_body_size 4m;
    client_body_buffer_size 4m;

    location = /mcp {
      proxy_pass http://\$mcp_upstream;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$http_host;
      proxy_buffering off;
      proxy_cache off;
      proxy_connect_timeout 2s;
      proxy_read_timeout 1h;
      proxy_send_timeout 1h;
      proxy_next_upstream error timeout;
      error_page 502 504 = @unavailable;
    }
    location @unavailable {
      $retry_after
      if (\$mcp_owner) {
        return $gone_status '$gone_body';
      }
      return 503 '{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Service Unavailable"}}';
    }
    location / {
      return 404 '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Not Found"}}';
    }
  }
}
CONF

"$nginx" -t -q -p "$dir" -e "$dir/nginx-error.log" -c "$dir/nginx.conf" ||
  { cat "$dir/nginx-error.log" >&2; exit 1; }
"$nginx" -p "$dir" -e "$dir/nginx-error.log" -c "$dir/nginx.conf" \
  2>"$dir/nginx.log" &
nginx_pid=$!
pids+=("$nginx_pid")

# Ready when nginx accepts on the port (bash's /dev/tcp: no client needed).
ready=0
for ((i = 0; i < 100; i++)); do
  kill -0 "$nginx_pid" 2>/dev/null || break
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    ready=1
    break
  fi
  sleep 0.1
done
if [ "$ready" != 1 ]; then
  echo "cluster.sh: nginx did not start on 127.0.0.1:$port:" >&2
  cat "$dir/nginx-error.log" "$dir/nginx.log" >&2 2>/dev/null || true
  exit 1
fi
echo "cluster.sh: files in $dir; clients trust $dir/cert.pem" >&2
echo "listening on https://127.0.0.1:$port/mcp"

# Runs until a signal (which interrupts the wait) or until nginx ends.
while kill -0 "$nginx_pid" 2>/dev/null; do
  sleep 1 &
  wait $! || true
done
echo "cluster.sh: nginx ended; its log:" >&2
cat "$dir/nginx-error.log" >&2 2>/dev/null || true
exit 1
