"""What an alert kind is to the people it reaches: one :class:`KindSpec` per kind.

A spec holds the kind's routing and escalation policy (priority, whether it escalates,
whether it sends a recovery, which roles hear of it by default) and how it is described
from the town's own parameters — the registry's ``rules:`` (``contract/rules_config.py``)
and the subject's entry (an outfall's flow floor, a station's report interval). Every
message, page and packet that names a kind asks its spec; none keeps a number of its own.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from ...contract.registry import Registry, Role
from ..events import AlertKind

if TYPE_CHECKING:
    from ...network.sites import SiteReaches
    from .runoff import Runoff


class Priority(str, enum.Enum):
    """How urgent a notice is; only ROUTINE notices wait for a contact's quiet hours."""

    URGENT = "urgent"      # dry-weather flow: a possible illicit discharge, flowing now
    DEADLINE = "deadline"  # a regulatory deadline (post-storm inspection)
    ROUTINE = "routine"    # turbidity contrast, qualifying storm, recovery messages
    NOTICE = "notice"      # data gaps, not evaluable, stale station...: digest only


Describe = Callable[[Registry, str], str]            # (registry, subject id) -> words
ThresholdOf = Callable[[Registry, str], "dict[str, Any] | None"]
RunoffOf = Callable[[Registry, str, "SiteReaches"], "Runoff | None"]   # (registry, subject, the town's map) -> where runoff goes


def _no_threshold(registry: Registry, subject: str) -> dict[str, Any] | None:
    return None


@dataclass(frozen=True)
class ChartSeries:
    """One column of an incident's chart and CSV: ``column`` names its unit (``flow_gpm``,
    ``rain_in``, ``turbidity_up_ntu``); the readings of ``quantity`` at ``station``."""

    column: str
    station: str
    quantity: str


@dataclass(frozen=True)
class Chart:
    """What an incident's chart draws (``ms4watch/evidence.py`` reads it from the store):
    its series, and a ``threshold_column`` computed from them (columns -> pandas Series)."""

    series: tuple[ChartSeries, ...] = ()
    threshold_column: str | None = None
    threshold: Callable[[dict[str, Any]], Any] | None = None


ChartOf = Callable[[Registry, "dict[str, Any]"], Chart]   # (registry, incident snapshot) -> chart


def gauge_rain(registry: Registry, incident: dict[str, Any]) -> Chart:
    """The rain at the incident's gauge (storms, inspections), or nothing to draw."""
    gauge = (incident.get("event") or {}).get("gauge") or incident.get("subject")
    if gauge in {g.id for g in registry.rain_gauges}:
        return Chart((ChartSeries("rain_in", str(gauge), "rain"),))
    return Chart()


@dataclass(frozen=True)
class Words:
    """A kind described for one town and subject: ``what`` (a few words for SMS, subjects and
    titles), ``rule`` (the rule in a sentence, with units), ``threshold`` (the chart's dashed
    line: ``{label, value, unit}`` or the turbidity contrast's ``{label, kind, delta, fraction, unit}``),
    ``runoff`` (where the subject's runoff goes on the town's map: alerts/kinds/runoff.py; None
    without a map or for a kind that has no such words)."""

    what: str
    rule: str
    threshold: dict[str, Any] | None
    runoff: "Runoff | None" = None


@dataclass(frozen=True)
class KindSpec:
    kind: AlertKind | str          # a str only for a kind this version does not know
    name: str                      # the kind without numbers: lists, the audit log, the API's ``what``
    priority: Priority
    escalates: bool = False        # unacknowledged after N min -> the deputies too
    recovery: bool = False         # a recovery message when the episode closes by itself
    audience: frozenset[Role] = field(default_factory=frozenset)   # besides the SMO and deputies
    what: Describe | None = None   # None: ``name``
    rule: Describe | None = None   # None: ``name``
    threshold: ThresholdOf = _no_threshold
    chart: ChartOf = gauge_rain
    runoff: RunoffOf | None = None  # None: the kind says nothing of the town's map

    def describe(self, registry: Registry, subject: str, reaches: "SiteReaches | None" = None) -> Words:
        """The kind in the words of this town's parameters, for ``subject``; ``reaches``: the
        town's construction sites on its map (None: no map imported)."""
        what = self.what(registry, subject) if self.what else self.name
        rule = self.rule(registry, subject) if self.rule else self.name
        runoff = self.runoff(registry, subject, reaches) if self.runoff is not None and reaches is not None else None
        return Words(what, rule, self.threshold(registry, subject), runoff)


def notice(kind: AlertKind, rule: Describe | None = None, name: str | None = None) -> KindSpec:
    """A kind that only reaches people in the digest (no escalation, no recovery)."""
    return KindSpec(kind, name or kind.value.replace("_", " "), Priority.NOTICE, rule=rule)
