# Two commands: `make demo` (set up, then run the demo) and `make test` (set up, then test).
# `make check`: the fast checks while you work (lint, types, the pure-function tests; ~30 s).
PY      ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
# Debian packages the tests start themselves (real broker, real InfluxDB, real VictoriaMetrics, headless Chromium).
DEB_PKGS := mosquitto mosquitto-clients influxdb victoria-metrics chromium openssl tmux poppler-utils
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test soak setup test-deps bench clean check lint types

$(BIN)/ms4watch: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,bench]'
	touch $@

setup: $(BIN)/ms4watch

demo: setup
	$(BIN)/ms4watch demo

test-deps:
	@missing=""; for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages the tests need:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# On every core (pytest-xdist); a test file stays on one worker (--dist loadfile), so its
# module-scoped servers and benches are built once. `.venv/bin/python -m pytest <files>` for
# a few files (one process).
test: setup test-deps
	$(BIN)/python -m pytest -n auto --dist loadfile

# The rules, the contract and the laws' clocks: pure functions, no servers.
PURE_TESTS := tests/contract tests/alerts/rules tests/compliance/test_clocks.py \
              tests/compliance/test_business_days.py tests/compliance/test_deadlines.py

lint: setup
	$(BIN)/ruff check .

types: setup
	$(BIN)/python tools/typecheck.py

check: lint types
	$(BIN)/python -m pytest -q -p no:cacheprovider $(PURE_TESTS)

soak: setup test-deps
	MS4_SLOW=1 $(BIN)/python -m pytest -m slow

bench: setup test-deps
	for b in bench/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) ms4watch-demo *.egg-info build .mypy_cache .ruff_cache
