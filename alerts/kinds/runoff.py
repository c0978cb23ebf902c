"""Where runoff goes, in the alerts' words: a construction site's inlets and the outfalls
they reach ("drains to CB-7, reaching outfall OF-12 (Bronx River)"), for the turbidity
contrast and the inspection items; the construction sites upstream of an outfall, for a
dry-weather flow there (a lead for the IDDE search). Read from the town's map
(``network.sites.SiteReaches``, computed per import at the composition root); one value,
:class:`Runoff`, that every channel words from: its ``text`` (email, pages, the evidence
packet), its ``sms`` (a few characters), :meth:`Runoff.as_json` (the webhook's fields)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...contract.registry import Registry

if TYPE_CHECKING:   # a value of them exists once a map was imported: a town without one imports none
    from ...network.sites import OutfallReached, SiteReach, SiteReaches

SITE_LABEL = "Runoff"
OUTFALL_LABEL = "Construction sites upstream"


@dataclass(frozen=True)
class Runoff:
    label: str                            # the row's label: "Runoff", "Construction sites upstream"
    text: str                             # in a sentence
    sms: str                              # "to OF-12", "sites CS-1,CS-3"; "" when there is no outfall to name
    site: SiteReach | None = None         # a site's own (turbidity contrast, inspections)
    sites: tuple[SiteReach, ...] = ()     # the sites reaching an outfall (dry-weather flow)
    outfall: str | None = None            # that outfall, the registry's id

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"label": self.label, "text": self.text, "sms": self.sms}
        if self.site is not None:
            out.update(_site_json(self.site))
        if self.outfall is not None:
            out.update(outfall=self.outfall, sites=[_site_json(s) for s in self.sites])
        return out


def _site_json(s: SiteReach) -> dict[str, Any]:
    return {"site": s.site_id, "inlets": list(s.inlets), "found": s.found.value, "not_on_map": list(s.not_on_map),
            "distance_ft": None if s.distance_ft is None else round(s.distance_ft, 1),
            "outfalls": [{"id": o.id, "receiving_water": o.receiving_water, "monitored": list(o.monitored)}
                         for o in s.outfalls]}


def _and(items: list[str] | tuple[str, ...]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _outfall(o: OutfallReached) -> str:
    notes = [o.receiving_water] if o.receiving_water else []
    stations = [m for m in o.monitored if m != o.id]      # a station of the map's own id needs no note
    if stations:
        notes.append(f"station{'s' if len(stations) > 1 else ''} {', '.join(stations)}")
    return f"{o.id} ({'; '.join(notes)})" if notes else o.id


def site_words(reach: SiteReach, *, located: bool) -> str:
    """The site's runoff in a sentence (``located``: the registry gives the site a position)."""
    from ...network.monitored import INLET_NEAR_FT
    from ...network.sites import Found
    if reach.found is Found.NONE and not reach.inlets:
        if located:
            return (f"not known: no drains_to in the registry and no catch basin or inlet within "
                    f"{INLET_NEAR_FT:g} ft on the town's map")
        return "not known: the registry gives the site no drains_to and no position"
    if not reach.inlets:
        return f"drains to {_and(reach.not_on_map)} (not on the town's map): the outfall it reaches is not known"
    if reach.found is Found.NEAREST:
        away = f"{reach.distance_ft:.0f} ft away; " if reach.distance_ft is not None else ""
        head = f"nearest inlet {_and(reach.inlets)} ({away}no drains_to in the registry)"
    else:
        missing = f" ({_and(reach.not_on_map)} not on the town's map)" if reach.not_on_map else ""
        head = f"drains to {_and(reach.inlets + reach.not_on_map)}{missing}"
    if not reach.outfalls:
        return f"{head}, reaching no outfall on the town's map"
    many = "s" if len(reach.outfalls) > 1 else ""
    return f"{head}, reaching outfall{many} {_and([_outfall(o) for o in reach.outfalls])}"


def of_site(reach: SiteReach, *, located: bool) -> Runoff:
    sms = "to " + ",".join(o.id for o in reach.outfalls) if reach.outfalls else ""
    return Runoff(SITE_LABEL, site_words(reach, located=located), sms, site=reach)


def site(reg: Registry, site_id: str | None, reaches: SiteReaches) -> Runoff | None:
    """A registry site's runoff, or None (no such site, or the map's value lacks it)."""
    if site_id is None:
        return None
    reach = reaches.of(site_id)
    entry = next((s for s in reg.construction_sites if s.id == site_id), None)
    if reach is None or entry is None:
        return None
    return of_site(reach, located=entry.located)


def outfall(reg: Registry, outfall_id: str, reaches: SiteReaches) -> Runoff | None:
    """The construction sites whose runoff reaches the registry's outfall; None when none does."""
    sites = reaches.reaching(outfall_id)
    if not sites:
        return None
    entries = {s.id: s for s in reg.construction_sites}

    def named(site_id: str) -> str:
        e = entries.get(site_id)
        if e is None:
            return site_id
        works = (f"works {e.active_from} to {e.active_to}" if e.active_to is not None
                 else f"works from {e.active_from}")
        return f"{site_id} ({e.name}, {works})"

    # a finished site stays a lead (a new building's wrong connection is a classic illicit discharge): its dates say so
    text = "; ".join(f"{named(s.site_id)}, through {_and(s.inlets)}" for s in sites)
    return Runoff(OUTFALL_LABEL, text, "sites " + ",".join(s.site_id for s in sites), sites=sites,
                  outfall=outfall_id)


__all__ = ["OUTFALL_LABEL", "Runoff", "SITE_LABEL", "of_site", "outfall", "site", "site_words"]
