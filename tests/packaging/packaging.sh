#!/usr/bin/env bash
# Packaging tests: libmcp installed into a prefix and used from outside, as
# a user would use it. Run by ctest (tests/packaging/CMakeLists.txt):
#   packaging.sh install      BUILD-DIR WORK-DIR
#   packaging.sh find_package BUILD-DIR WORK-DIR
#   packaging.sh pkg_config   BUILD-DIR WORK-DIR
#   packaging.sh hint_probe   BUILD-DIR WORK-DIR
#   packaging.sh guard_probe  BUILD-DIR WORK-DIR
#   packaging.sh run_path     BUILD-DIR WORK-DIR
#   packaging.sh mcp_check    BUILD-DIR WORK-DIR
#   packaging.sh deb          BUILD-DIR WORK-DIR
# install puts libmcp into WORK-DIR/prefix (the other two consumers need
# it); deb builds the .deb with CPack into WORK-DIR/deb and checks its
# contents and dependencies.
set -euo pipefail
step=$1
build=$(cd "$2" && pwd)
work=$3
here=$(cd "$(dirname "$0")" && pwd)
prefix=$work/prefix
mkdir -p "$work"

fail() {
  echo "FAIL: packaging $step: $*" >&2
  exit 1
}

# only_libmcp_x PROGRAM LIB: PROGRAM asks the loader for LIB and not for
# libmcp (so that it starts shows LIB finding libmcp), and starts without
# LD_LIBRARY_PATH.
only_libmcp_x() {
  local needed
  needed=$(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  grep -qx "$2.so.$major" <<<"$needed" || fail "$1 does not need $2: $needed"
  if grep -qx "libmcp.so.$major" <<<"$needed"; then
    fail "$1 asks for libmcp itself (not linked --as-needed?)"
  fi
  env -u LD_LIBRARY_PATH "$1" || fail "$1 does not start (status $?)"
}

case $step in
install)
  rm -rf "$prefix"
  cmake --install "$build" --prefix "$prefix" >/dev/null
  ;;
find_package)
  rm -rf "$work/find_package"
  guard=OFF
  [ -f "$prefix/include/mcp/guard.h" ] && guard=ON
  cmake -S "$here/find_package" -B "$work/find_package" \
    -DCMAKE_PREFIX_PATH="$prefix" -DWITH_GUARD=$guard -Wno-dev >/dev/null
  cmake --build "$work/find_package" >/dev/null
  "$work/find_package/consumer"
  if [ $guard = ON ]; then "$work/find_package/guard_probe"; fi
  ;;
pkg_config)
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  cd "$work"
  cp "$here/consumer.c" app.c
  # pkg-config consumer: begin
  cc -o app app.c $(pkg-config --cflags --libs libmcp-http)
  # pkg-config consumer: end
  LD_LIBRARY_PATH=$prefix/lib ./app
  # A stdio-only program links cJSON alone: neither libmicrohttpd nor
  # OpenSSL appears in what libmcp asks for.
  if pkg-config --libs --static libmcp | grep -Eq 'microhttpd|crypto'; then
    fail "libmcp.pc pulls in the HTTP transport's dependencies"
  fi
  ;;
hint_probe)
  # Hints written as C bools, against the installed header: all refused.
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  cd "$work"
  cc -std=c11 -Wall -Wextra -Werror -o hint_probe "$here/hint_probe.c" \
    $(pkg-config --cflags --libs libmcp)
  LD_LIBRARY_PATH=$prefix/lib ./hint_probe
  ;;
guard_probe)
  # A read-only, closed-world tool that tries to write and to connect,
  # built against the installed <mcp/guard.h>: refused with the guard on,
  # done with it off.
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  cd "$work"
  cc -std=c11 -Wall -Wextra -Werror -o guard_probe "$here/guard_probe.c" \
    $(pkg-config --cflags --libs libmcp-guard)
  LD_LIBRARY_PATH=$prefix/lib ./guard_probe
  ;;
run_path)
  # Each installed library that needs libmcp finds it by its own run path
  # ($ORIGIN): programs calling only libmcp_http (libmcp_guard,
  # libmcp_redis), linked --as-needed, built with pkg-config and with
  # find_package, start.
  major=$(sed -n 's/^CMAKE_PROJECT_VERSION_MAJOR:STATIC=//p' "$build/CMakeCache.txt")
  libs=(libmcp_http)
  guard=OFF
  redis=OFF
  if [ -f "$prefix/include/mcp/guard.h" ]; then
    libs+=(libmcp_guard)
    guard=ON
  fi
  if [ -f "$prefix/include/mcp/redis.h" ]; then
    libs+=(libmcp_redis)
    redis=ON
  fi
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  rm -rf "$work/run_path" && mkdir -p "$work/run_path" && cd "$work/run_path"
  for lib in "${libs[@]}"; do
    runpath=$(readelf -d "$prefix/lib/$lib.so.$major" |
      sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
    [ "$runpath" = '$ORIGIN' ] || fail "$lib's run path is '$runpath'"
    name=${lib#libmcp_}
    pc=libmcp-$name
    # A private prefix: the program names the run path of the library it
    # links (pkg-config's libdir); libmcp is that library's business.
    cc -std=c11 -Wall -Wextra -Werror -Wl,--as-needed -o "${name}_only" \
      "$here/${name}_only.c" $(pkg-config --cflags --libs "$pc") \
      -Wl,-rpath,"$(pkg-config --variable=libdir "$pc")"
    only_libmcp_x "./${name}_only" "$lib"
  done
  cmake -S "$here/run_path" -B "$work/run_path/cmake" \
    -DCMAKE_PREFIX_PATH="$prefix" -DWITH_GUARD=$guard -DWITH_REDIS=$redis \
    -DCMAKE_INSTALL_PREFIX="$work/run_path/installed" -Wno-dev >/dev/null
  cmake --build "$work/run_path/cmake" >/dev/null
  cmake --install "$work/run_path/cmake" >/dev/null
  for lib in "${libs[@]}"; do
    name=${lib#libmcp_}
    only_libmcp_x "$work/run_path/cmake/${name}_only" "$lib"
    only_libmcp_x "$work/run_path/installed/bin/${name}_only" "$lib"
  done
  ;;
deb)
  rm -rf "$work/deb"
  (cd "$build" && cpack -G DEB -B "$work/deb" >/dev/null)
  shopt -s nullglob
  debs=("$work"/deb/*.deb)
  [ ${#debs[@]} -eq 1 ] || fail "expected one .deb, found ${#debs[@]}"
  deb=${debs[0]}
  contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
  version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
  major=${version%%.*}
  for want in \
    "./usr/include/mcp/mcp.h" "./usr/include/mcp/engine.h" \
    "./usr/include/mcp/executor.h" \
    "./usr/include/mcp/http.h" "./usr/include/mcp/guard.h" \
    "./usr/include/mcp/version.h" "./usr/include/mcp/export.h" \
    "./usr/lib/libmcp.so.$version" "./usr/lib/libmcp.so.$major" \
    "./usr/lib/libmcp.so" "./usr/lib/libmcp.a" \
    "./usr/lib/libmcp_http.so.$version" "./usr/lib/libmcp_http.so.$major" \
    "./usr/lib/libmcp_http.a" \
    "./usr/lib/libmcp_guard.so.$version" "./usr/lib/libmcp_guard.a" \
    "./usr/lib/pkgconfig/libmcp.pc" "./usr/lib/pkgconfig/libmcp-http.pc" \
    "./usr/lib/pkgconfig/libmcp-guard.pc" \
    "./usr/lib/cmake/mcp/mcpConfig.cmake" \
    "./usr/lib/cmake/mcp/mcpConfigVersion.cmake" \
    "./usr/lib/cmake/mcp/mcpTargets.cmake" "./usr/bin/mcp-check" \
    "./usr/share/man/man1/mcp-check.1"; do
    grep -qxF -- "$want" <<<"$contents" || fail "$deb lacks $want"
  done
  # The Redis store, when hiredis was there to build it.
  if grep -q '^MCP_REDIS:BOOL=ON' "$build/CMakeCache.txt"; then
    for want in "./usr/include/mcp/redis.h" "./usr/include/mcp/store.h" \
      "./usr/lib/libmcp_redis.so.$version" "./usr/lib/libmcp_redis.a" \
      "./usr/lib/pkgconfig/libmcp-redis.pc"; do
      grep -qxF -- "$want" <<<"$contents" || fail "$deb lacks $want"
    done
  fi
  # Installed into /usr/lib, where the loader looks anyway, no library
  # carries a run path (Debian's policy; lintian's custom-library-search-path).
  rm -rf "$work/deb/root"
  dpkg-deb -x "$deb" "$work/deb/root"
  for lib in "$work"/deb/root/usr/lib/*.so.*.*; do
    if readelf -d "$lib" | grep -Eq '\((RPATH|RUNPATH)\)'; then
      fail "$(basename "$lib") in the .deb has a run path"
    fi
  done
  depends=$(dpkg-deb -f "$deb" Depends)
  for want in libcjson1 libmicrohttpd12 libssl3 libgnutls30 libseccomp2 \
    libcurl4; do
    grep -q "$want" <<<"$depends" || fail "Depends lacks $want: $depends"
  done
  [ "$(dpkg-deb -f "$deb" Package)" = libmcp ] || fail "package name"
  [ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "version"
  echo "$(basename "$deb"): $(wc -l <<<"$contents") entries; Depends: $depends"
  ;;
mcp_check)
  # mcp-check and its man page, installed beside the libraries: the
  # command runs from the prefix and the page renders without a warning.
  version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
  [ -x "$prefix/bin/mcp-check" ] || fail "no bin/mcp-check"
  page=$prefix/share/man/man1/mcp-check.1
  [ -f "$page" ] || fail "no share/man/man1/mcp-check.1"
  "$prefix/bin/mcp-check" --version | grep -q "^mcp-check $version" ||
    fail "mcp-check --version"
  "$prefix/bin/mcp-check" --help | grep -q "exit status" || fail "--help"
  warnings=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
  [ -z "$warnings" ] || fail "the man page: $warnings"
  ;;
*)
  echo "usage: packaging.sh install|find_package|pkg_config|hint_probe|guard_probe|run_path|mcp_check|deb BUILD WORK" >&2
  exit 2
  ;;
esac
echo "PASS: packaging $step"
