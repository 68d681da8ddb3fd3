# Entry points: make demo, make test, make bench, make fuzz, make install (uninstall), make deb.
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)
PREFIX ?= /usr/local
SWIFT_BUILD_FLAGS ?=

.PHONY: all deps build release static demo test unit-tests fuzz-smoke fuzz bench install uninstall deb clean

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
	scripts/setup-etsi-report-model.sh >/dev/null
	scripts/run-tests.sh

fuzz-smoke: deps
	Fuzz/run.sh all 20

fuzz: deps
	Fuzz/run.sh all 300

bench: deps
	Benchmarks/container-bench.sh

# The binary carries the Swift runtime (--static-swift-stdlib): it needs only Debian's libraries,
# not the toolchain. Installs the man page, completions, MIME types, desktop file and systemd user
# unit (the built-in trust is facts in the binary); never runs apt-get (scripts/install-deps.sh is for building).
STATIC_BUILD ?= .build/static
BINDIR = $(PREFIX)/bin
SHAREDIR = $(PREFIX)/share
INSTALLED = $(BINDIR)/asicfs $(SHAREDIR)/man/man1/asicfs.1 \
	$(SHAREDIR)/bash-completion/completions/asicfs $(SHAREDIR)/zsh/vendor-completions/_asicfs \
	$(SHAREDIR)/fish/vendor_completions.d/asicfs.fish $(SHAREDIR)/mime/packages/asicfs.xml \
	$(SHAREDIR)/applications/asicfs.desktop $(PREFIX)/lib/systemd/user/asicfs@.service

# Linked for a quick cold start (Benchmarks/results/perf-20261204b.md, perf-20261205.md): with
# lld, relative relocations packed (DT_RELR, glibc >= 2.36: 1.8 MB of .rela.dyn become 34 KB),
# the functions a mount runs laid out together (contrib/link/startup-order.txt, written by
# contrib/link/startup-order.sh) and the file arranged so that a start reads one stretch of it
# (contrib/link/layout.ld). A cold mount reads 16 MB of the binary instead of 24.
LINK_INPUTS = contrib/link/layout.ld contrib/link/startup-order.txt
STATIC_LINK_FLAGS = -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs \
	-Xlinker $(CURDIR)/contrib/link/layout.ld \
	-Xlinker --symbol-ordering-file=$(CURDIR)/contrib/link/startup-order.txt -Xlinker --no-warn-symbol-ordering

# swift build does not relink when only the linker's inputs changed.
static:
	@bin=$(STATIC_BUILD)/release/asicfs; if [ -e $$bin ] && [ -n "$$(find $(LINK_INPUTS) -newer $$bin)" ]; then rm -f $$bin; fi
	swift build -c release --static-swift-stdlib --scratch-path $(STATIC_BUILD) --product asicfs $(STATIC_LINK_FLAGS) $(SWIFT_BUILD_FLAGS)

install: static
	install -D -m 0755 $(STATIC_BUILD)/release/asicfs $(DESTDIR)$(BINDIR)/asicfs
	install -D -m 0644 man/asicfs.1 $(DESTDIR)$(SHAREDIR)/man/man1/asicfs.1
	install -D -m 0644 contrib/completions/asicfs.bash $(DESTDIR)$(SHAREDIR)/bash-completion/completions/asicfs
	install -D -m 0644 contrib/completions/_asicfs $(DESTDIR)$(SHAREDIR)/zsh/vendor-completions/_asicfs
	install -D -m 0644 contrib/completions/asicfs.fish $(DESTDIR)$(SHAREDIR)/fish/vendor_completions.d/asicfs.fish
	install -D -m 0644 contrib/desktop/asicfs-mime.xml $(DESTDIR)$(SHAREDIR)/mime/packages/asicfs.xml
	install -D -m 0644 contrib/desktop/asicfs.desktop $(DESTDIR)$(SHAREDIR)/applications/asicfs.desktop
	install -d $(DESTDIR)$(PREFIX)/lib/systemd/user
	sed 's#@BINDIR@#$(BINDIR)#g' contrib/systemd/asicfs@.service > $(DESTDIR)$(PREFIX)/lib/systemd/user/asicfs@.service
	@if [ -z "$(DESTDIR)" ]; then \
	  command -v update-mime-database >/dev/null && update-mime-database $(SHAREDIR)/mime || true; \
	  command -v update-desktop-database >/dev/null && update-desktop-database $(SHAREDIR)/applications || true; \
	fi

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	rm -rf $(DESTDIR)$(SHAREDIR)/asicfs
	@if [ -z "$(DESTDIR)" ]; then \
	  command -v update-mime-database >/dev/null && update-mime-database $(SHAREDIR)/mime || true; \
	  command -v update-desktop-database >/dev/null && update-desktop-database $(SHAREDIR)/applications || true; \
	fi

# A Debian package of `make install` (PREFIX=/usr) made with dpkg-deb; its Depends are the
# packages of the libraries the binary links (dpkg-shlibdeps).
deb: deps static
	scripts/make-deb.sh

clean:
	rm -rf .build asicfs_*.deb
