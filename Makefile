# Convenience wrapper around CMake. The two commands of the quick start:
#   make demo    installs what is missing, builds, starts the notes example
#                over HTTP on 127.0.0.1:8080 (another port with PORT=, e.g.
#                make demo PORT=9090) with a fresh development key and
#                token (examples/demo.sh); Ctrl-C stops it
#   make check   installs what is missing, builds, runs every test suite:
#                gcc build, clang build with ASan+UBSan, valgrind memcheck,
#                the API reference (make docs), every libFuzzer target
#                briefly (check-fuzz) and ThreadSanitizer on the threaded
#                suites (check-tsan)
# The API reference:
#   make docs    Doxygen over include/mcp/*.h into build/docs/html; any
#                warning (an undocumented declaration) fails it
# And two for library work:
#   make fuzz    runs each libFuzzer target (or those named in FUZZ_TARGETS,
#                e.g. FUZZ_TARGETS="fuzz_json fuzz_http") for FUZZ_SECONDS
#                (default 60) under ASan+UBSan, with a corpus kept in
#                build-fuzz/corpus (seeded from tests/fuzz/corpus)
#   make check-fuzz  the part of `make check` that builds the libFuzzer
#                targets (clang, ASan+UBSan+LeakSanitizer, build-fuzz) and
#                runs each for CHECK_FUZZ_SECONDS (default 8, about a minute
#                for all) from its committed seeds and the reproducers of
#                past findings (tests/fuzz/regressions); any crash, leak or
#                hang fails it
#   make bench   runs the benchmarks at full size in a Release build and
#                writes the table of figures, ceilings and ratios to
#                build-bench/bench.md
.PHONY: all build deps test-deps docs-deps demo docs check check-gcc \
        check-asan check-valgrind check-docs check-fuzz check-tsan fuzz bench \
        format clean

JOBS   := $(shell nproc 2>/dev/null || echo 2)
CTEST  := ctest --output-on-failure -j $(JOBS)
CMAKE  := cmake -S . -Wno-dev
FUZZ_SECONDS ?= 60
PORT ?= 8080
# Test labels run in the plain gcc build only: the sanitizer and valgrind
# builds would check nothing more in them (formatting, the documentation's
# commands, installed-package consumers), and libfaketime, preloaded by the
# faketime tests, does not mix with the sanitizers' runtimes or valgrind;
# mcp-check --observe (label observe) puts a seccomp filter on a child it
# forks, which valgrind cannot follow, and measures nothing more there;
# interop.multihost (label cluster) builds network namespaces and runs its
# processes in them, out of any launcher's reach, and would only repeat
# itself.
PLAIN_ONLY := 'lint|docs|packaging|faketime|observe|cluster'

all: build

deps:
	@bash cmake/deps.sh

test-deps:
	@bash cmake/deps.sh --test

docs-deps:
	@bash cmake/deps.sh --docs

build: deps
	@$(CMAKE) -B build -DMCP_BUILD_TESTS=OFF >/dev/null
	@cmake --build build -j $(JOBS)

demo: build
	@bash examples/demo.sh build $(PORT)

docs: docs-deps build
	@cmake --build build --target docs

check: test-deps check-gcc check-asan check-valgrind check-docs check-fuzz \
       check-tsan
	@echo "make check: all suites passed"

check-docs: check-gcc
	@cmake --build build --target docs

check-gcc:
	@CC=gcc $(CMAKE) -B build -DMCP_BUILD_TESTS=ON >/dev/null
	@cmake --build build -j $(JOBS)
	@cd build && $(CTEST)

check-asan:
	@CC=clang $(CMAKE) -B build-asan -DMCP_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	@cmake --build build-asan -j $(JOBS)
	@cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 $(CTEST) -LE $(PLAIN_ONLY)

check-valgrind:
	@CC=gcc $(CMAKE) -B build-valgrind -DMCP_VALGRIND=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	@cmake --build build-valgrind -j $(JOBS)
	@cd build-valgrind && $(CTEST) -LE $(PLAIN_ONLY)

# ThreadSanitizer (clang, build-tsan): the HTTP suites (a pool of polling
# threads, deferred calls finished from other threads), the engine suites
# with deferred calls and threads, the limits suite (one rate-limit bucket
# shared by threads), the executor and guard suites (calls run on worker
# threads), the task suite (tasks finished on one thread while another reads
# and cancels them), the rate limit on a shared store (calls answered on
# the Redis store's threads), and the load tests. Only what they need
# is built; MCP_TSAN scales the slow tests down. Any report fails the run.
TSAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
TSAN_TESTS := '^(http|http_auth|jwt|load)\.|^unit\.test_(engine|lifecycle|prompts_resources|subscriptions|modern|stdio|limits|executor|guard|effects|task|store)$$|^redis\.(limit|store|tasks)$$'
check-tsan:
	@CC=clang $(CMAKE) -B build-tsan -DMCP_TSAN=ON -DMCP_INTEROP=OFF \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="$(TSAN_FLAGS)" \
	  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread \
	  -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread >/dev/null
	@cmake --build build-tsan -j $(JOBS) --target test_http test_http_auth \
	  test_jwt test_engine test_lifecycle test_prompts_resources \
	  test_subscriptions test_modern test_stdio test_limits test_executor \
	  test_guard test_effects test_task test_store test_redis test_redis_limit \
	  test_redis_tasks \
	  load streams notes
	@cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	  $(CTEST) -R $(TSAN_TESTS)

# The fuzz build (tests/fuzz): clang, ASan+UBSan, only what the targets need.
FUZZ_CMAKE := CC=clang $(CMAKE) -B build-fuzz -DMCP_FUZZ=ON -DMCP_SANITIZE=ON \
  -DCMAKE_BUILD_TYPE=Debug -DMCP_INTEROP=OFF -DMCP_BUILD_EXAMPLES=OFF
FUZZ_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
CHECK_FUZZ_SECONDS ?= 8

# Each target gets its own corpus folder, seeded with its committed seeds
# (tests/fuzz/corpus/<target>); fuzz_schema also with every (schema,
# instance) pair of the JSON-Schema-Test-Suite when it is installed. The
# reproducers of past findings (tests/fuzz/regressions/<target>) run too,
# and a target's dictionary (tests/fuzz/<target>.dict) when it has one.
fuzz: test-deps
	@$(FUZZ_CMAKE) >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target mcp_fuzz_targets json_schema_suite
	@mkdir -p build-fuzz/corpus/fuzz_schema
	@suite=$$(sed -n 's/^MCP_JSON_SCHEMA_SUITE_DIR:PATH=//p' build-fuzz/CMakeCache.txt); \
	  if [ -d "$$suite/draft2020-12" ]; then \
	    build-fuzz/tests/schema_suite/json_schema_suite \
	      --seeds build-fuzz/corpus/fuzz_schema "$$suite/draft2020-12" >/dev/null; \
	  fi
	@for t in $(if $(FUZZ_TARGETS),$(addprefix build-fuzz/tests/fuzz/,$(FUZZ_TARGETS)),build-fuzz/tests/fuzz/fuzz_*); do \
	  name=$$(basename $$t); mkdir -p build-fuzz/corpus/$$name; \
	  if [ -d tests/fuzz/corpus/$$name ]; then \
	    cp -n tests/fuzz/corpus/$$name/* build-fuzz/corpus/$$name/; \
	  fi; \
	  reg=tests/fuzz/regressions/$$name; [ -d $$reg ] || reg=; \
	  dict=tests/fuzz/$$name.dict; [ -f $$dict ] && dict=-dict=$$dict || dict=; \
	  echo "fuzzing $$name for $(FUZZ_SECONDS) s" >&2; \
	  $(FUZZ_ENV) $$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	      $$dict -artifact_prefix=build-fuzz/$$name- \
	      build-fuzz/corpus/$$name $$reg \
	    || exit 1; \
	done

# Each target runs from a scratch corpus folder (build-fuzz/check-corpus)
# with its committed seeds and regression inputs read alongside, so the
# tree is never written to; its output goes to build-fuzz/check-<target>.log.
check-fuzz: test-deps
	@$(FUZZ_CMAKE) >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target mcp_fuzz_targets
	@rm -rf build-fuzz/check-corpus
	@for t in build-fuzz/tests/fuzz/fuzz_*; do \
	  name=$$(basename $$t); log=build-fuzz/check-$$name.log; \
	  mkdir -p build-fuzz/check-corpus/$$name; dirs=; \
	  for d in tests/fuzz/corpus/$$name tests/fuzz/regressions/$$name; do \
	    if [ -d $$d ]; then dirs="$$dirs $$d"; fi; \
	  done; \
	  dict=tests/fuzz/$$name.dict; [ -f $$dict ] && dict=-dict=$$dict || dict=; \
	  $(FUZZ_ENV) $$t -max_total_time=$(CHECK_FUZZ_SECONDS) -timeout=20 $$dict \
	      -rss_limit_mb=2048 -artifact_prefix=build-fuzz/check-$$name- \
	      build-fuzz/check-corpus/$$name $$dirs >$$log 2>&1 \
	    || { tail -n 40 $$log; echo "check-fuzz: $$name failed, see $$log" >&2; \
	         exit 1; }; \
	  echo "check-fuzz: $$name: $$(sed -n 's/^#\([0-9]*\)[[:space:]]*DONE[[:space:]]*cov: \([0-9]*\) ft: \([0-9]*\).*/\1 runs, \2 edges, \3 features/p' $$log)"; \
	done

bench:
	@$(CMAKE) -B build-bench -DCMAKE_BUILD_TYPE=Release -DMCP_INTEROP=OFF \
	  -DMCP_BUILD_EXAMPLES=OFF >/dev/null
	@cmake --build build-bench -j $(JOBS) --target bench_load
	@./build-bench/tests/bench/bench_load --out build-bench/bench.md

format:
	@clang-format -i include/mcp/*.h lib/*/*.c lib/*/*.h examples/*.c tests/unit/*.c tests/unit/*.h \
	  tests/common/*.c tests/common/*.h \
	  examples/port_daemon/*.c examples/dashboard/*.c tests/packaging/*.c

clean:
	rm -rf build build-asan build-valgrind build-fuzz build-bench build-tsan
