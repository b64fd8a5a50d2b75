# Build, test and demo ccbench. Works on a fresh Debian machine with python3 and cargo:
# everything Python goes into ./.venv, so nothing is installed system-wide.

VENV   := .venv
PY     := $(VENV)/bin/python
# Re-run the pip install only when the dependency list (pyproject.toml) changes.
STAMP  := $(VENV)/.deps-installed
PYDEPS := "maturin>=1.5,<2" numpy pandas pyarrow matplotlib scipy dask distributed tqdm pytest
# maturin installs into whichever environment VIRTUAL_ENV names; point it at ours explicitly so
# `make build` works without `source .venv/bin/activate`.
VENV_ENV := VIRTUAL_ENV="$(CURDIR)/$(VENV)" PATH="$(CURDIR)/$(VENV)/bin:$$PATH"

.PHONY: build test demo bench clean emu-deps

$(PY):
	python3 -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet $(PYDEPS)
	touch $@

build: $(STAMP) emu-deps
	$(VENV_ENV) $(VENV)/bin/maturin develop --release
	cargo build --release -p ccbench-emu -p rledbatd

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

test: build
	cargo test --workspace --profile ci
	$(VENV)/bin/pytest -q tests/python

demo: build
	$(VENV)/bin/ccbench demo --out out

bench: build
	$(VENV)/bin/ccbench bench --out out

clean:
	rm -rf $(VENV) target out python/ccbench/_core*.so .pytest_cache
	find python tests -name __pycache__ -type d -prune -exec rm -rf {} +
