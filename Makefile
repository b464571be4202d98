# announce — build, test, run, bench, install. Every target installs what it needs.
SHELL := /bin/bash
PREFIX ?= /usr/local
SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Debian packages each target needs.
BUILD_PKGS := pkg-config libasound2-dev libsndfile1-dev libmpg123-dev libspeexdsp-dev
# pulseaudio & co.: the real-time paced device the timing tests play on (tests/paced-audio.sh).
TEST_PKGS  := $(BUILD_PKGS) alsa-utils sox libsox-fmt-all mpg123 espeak-ng ffmpeg \
              pulseaudio pulseaudio-utils libasound2-plugins tmux
BENCH_PKGS := $(TEST_PKGS)

# The release build: the Swift runtime linked statically, and (for every target, dependencies
# included) type metadata reached through accessor functions instead of run-time mangled-name
# lookups, which cost `announce play` ~3 M instructions of conformance scans at startup.
RELEASE_FLAGS := -c release --static-swift-stdlib \
	-Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors

.PHONY: deps deps-test deps-bench build release test run bench install clean

define apt_install
	@missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi
endef

deps:
	$(call apt_install,$(BUILD_PKGS))
deps-test:
	$(call apt_install,$(TEST_PKGS))
deps-bench:
	$(call apt_install,$(BENCH_PKGS))

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build $(RELEASE_FLAGS)

# Unit tests, then end-to-end tests of the built binary on ALSA's file and null devices.
test: deps-test build
	$(SWIFT) test

# Plays the demo on the default device; without a sound card, writes it to demo.wav instead.
run: release
	@scripts/demo.sh "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/announce"

bench: deps-bench release
	scripts/bench.sh "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/announce"

install: release
	install -D -m 0755 "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/announce" "$(DESTDIR)$(PREFIX)/bin/announce"

clean:
	rm -rf .build demo.wav
