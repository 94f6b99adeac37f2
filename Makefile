# Set-up and everyday commands. `make test` and `make demo` work on a fresh machine: they install
# what the build needs (libevent-dev) first.

SWIFT ?= swift
SWIFT_BUILD_FLAGS ?=
# The library's opt-in integrations (TomorrowlandNIO, TomorrowlandServiceLifecycle, TomorrowlandMetrics) are package
# traits, off for packages that depend on this one; this repository builds and tests them.
SWIFT_TRAITS ?= --enable-all-traits
# The examples (daemons, demos) are a package of their own: Examples/Package.swift.
EXAMPLES = --package-path Examples

.PHONY: deps build test check-api check-allocations check-dependency-graph bench-smoke test-tsan test-asan test-asan-examples leaks demo demo-promises docs bench-kv bench-kv-idle sim fuzz format lint bench bench-callgrind clean

# Installs libevent's headers and pkg-config files when they are missing.
deps:
	@if pkg-config --exists libevent_core 2>/dev/null; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "make deps: installing libevent-dev"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libevent-dev pkg-config >/dev/null; \
	elif command -v sudo >/dev/null 2>&1; then \
		echo "make deps: installing libevent-dev with sudo"; \
		sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libevent-dev pkg-config >/dev/null; \
	else \
		echo "make deps: libevent 2.1 development files are missing." >&2; \
		echo "Install them (Debian/Ubuntu: apt-get install libevent-dev) and run make again." >&2; \
		exit 1; \
	fi
	@pkg-config --exists libevent_core || { echo "make deps: libevent_core still not found by pkg-config" >&2; exit 1; }

build: deps
	$(SWIFT) build $(SWIFT_TRAITS) $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build $(EXAMPLES) $(SWIFT_BUILD_FLAGS)

# The library's suites, the examples' suites, then the allocation budgets (check-allocations).
test: deps
	$(SWIFT) build --build-tests $(SWIFT_TRAITS) $(SWIFT_BUILD_FLAGS)
	$(SWIFT) test --skip-build $(SWIFT_TRAITS) $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build --build-tests $(EXAMPLES) $(SWIFT_BUILD_FLAGS)
	$(SWIFT) test --skip-build $(EXAMPLES) $(SWIFT_BUILD_FLAGS)
	@$(MAKE) --no-print-directory check-allocations
	@$(MAKE) --no-print-directory check-dependency-graph
	@$(MAKE) --no-print-directory test-http-example

# What a package that depends on this one resolves: nothing else without traits, swift-nio's
# graph with the NIO trait, swift-service-lifecycle's with ServiceLifecycle, swift-metrics with
# Metrics, swift-distributed-tracing with Tracing (a few seconds).
check-dependency-graph:
	SWIFT="$(SWIFT)" scripts/check-dependency-graph.sh

# The public API of every library product (all traits on) against the baseline commit in
# .api-baseline, with `swift package diagnose-api-breaking-changes`: fails on a breaking change.
# Accepting one means moving .api-baseline to the breaking commit with a "Breaking" entry in
# CHANGELOG.md's Unreleased section, which the script also checks (see scripts/check-api.sh).
# The first run for a baseline builds it with all traits (a few minutes); its API dumps are then
# cached in .build/api-baseline/, and a run builds only the current package and compares.
check-api: deps
	SWIFT="$(SWIFT)" scripts/check-api.sh

# Allocation calls per unit of our side of every benchmark workload, counted (not timed) by the
# benchmark's malloc interposer, must stay within Benchmarks/allocation-budgets.txt. Builds the
# Benchmarks package in release (the build `make bench` uses; the first one resolves and builds
# SwiftNIO, a few minutes), then runs each workload of both libraries once: a few seconds.
check-allocations: deps
	cd Benchmarks && $(SWIFT) build -c release
	Benchmarks/scripts/check-allocations.sh

# What check-allocations does not run of the Benchmarks package, once and briefly: M1 for both
# libraries (each in a fresh process) and TCPEchoBench (one run of 2,000 round trips per pairing).
bench-smoke: deps
	cd Benchmarks && $(SWIFT) build -c release
	Benchmarks/.build/release/TomorrowlandBench --m1 ours
	Benchmarks/.build/release/TomorrowlandBench --m1 nio
	Benchmarks/.build/release/TCPEchoBench 2000 1

# The whole suite under ThreadSanitizer (its own build folder, so it does not evict the normal one).
# The model tests are single-threaded and ten times slower under a sanitizer: 2,000 programs
# of each there (20,000 promise programs and 10,000 TCP programs in `make test`), and 20 seeds of
# loopkv's simulation sweep (200 in `make test`).
# Reports go to files (TSAN_OPTIONS log_path); a failed run prints them after the suite's output,
# a digest last: in the middle of a thousand tests' lines they would be lost to a log's tail.
TSAN_REPORTS = $(CURDIR)/.build-tsan/reports
test-tsan: deps
	rm -rf $(TSAN_REPORTS) && mkdir -p $(TSAN_REPORTS)
	TSAN_OPTIONS=log_path=$(TSAN_REPORTS)/library TOMORROWLAND_MODEL_PROGRAMS=2000 TOMORROWLAND_TCP_MODEL_PROGRAMS=2000 \
		$(SWIFT) test --sanitize=thread --scratch-path .build-tsan $(SWIFT_TRAITS) $(SWIFT_BUILD_FLAGS) \
		|| { SWIFT="$(SWIFT)" scripts/print-tsan-reports.sh $(TSAN_REPORTS); exit 1; }
	TSAN_OPTIONS=log_path=$(TSAN_REPORTS)/examples TOMORROWLAND_SIM_SEEDS=20 \
		$(SWIFT) test --sanitize=thread $(EXAMPLES) --scratch-path Examples/.build-tsan $(SWIFT_BUILD_FLAGS) \
		|| { SWIFT="$(SWIFT)" scripts/print-tsan-reports.sh $(TSAN_REPORTS); exit 1; }

# The library's suites under AddressSanitizer (use-after-free, overflows, double frees) and
# LeakSanitizer, in its own build folder. `make test-asan-examples` runs the examples' suites so;
# CI leaves it out: the examples' unsafe code is the RESP parser, the command path and the TCP
# input buffer, which `make fuzz` runs under AddressSanitizer. .ci/lsan-suppressions.txt lists,
# with the reason for each, the leaks that are not the library's: corelibs XCTest and Foundation
# internals, and retain cycles some tests build on purpose (a pending promise whose onRequestCancel handler
# captures its resolver, rule A3 of Sources/Tomorrowland/Tomorrowland.docc/BehaviourRules.md; a
# TestLoop dropped with queued work that refers to it).
# SWIFT_BACKTRACE=enable=no: a child process that crashes under AddressSanitizer would start
# swift-backtrace, which can hang holding the test's pipe open; the crash itself still fails the test.
test-asan: deps
	SWIFT_BACKTRACE=enable=no LSAN_OPTIONS=suppressions=$(CURDIR)/.ci/lsan-suppressions.txt TOMORROWLAND_MODEL_PROGRAMS=2000 TOMORROWLAND_TCP_MODEL_PROGRAMS=2000 \
		$(SWIFT) test --sanitize=address --scratch-path .build-asan $(SWIFT_TRAITS) $(SWIFT_BUILD_FLAGS)

test-asan-examples: deps
	SWIFT_BACKTRACE=enable=no LSAN_OPTIONS=suppressions=$(CURDIR)/.ci/lsan-suppressions.txt TOMORROWLAND_SIM_SEEDS=20 \
		$(SWIFT) test --sanitize=address $(EXAMPLES) --scratch-path Examples/.build-asan $(SWIFT_BUILD_FLAGS)

# Runs a program that exercises the loop, promises, timers, watchers, a group and shutdown
# (Tests/TomorrowlandLeakProbe) under valgrind; fails on any definitely or indirectly lost block.
# Release build with DWARF 4 (valgrind 3.19 cannot read the toolchain's default DWARF 5). What
# valgrind still lists as "possibly lost" / "still reachable" belongs to the Swift runtime's
# metadata caches and to threads alive at exit (libdispatch workers), not to the library.
# `TOMORROWLAND_LEAK_PROBE_LEAK=1 make leaks` leaks a cycle on purpose and must fail.
leaks: deps
	@command -v valgrind >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null; }
	$(SWIFT) build -c release --scratch-path .build-leaks --product TomorrowlandLeakProbe \
		-Xswiftc -dwarf-version=4 -Xcc -gdwarf-4 $(SWIFT_BUILD_FLAGS)
	valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
		.build-leaks/release/TomorrowlandLeakProbe

# The daemon demo: loopkv driven by redis-cli (installed with apt-get when missing), a key
# visibly expiring, then SIGTERM and exit status 0.
demo: deps
	SWIFT="$(SWIFT)" SWIFT_BUILD_FLAGS="$(SWIFT_BUILD_FLAGS)" Examples/KeyValueDaemon/demo.sh

# The promise demo (Examples/TomorrowlandDemo).
demo-promises: deps
	$(SWIFT) run $(EXAMPLES) $(SWIFT_BUILD_FLAGS) TomorrowlandDemo

# The DocC archives of the library modules (the trait modules with their traits), offline, with swift-docc-plugin, into docs/
# (one .doccarchive per module; serve one with `python3 -m http.server -d docs/Tomorrowland.doccarchive`
# and open /documentation/tomorrowland). Prints each module's documentation coverage. Pass more
# docc options with DOCC_FLAGS, e.g. `make docs DOCC_FLAGS=--warnings-as-errors`.
DOCC_FLAGS ?=

docs: deps
	$(SWIFT) package $(SWIFT_TRAITS) $(SWIFT_BUILD_FLAGS) --allow-writing-to-directory docs generate-documentation \
		--target Tomorrowland --target TomorrowlandLoop --target TomorrowlandTesting --target TomorrowlandSimulation --target TomorrowlandNIO --target TomorrowlandServiceLifecycle --target TomorrowlandMetrics --target TomorrowlandTracing \
		--output-path docs --experimental-skip-synthesized-symbols \
		--experimental-documentation-coverage --coverage-summary-level brief $(DOCC_FLAGS)

# loopkv's server on simulated networks (Examples/KeyValueSimulation): seeds 1...SEEDS of
# SIM_CLIENTS clients × SIM_COMMANDS commands with faults, release build; stops at the first
# seed whose replies do not match the model and prints how to replay it. SIM_MINUTES=M sizes each
# run in virtual minutes instead, clients pacing their commands (`make sim SEEDS=3 SIM_CLIENTS=100
# SIM_MINUTES=10` is the issue's full-size world).
SEEDS ?= 200
SIM_CLIENTS ?= 10
SIM_COMMANDS ?= 100
SIM_MINUTES ?=
SIM_SIZE = $(if $(SIM_MINUTES),--minutes $(SIM_MINUTES),--commands $(SIM_COMMANDS))

sim: deps
	$(SWIFT) build -c release $(EXAMPLES) $(SWIFT_BUILD_FLAGS) --product loopkv-sim
	@bin=$$($(SWIFT) build -c release $(EXAMPLES) $(SWIFT_BUILD_FLAGS) --show-bin-path)/loopkv-sim; \
	for seed in $$(seq 1 $(SEEDS)); do \
		$$bin --seed $$seed --clients $(SIM_CLIENTS) $(SIM_SIZE) > /tmp/loopkv-sim.$$$$ \
			|| { cat /tmp/loopkv-sim.$$$$; rm -f /tmp/loopkv-sim.$$$$; exit 1; }; \
		tail -n 1 /tmp/loopkv-sim.$$$$; \
	done; rm -f /tmp/loopkv-sim.$$$$

# redis-benchmark -P 16 against loopkv (release, one loop) and redis-server, side by side.
bench-kv: deps
	SWIFT="$(SWIFT)" SWIFT_BUILD_FLAGS="$(SWIFT_BUILD_FLAGS)" scripts/bench-kv.sh

# What an idle connection costs loopkv and redis-server in resident memory, side by side
# (KV_IDLE_CONNECTIONS connections, default 9000, each after one PING).
bench-kv-idle: deps
	SWIFT="$(SWIFT)" SWIFT_BUILD_FLAGS="$(SWIFT_BUILD_FLAGS)" scripts/kv-idle-memory.sh

# libFuzzer on the RESP parser, the command path and the TCP input buffer, from the committed corpora
# (Fuzz/corpus); FUZZ_SECONDS per harness (default 60).
FUZZ_SECONDS ?= 60
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh

# Formats the sources with the toolchain's swift-format and the checked-in .swift-format.
format:
	$(SWIFT) format --in-place -r Sources Tests Examples Benchmarks/Sources

# Fails when a file is not formatted.
lint:
	$(SWIFT) format lint --strict -r Sources Tests Examples Benchmarks/Sources

# The benchmarks are a package of their own (Benchmarks/Package.swift, which depends on SwiftNIO),
# so the library's own build never resolves NIO. `make bench` builds it in release, runs every
# workload for Tomorrowland and for NIO, prints the table and writes Benchmarks/results/.
# Pass arguments with BENCH_ARGS, e.g. `make bench BENCH_ARGS="--only W1,W3"`.
BENCH_ARGS ?=

bench: deps
	cd Benchmarks && $(SWIFT) build -c release
	@python3 -c 'import matplotlib' 2>/dev/null || python3 -m pip install --quiet matplotlib || \
		echo "make bench: matplotlib unavailable, the chart will be skipped" >&2
	Benchmarks/scripts/run-bench.sh $(BENCH_ARGS)

# Instructions per unit for W1, W2, W3, W4 and W7 (and the ours@NIO rows) under callgrind, each
# printed beside its committed figure in Benchmarks/instruction-budgets.txt with the delta (rows
# beyond ±3% flagged, nothing fails); a few minutes. Writes Benchmarks/results/callgrind.md.
bench-callgrind: deps valgrind-deps
	cd Benchmarks && $(SWIFT) build -c release
	Benchmarks/scripts/callgrind.sh

# Where W1i, W1 and W8 spend their instructions per unit (glibc's allocator, the Swift runtime, the
# promise core, the loops, the benchmark), with the costliest functions; SPLIT="W1 W4" for others.
# The floor table of Benchmarks/README.md is measured with it; under a minute per row.
SPLIT ?=
bench-split: deps valgrind-deps
	cd Benchmarks && $(SWIFT) build -c release
	Benchmarks/scripts/callgrind-split.sh $(SPLIT)

# The instruction gate: our side of W1, W2, W3 (and W1i, W2i, W3i on .immediate) under callgrind
# must stay within 3% above Benchmarks/instruction-budgets.txt. Run by .ci/run, not by `make test`:
# the counts depend on the machine's CPU (glibc's dispatched routines), so the budgets hold on
# CI's kind of machine. Builds the Benchmarks package in release, then ~23 s of CPU (two runs at a time).
check-instructions: deps valgrind-deps
	cd Benchmarks && $(SWIFT) build -c release
	Benchmarks/scripts/check-instructions.sh

# valgrind (callgrind), from apt when missing.
valgrind-deps:
	@if command -v valgrind >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "installing valgrind"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null; \
	else \
		echo "installing valgrind with sudo"; \
		sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null; \
	fi

.PHONY: check-instructions valgrind-deps bench-split

clean:
	rm -rf .build .build-* Benchmarks/.build Benchmarks/.build-* Examples/.build Examples/.build-* docs

# The Hummingbird 2 example (Examples/HummingbirdFanOut): a package of its own, so only these two
# targets resolve and build Hummingbird. Built once in debug, never under the sanitizers (its
# dependencies are most of its build time; the library's concurrency is covered by test-tsan).
# Its tests drive the service with curl, installed here when missing.
HTTP_EXAMPLE = --package-path Examples/HummingbirdFanOut

.PHONY: test-http-example demo-http

test-http-example: deps
	@command -v curl >/dev/null || { echo "make test-http-example: installing curl"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >/dev/null; }
	$(SWIFT) build --build-tests $(HTTP_EXAMPLE) $(SWIFT_BUILD_FLAGS)
	$(SWIFT) test --skip-build $(HTTP_EXAMPLE) $(SWIFT_BUILD_FLAGS)

# Starts hummingbird-fanout and curls it: a quote, a timeout, a client hanging up, the stats.
demo-http: deps
	SWIFT="$(SWIFT)" SWIFT_BUILD_FLAGS="$(SWIFT_BUILD_FLAGS)" Examples/HummingbirdFanOut/demo.sh
