#!/usr/bin/env bash
# A server of the reader's own, outside the tree, the way the README and
# the tutorial ("Your own server") say to build it: libmcp installed into a
# prefix in the reader's home, then myserver built once with pkg-config and
# once with CMake, each run from where it was built and, the CMake one,
# from where it was installed. The documents include the blocks between
# the "own:" markers, so they cannot drift from what runs here.
#   own_server.sh BUILD-DIR WORK-DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build_dir=$(cd "$1" && pwd)
work=$2
rm -rf "$work/own"
mkdir -p "$work/own"
cd "$work/own"
ln -s "$build_dir" build       # the libmcp build, as in the tree
export HOME=$work/own/home     # the reader's home, here a scratch folder
mkdir -p "$HOME" myserver
cp "$here/myserver/myserver.c" "$here/myserver/CMakeLists.txt" myserver/

fail() {
  echo "FAIL: own_server: $*" >&2
  exit 1
}

# One tools/call on stdio; the reply must count the words.
ask() {
  local out
  out=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count_words","arguments":{"text":"one two three"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' |
    "$@" 2>/dev/null) || fail "$* failed"
  [[ $out == *'3 words'* ]] || fail "$* answered: $out"
}

# own: install
cmake --install build --prefix "$HOME/.local"
# own: end install

cd myserver
# own: pkg-config
export PKG_CONFIG_PATH="$HOME/.local/lib/pkgconfig"
cc -o myserver myserver.c $(pkg-config --cflags --libs libmcp) \
  -Wl,-rpath,"$HOME/.local/lib"
# own: end pkg-config
ask ./myserver
rm myserver

# own: cmake
cmake -S . -B build -DCMAKE_PREFIX_PATH="$HOME/.local" \
  -DCMAKE_INSTALL_PREFIX="$HOME/.local"
cmake --build build
cmake --install build
# own: end cmake
ask ./build/myserver
ask "$HOME/.local/bin/myserver"
# Without the run path the loader would not find libmcp: prove it is used.
if env -u LD_LIBRARY_PATH ldd "$HOME/.local/bin/myserver" | grep -q 'libmcp.so.*not found'; then
  fail "the installed myserver does not find libmcp"
fi
echo "PASS: own_server"
