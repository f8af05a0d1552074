# Convenience wrapper around CMake. The two commands of the quick start:
#   make demo    installs what is missing, builds, starts the notes example
#   make check   installs what is missing, builds, runs every test suite:
#                gcc build, clang build with ASan+UBSan, valgrind memcheck
.PHONY: all build deps test-deps demo check check-gcc check-asan \
        check-valgrind format clean

JOBS   := $(shell nproc 2>/dev/null || echo 2)
CTEST  := ctest --output-on-failure -j $(JOBS)
CMAKE  := cmake -S . -Wno-dev

all: build

deps:
	@bash cmake/deps.sh

test-deps:
	@bash cmake/deps.sh --test

build: deps
	@$(CMAKE) -B build -DMCP_BUILD_TESTS=OFF >/dev/null
	@cmake --build build -j $(JOBS)

demo: build
	@echo "notes is serving MCP over stdio: paste one JSON-RPC message per line," >&2
	@echo "for example {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}; Ctrl-D ends." >&2
	@./build/examples/notes --data build/notes.json

check: test-deps check-gcc check-asan check-valgrind
	@echo "make check: all suites passed"

check-gcc:
	@CC=gcc $(CMAKE) -B build -DMCP_BUILD_TESTS=ON >/dev/null
	@cmake --build build -j $(JOBS)
	@cd build && $(CTEST)

check-asan:
	@CC=clang $(CMAKE) -B build-asan -DMCP_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	@cmake --build build-asan -j $(JOBS)
	@cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 $(CTEST) -LE lint

check-valgrind:
	@CC=gcc $(CMAKE) -B build-valgrind -DMCP_VALGRIND=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	@cmake --build build-valgrind -j $(JOBS)
	@cd build-valgrind && $(CTEST) -LE lint

format:
	@clang-format -i include/mcp/*.h lib/*.c lib/*.h examples/*.c tests/unit/*.c tests/unit/*.h

clean:
	rm -rf build build-asan build-valgrind
