# Build, test and demo ccbench. Works on a fresh Debian machine with python3 and cargo:
# everything Python goes into ./.venv, so nothing is installed system-wide.

VENV   := .venv
PY     := $(VENV)/bin/python
# Re-run the pip install only when the dependency list (pyproject.toml) changes.
STAMP  := $(VENV)/.deps-installed
# The one list of Python dependencies is pyproject.toml's: the build backend, the package's
# dependencies and its `test` extra (pytest, ruff, mypy), read with the standard library.
PYDEPS := import tomllib; p = tomllib.load(open("pyproject.toml", "rb")); \
	print(" ".join(p["build-system"]["requires"] + p["project"]["dependencies"] + p["project"]["optional-dependencies"]["test"]))
# maturin installs into whichever environment VIRTUAL_ENV names; point it at ours explicitly so
# `make build` works without `source .venv/bin/activate`.
VENV_ENV := VIRTUAL_ENV="$(CURDIR)/$(VENV)" PATH="$(CURDIR)/$(VENV)/bin:$$PATH"

.PHONY: build test lint demo bench clean emu-deps rust-tools

$(PY):
	python3 -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet $$($(PY) -c '$(PYDEPS)')
	touch $@

build: $(STAMP) emu-deps
	$(VENV_ENV) $(VENV)/bin/maturin develop --release
	cargo build --release -p ccbench-emu -p rledbatd -p ccbench-quic

# The emulator drives namespaces with iproute2's `ip`, and rledbatd installs its rules with
# iptables; tshark reads the pcap traces in tests, and headless Chromium opens the report in a test.
# Install them where they are missing and we can.
emu-deps:
	@command -v ip >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& apt-get install -y -qq iproute2 >/dev/null; } || echo "note: no iproute2; ccbench emu will refuse to run"
	@command -v iptables >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& { apt-get install -y -qq iptables >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 \
		&& apt-get install -y -qq iptables >/dev/null; }; }; } || echo "note: no iptables; rledbatd will refuse to run"
	@command -v tshark >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 \
		&& DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark >/dev/null; }; }; } \
		|| echo "note: no tshark; tests/python/test_pcap.py will be skipped"
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 \
		&& DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }; }; } \
		|| echo "note: no chromium; the report's browser check in tests/python/test_reproduce.py will be skipped"

# The formatter, clippy with warnings denied (workspace lints in Cargo.toml), ruff and mypy on the
# public API (both configured in pyproject.toml).
lint: $(STAMP) rust-tools
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --profile ci --quiet -- -D warnings
	$(VENV)/bin/ruff check python tests
	$(VENV)/bin/mypy

# rustfmt and clippy come with rustup's default profile; add them where a minimal one left them out.
rust-tools:
	@{ cargo fmt --version && cargo clippy --version; } >/dev/null 2>&1 || rustup component add rustfmt clippy

test: build lint
	cargo test --workspace --profile ci
	$(VENV)/bin/pytest -q tests/python

demo: build
	$(VENV)/bin/ccbench demo --out out

bench: build
	$(VENV)/bin/ccbench bench --out out

clean:
	rm -rf $(VENV) target out python/ccbench/_core*.so .pytest_cache
	find python tests -name __pycache__ -type d -prune -exec rm -rf {} +
