"""The server's settings: one typed class that every command reads.

Sources, highest first: the command line, ``MS4WATCH_*`` environment variables (nested
with ``__``: ``MS4WATCH_BROKER__URL``), the TOML file given by ``--config`` (or
``MS4WATCH_CONFIG``, else ``/etc/ms4watch/ms4watch.toml`` when it exists), the defaults.
Secrets are read only from files or the environment (``broker.password_file``,
``MS4WATCH_BROKER__PASSWORD``; the InfluxDB token from ``MS4WATCH_INFLUX_TOKEN[_FILE]``) or
systemd credentials (``contract/credentials.py``: ``mqtt-password``, ``influx-token``),
never from a flag, and a broker URL carrying a password is refused::

    # /etc/ms4watch/ms4watch.toml
    registry = "/etc/ms4watch/sites.yaml"   # or, a coalition's server: registries = ["…/a.yaml", "…/b.yaml"]
    firmware_configs = "/etc/ms4watch/loggers"   # the town's loggers, one <device>.yaml each
    data_dir = "/var/lib/ms4watch"
    store = "influxdb1://influx.town.example:8086/ms4"
    notify = ["mailto://smtp.town.example:587?to=smo@town.example"]

    [broker]
    url = "mqtts://broker.town.example:8883"     # TLS; the broker is always verified
    username = "ms4watch-ingest"
    password_file = "/etc/ms4watch/mqtt-password"
    ca_file = "/etc/ms4watch/mqtt-ca.crt"         # default: the system's trusted CAs
    cert_file = "/etc/ms4watch/ms4watch-ingest.crt"   # a client certificate, if the broker asks
    key_file = "/etc/ms4watch/ms4watch-ingest.key"

    [http]
    listen = "127.0.0.1:8000"
    public_url = "https://ms4.town.example"

    [web]                      # the SMO's workbench served on http.listen
    secret_file = "/etc/ms4watch/web-secret"   # default DATA_DIR/web-secret, made on first start
    ack_link_lifetime = "7d"

Validation does no I/O beyond reading the config file; a bad value is one line naming the
setting (:func:`load_settings` raises :class:`SettingsError`).
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import (BaseModel, ConfigDict, Field, IPvAnyNetwork, SecretStr, ValidationError, field_validator,
                      model_validator)
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource

from .contract.credentials import MQTT_PASSWORD, credential
from .contract.errors import Ms4Error
from .contract.mqtt import BrokerURL, TlsFiles, tls_context
from .contract.rules_config import Duration

SYSTEM_CONFIG = Path("/etc/ms4watch/ms4watch.toml")
CONFIG_ENV = "MS4WATCH_CONFIG"


class SettingsError(Ms4Error):
    """A setting is missing or wrong; the message names it (and the file, if it came from one)."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BrokerSettings(_Section):
    url: str = Field(default="mqtt://127.0.0.1:1883", description="MQTT broker: mqtt://[user@]HOST:PORT or mqtts://")
    username: str | None = None
    password_file: Path | None = Field(default=None, description="file holding the MQTT password")
    password: SecretStr | None = Field(default=None, description="only from MS4WATCH_BROKER__PASSWORD")
    client_id: str | None = Field(default=None, description="persistent session id; default ms4watch-ingest-<town>")
    ca_file: Path | None = Field(default=None, description="CA certificate (PEM) the broker's certificate must chain "
                                                           "to (mqtts://); default: the system's trusted CAs")
    cert_file: Path | None = Field(default=None, description="client certificate (PEM) presented to the broker")
    key_file: Path | None = Field(default=None, description="the client certificate's private key (PEM)")

    @model_validator(mode="after")
    def _tls_files(self) -> "BrokerSettings":
        TlsFiles(None, self.cert_file, self.key_file, option="")   # both or neither
        if (self.ca_file or self.cert_file) and not BrokerURL.parse(self.url).tls:
            which = "ca_file" if self.ca_file else "cert_file"
            raise ValueError(f"{which} is set but url {self.url!r} is not TLS: use mqtts://")
        return self

    def tls(self):
        """The TLS context for an ``mqtts://`` URL (files read now; None for ``mqtt://``)."""
        if not BrokerURL.parse(self.url).tls:
            return None
        try:
            return tls_context(TlsFiles(self.ca_file, self.cert_file, self.key_file, option="broker."))
        except ValueError as e:
            raise SettingsError(str(e)) from None

    @field_validator("url")
    @classmethod
    def _url(cls, v: str) -> str:
        url = BrokerURL.parse(v)
        if url.password:
            raise ValueError("a broker URL must not carry a password: use broker.password_file "
                             "or MS4WATCH_BROKER__PASSWORD")
        return v

    def secret(self) -> str | None:
        """The MQTT password: from the environment, else the password file, else the systemd
        credential ``mqtt-password`` (read now)."""
        if self.password is not None:
            return self.password.get_secret_value()
        path, name = self.password_file, "broker.password_file"
        if path is None:    # a systemd credential (LoadCredential=mqtt-password:…), if the unit gives one
            path, name = credential(MQTT_PASSWORD), f"credential {MQTT_PASSWORD}"
        if path is None:
            return None
        try:
            return path.read_text(encoding="utf-8").strip()
        except OSError as e:
            raise SettingsError(f"{name}: cannot read {path}: {e.strerror}") from None


class HttpSettings(_Section):
    listen: str | None = Field(default="127.0.0.1:8000",
                               description="HOST:PORT (or PORT, on 127.0.0.1) of the web endpoint; 'off' for none")
    public_url: str | None = Field(default=None, description="base of links in emails as recipients reach it")
    trusted_proxies: list[IPvAnyNetwork] = Field(
        default_factory=list, description="addresses or networks of reverse proxies whose X-Forwarded-For / "
                                          "X-Forwarded-Proto are believed (the client's address in rate limits and "
                                          "the audit log); none by default: the peer's own address counts")

    @field_validator("listen", mode="before")
    @classmethod
    def _listen(cls, v: Any) -> str | None:
        if v is None or str(v).strip().lower() in ("off", "none", ""):
            return None
        text = str(v).strip()
        host, sep, port = text.rpartition(":")
        if not sep:
            host, port = "127.0.0.1", text
        if not port.isdigit() or not 0 <= int(port) < 65536:   # 0: any free port (the demo)
            raise ValueError(f"expected HOST:PORT, PORT or 'off', got {text!r}")
        return f"{host or '127.0.0.1'}:{int(port)}"

    @field_validator("public_url")
    @classmethod
    def _public(cls, v: str | None) -> str | None:
        if v is not None and not v.startswith(("http://", "https://")):
            raise ValueError(f"expected an http:// or https:// URL, got {v!r}")
        return v.rstrip("/") if v else v

    @property
    def host(self) -> str | None:
        return self.listen.rpartition(":")[0] if self.listen else None

    @property
    def port(self) -> int | None:
        return int(self.listen.rpartition(":")[2]) if self.listen else None

    def base_url(self) -> str | None:
        """Where links point: ``public_url``, else the listening address."""
        return self.public_url or (f"http://{self.listen}" if self.listen else None)


class WebSettings(_Section):
    """The SMO's workbench (``ms4watch.workbench``): sessions, acknowledge links, logins."""

    secret_file: Path | None = Field(default=None,
                                     description="file holding the key that signs session cookies and acknowledge "
                                                 "links; default DATA_DIR/web-secret, created (mode 0600) on first start")
    secret: SecretStr | None = Field(default=None, description="only from MS4WATCH_WEB__SECRET")
    session_max_age: Duration = Field(default=timedelta(hours=12), description="a login lasts this long")
    ack_link_lifetime: Duration = Field(default=timedelta(days=7),
                                        description="an emailed acknowledge link works this long after it was made")
    login_attempts: int = Field(default=5, ge=1, le=1000,
                                description="failed logins allowed per user name and address, per address, and per "
                                            "user name from an address that failed for it, in login_window; then "
                                            "each attempt waits login_delay after the last failure, doubling")
    login_window: Duration = Field(default=timedelta(minutes=15), description="see login_attempts")
    login_delay: Duration = Field(default=timedelta(seconds=30), description="see login_attempts")
    token_lifetime: Duration = Field(default=timedelta(days=90),
                                     description="an API token works this long (`ms4watch users token --expires`)")
    metrics_networks: list[IPvAnyNetwork] = Field(
        default_factory=list, description="networks whose anonymous requests may read /metrics and the details of "
                                          "/health/ready (e.g. the Prometheus host); none by default")
    metrics_token: SecretStr | None = Field(default=None, description="a bearer token for /metrics (Prometheus' "
                                            "bearer_token_file); only from MS4WATCH_WEB__METRICS_TOKEN")
    ready_backlog_max: Duration = Field(default=timedelta(minutes=15),
                                        description="/health/ready fails when a notification has waited this long "
                                                    "past its due time")
    photo_max_bytes: int = Field(default=16_000_000, ge=100_000, le=200_000_000,
                                 description="largest inspection photo taken [bytes]")
    upload_max_bytes: int = Field(default=100_000_000, ge=1_000_000, le=2_000_000_000,
                                  description="largest request body with photos [bytes]; other bodies 1 MB")
    map_tiles: str | None = Field(default=None, description="map tile URL with {z}, {x}, {y} (e.g. the town's GIS "
                                                            "server); none: the status map is an SVG of the coordinates")
    map_attribution: str = Field(default="", max_length=200, description="credit shown under tiled maps")

    @field_validator("map_tiles")
    @classmethod
    def _tiles(cls, v: str | None) -> str | None:
        if v is None or not v.strip():
            return None
        if not v.startswith("https://") and not v.startswith("http://"):
            raise ValueError(f"expected an http(s):// URL with {{z}}, {{x}} and {{y}}, got {v!r}")
        if any(f"{{{k}}}" not in v for k in "zxy") or "'" in v or '"' in v or " " in v:
            raise ValueError(f"expected a tile URL with {{z}}, {{x}} and {{y}} (and no quotes or spaces), got {v!r}")
        return v

    def tile_origin(self) -> str | None:
        """The tile server's origin (the Content-Security-Policy lets images come from it)."""
        if self.map_tiles is None:
            return None
        from urllib.parse import urlsplit
        u = urlsplit(self.map_tiles.replace("{", "").replace("}", ""))
        return f"{u.scheme}://{u.netloc}"

    @field_validator("secret")
    @classmethod
    def _secret(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None and len(v.get_secret_value()) < 32:
            raise ValueError("must be at least 32 characters")
        return v

    @field_validator("metrics_token")
    @classmethod
    def _metrics_token(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None and len(v.get_secret_value()) < 32:
            raise ValueError("must be at least 32 characters")
        return v

    @field_validator("session_max_age", "ack_link_lifetime", "login_window", "ready_backlog_max", "login_delay",
                     "token_lifetime")
    @classmethod
    def _positive(cls, v: timedelta) -> timedelta:
        if v <= timedelta(0):
            raise ValueError(f"must be positive, got {v}")
        return v


class DeliverySettings(_Section):
    retry_first: Duration = Field(default=timedelta(seconds=15), description="wait after a failed delivery, doubling")
    retry_max: Duration = Field(default=timedelta(minutes=5), description="longest wait between attempts")
    idle: Duration = Field(default=timedelta(seconds=5), description="the delivery worker looks at least this often")


class SmsSettings(_Section):
    inbound: Literal["off", "twilio", "hmac", "none"] = Field(
        default="off", description="the inbound-SMS webhook (/sms/inbound): off; twilio (X-Twilio-Signature checked "
                                   "with the auth token); hmac (X-MS4Watch-Signature, a shared secret); none (unsigned: "
                                   "only behind a private network)")
    secret_file: Path | None = Field(default=None, description="Twilio auth token or the HMAC key, one line")
    secret: SecretStr | None = Field(default=None, description="only from MS4WATCH_SMS__SECRET")
    replies_per_sender: int = Field(default=10, ge=1, le=1000, description="replies from one number per window")
    attempts_per_incident: int = Field(default=5, ge=1, le=1000, description="acknowledge attempts per incident "
                                                                              "per window")
    window: Duration = Field(default=timedelta(minutes=15), description="the rate limits' window")

    def verifier(self):
        """The webhook's signature check, or None when the webhook is off."""
        from .alerts.incidents.sms_auth import Scheme, WebhookVerifier
        if self.inbound == "off":
            return None
        if self.inbound == "none":
            return WebhookVerifier(Scheme.NONE)
        key = self.secret.get_secret_value() if self.secret else None
        if key is None and self.secret_file is not None:
            try:
                key = self.secret_file.read_text(encoding="utf-8").strip()
            except OSError as e:
                raise SettingsError(f"sms.secret_file: cannot read {self.secret_file}: {e.strerror}") from None
        if not key:
            raise SettingsError(f"sms.inbound = {self.inbound!r} needs sms.secret_file or MS4WATCH_SMS__SECRET")
        return WebhookVerifier(Scheme(self.inbound), key)

    def limiter(self):
        from .alerts.incidents.sms_auth import ReplyLimiter
        return ReplyLimiter(per_sender=self.replies_per_sender, per_incident=self.attempts_per_incident,
                            window_s=self.window.total_seconds())


class EngineSettings(_Section):
    tick: Duration = Field(default=timedelta(seconds=30), description="the alert clock advances this often")
    eval_interval: Duration = Field(default=timedelta(0),
                                    description="a subject is re-evaluated at most once per this much data time; "
                                                "0: after every stored batch")


class IngestSettings(_Section):
    batch_wait: Duration = Field(default=timedelta(milliseconds=50),
                                description="when busy, gather a batch this long (an idle writer stores at once)")


class Settings(BaseSettings):
    """Everything ``serve`` (and ``demo``, ``incidents``) needs; see the module docstring."""

    model_config = SettingsConfigDict(env_prefix="MS4WATCH_", env_nested_delimiter="__", extra="forbid",
                                      frozen=True)

    registry: Path | None = Field(default=None, description="the municipality's site registry (sites.yaml)")
    firmware_configs: Path | None = Field(
        default=None, description="folder of the town's logger configs (<device>.yaml): the devices it listed. Ingest "
                                  "then sets aside messages of other devices and readings for stations a device "
                                  "does not serve; broker-config makes their credentials")
    registries: list[Path] = Field(default_factory=list,
                                   description="a coalition's server: one registry per municipality (instead of "
                                               "registry); each town's data in DATA_DIR/<municipality>/")
    data_dir: Path = Field(default=Path("/var/lib/ms4watch"),
                           description="engine state, incidents, notification queue, spool")
    store: str | None = Field(default=None, description="store URL; default sqlite:///DATA_DIR/store.db")
    notify: list[str] = Field(default_factory=list, description="notification channel URLs")
    broker: BrokerSettings = Field(default_factory=BrokerSettings)
    http: HttpSettings = Field(default_factory=HttpSettings)
    web: WebSettings = Field(default_factory=WebSettings)
    delivery: DeliverySettings = Field(default_factory=DeliverySettings)
    engine: EngineSettings = Field(default_factory=EngineSettings)
    sms: SmsSettings = Field(default_factory=SmsSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)

    @model_validator(mode="after")
    def _coalition(self) -> "Settings":
        if self.registries and self.registry is not None:
            raise ValueError("registry and registries: give one town's registry, or a coalition's registries, "
                             "not both")
        if len(self.registries) != len(set(self.registries)):
            raise ValueError("registries: a registry is named twice")
        if self.registries and self.store is not None and "{municipality}" not in self.store:
            raise ValueError("store: a coalition's towns keep their readings apart (station ids may repeat from "
                             "town to town): put {municipality} in the store URL, e.g. influxdb1://host:8086/"
                             "ms4_{municipality}")
        return self

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource,
                                   dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource):
        return init_settings, env_settings, TomlConfigSettingsSource(settings_cls)

    # -- derived ------------------------------------------------------------------------
    @property
    def store_url(self) -> str:
        return self.store or f"sqlite:///{(self.data_dir / 'store.db').resolve()}"

    @property
    def incidents_db(self) -> Path:
        return self.data_dir / "incidents.db"

    @property
    def workbench_db(self) -> Path:
        """Users, their roles per municipality, API tokens, login attempts, the web audit log."""
        return self.data_dir / "workbench.db"

    @property
    def web_secret_file(self) -> Path:
        return self.web.secret_file or self.data_dir / "web-secret"

    def devices(self, registry=None):
        """The town's listed loggers (``firmware_configs``, checked against ``registry``, loaded
        from the settings when not given), or None when not set. A coalition keeps every
        town's loggers in the one folder: each town gets its own."""
        if self.firmware_configs is None:
            return None
        from .contract.devices import load_devices
        from .contract.registry import load_registry
        if not self.firmware_configs.is_dir():
            raise SettingsError(f"firmware_configs: {self.firmware_configs}: no such folder")
        reg = registry if registry is not None else load_registry(self.require_registry())
        paths = self.registry_paths()
        others = frozenset(load_registry(p).municipality for p in paths) - {reg.municipality} if self.coalition \
            else frozenset()
        return load_devices(reg, self.firmware_configs, skip=tuple(paths), others=others)

    def require_registry(self) -> Path:
        if self.registry is None:
            raise SettingsError("registry: not set (registry = … in the settings file that --config or "
                                "MS4WATCH_CONFIG names, or MS4WATCH_REGISTRY)")
        return self.registry

    # -- a coalition: several municipalities on one server ---------------------------------
    @property
    def coalition(self) -> bool:
        return bool(self.registries)

    def registry_paths(self) -> list[Path]:
        """The registries this server serves: the coalition's, else the one town's."""
        return list(self.registries) or [self.require_registry()]

    def town_data_dir(self, municipality: str) -> Path:
        """Engine state, incidents, notifications, spool and the default store of a town:
        DATA_DIR itself for one town, DATA_DIR/<municipality>/ in a coalition. Users, the
        audit log, recorded approvals, inspection reports and photos stay in DATA_DIR."""
        return self.data_dir / municipality if self.coalition else self.data_dir

    def town_store_url(self, municipality: str) -> str:
        if self.store is None:
            return f"sqlite:///{(self.town_data_dir(municipality) / 'store.db').resolve()}"
        return self.store.replace("{municipality}", municipality)

    def town_client_id(self, municipality: str) -> str | None:
        """Ingest's persistent MQTT session of a town (default ``ms4watch-ingest-<town>``)."""
        cid = self.broker.client_id
        return f"{cid}-{municipality}" if cid and self.coalition else cid


def config_file(explicit: Path | None = None) -> Path | None:
    """The config file in effect: the one given, else ``MS4WATCH_CONFIG``, else the system
    one if it exists."""
    if explicit is not None:
        return explicit
    env = os.environ.get(CONFIG_ENV)
    if env:
        return Path(env)
    return SYSTEM_CONFIG if SYSTEM_CONFIG.exists() else None


def load_settings(config: Path | None = None, **overrides: Any) -> Settings:
    """Settings from the command line (``overrides``; None values are "not given", nested
    ones as dicts: ``broker={"url": …}``), the environment, the config file and defaults."""
    path = config_file(config)
    if path is not None and not path.is_file():
        raise SettingsError(f"{path}: no such config file")
    flags = _prune(overrides)

    class _FromFile(Settings):
        model_config = SettingsConfigDict(toml_file=path)

    try:
        loaded = _FromFile(**flags)
    except ValidationError as e:
        err = e.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err["loc"]) or "settings"
        more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
        origin = f" ({path})" if path else ""
        raise SettingsError(f"{where}{origin}: {err['msg'].removeprefix('Value error, ')}{more}") from None
    except ValueError as e:   # the TOML file itself (tomllib.TOMLDecodeError is a ValueError)
        raise SettingsError(f"{path}: {e}") from None
    return loaded


def _prune(d: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            v = _prune(v)
            if not v:
                continue
        elif v is None or (isinstance(v, (list, tuple)) and not v):
            continue
        out[k] = v
    return out


__all__ = ["Settings", "SettingsError", "BrokerSettings", "HttpSettings", "WebSettings", "DeliverySettings",
           "EngineSettings", "SmsSettings",
           "IngestSettings", "load_settings", "config_file"]
