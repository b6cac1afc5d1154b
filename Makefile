# Palisade's developer commands. `make check` is what CI runs (.ci/run).
.PHONY: setup guest guest-check fmt lint test check bench

CARGO ?= cargo
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c

# Install Debian packages and Rust targets/components that the build needs (idempotent).
setup:
	./scripts/setup.sh

# Rebuild the guest components and their pre-initialized snapshots (host/guest/*.wasm: the full
# guest and the plain one, built without capabilities).
guest: setup
	$(CARGO) run --locked -q -p xtask -- guest

# Fail when a committed guest is not what the guest sources build to.
guest-check: setup
	$(CARGO) run --locked -q -p xtask -- guest --check

fmt:
	$(CARGO) fmt --all --check

lint: setup
	$(CARGO) clippy --locked --workspace --exclude palisade-guest --all-targets -- -D warnings
	$(CARGO) clippy --locked -p palisade-guest --target wasm32-wasip2 -- -D warnings
	$(CARGO) clippy --locked -p palisade-guest --target wasm32-wasip2 --no-default-features -- -D warnings

# All tests; the last line sums every test binary's results.
test:
	mkdir -p target
	$(CARGO) test --locked 2>&1 | tee target/test.log
	@awk '/^test result:/ { passed += $$4; failed += $$6 } END { printf "tests: %d passed, %d failed\n", passed, failed }' target/test.log

# Everything: set-up, formatting, lints (host and guest), the committed guest, all tests.
check: setup fmt lint guest-check test

# Benchmarks (release build): the peers' four workloads, fresh sandbox per call.
bench:
	$(CARGO) run --locked --release -q -- bench
