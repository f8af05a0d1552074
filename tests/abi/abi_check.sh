#!/usr/bin/env bash
# Compares the ABI of a built shared library with its committed baseline
# (libabigail). Usage:
#   abi_check.sh check|write LIBRARY BASELINE SUPPRESSIONS HEADER_DIR...
# check: fails (exit 1) when abidiff finds anything but additions (a
# function or variable removed or changed, a public struct's size or
# layout changed, ...); additions (a function added) pass, with the
# report, and a reminder to move the baseline. write: writes BASELINE
# from LIBRARY.
set -uo pipefail
mode=$1 lib=$2 baseline=$3 suppr=$4
shift 4
headers=()
for d in "$@"; do headers+=(--headers-dir "$d"); done
# The ABI as XML; each translation unit's path is made relative to the
# source tree (lib/...), so a baseline names no folder of the machine that
# wrote it.
dump() {
  abidw --no-corpus-path --no-comp-dir-path --no-show-locs \
    --drop-private-types --suppressions "$suppr" "${headers[@]}" "$1" |
    sed -E "s#path='[^']*/(lib/[^']*)'#path='\1'#"
}
case $mode in
write)
  dump "$lib" >"$baseline" || { echo "abi: abidw failed on $lib" >&2; exit 1; }
  echo "wrote $(basename "$baseline") from $(basename "$lib")"
  ;;
check)
  [ -s "$baseline" ] || { echo "abi: no baseline $baseline" >&2; exit 1; }
  current=$(mktemp)
  trap 'rm -f "$current"' EXIT
  dump "$lib" >"$current" || { echo "abi: abidw failed on $lib" >&2; exit 1; }
  report=$(abidiff --no-show-locs --suppressions "$suppr" "$baseline" "$current")
  rc=$?
  # abidiff's status is a bit field: 1 error, 2 usage, 4 a change, 8 an
  # incompatible change.
  if [ $((rc & 3)) -ne 0 ]; then
    echo "abi: abidiff failed ($rc)" >&2
    echo "$report"
    exit 1
  fi
  # abidiff calls a struct's change of size a change, not an incompatible
  # one (bit 8 is for removed symbols); for a library whose users fill
  # its structs, anything but an addition breaks them. The summaries say
  # "N Removed, M Changed[ (K filtered out)], P Added".
  broken=$(grep -E '[0-9]+ Removed, [0-9]+ Changed' <<<"$report" |
    grep -vE ' 0 Removed, 0 Changed(,| \()')
  if [ $((rc & 8)) -ne 0 ] || [ -n "$broken" ]; then
    echo "abi: $(basename "$lib") breaks the ABI of $(basename "$baseline"):"
    echo "$report"
    exit 1
  fi
  if [ $((rc & 4)) -ne 0 ]; then
    echo "abi: $(basename "$lib") adds to $(basename "$baseline") (compatible):"
    echo "$report"
    echo "abi: move the baseline when this is released (README, Versioning)"
  else
    echo "abi: $(basename "$lib") matches $(basename "$baseline")"
  fi
  ;;
*)
  echo "usage: $0 check|write LIBRARY BASELINE SUPPRESSIONS HEADER_DIR..." >&2
  exit 2
  ;;
esac
