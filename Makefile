# Two commands: `make demo` (set up, then run the demo) and `make test` (set up, then test).
# `make check`: the fast checks while you work (lint, types, the pure-function tests; ~30 s).
PY      ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
# Debian packages the tests start themselves (real broker, real InfluxDB, real VictoriaMetrics, headless Chromium,
# nginx; promtool from prometheus checks the alert rules; dpkg-dev, lintian, logrotate build and check the package).
DEB_PKGS := mosquitto mosquitto-clients influxdb victoria-metrics chromium openssl tmux poppler-utils nginx prometheus \
            dpkg-dev lintian logrotate
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test soak setup test-deps bench clean check lint types deb lock

# uv (from PyPI) installs what pip would, in a fifth of the time: a fresh clone's setup 61 s with pip,
# 13 s with uv (warm pip cache, cold uv cache; 2 cores). pip does it where uv cannot be had.
# uv compiles no byte code (pip compiles all ~11,000 modules): the processes write what they import at
# their first run (`demo` and `test` unset PYTHONDONTWRITEBYTECODE); compiling it all here took 28 s more.
$(BIN)/ms4watch: pyproject.toml
	$(PY) -m venv $(VENV)
	if $(BIN)/pip install --quiet uv && VIRTUAL_ENV=$(VENV) $(BIN)/uv pip install --quiet -e '.[test,bench]'; then :; else \
	  echo "uv could not install the environment: pip does (slower)"; \
	  $(BIN)/pip install --quiet --upgrade pip && $(BIN)/pip install --quiet -e '.[test,bench]'; \
	fi
	touch $@

setup: $(BIN)/ms4watch

demo: setup
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/ms4watch demo

# curl: docs/operations.md's InfluxDB commands, which tests/test_docs_shell.py runs
DEB_PKGS += curl

test-deps:
	@missing=""; for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages the tests need:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# On every core and one more (pytest-xdist); a test file stays on one worker (--dist loadfile), so its
# module-scoped servers and benches are built once. `.venv/bin/python -m pytest <files>` for
# a few files (one process). The longest files start first (tests/support/schedule.py, tests/conftest.py):
# a long file handed out last would end the run alone.
# Byte code written (PYTHONDONTWRITEBYTECODE unset, where a machine sets it): each of the
# hundreds of processes the suite starts (servers, loggers, commands) would otherwise compile
# ms4watch's modules again (~0.25 s of CPU each for the server and workbench), and each worker
# pytest's rewritten test modules.
# One worker more than the cores: much of the suite waits (servers starting, processes killed
# and restarted, keepalives running out), and a third worker fills those waits. Quiet 2-core
# machine, the whole suite: 2 workers 351 s, 3 workers 273 s, 4 workers 280 s.
# Again 2026-12-02 (the .deb built in the run; warm venv): 3 workers 354 s (586 s of CPU, 164 %),
# 4 workers 338 s (596 s, 175 %): CPU is the budget, test_deb.py alone ~170 s of it.
# Again 2026-12-02 (a fresh clone, `.ci/run`, quiet): 3 workers 303 s of pytest in 320 s all told
# (494 s of CPU with setup); 4 workers 341 s in 358 s (575 s of CPU): three it stays.
test: setup test-deps
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -n $$(( $$(nproc) + 1 )) --dist loadfile

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

# `make deb`: dist/ms4watch_<version>-<revision>_<arch>.deb for the Debian release of this machine
# (packaging/build-deb.sh says what it holds; install: docs/operations.md). Rebuilt only
# when a file it packs changed.
DEB_PY   ?= /usr/bin/python3
DEB_VER  := $(shell $(DEB_PY) -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')-1
DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null)
DEB_FILE := dist/ms4watch_$(DEB_VER)_$(DEB_ARCH).deb
DEB_SRCS := $(shell git ls-files pyproject.toml README.md packaging docs dashboards ms4watch contract edge ingest alerts \
                                 workbench compliance network firmware_configs 2>/dev/null)

deb: $(DEB_FILE)

$(DEB_FILE): $(BIN)/ms4watch $(DEB_SRCS)
	DEB_PY=$(DEB_PY) PIP=$(BIN)/pip UV=$(BIN)/uv packaging/build-deb.sh

# The package's dependencies, locked: `make lock` after changing pyproject.toml's dependencies
# (or to take newer releases), then commit packaging/requirements.lock. It installs ms4watch
# alone (no extras) in a fresh environment of $(DEB_PY) and writes what pip chose, less what
# packaging/lock-omits.txt names (declared by a dependency, imported by nothing ms4watch runs).
LOCK_OMITS := $(shell grep -oE '^[A-Za-z0-9._-]+' packaging/lock-omits.txt)
lock: setup packaging/lock-omits.txt
	rm -rf build/lock-venv
	$(DEB_PY) -m venv --without-pip build/lock-venv
	$(BIN)/pip --python build/lock-venv/bin/python install --quiet --no-compile .
	( echo "# ms4watch's runtime dependencies, locked for the Debian package (make lock; packaging/build-deb.sh)"; \
	  $(BIN)/pip --python build/lock-venv/bin/python freeze --exclude ms4watch $(addprefix --exclude ,$(LOCK_OMITS)) ) > packaging/requirements.lock
	rm -rf build/lock-venv

clean:
	rm -rf $(VENV) ms4watch-demo *.egg-info build dist .mypy_cache .ruff_cache
