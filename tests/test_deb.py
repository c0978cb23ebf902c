"""The Debian package (``make deb``, packaging/): built, checked by lintian, installed on this
machine with apt, used as docs/operations.md says (the example town, ``broker-config``, a
real Mosquitto, ``serve --check`` as the service user, the demo from /usr/bin), upgraded in
place (a backup first, /etc and /var/lib kept), then purged.

Needs root, apt-get and dpkg-deb (CI runs as root on a clean Debian 12). It installs the
package on this machine, so it refuses to run where an ms4watch package is installed
already. Debian 13 is not tested here (this machine is Debian 12)."""

from __future__ import annotations

import grp
import json
import os
import pwd
import resource
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import tomllib
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.packaged import SMS_CHECK, venv_omits
from tests.support.servers import Mosquitto, free_port, have
from tests.support.systemlock import source_build_lock, system_install_lock

REPO = Path(__file__).resolve().parents[1]
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
UNIT_FOLDERS = [REPO / "ms4watch" / "systemd", REPO / "edge" / "systemd"]
# --force-unsafe-io: dpkg syncs none of the ~9,000 files it unpacks (nothing here outlives a
# crash of this machine; the install, upgrade and purge do the same otherwise)
APT = ["apt-get", "-y", "-q", "-o", "DPkg::Lock::Timeout=600", "-o", "DPkg::Options::=--force-unsafe-io"]


def apt_caching_in(folder: Path) -> list[str]:
    """``APT``, and where this machine's apt keeps no cache of its package lists (Docker's
    images: /etc/apt/apt.conf.d/docker-clean), one in ``folder``: each apt-get otherwise parses
    every list again (the upgrade and the purge ~0.6 s of CPU less each: 2.0-2.3 -> 1.4-1.5 s
    for the upgrade's apt alone). apt checks the cache against the lists and the dpkg status
    each time, as it does its own."""
    kept = run("apt-config", "shell", "CACHE", "Dir::Cache::srcpkgcache/f").stdout.strip()
    if kept not in ("", "CACHE=''"):
        return APT
    return [*APT, "-o", f"Dir::Cache::srcpkgcache={folder / 'srcpkgcache.bin'}",
            "-o", f"Dir::Cache::pkgcache={folder / 'pkgcache.bin'}"]

pytestmark = [
    pytest.mark.mosquitto,
    pytest.mark.timeout(3600),     # building (pip), lintian and apt on a loaded 2-core machine
    pytest.mark.skipif(os.geteuid() != 0, reason="installs a Debian package: needs root"),
    pytest.mark.skipif(not (shutil.which("apt-get") and shutil.which("dpkg-deb")),
                       reason="needs apt-get and dpkg-deb (Debian)"),
]


def run(*cmd: str | Path, ok: bool = True, **kw) -> subprocess.CompletedProcess:
    # the installed program reads the installed settings: not the tests' empty file (tests/conftest.py)
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("MS4WATCH_")}
    env = {**inherited, "DEBIAN_FRONTEND": "noninteractive", **kw.pop("env", {})}
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, **kw)
    if ok:
        assert out.returncode == 0, f"{' '.join(map(str, cmd))} exited {out.returncode}:\n{out.stdout[-4000:]}\n{out.stderr[-4000:]}"
    return out


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@contextmanager
def step(name: str):
    """Print how long each step took, wall and CPU of the commands it ran (``pytest -s``):
    the test is long, the machine has two cores, and this says where both go."""
    t0, cpu0 = time.monotonic(), _children_cpu()
    yield
    print(f"test_deb: {name}: {time.monotonic() - t0:.1f} s wall, {_children_cpu() - cpu0:.1f} s CPU")


def installed() -> bool:
    out = run("dpkg-query", "-W", "-f=${db:Status-Status}", "ms4watch", ok=False)
    return out.returncode == 0 and out.stdout.strip() not in ("", "not-installed", "config-files")


@pytest.fixture(scope="module")
def deb(tmp_path_factory) -> Path:
    """``make deb`` with this test run's environment as the build's pip (``-o``: never
    reinstalled by the build, even when pyproject.toml is newer than it), the tree staged in
    the tests' temporary folder (tmpfs when it has room, tests/conftest.py: the ~8,000 files
    pip writes and dpkg-deb reads cost less system CPU there than in build/ on disk), and
    removed once packed."""
    arch = run("dpkg", "--print-architecture").stdout.strip()
    stage = tmp_path_factory.mktemp("deb-stage")
    try:
        with step("make deb"), source_build_lock():
            run("make", "deb", f"VENV={sys.prefix}", "-o", f"{sys.prefix}/bin/ms4watch", cwd=REPO, timeout=3000,
                env={"DEB_STAGE": str(stage)})
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    path = REPO / "dist" / f"ms4watch_{VERSION}-1_{arch}.deb"
    assert path.is_file()
    return path


def error_tags() -> list[str]:
    """The tags lintian reports as errors (``E:``), as this lintian says (explained all at once
    without arguments: one start of lintian's profile, ~1 s of CPU less than listing them first)."""
    explained = run("lintian-explain-tags").stdout
    return [line.split()[1] for line in explained.splitlines() if line.startswith("E: ")]


class Lintian:
    """lintian on the package, run in the background while the install test uses the same
    file: the two are this file's longest steps (~36 and ~25 s of CPU; on a 2-core machine side
    by side), and the file's wall is no longer their sum."""

    def __init__(self, deb: Path, folder: Path):
        # lintian's checks that can report an error (``--tags``: the 564 E: tags of lintian
        # 2.116, ~170 of its ~340 checks), not those that can only warn: the test fails on an
        # E: alone, and the rest cost a third of lintian's time on this package
        tags = error_tags()
        assert len(tags) > 100 and "dir-or-file-in-opt" in tags, tags
        (folder / "error-tags").write_text("\n".join(tags) + "\n")
        self.out, self.err = folder / "lintian.out", folder / "lintian.err"
        self.t0 = time.monotonic()
        # lintian unpacks the package (~400 MB) under TMPDIR: the tests' temporary folders are
        # on tmpfs when it has room (tests/conftest.py), and there it costs ~3 s less CPU than on disk
        with open(self.out, "w") as out, open(self.err, "w") as err:
            self.proc = subprocess.Popen(
                ["lintian", "--tag-display-limit", "0", "--show-overrides", "--tags-from-file",
                 str(folder / "error-tags"), str(deb)],
                stdout=out, stderr=err, env={**os.environ, "TMPDIR": str(folder)}, start_new_session=True)

    def result(self, timeout: float = 3000) -> tuple[int, str, str]:
        """Wait for lintian: its exit status, stdout, stderr (and print its wall and CPU)."""
        deadline = time.monotonic() + timeout
        while (done := os.wait4(self.proc.pid, os.WNOHANG))[0] == 0:
            if time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"lintian ran over {timeout:.0f} s")
            time.sleep(0.2)
        _, status, usage = done
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        print(f"test_deb: lintian: {time.monotonic() - self.t0:.1f} s wall from its start, "
              f"{usage.ru_utime + usage.ru_stime:.1f} s CPU")
        return self.proc.returncode, self.out.read_text(), self.err.read_text()

    def stop(self) -> None:
        if self.proc.returncode is None and self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
            self.proc.wait()


@pytest.fixture(scope="module")
def lintian(deb, tmp_path_factory):
    """lintian started on the package as soon as it is built (None when lintian is not installed)."""
    if shutil.which("lintian") is None:
        yield None
        return
    checking = Lintian(deb, tmp_path_factory.mktemp("lintian"))
    try:
        yield checking
    finally:
        checking.stop()


def test_package_contents(deb, lintian):
    """What the package holds, without installing it: every unit of the unit folders, the
    conffiles, the docs and dashboards, the maintainer scripts. (``lintian``: started first, it
    checks the package meanwhile.)"""
    files = run("dpkg-deb", "--contents", deb).stdout
    units = [p.name for folder in UNIT_FOLDERS for pattern in ("*.service", "*.timer") for p in folder.glob(pattern)]
    assert units
    for name in units:
        assert f"./lib/systemd/system/{name}\n" in files, name
    for path in ("./usr/bin/ms4watch -> /opt/ms4watch/venv/bin/ms4watch", "./opt/ms4watch/venv/bin/ms4watch\n",
                 "./etc/ms4watch/ms4watch.toml\n", "./etc/logrotate.d/ms4watch\n",
                 "./usr/share/ms4watch/docs/operations.md\n", "./usr/share/ms4watch/dashboards/overview.json\n",
                 "./usr/share/ms4watch/examples/town/sites.yaml\n", "./usr/share/doc/ms4watch/copyright\n",
                 "./usr/share/doc/ms4watch/changelog.Debian.gz\n"):
        assert path in files, path
    assert "__pycache__" not in files
    # not the dependencies' own test suites, nor what packaging/lock-omits.txt names
    site = [line.split(" ./", 1)[1] for line in files.splitlines() if "/site-packages/" in line]
    assert any("/site-packages/ioos_qc/" in path for path in site)
    assert not [path for path in site if "/tests/" in path.split("/site-packages/", 1)[1]][:5]
    # nor those kept under other names (pint's testsuite/, geographiclib's test/, jsonschema's
    # benchmarks/, pytest's conftest.py of numpy, pandas, networkx, shapely)
    elsewhere = [path for path in site if "/site-packages/ms4watch/" not in path and (
        {"testsuite", "test", "benchmarks"} & set(path.split("/site-packages/", 1)[1].split("/")[:-1])
        or path.endswith("/conftest.py"))]
    assert not elsewhere[:5], elsewhere[:5]
    # nor what only pip and uv read: which installer wrote a distribution, and whether it was asked
    # for by name (dpkg installs and removes the environment; Debian's python3-* carry neither)
    assert not [path for path in site if path.endswith((".dist-info/INSTALLER", ".dist-info/REQUESTED"))][:5]
    assert any(path.endswith(".dist-info/METADATA") for path in site)
    assert not [path for path in site if "/site-packages/scipy" in path or "/site-packages/h5netcdf" in path][:5]
    # nor what only builds or type-checks against them, nor what packaging/venv-omits.txt names
    assert not [path for path in site if path.endswith((".c", ".h", ".pyx", ".pxd", ".a", ".pyi"))
                and "/site-packages/ms4watch/" not in path][:5]
    assert any(path.endswith("/site-packages/twilio/request_validator.py") for path in site)
    # holidays' translations of holiday names: the United States' alone (ms4watch asks for no other country)
    translations = [path for path in site if "/site-packages/holidays/locale/" in path and path.endswith(".mo")]
    assert translations and all(path.endswith("/US.mo") for path in translations), translations[:5]
    for module in venv_omits():
        part = "/site-packages/" + module.replace(".", "/")
        assert not [path for path in site if path.startswith(part + "/", path.find("/site-packages/"))
                    or path.endswith(part + ".py")][:5], module
    assert run("dpkg-deb", "-f", deb, "Version").stdout.strip() == f"{VERSION}-1"
    depends = run("dpkg-deb", "-f", deb, "Depends").stdout
    assert "python3 (>= 3.11~)" in depends and "libc6" in depends
    control = Path(run("mktemp", "-d").stdout.strip())
    try:
        run("dpkg-deb", "--control", deb, control)
        assert set((control / "conffiles").read_text().split()) == {"/etc/ms4watch/ms4watch.toml",
                                                                    "/etc/logrotate.d/ms4watch"}
        for script in ("preinst", "postinst", "prerm", "postrm"):
            assert (control / script).stat().st_mode & 0o111, script
            run("sh", "-n", control / script)
    finally:
        shutil.rmtree(control)


def _mode(path: str) -> tuple[str, str, int]:
    st = os.stat(path)
    return pwd.getpwuid(st.st_uid).pw_name, grp.getgrgid(st.st_gid).gr_name, stat.S_IMODE(st.st_mode)


@pytest.fixture
def scratch():
    """A folder of this test's own, not pytest's tmp_path: the test runs for minutes, and other
    pytest runs of the same user (the machine is shared) delete all but their last three
    basetemp folders."""
    path = Path(tempfile.mkdtemp(prefix="ms4watch-deb-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def machine():
    """The machine's install paths are this test's from install to purge (tests/support/systemlock.py)."""
    with system_install_lock():
        yield


def test_install_check_demo_upgrade_purge(deb, lintian, scratch, machine):
    """``lintian``: started first, it checks the package meanwhile (test_lintian_reports_no_error)."""
    tmp_path = scratch
    if not have("mosquitto"):
        pytest.skip("mosquitto is not installed (apt-get install mosquitto)")
    if shutil.which("logrotate") is None:
        pytest.skip("logrotate is not installed (apt-get install logrotate)")
    if installed():
        pytest.skip("an ms4watch package is installed on this machine: this test would replace and purge it")
    user_existed = _user_exists()
    apt = apt_caching_in(tmp_path)
    broker = Mosquitto(tmp_path / "mosquitto")
    try:
        try:
            with step("apt-get install"):
                run(*apt, "install", deb, timeout=1800)
            assert installed()
            _installed_as_documented()
            with step("serve --check"):
                _serve_check(broker)
            with step("demo"):
                _demo(tmp_path)
            with step("upgrade"):
                _upgrade_backs_up_and_keeps(deb, apt)
            _logrotate(tmp_path)
        finally:
            broker.stop()
            with step("apt-get purge"):
                run(*apt, "purge", "ms4watch", timeout=600, ok=False)
        assert not installed()
        assert not os.path.lexists("/usr/bin/ms4watch")
        for gone in ("/opt/ms4watch", "/var/lib/ms4watch", "/etc/ms4watch", "/etc/logrotate.d/ms4watch",
                     "/lib/systemd/system/ms4watch-serve.service"):
            assert not os.path.lexists(gone), gone
        assert Path("/var/backups/ms4watch").is_dir()          # backups outlive a purge, by design
    finally:
        shutil.rmtree("/var/backups/ms4watch", ignore_errors=True)
        if not user_existed and _user_exists():
            run("deluser", "--system", "ms4watch", ok=False)


def test_lintian_reports_no_error(lintian):
    """lintian's checks that can report an error (the ``lintian`` fixture) report none; it ran
    while the install test ran, and this waits for it."""
    if lintian is None:
        pytest.skip("lintian is not installed (apt-get install lintian)")
    code, out, err = lintian.result()
    errors = [line for line in out.splitlines() if line.startswith("E:")]
    assert not errors, "\n".join(errors)
    assert code == 0 or not errors, err[-4000:]
    # the checks ran on the package: an error it has, overridden (packaging/debian/lintian-overrides)
    assert "O: ms4watch: dir-or-file-in-opt" in out, out[-4000:] + err[-4000:]


def _user_exists() -> bool:
    try:
        pwd.getpwnam("ms4watch")
        return True
    except KeyError:
        return False


def _installed_as_documented() -> None:
    out = run("/usr/bin/ms4watch", "--version")
    assert VERSION in out.stdout
    assert pwd.getpwnam("ms4watch").pw_shell == "/usr/sbin/nologin"
    assert _mode("/var/lib/ms4watch") == ("ms4watch", "ms4watch", 0o750)
    assert _mode("/etc/ms4watch") == ("root", "ms4watch", 0o750)
    assert _mode("/etc/ms4watch/loggers") == ("root", "ms4watch", 0o750)
    assert _mode("/etc/ms4watch/ms4watch.toml") == ("root", "ms4watch", 0o640)
    assert _mode("/var/backups/ms4watch") == ("ms4watch", "ms4watch", 0o700)
    for name in (p.name for folder in UNIT_FOLDERS for p in folder.glob("*.service")):
        assert Path("/lib/systemd/system", name).is_file(), name
    # postinst compiled the environment: the service (ProtectSystem=strict) could not
    assert list(Path("/opt/ms4watch/venv/lib").glob("python3*/site-packages/ms4watch/__pycache__/*.pyc"))
    _qc_without_what_the_lock_leaves_out(Path("/opt/ms4watch/venv/bin/python"))


def _qc_without_what_the_lock_leaves_out(python: Path) -> None:
    """The environment has none of what packaging/lock-omits.txt and packaging/venv-omits.txt
    name, and QC asks ioos_qc's QARTOD tests all the same (a spike fails, and so do its
    neighbours); the inbound-SMS webhook checks a Twilio signature."""
    omitted = [line.split("#")[0].strip() for line in (REPO / "packaging" / "lock-omits.txt").read_text().splitlines()]
    code = f"""
import importlib.metadata, sys
import numpy as np
present = []
for name in {[n for n in omitted if n]!r}:
    try:
        importlib.metadata.distribution(name)
        present.append(name)
    except importlib.metadata.PackageNotFoundError:
        pass
assert not present, f"left out of the lock, yet installed: {{present}}"
import importlib.util
for module in {sorted(venv_omits())!r}:
    assert importlib.util.find_spec(module) is None, f"left out of the environment, yet there: {{module}}"
from ms4watch.alerts.rules.qc import qartod_fail_array
fails = qartod_fail_array(np.arange(5, dtype=np.int64) * 300_000_000_000, np.array([10.0, 11.0, 900.0, 12.0, 10.0]))
assert fails.tolist() == [False, True, True, True, False], fails
assert "ioos_qc.qartod" in sys.modules
from datetime import date
from ms4watch.compliance.nyholidays import NewYorkPublicHolidays
ny = NewYorkPublicHolidays(years=2027)
assert ny.get(date(2027, 7, 5)) == "Independence Day (observed)", ny.get(date(2027, 7, 5))
assert NewYorkPublicHolidays(years=2027, language="th").get(date(2027, 7, 5)) == "ชดเชยวันประกาศอิสรภาพ"
""" + SMS_CHECK
    run(python, "-c", code, cwd="/")


def _serve_check(broker: Mosquitto) -> None:
    """docs/operations.md, Install: the town's registry and loggers in /etc/ms4watch,
    broker-config, the ingest client's files beside the settings, ``serve --check``."""
    examples = Path("/usr/share/ms4watch/examples/town")
    run("install", "-o", "root", "-g", "ms4watch", "-m", "0640", examples / "sites.yaml", "/etc/ms4watch/sites.yaml")
    for logger in sorted((examples / "loggers").glob("*.yaml")):
        run("install", "-o", "root", "-g", "ms4watch", "-m", "0640", logger, "/etc/ms4watch/loggers/")
    out = broker.workdir / "etc"      # /etc/mosquitto/ms4watch on a server
    port = free_port()
    run("/usr/bin/ms4watch", "broker-config", "--registry", "/etc/ms4watch/sites.yaml",
        "--firmware-configs", "/etc/ms4watch/loggers", "--out", out, "--host", "localhost",
        "--port", str(port), "--bind", "127.0.0.1")
    broker.configure_text((out / "mosquitto.conf").read_text(), port)
    broker.start()
    client = out / "clients" / "ms4watch-ingest"
    for source, target, mode in (("password", "mqtt-password", "0640"), ("ca.crt", "mqtt-ca.crt", "0644"),
                                 ("client.crt", "ms4watch-ingest.crt", "0644"),
                                 ("client.key", "ms4watch-ingest.key", "0640")):
        run("install", "-o", "root", "-g", "ms4watch", "-m", mode, client / source, f"/etc/ms4watch/{target}")
    # the example's broker is mqtts://localhost:8883; this one listens on a free port
    check = run("runuser", "-u", "ms4watch", "--", "env", f"MS4WATCH_BROKER__URL=mqtts://localhost:{port}",
                "/usr/bin/ms4watch", "serve", "--check", ok=False, cwd="/")
    assert check.returncode == 0, check.stdout + check.stderr
    # and it does fail, naming the broker, when nothing listens there
    broker.stop()
    down = run("runuser", "-u", "ms4watch", "--", "env", f"MS4WATCH_BROKER__URL=mqtts://localhost:{port}",
               "/usr/bin/ms4watch", "serve", "--check", ok=False, cwd="/")
    assert down.returncode == 1 and "broker" in (down.stdout + down.stderr), down.stdout + down.stderr


def _demo(tmp_path: Path) -> None:
    summary = tmp_path / "summary.json"
    run("/usr/bin/ms4watch", "demo", "--days", "0.05", "--speed", "0", "--http", "off",
        "--workdir", tmp_path / "demo", "--summary-json", summary, timeout=600, cwd=tmp_path)
    data = json.loads(summary.read_text())
    assert data["readings_published"] > 0 and data["readings_stored"] == data["readings_published"]


def _upgrade_backs_up_and_keeps(deb: Path, apt: list[str]) -> None:
    """The same package again (dpkg runs it as an upgrade): preinst backs up the data
    directory with the installed version; the settings edited and the data stay."""
    data = Path("/var/lib/ms4watch/rejected.jsonl")
    data.write_text('{"kept": true}\n')
    shutil.chown(data, "ms4watch", "ms4watch")
    settings = Path("/etc/ms4watch/ms4watch.toml")
    settings.write_text(settings.read_text() + "# edited by the town\n")
    run(*apt, "install", "--reinstall", deb, timeout=1800)
    assert data.read_text() == '{"kept": true}\n'
    assert settings.read_text().endswith("# edited by the town\n")
    assert _mode(str(settings)) == ("root", "ms4watch", 0o640)
    backups = sorted(Path("/var/backups/ms4watch").glob(f"before-{VERSION}-1-*"))
    assert len(backups) == 1, backups
    manifest = json.loads((backups[0] / "MANIFEST.json").read_text())
    assert "rejected.jsonl" in json.dumps(manifest)
    assert (backups[0] / "data" / "rejected.jsonl").read_text() == '{"kept": true}\n'   # backup's data/ part
    assert (backups[0] / "config" / "ms4watch.toml").is_file()                          # and the settings


def _logrotate(tmp_path: Path) -> None:
    """/etc/logrotate.d/ms4watch moves aside what the server appends to, as its user."""
    data = Path("/var/lib/ms4watch/rejected.jsonl")
    before = data.read_text()
    run("logrotate", "--force", "--state", tmp_path / "logrotate.state", "/etc/logrotate.d/ms4watch")
    assert Path("/var/lib/ms4watch/rejected.jsonl.1").read_text() == before
    assert data.read_text() == "" and _mode(str(data)) == ("ms4watch", "ms4watch", 0o640)
