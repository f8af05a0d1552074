#!/usr/bin/env bash
# Checks that port_daemon.diff is exactly the diff between
# port_daemon_before.c and port_daemon.c, so the walkthrough a reader
# follows never drifts from the code that is built and tested. After
# changing either file, regenerate it with:
#   bash tests/docs/port_daemon_diff.sh examples/port_daemon --update
set -euo pipefail
dir=$1
cd "$dir"
fresh=$(diff -u --label port_daemon_before.c --label port_daemon.c \
  port_daemon_before.c port_daemon.c || true)
if [ "${2:-}" = "--update" ]; then
  printf '%s\n' "$fresh" >port_daemon.diff
  echo "updated $dir/port_daemon.diff"
  exit 0
fi
if [ "$fresh" != "$(cat port_daemon.diff)" ]; then
  echo "FAIL: $dir/port_daemon.diff is stale; regenerate it with:" >&2
  echo "  bash tests/docs/port_daemon_diff.sh examples/port_daemon --update" >&2
  exit 1
fi
echo "PASS: port_daemon.diff matches the sources"
