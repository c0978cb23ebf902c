from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.support import collection
from tests.support.schedule import order
from tests.support.servers import have, mosquitto

# no garbage collection while the test modules are imported, then what they built frozen
# (tests/support/collection.py: ~1 s of each worker's collection CPU)
collection.pause()

REPO = Path(__file__).resolve().parents[1]

# No test reads this machine's own settings (a real install's /etc/ms4watch/ms4watch.toml, or
# the package tests/test_deb.py installs while other files run beside it under xdist): the
# commands tests start get an empty settings file unless they name one, and in process the
# system path points nowhere (``_no_system_settings``).
os.environ.setdefault("MS4WATCH_CONFIG", str(REPO / "tests" / "support" / "empty-settings.toml"))


@pytest.fixture(autouse=True)
def _no_system_settings(monkeypatch):
    monkeypatch.setattr("ms4watch.settings.SYSTEM_CONFIG", Path("/nonexistent/ms4watch/ms4watch.toml"))
SHARED_DATA = REPO.parent / "shared" / "data" / "real"

# pytest's temporary folders in memory when the machine has room there: the tests' SQLite
# databases, spools and broker persistence commit hundreds of times, and each commit's fsync
# on a disk cost ~70 ms a schema on this machine (a workbench's set-up: 1.1 s on /tmp, 0.15 s
# on tmpfs). Nothing here outlives the process that wrote it, so no test needs the disk's
# durability. `--basetemp` or MS4_TEST_TMP (a folder) choose otherwise; MS4_TEST_TMP=disk
# keeps pytest's default.
MEMORY_TMP = Path("/dev/shm")
MEMORY_TMP_MIN_FREE = 2 << 30


def _memory_tmp() -> Path | None:
    chosen = os.environ.get("MS4_TEST_TMP")
    if chosen == "disk":
        return None
    parent = Path(chosen) if chosen else MEMORY_TMP
    try:
        if not chosen and shutil.disk_usage(parent).free < MEMORY_TMP_MIN_FREE:
            return None
        return Path(tempfile.mkdtemp(prefix="pytest-ms4watch-", dir=parent))
    except OSError:
        return None


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    # xdist's workers get their basetemp from the controller: only the controller chooses
    if config.option.basetemp is None and not hasattr(config, "workerinput"):
        base = _memory_tmp()
        if base is not None:
            config.option.basetemp = str(base)
            config.stash[_CREATED_TMP] = base
    # xdist hands the files out in our order (tests/support/schedule.py), not most tests first
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_finish(session: pytest.Session) -> None:
    collection.resume()


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    collection.resume()   # (a collection that ended early skips pytest_collection_finish)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest files first (tests/support/schedule.py): under ``--dist loadfile`` a long
    file started last would end the run alone."""
    items[:] = [items[i] for i in order([item.nodeid for item in items])]


_CREATED_TMP = pytest.StashKey[Path]()


def pytest_unconfigure(config: pytest.Config) -> None:
    base = config.stash.get(_CREATED_TMP, None)
    if base is not None:
        shutil.rmtree(base, ignore_errors=True)


def pytest_report_header(config: pytest.Config) -> str:
    return f"temporary folders: {config.option.basetemp or 'pytest default'}"


@pytest.fixture
def mosquitto_broker(tmp_path):
    if not have("mosquitto"):
        pytest.skip("mosquitto is not installed (apt-get install mosquitto)")
    with mosquitto(tmp_path / "mosquitto") as m:
        yield m


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA
