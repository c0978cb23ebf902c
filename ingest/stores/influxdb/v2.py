"""InfluxDB 2.x / 3.x / Cloud through ``influxdb-client``'s v2 write API, prepared lines.

Reading back uses the v1-compatible ``/query`` endpoint with InfluxQL (2.x with a DBRP
mapping, 3.x natively), the same language the dashboards use; Flux is not needed.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any, Sequence

import urllib3
from influxdb_client import InfluxDBClient
from influxdb_client.client.exceptions import InfluxDBError
from influxdb_client.client.write_api import SYNCHRONOUS
from influxdb_client.rest import ApiException

from ...errors import StoreRejected, StoreUnavailable
from .common import InfluxStoreBase
from .config import NO_TOKEN, InfluxTarget, parse_url
from .errors import StoreMisconfigured, from_status, connection_reason

log = logging.getLogger(__name__)


class Influx2Store(InfluxStoreBase):
    """The readings store in InfluxDB 2.x/3.x/Cloud (``influxdb2://HOST:PORT/BUCKET?org=ORG``)."""

    def __init__(self, target: InfluxTarget):
        if target.version != 2 or target.org is None:
            raise ValueError(f"{target.display}: not an influxdb2 URL with ?org=ORG")
        super().__init__(target)
        self._org: str = target.org
        self._client: InfluxDBClient | None = None
        self._write_api: Any = None

    @classmethod
    def from_url(cls, url: str) -> "Influx2Store":
        return cls(parse_url(url))

    def _connect(self) -> InfluxDBClient:
        with self._pool_lock:        # writes may run on two threads (parallel_requests)
            return self._connect_locked()

    def _connect_locked(self) -> InfluxDBClient:
        if self._client is None:
            # retries=False: this store does not retry on its own; the spool and the caller do,
            # honouring Retry-After. The token never appears in a URL or a log line.
            self._client = InfluxDBClient(
                url=self.target.base_url, token=self.target.token() or "", org=self._org,
                timeout=int(self.target.timeout_s * 1000), verify_ssl=self.target.verify_tls,
                retries=False)
            self._write_api = self._client.write_api(write_options=SYNCHRONOUS)
        return self._client

    def open(self) -> None:
        """Check the server answers and the bucket keeps data long enough."""
        client = self._connect()
        self._call("/ping", client.ping)
        if self.target.token_source() is None:
            log.warning("store %s: %s; writes will fail if the server wants one", self.target.display, NO_TOKEN)
        self.check_retention()

    def close(self) -> None:
        self._close_pool()
        if self._client is not None:
            self._client.close()
            self._client = None
            self._write_api = None

    def _post_lines(self, lines: Sequence[str]) -> None:
        self._connect()
        self._call("/api/v2/write", lambda: self._write_api.write(
            bucket=self.target.database, org=self.target.org, record=list(lines), write_precision="ns"))

    def _call(self, path: str, fn: Any) -> Any:
        where = f"{self.target.display} {path}"
        try:
            return fn()
        except ApiException as e:
            raise from_status(where, int(e.status or 0) or 503, e.body or e.reason or "", e.headers,
                              self.target.login_hint) from None
        except (urllib3.exceptions.HTTPError, OSError) as e:
            raise StoreUnavailable(f"{where}: {type(e).__name__}: {connection_reason(e)}") from None
        except InfluxDBError as e:   # the client's own checks, e.g. an unknown organisation
            raise StoreMisconfigured(f"{where}: {e.message}") from None

    # -- administration ------------------------------------------------------------------
    def _bucket(self) -> Any:
        client = self._connect()
        return self._call("/api/v2/buckets", lambda: client.buckets_api().find_bucket_by_name(self.target.database))

    def retention_s(self) -> float | None:
        try:
            bucket = self._bucket()
        except (StoreUnavailable, StoreRejected) as e:
            if _no_buckets_api(e):
                return None   # InfluxDB 3 Core, VictoriaMetrics: cannot tell
            raise
        if bucket is None:
            raise StoreMisconfigured(f"{self.target.display}: bucket {self.target.database!r} does not exist; "
                                     "run `ms4watch store init --store URL`")
        rules = bucket.retention_rules or []
        return float(min((r.every_seconds or 0) for r in rules)) if rules else 0.0

    def ensure_store(self, retention: timedelta) -> str:
        """Create the bucket (or update its retention) and a DBRP mapping for InfluxQL dashboards."""
        from influxdb_client import BucketRetentionRules
        from influxdb_client.domain.dbrp_create import DBRPCreate
        from influxdb_client.service.dbr_ps_service import DBRPsService
        client = self._connect()
        seconds = int(retention.total_seconds())
        rule = BucketRetentionRules(type="expire", every_seconds=seconds)
        try:
            bucket = self._bucket()
        except (StoreUnavailable, StoreRejected) as e:
            if _no_buckets_api(e):
                raise StoreMisconfigured(
                    f"{self.target.display}: this server has no buckets API (InfluxDB 3, VictoriaMetrics?); create "
                    "the database with its own tools, with a retention of at least 1096 days") from None
            raise
        if bucket is None:
            bucket = self._call("/api/v2/buckets", lambda: client.buckets_api().create_bucket(
                bucket_name=self.target.database, retention_rules=[rule], org=self.target.org))
            action = "created"
        else:
            bucket.retention_rules = [rule]
            bucket = self._call("/api/v2/buckets", lambda: client.buckets_api().update_bucket(bucket))
            action = "updated"
        dbrps_api = DBRPsService(client.api_client)
        found = self._call("/api/v2/dbrps", lambda: dbrps_api.get_dbr_ps(org_id=bucket.org_id, db=self.target.database))
        if not (found and found.content):
            self._call("/api/v2/dbrps", lambda: dbrps_api.post_dbrp(DBRPCreate(
                org_id=bucket.org_id, bucket_id=bucket.id, database=self.target.database,
                retention_policy="autogen", default=True)))
        return (f"bucket {self.target.database!r} {action}: keeps {seconds // 86400} days; "
                f"InfluxQL mapping db={self.target.database!r} rp='autogen'")

    def query(self, q: str) -> dict[str, Any]:
        """InfluxQL through the v1-compatible /query endpoint (2.x DBRP mapping, 3.x)."""
        import requests
        token = self.target.token()
        headers = {"Authorization": f"Token {token}"} if token else {}
        where = f"{self.target.display} /query"
        try:
            r = requests.post(self.target.base_url + "/query", headers=headers, timeout=self.target.timeout_s,
                              verify=self.target.verify_tls,
                              data={"q": q, "db": self.target.database, "epoch": "ns"})
        except requests.RequestException as e:
            raise StoreUnavailable(f"{where}: {type(e).__name__}: {connection_reason(e)}") from None
        if r.status_code >= 300:
            raise from_status(where, r.status_code, r.text, r.headers, self.target.login_hint)
        try:
            body = r.json()
        except ValueError:
            raise StoreUnavailable(f"{where}: not JSON: {r.text[:200]!r}") from None
        for res in body.get("results", []):
            if "error" in res:
                raise StoreMisconfigured(f"{self.target.display}: {q}: {res['error']}")
        return body

    def count_readings(self) -> int:
        total = 0
        for res in self.query(self.count_query()).get("results", []):
            for s in res.get("series", []) or []:
                total += sum(int(row[1]) for row in s.get("values", []))
        return total


def _no_buckets_api(e: Exception) -> bool:
    """A 400/404/405 on /api/v2/buckets: the server speaks the write API only."""
    return any(f"HTTP {code}" in str(e) for code in (400, 404, 405))
