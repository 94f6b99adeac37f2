# Set-up and everyday commands. `make test` and `make demo` work on a fresh machine: they install
# what the build needs (libevent-dev) first.

SWIFT ?= swift
SWIFT_BUILD_FLAGS ?=

.PHONY: deps build test test-tsan demo format lint clean

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
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)

test: deps
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	$(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS)

# The whole suite under ThreadSanitizer (its own build folder, so it does not evict the normal one).
test-tsan: deps
	$(SWIFT) test --sanitize=thread --scratch-path .build-tsan $(SWIFT_BUILD_FLAGS)

demo: deps
	$(SWIFT) run $(SWIFT_BUILD_FLAGS) TomorrowlandDemo

# Formats the sources with the toolchain's swift-format and the checked-in .swift-format.
format:
	$(SWIFT) format --in-place -r Sources Tests Examples

# Fails when a file is not formatted.
lint:
	$(SWIFT) format lint --strict -r Sources Tests Examples

clean:
	rm -rf .build .build-*
