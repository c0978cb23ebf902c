"""Make a town's Mosquitto configuration from its registry and its loggers' firmware configs.

One folder holds everything (``OUT``, e.g. ``/etc/mosquitto/ms4watch``)::

    OUT/mosquitto.conf     0644  include it from /etc/mosquitto/conf.d/ (a TLS listener, no anonymous
                                 clients, the password file, the ACL, the CRL, mosquitto_settings())
    OUT/passwd             0640  one $7$ (PBKDF2-SHA512) line per client   } group: the broker's
    OUT/acl                0640  what each client may publish and read     } (mosquitto)
    OUT/server.key         0640  the broker's key; server.crt 0644 beside it  }
    OUT/ca.crt             0644  the CA every client trusts; crl.pem 0644 what it revoked
    OUT/ca.key             0600  the CA's key: only this command needs it
    OUT/revoked.json       0600  serials revoked so far (the CRL is made from it)
    OUT/clients/<name>/    0700  what one client needs, to copy onto it:
        ca.crt 0644, client.crt 0644, client.key 0600, password 0600

Clients: every device of the firmware configs (user name = device id) and the server's
services ``ms4watch-ingest`` (reads readings, status and events) and ``ms4watch-workbench``
(``ms4watch device``: writes config and commands, reads status and events); no credential
for what nothing uses (earlier versions made ``ms4watch-engine``: a run revokes it). A device
publishes only ``readings``, ``status`` and ``events`` under
``ms4/<municipality>/<station>/<device>/`` and reads only its own ``config`` and ``cmd``.
With a client certificate (``--auth certificate`` or ``both``) the broker takes the
certificate's common name as the user name (``use_identity_as_username``): a logger's
certificate acts only as that logger, whatever user name and password it sends. Mosquitto
checks no password once the certificate names the user, so ``both`` is ``certificate``
at the broker; the clients still get and send a password, for a switch to ``password``.

Running again keeps every credential that is still good, makes the missing ones, replaces
those named in ``rotate`` (a new password, key and certificate; the old certificate
revoked) and revokes the clients that are no longer listed (their folder removed, their
certificate on the CRL, their line gone from the password file and the ACL). Secrets are
only ever written to files, with the modes above, never printed.
"""

from __future__ import annotations

import enum
import grp
import json
import os
import shutil
import socket
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Sequence

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

from ..contract.broker import SESSION_EXPIRY, mosquitto_conf, mosquitto_settings, session_expiry
from ..contract.devices import DeviceDirectory
from ..contract.errors import Ms4Error
from ..contract.ids import PREFIX
from .passwords import new_password, password_line
from ..townlock import lock_topic
from .pki import CA, cert_pem, key_pem


class BrokerConfigError(Ms4Error):
    """The broker configuration could not be made; the message names the file or option."""


class Auth(str, enum.Enum):
    PASSWORD = "password"          # TLS to a verified broker, then user name and password
    CERTIFICATE = "certificate"    # a client certificate; its common name is the user name
    BOTH = "both"                  # as CERTIFICATE at the broker (it checks no password once the
                                   # certificate names the user); clients also hold a password


SERVICES: dict[str, tuple[tuple[str, str], ...]] = {
    # service user -> (access, channel) on every device's topics of the town
    "ms4watch-ingest": (("read", "readings"), ("read", "status"), ("read", "events")),
    "ms4watch-workbench": (("write", "config"), ("write", "cmd"), ("read", "status"), ("read", "events")),
}
DEVICE_ACCESS = (("write", "readings"), ("write", "status"), ("write", "events"), ("read", "config"), ("read", "cmd"))
RENEW_BEFORE = timedelta(days=30)   # a certificate this close to its end is renewed


@dataclass
class Result:
    out: Path
    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    rotated: list[str] = field(default_factory=list)
    renewed: list[str] = field(default_factory=list)     # a certificate near its end (or of another CA) replaced
    revoked: list[str] = field(default_factory=list)
    new_ca: bool = False
    new_server_cert: bool = False


def acl_text(directory: DeviceDirectory) -> str:
    """The ACL file: the services over every device of the town, each device over its own topics."""
    town = directory.municipality
    lines = [f"# ms4watch broker-config: {town}. Made by the command; re-run it instead of editing.\n"]
    for user, access in SERVICES.items():
        lines.append(f"\nuser {user}\n")
        lines += [f"topic {a} {PREFIX}/{town}/+/+/{ch}\n" for a, ch in access]
        if user == "ms4watch-ingest":     # serve's connection: its town lock (ms4watch/townlock.py)
            lines.append(f"topic readwrite {lock_topic(town)}\n")
    for d in directory:
        lines.append(f"\nuser {d.id}\n")
        lines += [f"topic {a} {PREFIX}/{town}/{d.station}/{d.id}/{ch}\n" for a, ch in DEVICE_ACCESS]
    return "".join(lines)


def mosquitto_conf_text(out: Path, *, town: str, auth: Auth, port: int, bind: str | None,
                        expiry: str = SESSION_EXPIRY) -> str:
    lines = [f"# ms4watch broker-config: {town}. Made by the command; re-run it instead of editing.\n",
             "# Include it from /etc/mosquitto/conf.d/ (docs/operations.md).\n",
             "allow_anonymous false\n"]
    if auth is Auth.PASSWORD:      # with a certificate Mosquitto takes its name and reads no password
        lines.append(f"password_file {out / 'passwd'}\n")
    lines.append(f"acl_file {out / 'acl'}\n")
    lines.append(f"listener {port}{' ' + bind if bind else ''}\n")
    lines += [f"cafile {out / 'ca.crt'}\n", f"certfile {out / 'server.crt'}\n", f"keyfile {out / 'server.key'}\n",
              "tls_version tlsv1.2\n"]
    if auth is not Auth.PASSWORD:
        lines += ["require_certificate true\n", f"crlfile {out / 'crl.pem'}\n"]
    if auth is not Auth.PASSWORD:
        # the certificate's common name is the user (and the ACL's): a logger's certificate
        # cannot act as another logger with that one's user name and password
        lines.append("use_identity_as_username true\n")
    return "".join(lines) + mosquitto_conf(mosquitto_settings(expiry))


def generate(directory: DeviceDirectory, out: str | Path, *, auth: Auth = Auth.BOTH, port: int = 8883,
             bind: str | None = None, hosts: Sequence[str] = (), rotate: Sequence[str] = (),
             group: str | None = None, validity_days: int = 730, expiry: str = SESSION_EXPIRY) -> Result:
    """Write (or bring up to date) the broker's configuration in ``out``; see the module docstring.

    ``hosts``: the names and addresses loggers reach the broker by (the server certificate's
    names; default this machine's name, ``localhost`` and ``127.0.0.1``); ``group``: the
    group the broker runs as, given the files it reads (needs root; default ``mosquitto``
    when this runs as root and that group exists); ``expiry``: how long a persistent session
    outlives its client's last connection (``contract/broker.py``).
    """
    try:
        session_expiry(expiry)
    except ValueError as e:
        raise BrokerConfigError(f"--session-expiry: {e}") from None
    out = Path(out).resolve()
    clients = list(SERVICES) + [d.id for d in directory]
    for device in directory:
        if device.id in SERVICES:
            raise BrokerConfigError(f"{device.source}: device: {device.id!r} is the name of a service of the server")
    unknown = sorted(set(rotate) - set(clients))
    if unknown:
        raise BrokerConfigError(f"--rotate: {', '.join(unknown)}: not a listed device or a service "
                                f"(devices: {', '.join(d.id for d in directory) or 'none'}; "
                                f"services: {', '.join(SERVICES)})")
    gid = _group(group)
    hosts = list(hosts) or [socket.getfqdn(), "localhost", "127.0.0.1"]
    for h in hosts:
        if not h or any(c.isspace() for c in h):
            raise BrokerConfigError(f"--host: {h!r} is not a host name or address")
    result = Result(out)
    _mkdir(out, 0o755)
    _mkdir(out / "clients", 0o700)
    ca = _ca(out, directory.municipality, result)
    revoked = _load_revoked(out)
    _server_cert(out, ca, hosts, validity_days, gid, result)

    passwd: list[str] = []
    for name in clients:
        d = out / "clients" / name
        cert_file, key_file, pw_file = d / "client.crt", d / "client.key", d / "password"
        rotating = name in rotate
        existed = d.is_dir()
        _mkdir(d, 0o700)
        old = _read_cert(cert_file)
        good = (old is not None and key_file.is_file() and ca.signed(old) and _cn(old) == name
                and old.not_valid_after_utc - datetime.now(timezone.utc) > RENEW_BEFORE)
        if rotating or not good:
            if old is not None and ca.signed(old):
                revoked.append({"serial": old.serial_number, "name": name, "revoked": _now_iso(),
                                "why": "rotated" if rotating else "renewed"})
            key, cert = ca.issue(name, days=validity_days)
            _write(key_file, key_pem(key), 0o600)
            _write(cert_file, cert_pem(cert), 0o644)
        if rotating or not pw_file.is_file() or not pw_file.read_text(encoding="utf-8").strip():
            _write(pw_file, new_password().encode(), 0o600)
        _write(d / "ca.crt", cert_pem(ca.cert), 0o644)
        passwd.append(password_line(name, pw_file.read_text(encoding="utf-8").strip()))
        (result.rotated if rotating else result.created if not existed else result.kept if good
         else result.renewed).append(name)

    for d in sorted((out / "clients").iterdir()):
        if d.is_dir() and d.name not in clients:      # no longer listed: revoke
            old = _read_cert(d / "client.crt")
            if old is not None and ca.signed(old):
                revoked.append({"serial": old.serial_number, "name": d.name, "revoked": _now_iso(), "why": "unlisted"})
            shutil.rmtree(d)
            result.revoked.append(d.name)

    _write(out / "revoked.json", (json.dumps(revoked, indent=1) + "\n").encode(), 0o600)
    _write(out / "crl.pem", ca.crl(r["serial"] for r in revoked).public_bytes(_PEM), 0o644)
    _write(out / "passwd", "".join(passwd).encode(), 0o640, gid)
    _write(out / "acl", acl_text(directory).encode(), 0o640, gid)
    _write(out / "mosquitto.conf", mosquitto_conf_text(out, town=directory.municipality, auth=auth, port=port,
                                                       bind=bind, expiry=expiry).encode(), 0o644)
    return result


# -- pieces -------------------------------------------------------------------------------------
_PEM = Encoding.PEM


def _ca(out: Path, town: str, result: Result) -> CA:
    cert, key = out / "ca.crt", out / "ca.key"
    if cert.exists() or key.exists():
        if not (cert.is_file() and key.is_file()):
            raise BrokerConfigError(f"{out}: ca.crt and ca.key go together; one of them is missing")
        try:
            return CA.load(cert, key)
        except (ValueError, TypeError, OSError) as e:
            raise BrokerConfigError(f"{cert}: cannot use the CA: {e}") from None
    ca = CA.create(f"ms4watch {town} MQTT CA")
    _write(key, key_pem(ca.key), 0o600)
    _write(cert, cert_pem(ca.cert), 0o644)
    result.new_ca = True
    return ca


def _server_cert(out: Path, ca: CA, hosts: Sequence[str], days: int, gid: int | None, result: Result) -> None:
    cert_file, key_file = out / "server.crt", out / "server.key"
    old = _read_cert(cert_file)
    if old is not None and key_file.is_file() and ca.signed(old) and _names(old) == set(hosts) \
            and old.not_valid_after_utc - datetime.now(timezone.utc) > RENEW_BEFORE:
        _chmod(key_file, 0o640, gid)
        return
    key, cert = ca.issue(hosts[0], server_names=hosts, days=days)
    _write(key_file, key_pem(key), 0o640, gid)
    _write(cert_file, cert_pem(cert), 0o644)
    result.new_server_cert = True


def _read_cert(path: Path) -> x509.Certificate | None:
    try:
        return x509.load_pem_x509_certificate(path.read_bytes())
    except (OSError, ValueError):
        return None


def _cn(cert: x509.Certificate) -> str | None:
    attrs = cert.subject.get_attributes_for_oid(x509.oid.NameOID.COMMON_NAME)
    return str(attrs[0].value) if attrs else None


def _names(cert: x509.Certificate) -> set[str]:
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return set()
    return {str(n.value) for n in san}


def _load_revoked(out: Path) -> list[dict]:
    path = out / "revoked.json"
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert isinstance(data, list) and all(isinstance(r["serial"], int) for r in data)
        return data
    except (ValueError, KeyError, TypeError, AssertionError):
        raise BrokerConfigError(f"{path}: not a list of revoked serials; restore it from a backup") from None


def _group(name: str | None) -> int | None:
    if name is None:
        if os.geteuid() != 0:
            return None
        name = "mosquitto"
        try:
            return grp.getgrnam(name).gr_gid
        except KeyError:
            return None
    try:
        gid = grp.getgrnam(name).gr_gid
    except KeyError:
        raise BrokerConfigError(f"--group: no group {name!r} on this machine") from None
    if os.geteuid() != 0 and gid not in os.getgroups():
        raise BrokerConfigError(f"--group: {name!r}: only root can give files to a group it is not in")
    return gid


def _mkdir(path: Path, mode: int) -> None:
    path.mkdir(mode=mode, parents=True, exist_ok=True)
    path.chmod(mode)


def _write(path: Path, data: bytes, mode: int, gid: int | None = None) -> None:
    """Atomically: a temporary file made with ``mode`` (never readable by others first), then renamed."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.unlink()
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.write(fd, data)
        os.fchmod(fd, mode)
        if gid is not None:
            os.fchown(fd, -1, gid)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _chmod(path: Path, mode: int, gid: int | None) -> None:
    os.chmod(path, mode)
    if gid is not None:
        os.chown(path, -1, gid)


def _now_iso() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


__all__ = ["Auth", "BrokerConfigError", "Result", "SERVICES", "acl_text", "generate", "mosquitto_conf_text"]
