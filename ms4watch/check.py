"""``ms4watch serve --check``: everything ``serve`` needs, checked without starting anything.

Reads the settings' files (registries, loggers, secrets, TLS files) and their modes, the
data directory, then reaches the broker, each town's store and the SMTP server:

* secrets (``broker.password_file``, ``broker.key_file``, the InfluxDB token file,
  ``web.secret_file``, ``sms.secret_file``) must not be readable or writable by everyone;
* the data directory must exist (or be creatable) and be writable by the user running the
  check — run it as the service user: ``sudo -u ms4watch ms4watch serve --check``;
* the broker is reached with a throwaway client id (``ms4watch-check-<random>``) and a clean
  session, so the unit's persistent session and the town's server lock are left alone; the
  same credentials and TLS files as ``serve``, so a refused login is reported too;
* a store is opened as ingest opens it (InfluxDB: the server answers, the database exists,
  its retention is long enough; SQLite: the file takes a write lock) but nothing is written;
* SMTP: connect, STARTTLS or TLS as the URL says, log in if it names a user, ``NOOP``, quit.
  No message is sent.

Each problem is one :class:`Problem` (``what: why``); :func:`check_server` returns them all.
"""

from __future__ import annotations

import os
import smtplib
import ssl
import stat
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from .contract.errors import Ms4Error
from .contract.mqtt import BrokerURL, make_client
from .settings import Settings

CONNECT_TIMEOUT_S = 10.0
"""How long each peer (broker, store, SMTP) is given to answer [s]."""


@dataclass(frozen=True)
class Problem:
    what: str      # the setting, file or peer at fault
    why: str

    def __str__(self) -> str:
        return f"{self.what}: {self.why}"


@dataclass(frozen=True)
class Passed:
    what: str
    detail: str

    def __str__(self) -> str:
        return f"{self.what}: {self.detail}"


Result = Problem | Passed


def check_server(settings: Settings, *, timeout_s: float = CONNECT_TIMEOUT_S) -> list[Result]:
    """Every check's result, in order: files, data directory, broker, stores, SMTP."""
    out: list[Result] = []
    for step in (_registries, _secret_files, _data_dir):
        out.extend(step(settings))
    out.extend(_broker(settings, timeout_s))
    out.extend(_stores(settings))
    out.extend(_smtp(settings, timeout_s))
    return out


# -- files -----------------------------------------------------------------------------------
def _registries(settings: Settings) -> Iterator[Result]:
    from .contract.registry import load_registry
    try:
        paths = settings.registry_paths()
    except Ms4Error as e:
        yield Problem("registry", str(e).removeprefix("registry: "))
        return
    for path in paths:
        try:
            reg = load_registry(path)
            if settings.firmware_configs is not None:
                settings.devices(reg)
        except (Ms4Error, ValueError, OSError) as e:
            yield Problem(str(path), str(e))
        else:
            yield Passed(str(path), f"registry of {reg.municipality}")


def secret_files(settings: Settings) -> list[tuple[str, Path]]:
    """The secret files the settings name, with the setting that names each."""
    from .ingest.stores.influxdb.config import TOKEN_FILE_ENV, parse_url
    out = [(name, path) for name, path in (
        ("broker.password_file", settings.broker.password_file), ("broker.key_file", settings.broker.key_file),
        ("web.secret_file", settings.web_secret_file if settings.http.listen else None),
        ("sms.secret_file", settings.sms.secret_file)) if path is not None]
    for url in _store_urls(settings):
        if not url.startswith("influxdb"):
            continue
        try:
            own = parse_url(url).token_file
        except ValueError:
            continue                  # the store's own check names what is wrong with the URL
        env = os.environ.get(TOKEN_FILE_ENV)
        token = ("store token_file", Path(own)) if own else (TOKEN_FILE_ENV, Path(env)) if env else None
        if token is not None and token not in out:
            out.append(token)
    return out


def _secret_files(settings: Settings) -> Iterator[Result]:
    for name, path in secret_files(settings):
        if name == "web.secret_file" and not path.exists():
            continue      # made (mode 0600) on the first start
        try:
            mode = path.stat().st_mode
            with open(path, "rb"):
                pass
        except OSError as e:
            yield Problem(name, f"cannot read {path}: {e.strerror}")
            continue
        if mode & (stat.S_IROTH | stat.S_IWOTH):
            yield Problem(name, f"{path} is readable or writable by everyone (mode {stat.S_IMODE(mode):04o}): "
                                f"chmod o-rwx {path}")
        else:
            yield Passed(name, f"{path} (mode {stat.S_IMODE(mode):04o})")


def _data_dir(settings: Settings) -> Iterator[Result]:
    d = settings.data_dir
    existing = next((p for p in (d, *d.parents) if p.exists()), Path("/"))
    if not existing.is_dir():
        yield Problem("data_dir", f"{existing} is not a folder")
    elif not os.access(existing, os.W_OK | os.X_OK):
        who = _user()
        verb = "" if existing == d else f" (to create {d})"
        yield Problem("data_dir", f"{existing} is not writable by {who}{verb}")
    else:
        hint = " (as root: run it as the service user, sudo -u ms4watch, to check that user's rights)" \
            if os.geteuid() == 0 else ""
        yield Passed("data_dir", (f"{d} writable by {_user()}" if existing == d else f"{d} can be created") + hint)


def _user() -> str:
    try:
        import pwd
        return pwd.getpwuid(os.geteuid()).pw_name
    except (KeyError, ImportError):
        return f"uid {os.geteuid()}"


# -- peers -------------------------------------------------------------------------------------
def _broker(settings: Settings, timeout_s: float) -> Iterator[Result]:
    broker = settings.broker
    what = "broker"
    try:
        url = BrokerURL.parse(broker.url)
        tls = broker.tls()
        password = broker.secret()
    except (Ms4Error, ValueError) as e:
        yield Problem(what, str(e))
        return
    client = make_client(f"ms4watch-check-{uuid.uuid4().hex[:12]}", url, clean_session=True,
                         username=broker.username, password=password, tls=tls)
    answered = threading.Event()
    result: list[str] = []

    def on_connect(_c, _u, _flags, reason, _props=None) -> None:
        result.append("" if not reason.is_failure else f"{url} refused the connection: {reason}")
        answered.set()

    def on_disconnect(_c, _u, _flags, reason, _props=None) -> None:
        if not answered.is_set():
            result.append(f"{url} closed the connection without an MQTT answer ({reason}): is it the broker's port?")
            answered.set()

    client.on_connect = on_connect
    client.on_disconnect = on_disconnect
    try:
        client.connect(url.host, url.port, keepalive=10)
    except ssl.SSLError as e:      # before OSError, its base: the certificate, not the network
        yield Problem(what, f"TLS with {url} failed: {e.reason or e}"
                            + (" (is broker.ca_file the broker's CA?)" if "VERIFY" in str(e.reason) else ""))
        return
    except OSError as e:
        yield Problem(what, f"cannot reach {url}: {e.strerror or e}")
        return
    client.loop_start()
    try:
        if not answered.wait(timeout_s):
            yield Problem(what, f"{url} did not answer within {timeout_s:g} s")
        elif result[0]:
            yield Problem(what, result[0])
        else:
            yield Passed(what, f"connected to {url}" + (f" as {broker.username}" if broker.username else ""))
    finally:
        try:
            client.disconnect()
        finally:
            client.loop_stop()


def _stores(settings: Settings) -> Iterator[Result]:
    from .ingest.stores import build_store
    from .ingest.stores.sqlite.store import SqliteStore, probe_write_lock
    for url in _store_urls(settings):
        what = f"store {url.split('?')[0]}"
        if url.startswith("sqlite:"):
            try:
                path = SqliteStore.from_url(url).path      # not opened: that would create the file
                if path.exists():
                    probe_write_lock(path)
                elif not os.access(next(p for p in path.parents if p.exists()), os.W_OK | os.X_OK):
                    raise PermissionError(f"cannot create {path}: its folder is not writable by {_user()}")
            except (Ms4Error, OSError, ValueError) as e:
                yield Problem(what, str(e))
            else:
                yield Passed(what, "takes writes" if path.exists() else "will be created on the first start")
            continue
        try:
            store = build_store(url)
            try:
                store.open()
            finally:
                store.close()
        except (Ms4Error, ValueError, OSError) as e:
            yield Problem(what, str(e))
        else:
            yield Passed(what, "answers; the database exists and keeps data long enough")


def _smtp(settings: Settings, timeout_s: float) -> Iterator[Result]:
    from .alerts.notifiers.email.url import parse_mailto
    for url in settings.notify:
        if not url.lower().startswith(("mailto:", "mailtos:")):
            continue
        try:
            cfg = parse_mailto(url)
        except ValueError as e:
            yield Problem("notify", str(e))
            continue
        where = cfg.describe()
        try:
            timeout = min(timeout_s, cfg.timeout_s)
            if cfg.mode == "ssl":
                smtp: smtplib.SMTP = smtplib.SMTP_SSL(cfg.host, cfg.port, timeout=timeout,
                                                      context=ssl.create_default_context())
            else:
                smtp = smtplib.SMTP(cfg.host, cfg.port, timeout=timeout)
            with smtp:
                if cfg.mode == "starttls":
                    smtp.starttls(context=ssl.create_default_context())
                if cfg.user:
                    smtp.login(cfg.user, cfg.password or "")
                code, _ = smtp.noop()
                if code != 250:
                    raise smtplib.SMTPResponseException(code, b"NOOP refused")
        except smtplib.SMTPAuthenticationError as e:
            yield Problem(f"smtp {where}", f"login refused ({e.smtp_code})")
        except smtplib.SMTPResponseException as e:
            yield Problem(f"smtp {where}", f"{e.smtp_code} {e.smtp_error!r}")
        except (smtplib.SMTPException, OSError) as e:
            yield Problem(f"smtp {where}", f"cannot reach it: {getattr(e, 'strerror', None) or e}")
        else:
            yield Passed(f"smtp {where}", "answers" + (f", login as {cfg.user} accepted" if cfg.user else ""))


# -- helpers -------------------------------------------------------------------------------------
def _store_urls(settings: Settings) -> list[str]:
    from .contract.registry import load_registry
    try:
        towns = [load_registry(p).municipality for p in settings.registry_paths()]
    except (Ms4Error, ValueError, OSError):
        return [settings.store_url] if not settings.coalition else []
    return sorted({settings.town_store_url(m) for m in towns})


Report = Callable[[str], None]


def report(results: list[Result], echo: Report, err: Report) -> int:
    """Print each result on a line (``ok`` / ``error: …``); the exit status: 0, or 1 when a
    check failed."""
    for r in results:
        (err if isinstance(r, Problem) else echo)(f"{'error' if isinstance(r, Problem) else 'ok'}: {r}")
    problems = sum(isinstance(r, Problem) for r in results)
    if problems:
        err(f"{problems} problem{'s' if problems != 1 else ''} found; nothing was started")
        return 1
    echo("all checks passed; nothing was started")
    return 0


__all__ = ["Problem", "Passed", "check_server", "report", "secret_files"]
