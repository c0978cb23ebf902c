"""Store URLs for InfluxDB, parsed and checked without any I/O.

``influxdb1://HOST:PORT/DATABASE[?rp=RP&precision=ns&timeout=10s&batch=5000]``
``influxdb2://HOST:PORT/BUCKET?org=ORG[&timeout=10s&batch=5000]``
``influxdb1s://`` / ``influxdb2s://`` use TLS (add ``&verify=false`` only for a test server).

Credentials never come from the URL, the command line or the logs: the token is read from
``MS4WATCH_INFLUX_TOKEN`` or from a file named by ``MS4WATCH_INFLUX_TOKEN_FILE`` or by
``?token_file=PATH`` (a path is not a secret), else from the systemd credential
``influx-token`` (``LoadCredential=``, ``contract/credentials.py``). For InfluxDB 1.x with authentication the
token is ``USER:PASSWORD``. A URL carrying a password is refused.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from ....contract.credentials import INFLUX_TOKEN, credential
from ....contract.timeutil import parse_duration

TOKEN_ENV = "MS4WATCH_INFLUX_TOKEN"
TOKEN_FILE_ENV = "MS4WATCH_INFLUX_TOKEN_FILE"

_KNOWN = {"rp", "precision", "timeout", "batch", "org", "token_file", "verify", "allow_short_retention"}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class InfluxTarget:
    version: int                 # 1 or 2 (2 also means 3.x and Cloud: the v2 write API)
    tls: bool
    host: str
    port: int
    database: str                # database (1.x) or bucket (2.x)
    org: str | None = None
    rp: str | None = None        # 1.x retention policy; None = the database's default
    timeout_s: float = 10.0
    batch_lines: int = 5000
    verify_tls: bool = True
    allow_short_retention: bool = False
    token_file: str | None = field(default=None, repr=False)

    @property
    def base_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    @property
    def display(self) -> str:
        """For logs and messages: never contains a secret."""
        scheme = f"influxdb{self.version}{'s' if self.tls else ''}"
        return f"{scheme}://{self.host}:{self.port}/{self.database}"

    def token(self) -> str | None:
        """The token (or USER:PASSWORD for 1.x), read when connecting; None when none is set."""
        value = os.environ.get(TOKEN_ENV)
        if value:
            return value.strip()
        path = self.token_file or os.environ.get(TOKEN_FILE_ENV) or credential(INFLUX_TOKEN)
        if path:
            try:
                return Path(path).read_text().strip() or None
            except OSError as e:
                raise ValueError(f"cannot read the InfluxDB token file {path}: {e.strerror}") from None
        return None

    def token_source(self) -> str | None:
        """Where :meth:`token` reads the token, for messages (never the secret); None when
        no token is set: ms4watch then does not log in."""
        if os.environ.get(TOKEN_ENV):
            return TOKEN_ENV
        if self.token_file:
            return f"the token file {self.token_file} (?token_file=)"
        if os.environ.get(TOKEN_FILE_ENV):
            return f"the token file {os.environ[TOKEN_FILE_ENV]} ({TOKEN_FILE_ENV})"
        cred = credential(INFLUX_TOKEN)
        return f"the systemd credential {INFLUX_TOKEN} ({cred})" if cred else None

    def login_hint(self, status: int) -> str:
        """What to fix when InfluxDB answered 401 (no or a wrong login) or 403 (too few rights)."""
        source = self.token_source()
        if source is None:
            return (f"no InfluxDB token is set: name a file holding {'USER:PASSWORD' if self.version == 1 else 'the token'}"
                    f" with ?token_file= in the store URL (or {TOKEN_FILE_ENV}, or the systemd credential "
                    f"{INFLUX_TOKEN}); {NO_LOGIN_DOC}")
        try:
            user, sep, _ = (self.token() or "").partition(":")
        except ValueError:
            sep = ""
        who = f"user {user!r} of {source}" if sep else f"the token of {source}"
        if status == 401:
            return f"InfluxDB refused the login of {who}: is {'USER:PASSWORD' if sep else 'the token'} in it right?"
        return f"{who} lacks the rights this needs ({NO_LOGIN_DOC})"


NO_LOGIN_DOC = "docs/operations.md, InfluxDB authentication"
NO_TOKEN = (f"no InfluxDB token is set (?token_file= in the store URL, {TOKEN_FILE_ENV} or the systemd "
            f"credential {INFLUX_TOKEN}): connecting without a login")


def parse_url(url: str) -> InfluxTarget:
    """Parse an ``influxdb1[s]://`` or ``influxdb2[s]://`` URL; ValueError names what is wrong."""
    u = urlparse(url)
    scheme = u.scheme
    if scheme not in ("influxdb1", "influxdb1s", "influxdb2", "influxdb2s"):
        raise ValueError(f"not an InfluxDB store URL: scheme {scheme!r} (influxdb1://, influxdb2://)")
    safe = f"{scheme}://{u.hostname or ''}{':' + str(u.port) if u.port else ''}{u.path}"
    if u.password is not None or u.username is not None:
        raise ValueError(f"{safe}: credentials in the store URL are refused; set {TOKEN_ENV} or {TOKEN_FILE_ENV}")
    if not u.hostname:
        raise ValueError(f"{safe}: the URL names no host")
    version = int(scheme[8])
    tls = scheme.endswith("s")
    try:
        port = u.port or 8086
    except ValueError:
        raise ValueError(f"{safe}: bad port") from None
    database = u.path.strip("/")
    if not database or "/" in database:
        what = "DATABASE" if version == 1 else "BUCKET"
        raise ValueError(f"{safe}: the path must be the {what} name, e.g. {scheme}://{u.hostname}:{port}/ms4watch")
    q = {k: v[-1] for k, v in parse_qs(u.query, keep_blank_values=True).items()}
    if {"token", "password", "u", "p"} & set(q):
        raise ValueError(f"{safe}: credentials in the store URL are refused; set {TOKEN_ENV} or {TOKEN_FILE_ENV}")
    unknown = set(q) - _KNOWN
    if unknown:
        raise ValueError(f"{safe}: unknown option(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(_KNOWN))})")
    org = q.get("org") or None
    if version == 2 and not org:
        raise ValueError(f"{safe}: influxdb2 URLs need ?org=ORG")
    if version == 2 and "rp" in q:
        raise ValueError(f"{safe}: ?rp= is for InfluxDB 1.x; a 2.x bucket has its own retention")
    precision = q.get("precision", "ns")
    if precision != "ns":
        raise ValueError(f"{safe}: precision={precision!r}: ms4watch writes nanosecond timestamps (precision=ns)")
    try:
        timeout_s = parse_duration(q.get("timeout", "10s")).total_seconds()
    except ValueError as e:
        raise ValueError(f"{safe}: timeout: {e}") from None
    if timeout_s <= 0:
        raise ValueError(f"{safe}: timeout must be positive")
    try:
        batch = int(q.get("batch", "5000"))
    except ValueError:
        raise ValueError(f"{safe}: batch must be a whole number of lines") from None
    if not 1 <= batch <= 100_000:
        raise ValueError(f"{safe}: batch must be 1..100000 lines")
    return InfluxTarget(
        version=version, tls=tls, host=u.hostname, port=port, database=database, org=org,
        rp=q.get("rp") or None, timeout_s=timeout_s, batch_lines=batch,
        verify_tls=_flag(q, "verify", True, safe),
        allow_short_retention=_flag(q, "allow_short_retention", False, safe),
        token_file=q.get("token_file") or None)


def _flag(q: dict[str, str], name: str, default: bool, safe: str) -> bool:
    v = q.get(name)
    if v is None:
        return default
    if v.lower() in _TRUE or v == "":
        return True
    if v.lower() in _FALSE:
        return False
    raise ValueError(f"{safe}: {name}={v!r} is not true/false")
