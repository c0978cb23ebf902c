"""The site registry: the server's view of one municipality, one YAML file.

Station ids (rain gauges, outfalls, turbidity stations) are what readings refer to.
Loading refuses bad input with file, line and field::

    sites.yaml:14: outfalls[1].rain_gauges[0]: unknown rain gauge 'RG-9' (known: RG-1, RG-2)
"""

from __future__ import annotations

import enum
import re
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Iterable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, field_validator, model_validator

from .ids import check_id
from .rules_config import Duration, RuleSettings, check_report_interval
from .timeutil import format_duration, parse_month_day
from .yamlfile import field_path, load_yaml_model, parse_yaml_model


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


Ident = Annotated[str, AfterValidator(lambda v: check_id("id", v))]
ReportInterval = Annotated[Duration | None, Field(default=None, description=(
    "the longest the station's logger stays silent when healthy (its heartbeat), e.g. 30min for a gauge sending "
    "one row per tip and a heartbeat every 30 min; stale after rules.stale_intervals of it (a silence that long "
    "also ends a run of dry-weather flow at an outfall or of turbidity contrast at a pair's downstream probe)"))]


def _report_interval(v: timedelta | None) -> timedelta | None:
    return None if v is None else check_report_interval("report_interval", v)


Latitude = Annotated[float | None, Field(default=None, ge=-90, le=90, allow_inf_nan=False,
                                         description="WGS 84 latitude [decimal degrees, north positive]")]
Longitude = Annotated[float | None, Field(default=None, ge=-180, le=180, allow_inf_nan=False,
                                          description="WGS 84 longitude [decimal degrees, east positive]")]


# An id of the town's storm-sewer map, as the town's GIS spells it (spaces, '/' and '#' are
# kept: ``<layer>#<fid>`` names a feature that had none), so not an ``Ident``.
MapId = Annotated[str, Field(min_length=1, max_length=100)]


class _Located(_Model):
    """Optional coordinates (the workbench's map): both or neither."""

    lat: Latitude = None
    lon: Longitude = None

    @model_validator(mode="after")
    def _both(self) -> "_Located":
        if (self.lat is None) != (self.lon is None):
            raise ValueError("give both lat and lon, or neither")
        return self

    @property
    def located(self) -> bool:
        return self.lat is not None and self.lon is not None


class RainGauge(_Located):
    id: Ident
    name: str | None = None
    tip_in: Decimal = Field(default=Decimal("0.01"), gt=0, le=Decimal("0.1"), description="depth per tip [in]")
    report_interval: ReportInterval = None

    _interval = field_validator("report_interval")(_report_interval)


class ExemptFlow(_Model):
    """A registered exempt flow (ch. 218 / ch. 148 Art. II list), e.g. a foundation drain."""
    kind: str
    note: str | None = None
    from_: AwareDatetime | None = Field(default=None, alias="from")
    to: AwareDatetime | None = None

    @model_validator(mode="after")
    def _order(self) -> "ExemptFlow":
        if self.from_ is not None and self.to is not None and self.to <= self.from_:
            raise ValueError("'to' must be after 'from'")
        return self


class PipeMaterial(str, enum.Enum):
    """What an outfall's pipe is made of (the MS4 outfall inventory's usual codes)."""

    RCP = "rcp"                       # reinforced concrete pipe
    CONCRETE = "concrete"             # plain concrete
    CMP = "cmp"                       # corrugated metal pipe
    HDPE = "hdpe"                     # high-density polyethylene (corrugated or smooth)
    PVC = "pvc"
    VITRIFIED_CLAY = "vitrified_clay"
    DUCTILE_IRON = "ductile_iron"
    CAST_IRON = "cast_iron"
    STEEL = "steel"
    BRICK = "brick"
    STONE = "stone"
    OTHER = "other"


class Outfall(_Located):
    id: Ident
    name: str
    rain_gauges: list[str] = Field(min_length=1)
    flow_floor_gpm: float = Field(default=0.5, ge=0, description="noise floor of the flow meter [gpm]")
    exempt_flows: list[ExemptFlow] = Field(default_factory=list)
    report_interval: ReportInterval = None
    receiving_water: str | None = Field(default=None, min_length=1, max_length=200,
                                        description="the stream, lake or wetland the outfall discharges to")
    pipe_diameter_in: float | None = Field(default=None, gt=0, le=240, allow_inf_nan=False,
                                           description="inside diameter (or span) of the outfall pipe [in]")
    pipe_material: PipeMaterial | None = None
    structure: MapId | None = Field(default=None, description=(
        "the structure of the town's storm-sewer map the station sits at (an outfall the map spells "
        "differently, or the manhole the meter is in); unset: the map's outfall of the same id, else the "
        "nearest within 50 ft"))

    _interval = field_validator("report_interval")(_report_interval)


class TurbidityPair(_Located):
    id: Ident
    upstream: Ident
    downstream: Ident
    name: str | None = None
    construction_site: str | None = None
    report_interval: ReportInterval = Field(default=None, description="of both probes' loggers")

    _interval = field_validator("report_interval")(_report_interval)

    @model_validator(mode="after")
    def _distinct(self) -> "TurbidityPair":
        if self.upstream == self.downstream:
            raise ValueError("upstream and downstream must be different stations")
        return self


class ConstructionSite(_Located):
    id: Ident
    name: str
    rain_gauges: list[str] = Field(min_length=1)
    active_from: date
    active_to: date | None = None
    disturbed_acres: float | None = Field(default=None, ge=0)
    drains_to: list[MapId] = Field(default_factory=list, description=(
        "the inlets or catch basins of the town's map the site's runoff enters; empty: the nearest one "
        "within 500 ft is taken"))

    @model_validator(mode="after")
    def _order(self) -> "ConstructionSite":
        if self.active_to is not None and self.active_to < self.active_from:
            raise ValueError("active_to is before active_from")
        return self

    def active_on(self, day: date) -> bool:
        return self.active_from <= day and (self.active_to is None or day <= self.active_to)


class ApprovedDischarge(_Model):
    outfall: str
    from_: AwareDatetime = Field(alias="from")
    to: AwareDatetime
    reason: str = Field(min_length=1)

    @model_validator(mode="after")
    def _order(self) -> "ApprovedDischarge":
        if self.to <= self.from_:
            raise ValueError("'to' must be after 'from'")
        return self


class OfficeClosure(_Model):
    """A day the town's offices are closed (a snow emergency, a flood): no business day for
    the laws' clocks, and named as an office closure on the deadline board and in letters."""

    day: date
    name: str = Field(min_length=1, description="what the board and letters call it: 'Town Hall closed (flood)'")


class Role(str, enum.Enum):
    SMO = "smo"
    DEPUTY = "deputy"
    INSPECTOR = "inspector"
    SITE_OPERATOR = "site_operator"
    TECHNICIAN = "technician"    # calibrates and services the loggers: told when a calibration falls due


_E164 = re.compile(r"\+[1-9][0-9]{6,14}")             # both matched with fullmatch (not $:
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")     # it matches before a final newline)


class Contact(_Model):
    name: str
    role: Role
    email: str | None = None
    sms: str | None = None
    stations: list[str] = Field(default_factory=list, description="empty: all")
    kinds: list[str] = Field(default_factory=list, description="empty: all")
    quiet_hours: str | None = Field(default=None, description="local time span, e.g. 22:00-07:00")

    @field_validator("email")
    @classmethod
    def _email(cls, v: str | None) -> str | None:
        if v is not None and not _EMAIL.fullmatch(v):
            raise ValueError(f"not an email address: {v!r}")
        return v

    @field_validator("sms")
    @classmethod
    def _sms(cls, v: str | None) -> str | None:
        if v is not None and not _E164.fullmatch(v):
            raise ValueError(f"not an E.164 phone number (e.g. +15555550100): {v!r}")
        return v

    @field_validator("quiet_hours")
    @classmethod
    def _quiet(cls, v: str | None) -> str | None:
        if v is not None and not re.match(r"^([01]\d|2[0-3]):[0-5]\d-([01]\d|2[0-3]):[0-5]\d$", v):
            raise ValueError(f"quiet_hours must look like 22:00-07:00, got {v!r}")
        return v


class Permittee(_Model):
    """Who files the MS4 annual report: printed on its first page; what is not given is a blank
    the town fills in by hand."""

    name: str | None = Field(default=None, min_length=1, max_length=200,
                             description="the MS4 operator's legal name, e.g. Town of Brook Hollow")
    spdes_id: str | None = Field(default=None, description="the SPDES permit identification number, e.g. NYR20A123")
    contact_name: str | None = Field(default=None, min_length=1, max_length=200)
    contact_title: str | None = Field(default=None, min_length=1, max_length=200)
    phone: str | None = Field(default=None, min_length=1, max_length=40)
    email: str | None = Field(default=None, min_length=3, max_length=200)
    address: str | None = Field(default=None, min_length=1, max_length=400)
    certifying_official: str | None = Field(default=None, min_length=1, max_length=200,
                                            description="who signs the certification (40 CFR 122.22)")
    certifying_title: str | None = Field(default=None, min_length=1, max_length=200)

    @field_validator("spdes_id")
    @classmethod
    def _spdes(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"NY[A-Z0-9]{7}", v):
            raise ValueError(f"{v!r} is not a SPDES permit ID: NY and seven letters or digits, e.g. NYR20A123")
        return v


class AnnualReportSettings(_Model):
    """The annual report's period and counting choices."""

    permit: str = Field(default="GP-0-24-001", description="the MS4 general permit the report answers to")
    year_starts: str = Field(default="01-03", description="the reporting year's first day, MM-DD (GP-0-24-001: "
                                                          "3 January; GP-0-15-003 was 03-10)")
    continuous_monitoring_screens: bool = Field(
        default=False, description="an outfall whose flow was monitored continuously in the year counts as "
                                   "screened (MCM 3), beside the field screenings")

    @field_validator("year_starts")
    @classmethod
    def _starts(cls, v: str) -> str:
        m, d = parse_month_day(v)
        return f"{m:02d}-{d:02d}"

    @property
    def starts(self) -> tuple[int, int]:
        m, d = self.year_starts.split("-")
        return int(m), int(d)


LOCAL_LAWS = ("ramapo-218", "schenectady-148-I", "schenectady-148-II")
"""The local laws a registry may name in ``local_laws``: the keys of the laws as data,
``compliance.laws.LAWS`` (which the contract does not import; a test keeps the two equal)."""


class Registry(_Model):
    municipality: str
    timezone: str = "America/New_York"
    # Days the town's offices are closed besides New York's public holidays: not business days.
    office_closures: list[OfficeClosure] = Field(default_factory=list)
    rain_gauges: list[RainGauge] = Field(default_factory=list)
    outfalls: list[Outfall] = Field(default_factory=list)
    turbidity_pairs: list[TurbidityPair] = Field(default_factory=list)
    construction_sites: list[ConstructionSite] = Field(default_factory=list)
    approved_discharges: list[ApprovedDischarge] = Field(default_factory=list)
    contacts: list[Contact] = Field(default_factory=list)
    rules: RuleSettings = Field(default_factory=RuleSettings)
    # The local law(s) the municipality has adopted and issues notices, release reports and
    # SWPPP reviews under (keys of ``compliance.laws.LAWS``: ramapo-218, schenectady-148-II,
    # schenectady-148-I). None: not stated; every law is offered, the town's own first.
    local_laws: list[str] | None = None
    permittee: Permittee = Field(default_factory=Permittee)
    annual_report: AnnualReportSettings = Field(default_factory=AnnualReportSettings)

    @field_validator("local_laws")
    @classmethod
    def _local_laws(cls, v: list[str] | None) -> list[str] | None:
        if v is None:
            return None
        for k in v:
            if k not in LOCAL_LAWS:
                raise ValueError(f"unknown local law {k!r} (known: {', '.join(LOCAL_LAWS)})")
        if not v:
            raise ValueError("an empty list: name the local law(s) adopted, or leave local_laws out")
        return list(dict.fromkeys(v))

    @field_validator("municipality")
    @classmethod
    def _muni(cls, v: str) -> str:
        return check_id("municipality", v)

    @field_validator("timezone")
    @classmethod
    def _tz(cls, v: str) -> str:
        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError, OSError):   # "America" is a folder of tzdata: IsADirectoryError
            raise ValueError(f"unknown time zone {v!r} (an IANA name such as America/New_York)") from None
        return v

    @field_validator("rules", mode="before")
    @classmethod
    def _rules_none(cls, v: Any) -> Any:
        return {} if v is None else v

    # -- cross references ---------------------------------------------------------------
    def problems(self) -> list[tuple[tuple[Any, ...], str]]:
        """References that do not resolve and ids used twice, as (field path, message)."""
        out: list[tuple[tuple[Any, ...], str]] = []
        gauges = [g.id for g in self.rain_gauges]
        outfalls = [o.id for o in self.outfalls]
        sites = [s.id for s in self.construction_sites]
        seen: dict[str, tuple[Any, ...]] = {}

        def station(sid: str, loc: tuple[Any, ...]) -> None:
            if sid in seen:
                out.append((loc, f"station id {sid!r} is used twice (first at {field_path(seen[sid])})"))
            else:
                seen[sid] = loc

        for i, g in enumerate(self.rain_gauges):
            station(g.id, ("rain_gauges", i, "id"))
        for i, o in enumerate(self.outfalls):
            station(o.id, ("outfalls", i, "id"))
            for j, gid in enumerate(o.rain_gauges):
                if gid not in gauges:
                    out.append((("outfalls", i, "rain_gauges", j), _unknown("rain gauge", gid, gauges)))
        probes: dict[str, tuple[int, Any]] = {}   # turbidity probe -> (first pair, its report_interval)
        for i, p in enumerate(self.turbidity_pairs):
            for role in ("upstream", "downstream"):
                sid = getattr(p, role)
                if sid in probes:
                    # one probe in several pairs: a background probe (the "natural conditions")
                    # above several discharge points, or a chain of probes along a creek
                    first, iv = probes[sid]
                    if iv != p.report_interval:
                        out.append((("turbidity_pairs", i, "report_interval"),
                                    f"probe {sid!r} of two pairs with different report_interval "
                                    f"({format_duration(iv) if iv else 'none'} at turbidity_pairs[{first}]): "
                                    "one logger, one interval"))
                    continue
                probes[sid] = (i, p.report_interval)
                station(sid, ("turbidity_pairs", i, role))
            if p.construction_site is not None and p.construction_site not in sites:
                out.append((("turbidity_pairs", i, "construction_site"),
                            _unknown("construction site", p.construction_site, sites)))
        pair_ids: set[str] = set()
        for i, p in enumerate(self.turbidity_pairs):
            if p.id in pair_ids:
                out.append((("turbidity_pairs", i, "id"), f"pair id {p.id!r} is used twice"))
            pair_ids.add(p.id)
        site_ids: set[str] = set()
        for i, s in enumerate(self.construction_sites):
            if s.id in site_ids:
                out.append((("construction_sites", i, "id"), f"site id {s.id!r} is used twice"))
            site_ids.add(s.id)
            for j, gid in enumerate(s.rain_gauges):
                if gid not in gauges:
                    out.append((("construction_sites", i, "rain_gauges", j), _unknown("rain gauge", gid, gauges)))
        for i, d in enumerate(self.approved_discharges):
            if d.outfall not in outfalls:
                out.append((("approved_discharges", i, "outfall"), _unknown("outfall", d.outfall, outfalls)))
        closed: set[date] = set()
        for i, oc in enumerate(self.office_closures):
            if oc.day in closed:
                out.append((("office_closures", i, "day"), f"office closure on {oc.day} is given twice"))
            closed.add(oc.day)
        for i, c in enumerate(self.contacts):
            if not c.email and not c.sms:
                out.append((("contacts", i), "a contact needs an email or an sms number"))
        return out

    # -- look-ups -------------------------------------------------------------------------
    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    def gauge(self, gid: str) -> RainGauge:
        return next(g for g in self.rain_gauges if g.id == gid)

    def outfall(self, oid: str) -> Outfall:
        return next(o for o in self.outfalls if o.id == oid)

    def station_ids(self) -> set[str]:
        ids = {g.id for g in self.rain_gauges} | {o.id for o in self.outfalls}
        for p in self.turbidity_pairs:
            ids |= {p.upstream, p.downstream}
        return ids

    def report_interval(self, station: str) -> timedelta | None:
        """The station's expected report interval from the registry (None: not stated)."""
        for g in self.rain_gauges:
            if g.id == station:
                return g.report_interval
        for o in self.outfalls:
            if o.id == station:
                return o.report_interval
        for p in self.turbidity_pairs:
            if station in (p.upstream, p.downstream):
                return p.report_interval
        return None

    def sites_for_gauge(self, gid: str, on: date) -> list[ConstructionSite]:
        return [s for s in self.construction_sites if gid in s.rain_gauges and s.active_on(on)]

    def discharges_for(self, outfall: str, start: datetime, end: datetime) -> list[ApprovedDischarge]:
        """Approved discharges whose window covers [start, end]."""
        return [d for d in self.approved_discharges
                if d.outfall == outfall and d.from_ <= start and end <= d.to]

    # -- records made outside the file ------------------------------------------------------
    def with_suppressions(self, discharges: Iterable[ApprovedDischarge] = (),
                          exempt_flows: Iterable[tuple[str, ExemptFlow]] = ()) -> "Registry":
        """This registry with more approved discharges and exempt flows ((outfall, flow)
        pairs): those the SMO records on the workbench, which the alert rules must see as
        they see the file's. ValueError names an outfall the registry does not have."""
        discharges, exempt_flows = list(discharges), list(exempt_flows)
        if not discharges and not exempt_flows:
            return self
        known = {o.id for o in self.outfalls}
        for oid in [d.outfall for d in discharges] + [o for o, _ in exempt_flows]:
            if oid not in known:
                raise ValueError(_unknown("outfall", oid, sorted(known)))
        outfalls = [o.model_copy(update={"exempt_flows": [*o.exempt_flows, *(x for oid, x in exempt_flows
                                                                             if oid == o.id)]})
                    for o in self.outfalls]
        return self.model_copy(update={"approved_discharges": [*self.approved_discharges, *discharges],
                                       "outfalls": outfalls})

    def same_stations(self, other: "Registry") -> bool:
        """Whether ``other`` differs from this one at most in approved discharges and exempt flows."""
        def bare(r: "Registry") -> dict[str, Any]:
            d = r.model_dump(exclude={"approved_discharges"})
            for o in d["outfalls"]:
                o.pop("exempt_flows")
            return d
        return bare(self) == bare(other)


def _unknown(what: str, value: str, known: list[str]) -> str:
    return f"unknown {what} {value!r} (known: {', '.join(known) or 'none'})"


def load_registry(path: str | Path) -> Registry:
    """Load and validate a registry file; :class:`ConfigError` names file, line and field."""
    return load_yaml_model(path, Registry)


def parse_registry(text: str, source: str = "<registry>") -> Registry:
    return parse_yaml_model(text, Registry, source)


__all__ = ["Registry", "RainGauge", "Outfall", "TurbidityPair", "ConstructionSite", "ApprovedDischarge",
           "Contact", "Role", "ExemptFlow", "PipeMaterial", "RuleSettings", "load_registry", "parse_registry"]
