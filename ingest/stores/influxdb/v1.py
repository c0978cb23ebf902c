"""InfluxDB 1.x through the v1 HTTP API: ``/write`` (line protocol, precision ns) and ``/query``."""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from typing import Any, Sequence

import requests

from ...errors import StoreUnavailable
from .common import InfluxStoreBase, retention_to_seconds
from .config import NO_TOKEN, InfluxTarget, parse_url
from .errors import StoreMisconfigured, from_status, connection_reason

log = logging.getLogger(__name__)

RP_NAME = "ms4watch"


class Influx1Store(InfluxStoreBase):
    """The readings store in InfluxDB 1.x (``influxdb1://HOST:PORT/DATABASE``)."""

    def __init__(self, target: InfluxTarget):
        if target.version != 1:
            raise ValueError(f"{target.display}: not an influxdb1 URL")
        super().__init__(target)
        self._local = threading.local()
        self._sessions: list[requests.Session] = []
        self._sessions_lock = threading.Lock()

    @classmethod
    def from_url(cls, url: str) -> "Influx1Store":
        return cls(parse_url(url))

    # -- connection ------------------------------------------------------------------
    def _http(self) -> requests.Session:
        """One session per thread (writes may run on two threads, see ``parallel_requests``)."""
        s = getattr(self._local, "session", None)
        if s is None:
            s = requests.Session()
            s.verify = self.target.verify_tls
            token = self.target.token()
            if token:
                user, sep, password = token.partition(":")
                if sep:
                    s.auth = (user, password)          # Basic auth works on every 1.x
                else:
                    s.headers["Authorization"] = f"Token {token}"
            self._local.session = s
            with self._sessions_lock:
                self._sessions.append(s)
        return s

    def open(self) -> None:
        """Check the server answers, the database exists and keeps data long enough."""
        if self.target.token_source() is None:
            log.info("store %s: %s", self.target.display, NO_TOKEN)
        self._request("GET", "/ping")
        dbs = self.query("SHOW DATABASES")
        names = {row[0] for row in _rows(dbs)}
        if self.target.database not in names:
            raise StoreMisconfigured(
                f"{self.target.display}: database {self.target.database!r} does not exist; "
                "run `ms4watch store init --store URL`")
        self.check_retention()

    def close(self) -> None:
        self._close_pool()
        with self._sessions_lock:
            for s in self._sessions:
                s.close()
            self._sessions.clear()
        self._local = threading.local()

    # -- writing -----------------------------------------------------------------------
    def _post_lines(self, lines: Sequence[str]) -> None:
        params = {"db": self.target.database, "precision": "ns"}
        if self.target.rp:
            params["rp"] = self.target.rp
        self._request("POST", "/write", params=params, data="\n".join(lines).encode())

    def _request(self, method: str, path: str, **kw: Any) -> requests.Response:
        where = f"{self.target.display} {path}"
        try:
            r = self._http().request(method, self.target.base_url + path, timeout=self.target.timeout_s, **kw)
        except requests.Timeout:
            raise StoreUnavailable(f"{where}: no answer within {self.target.timeout_s:g}s") from None
        except requests.RequestException as e:
            raise StoreUnavailable(f"{where}: {type(e).__name__}: {connection_reason(e)}") from None
        if r.status_code >= 300:
            raise from_status(where, r.status_code, r.text, r.headers, self.target.login_hint)
        return r

    # -- reading and administration ----------------------------------------------------
    def query(self, q: str, database: str | None = None) -> dict:
        """Run InfluxQL; statement errors raise StoreMisconfigured with InfluxDB's message."""
        params = {"q": q, "epoch": "ns"}
        db = database or self.target.database
        if db:
            params["db"] = db
        if self.target.rp:
            params["rp"] = self.target.rp
        r = self._request("POST", "/query", data=params)
        try:
            body = r.json()
        except ValueError:
            raise StoreUnavailable(f"{self.target.display} /query: not JSON: {r.text[:200]!r}") from None
        for res in body.get("results", []):
            if "error" in res:
                raise StoreMisconfigured(f"{self.target.display}: {q}: {res['error']}")
        return body

    def count_readings(self) -> int:
        return sum(int(row[1]) for row in _rows(self.query(self.count_query())))

    def retention_policies(self) -> list[dict[str, Any]]:
        body = self.query(f'SHOW RETENTION POLICIES ON "{self.target.database}"')
        out = []
        for s in body["results"][0].get("series", []):
            for row in s.get("values", []):
                out.append(dict(zip(s["columns"], row)))
        return out

    def retention_s(self) -> float | None:
        rps = self.retention_policies()
        rp = next((p for p in rps if (p["name"] == self.target.rp if self.target.rp else p["default"])), None)
        if rp is None:
            raise StoreMisconfigured(
                f"{self.target.display}: retention policy {self.target.rp or '(default)'} does not exist")
        return retention_to_seconds(rp["duration"])

    def ensure_store(self, retention: timedelta) -> str:
        """Create the database (if needed) and make its retention policy keep ``retention``.

        The policy is ``ms4watch`` (or the URL's ``rp``), made the default. Returns what was done.
        """
        db = self.target.database
        rp = self.target.rp or RP_NAME
        days = max(1, round(retention.total_seconds() / 86400))
        self.query(f'CREATE DATABASE "{db}"', database="")
        existing = {p["name"]: p for p in self.retention_policies()}
        if rp in existing:
            self.query(f'ALTER RETENTION POLICY "{rp}" ON "{db}" DURATION {days}d DEFAULT', database="")
            action = "updated"
        else:
            self.query(f'CREATE RETENTION POLICY "{rp}" ON "{db}" DURATION {days}d REPLICATION 1 DEFAULT',
                       database="")
            action = "created"
        return f"database {db!r}: retention policy {rp!r} {action}, keeps {days} days, default"


def _rows(body: dict) -> list[list[Any]]:
    rows: list[list[Any]] = []
    for res in body.get("results", []):
        for s in res.get("series", []) or []:
            rows.extend(s.get("values", []) or [])
    return rows
