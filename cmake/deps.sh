#!/usr/bin/env bash
# Installs the Debian 12 packages the build and the tests need, and only the
# missing ones. Used by `make demo`, `make docs` (--docs), `make check`
# (--test) and examples/deploy/cluster.sh (--cluster). As root it runs
# apt-get; as anyone else it prints the command to run and fails.
set -euo pipefail

missing=()
need_cmd() { command -v "$1" >/dev/null 2>&1 || missing+=("$2"); }
need_pc() { pkg-config --exists "$1" 2>/dev/null || missing+=("$2"); }
need_dir() { [ -d "$1" ] || missing+=("$2"); }
need_exe() { [ -x "$1" ] || missing+=("$2"); }

need_cmd cmake cmake
need_cmd gcc gcc
need_cmd pkg-config pkg-config
need_pc libcjson libcjson-dev
# The HTTP transport (mcp_http): libmicrohttpd, and OpenSSL's libcrypto.
need_pc libmicrohttpd libmicrohttpd-dev
# HTTPS: GnuTLS, which libmicrohttpd serves TLS with.
need_pc gnutls libgnutls28-dev
need_pc libcrypto libssl-dev
# The guard (mcp_guard, Linux): libseccomp.
need_pc libseccomp libseccomp-dev
# mcp-check: libcurl (HTTP), with OpenSSL.
need_pc libcurl libcurl4-openssl-dev
# notes --db: SQLite, for a store several notes processes share.
need_pc sqlite3 libsqlite3-dev
# make demo: the openssl command line makes its development key and token.
need_cmd openssl openssl
# The API reference: make docs (and make check CHECK_DOCS=1).
if [ "${1:-}" = "--docs" ] || [ "${1:-}" = "--test" ]; then
  need_cmd doxygen doxygen
fi
# examples/deploy/cluster.sh (and its tests): nginx in front of notes;
# the Redis store (mcp_redis, on hiredis) and the redis-server its tests
# and several machines share.
if [ "${1:-}" = "--cluster" ] || [ "${1:-}" = "--test" ]; then
  need_cmd nginx nginx
  need_pc hiredis libhiredis-dev
  need_exe /usr/bin/redis-server redis-server
fi
if [ "${1:-}" = "--test" ]; then
  # The documentation tests run the tutorial's curl commands, and
  # docs/deployment.md reaches Redis over TLS through stunnel, and follows
  # its master through HAProxy.
  need_cmd curl curl
  need_cmd stunnel stunnel4
  need_cmd haproxy haproxy
  need_cmd clang clang
  need_cmd python3 python3
  need_cmd valgrind valgrind
  need_cmd node nodejs
  need_cmd npm npm
  need_cmd clang-format clang-format
  # lint.complexity: cognitive complexity of every function of lib/.
  need_cmd clang-tidy clang-tidy
  need_cmd cppcheck cppcheck
  # The ABI check against the committed baseline (tests/abi).
  need_cmd abidw abigail-tools
  need_pc check check
  # Debian's check.pc names subunit as a private dependency.
  need_pc libsubunit libsubunit-dev
  # mcp-check's man page is rendered by man (tests/check).
  need_cmd man man-db
  # libfaketime moves the wall clock under a running server (BAD-INPUTS H5,
  # faketime.h5_clock_jumps); the package faketime brings the library.
  need_cmd faketime faketime
  # Socket activation as systemd does it, for example.*_systemd.
  need_cmd systemd-socket-activate systemd
  # interop.dashboard_chromium: the MCP Apps view of examples/dashboard,
  # rendered by headless Chromium (no browser is ever downloaded).
  need_exe /usr/bin/chromium chromium
  # The official JSON-Schema-Test-Suite, for tests/schema_suite.
  need_dir /usr/share/perl5/auto/share/dist/Test-JSON-Schema-Acceptance/tests/draft2020-12 \
    libtest-json-schema-acceptance-perl
fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "libmcp needs these Debian packages: ${missing[*]}" >&2
  echo "run as root: apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
