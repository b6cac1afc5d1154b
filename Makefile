# Palisade's developer commands. `make check` is what CI runs (.ci/run).
.PHONY: setup guest guest-check guest-lane feature-sets fmt lint lint-host lint-guest package test bindings bindings-fixtures bindings-node bindings-python fuzz-replay fuzz soak check bench

CARGO ?= cargo
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c

# Install Debian packages and Rust targets/components that the build needs (idempotent).
setup:
	./scripts/setup.sh

# The guest builds in a target folder of its own (GUEST_TARGET here, TARGET_DIR in
# xtask/src/main.rs: keep them alike), so that its builds and checks do not wait for target/'s
# lock: make check runs them beside make package.
GUEST_TARGET := target/guest-js

# Rebuild the guest components and their pre-initialized snapshots (host/guest/*.wasm: the full
# guest, the plain one built without capabilities, and the standalone one).
guest: setup
	$(CARGO) run --locked -q -p xtask -- guest

# Fail when a committed guest is not what the guest sources build to.
guest-check: setup
	$(CARGO) run --locked -q -p xtask -- guest --check

# Fail when two of make check's dev builds (xtask, the packaged crate, the tests, the bindings),
# or two of its check runs, would turn on different features in the crates wasmtime and
# jsonschema are built from, but for the differences it accepts by name (docs/architecture.md,
# "One build of wasmtime").
feature-sets: setup
	$(CARGO) run --locked -q -p xtask -- feature-sets

fmt:
	$(CARGO) fmt --all --check

# The vendored oxc_parser (vendor/README.md) is oxc's code, checked by oxc's own CI: its tests are
# not built here, and its manifest turns clippy's defaults off; its formatting is checked.
# The library with its default features, with `redis` alone, and the CLI without `serve` are
# checked on their own, with no other crate's features, as crates.io's users build them. The
# guest is checked in the profile and target folder guest-check builds it in, so that both share
# the compiled build scripts and proc macros (docs/architecture.md, "One build of wasmtime").
lint: lint-host lint-guest

lint-host: setup
	$(CARGO) clippy --locked --workspace --exclude palisade-guest --exclude palisade-oxc-parser --all-targets -- -D warnings
	$(CARGO) clippy --locked -p palisade --all-targets -- -D warnings
	$(CARGO) clippy --locked -p palisade --features redis --all-targets -- -D warnings
	$(CARGO) clippy --locked -p palisade-cli --no-default-features -- -D warnings

GUEST_CLIPPY := $(CARGO) clippy --locked -p palisade-guest --target wasm32-wasip2 --profile guest \
	--target-dir $(GUEST_TARGET)
lint-guest: setup
	$(GUEST_CLIPPY) -- -D warnings
	$(GUEST_CLIPPY) --no-default-features -- -D warnings
	$(GUEST_CLIPPY) --features standalone -- -D warnings

# The `palisade` crate as crates.io would take it (nothing is uploaded): package it, build the
# packaged copy on its own (the committed guests, wit/, LICENSE and the default policy inside it,
# beside its copy of oxc_parser, vendor/README.md), package the CLI (`palisade-cli`, which every other step builds) beside it, check that the
# .crate is under crates.io's 10 MiB limit, and build its docs with warnings as errors: with its
# default features (reusing what clippy checked of it alone), and with `serve` beside
# palisade-node's, whose napi macros turn on the features the workspace's clippy run turns on, so
# that it checks wasmtime no third time.
# A packaged crate carries no workspace profile: the --config flags repeat [profile.dev] of
# Cargo.toml, and the features are xtask's (`serve`), so that the verify build reuses the
# dependencies xtask compiled with the same features (about 30 s instead of a cold build;
# docs/architecture.md, "One build of wasmtime"). The packaged palisade takes the packaged
# oxc_parser as a dependency, which "*" would optimize: it is built unoptimized, as the
# workspace builds it.
PACKAGE_PROFILE := --config 'profile.dev.debug="line-tables-only"' \
	--config 'profile.dev.package."*".opt-level=3' \
	--config 'profile.dev.package.palisade-oxc-parser.opt-level=0' \
	--config 'profile.dev.package."*".debug=false' \
	--config 'profile.dev.package."*".debug-assertions=false' \
	--config 'profile.dev.package."*".overflow-checks=false'
CRATE_LIMIT := 10485760

package:
	$(CARGO) publish --locked --dry-run --allow-dirty -p palisade-oxc-parser -p palisade \
		--features palisade/serve $(PACKAGE_PROFILE)
	$(CARGO) package --locked --no-verify --allow-dirty -q -p palisade-oxc-parser -p palisade -p palisade-cli
	@crate=target/package/palisade-$$($(CARGO) pkgid -p palisade | sed 's/.*[#@]//').crate; \
	size=$$(stat -c %s $$crate); \
	echo "$$crate: $$size bytes (crates.io takes at most $(CRATE_LIMIT))"; \
	test $$size -lt $(CRATE_LIMIT)
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --locked -p palisade --no-deps
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --locked -p palisade -p palisade-node --no-deps --features palisade/serve

# All tests (the default members', then the bindings' shared core, which is no default member);
# the last line sums every test binary's results.
test:
	mkdir -p target
	$(CARGO) test --locked 2>&1 | tee target/test.log
	$(CARGO) test --locked -p palisade-bindings 2>&1 | tee -a target/test.log
	@awk '/^test result:/ { passed += $$4; failed += $$6 } END { printf "tests: %d passed, %d failed\n", passed, failed }' target/test.log

# The fuzz targets' committed corpora and reproducers, replayed on stable without libFuzzer
# (docs/reliability.md, "Fuzzing"); `make test` runs them too.
fuzz-replay:
	$(CARGO) test --locked -p palisade-tests --test integration fuzz_replay::

# One fuzz target under libFuzzer (nightly and cargo-fuzz): FUZZ=policy FUZZ_TIME=600 make fuzz.
# New inputs go to target/fuzz-corpus/$(FUZZ), so fuzz/corpus keeps only the committed seeds.
# FUZZ_SANITIZER per target (docs/reliability.md, "Fuzzing"): `address` for the parsers
# (policy, url_gate, replay); `none` for the sandbox targets (input_json, component,
# serve_body), whose inputs spend their time in wasmtime and Cranelift (serve_body: 0.1
# execs/s with the sanitizer, 30 to 170 without). Each sanitizer builds in its own folder
# (target/fuzz-SANITIZER), so switching targets does not rebuild wasmtime. The first call of a fresh build may compile
# the guest (about 90 s under the sanitizer): hence the 300 s timeout.
FUZZ ?= policy
FUZZ_TIME ?= 600
FUZZ_SANITIZER ?= $(if $(filter input_json component serve_body,$(FUZZ)),none,address)
fuzz:
	mkdir -p target/fuzz-corpus/$(FUZZ)
	ASAN_OPTIONS=detect_odr_violation=0 $(CARGO) +nightly fuzz run -s $(FUZZ_SANITIZER) --target-dir target/fuzz-$(FUZZ_SANITIZER) \
		$(FUZZ) target/fuzz-corpus/$(FUZZ) fuzz/corpus/$(FUZZ) -- \
		-max_total_time=$(FUZZ_TIME) -timeout=300 -rss_limit_mb=6144 -detect_leaks=0 -print_final_stats=1 $(FUZZ_ARGS)

# Three minutes in all (docs/reliability.md, "Soak"): one of normal and hostile scripts at 64
# calls in flight on the library, then two of normal and hostile requests from 16 workers on a
# `palisade serve` it starts (bodies, streams, file operations, an app, each limit). Every call
# must end with its expected code, and RSS, open fds and threads must stay flat. The debug
# binary the tests build: a release build takes too long for CI. SOAK=1h for a long run of each.
SOAK ?=
soak:
	$(CARGO) build --locked -q -p palisade-cli
	target/debug/palisade soak --duration $(or $(SOAK),1m) --concurrency 64 > target/soak.json
	target/debug/palisade soak --server --duration $(or $(SOAK),2m) --concurrency 16 > target/soak-server.json

# The Node.js addon and the Python module (docs/node.md, docs/python.md), built in the
# workspace's dev profile on target/'s compiled dependencies, then their type checks and tests.
# setup installs their tools (bindings/node/node_modules, target/python-venv).
bindings: bindings-node bindings-python

# The addon is the cdylib cargo builds (`napi build` would pass `--target`, which builds every
# dependency again under target/x86_64-unknown-linux-gnu/).
# A component whose call traps, for the bindings' guest_trap tests (no script can make one).
bindings-fixtures: setup
	$(CARGO) run --locked -q -p xtask -- forge-trap target/bindings/trap.wasm

bindings-node: setup bindings-fixtures
	$(CARGO) build --locked -p palisade-node
	cp target/debug/libpalisade_node.so bindings/node/palisade.node
	cd bindings/node && npx tsc -p tsconfig.json
	cd bindings/node && node --test test/*.test.js

PYTHON_VENV := $(CURDIR)/target/python-venv
bindings-python: setup bindings-fixtures
	cd bindings/python && VIRTUAL_ENV=$(PYTHON_VENV) $(PYTHON_VENV)/bin/maturin develop --locked -q
	cd bindings/python && $(PYTHON_VENV)/bin/mypy
	cd bindings/python && $(PYTHON_VENV)/bin/pytest -q

# The page of `palisade serve` (web/; docs/server.md, "The page"): fail when the committed
# bundle (host/page/app.js) is not what web/ builds to, test how a refusal's fix is applied to
# a policy, then drive the page in headless Chromium (web/test/e2e.mjs, against the debug
# binary; screenshots in target/page-e2e/ on failure). `make page-build` rebuilds the bundle.
.PHONY: page page-build
page: setup
	cd web && node build.mjs --check
	cd web && node --test test/fix.test.mjs
	$(CARGO) build --locked -q -p palisade-cli
	node web/test/e2e.mjs

page-build: setup
	cd web && node build.mjs

# Everything: set-up, formatting, lints (host and guest), the committed guest, one build of
# wasmtime, the packaged crate and its docs, all tests, the bindings' tests, the page in a
# browser, the soak.
#
# The guest's lint and check (target/guest-js) run beside the packaged crate's build (target/), as
# two make jobs; each cargo keeps its own two jobs. The packaged crate's build waits on one crate
# at a time for minutes (jsonschema, then the library), the guest's on LTO and wasm-opt, so each
# fills the other's waits. Each job's output is printed when it ends.
check: setup fmt lint-host feature-sets
	$(MAKE) -j2 --output-sync=target guest-lane package
	$(MAKE) test bindings page soak

# The guest's part of make check. It runs the xtask binary feature-sets built, for `cargo run`
# would wait for target/'s lock, which make package holds.
XTASK_BIN := $(or $(CARGO_TARGET_DIR),target)/debug/xtask
guest-lane: lint-guest
	$(XTASK_BIN) guest --check

# Benchmarks (release build): the peers' four workloads, fresh sandbox per call.
bench:
	$(CARGO) run --locked --release -q -- bench
