# Entry points: make demo, make test, make bench, make fuzz, make install.
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)
PREFIX ?= /usr/local
SWIFT_BUILD_FLAGS ?=

.PHONY: all deps build release demo test unit-tests fuzz-smoke fuzz bench install clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	swift build $(SWIFT_BUILD_FLAGS)

release: deps
	swift build -c release $(SWIFT_BUILD_FLAGS)

# The main job end to end on sample files.
demo: build
	contrib/demo.sh .build/debug/asicfs

# Every test: the XCTest suites (real files, real peer tools, real tmpfs mounts) and a short fuzz run.
test: build fuzz-smoke unit-tests

unit-tests: build
	scripts/setup-pyasice.sh >/dev/null
	scripts/setup-digidoc-tool.sh >/dev/null
	scripts/run-tests.sh

fuzz-smoke: deps
	Fuzz/run.sh all 20

fuzz: deps
	Fuzz/run.sh all 300

bench: deps
	Benchmarks/container-bench.sh

install: release
	install -D -m 0755 .build/release/asicfs $(DESTDIR)$(PREFIX)/bin/asicfs
	install -D -m 0644 man/asicfs.1 $(DESTDIR)$(PREFIX)/share/man/man1/asicfs.1

clean:
	rm -rf .build
