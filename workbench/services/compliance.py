"""Compliance records on the workbench: illicit-discharge cases and their thread (visits
with photos and files), samples (the loggers' bottle records, and field samples) with
their chain of custody and lab results, responsible parties, notices of violation and
stop-work orders with what happened to them, release reports, SWPPP reviews; the deadline
board, evidence packets and the annual report.

Every write: the role first (``actor.require``; a refusal is audited with the reason), the
record in ``compliance.db`` (append-only), then the audit row, then the town's alert
pipeline is told (``on_change``) so a clock the record starts becomes a deadline incident
at once rather than at the next tick.
"""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence, TypeVar

from ...compliance import deadlines as dl
from ...compliance.clocks import BusinessCalendar
from ...compliance.errors import ComplianceError, ImportRefused, NoSuchRecord
from ...compliance.inputs import (CaseIn, CustodyIn, EntryIn, NoticeEventIn, NoticeIn, PartyIn, RecipientIn,
                                  ReleaseEventIn, ReleaseIn, SampleIn, SwpppEventIn, SwpppIn)
from ...compliance.labs import DEFAULT_THRESHOLDS, Threshold, load_thresholds, parse_file
from ...compliance.laws import LAWS, PROHIBITION, RULE_TEXT, Law, law as law_of
from ...compliance.letters import cited, frozen_sections, notice_letter, notice_pdf, notice_sections
from ...compliance.store import (Case, ComplianceStore, FrozenLetter, Notice, Party, Recipient, Release, Sample,
                                 Swppp)
from ...contract.registry import Registry
from ..audit import AuditLog
from ..errors import Conflict, NotFound, WorkbenchError
from ..records import PhotoStore
from ..records.photos import PhotoRefused, media_type
from ..roles import Actor, Permission

if TYPE_CHECKING:
    from ...alerts.incidents.service import IncidentService
    from ...ingest.stores.base import ReadingsSource

log = logging.getLogger(__name__)
T = TypeVar("T")
FUTURE_SLACK = timedelta(minutes=10)
MAX_FILES = 12
FILE_MAX = 25_000_000
SYSTEM = "ms4watch"
DWF = "dry_weather_flow"


class Refused(WorkbenchError):
    """Well-formed, but not possible as given (the detail names the field and why): 409, as the
    API's schema says (a 400 is a body the schema itself refuses)."""

    status = 409


def laws_for(municipality: str, adopted: list[str] | None = None) -> list[str]:
    """The laws a town issues under: those its registry says it adopted (``local_laws``), else
    every law, its own first (Ramapo's chapter 218; Schenectady's chapter 148, also the model
    for a town without its own entry)."""
    if adopted:
        return list(adopted)
    if municipality.lower().startswith("ramapo"):
        return ["ramapo-218", "schenectady-148-II", "schenectady-148-I"]
    return ["schenectady-148-II", "schenectady-148-I", "ramapo-218"]


class FileStore:
    """Case files that are not photos (a PDF, a lab's report, a sketch): on disk by SHA-256 under
    ``DATA_DIR/files``, at most ``FILE_MAX`` bytes, served only as downloads."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def put(self, data: bytes, name: str) -> tuple[str, str, int]:
        if not data:
            raise Refused(f"file {name!r} is empty")
        if len(data) > FILE_MAX:
            raise Refused(f"file {name!r} is larger than {FILE_MAX // 1_000_000} MB")
        sha = hashlib.sha256(data).hexdigest()
        path = self.root / sha[:2] / sha
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{sha}.{os.getpid()}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, path)
        kind = "application/pdf" if data[:5] == b"%PDF-" else "application/octet-stream"
        return sha, kind, len(data)

    def read(self, sha: str) -> bytes:
        try:
            return (self.root / sha[:2] / sha).read_bytes()
        except (FileNotFoundError, OSError):
            raise NotFound("the file is missing from DATA_DIR/files") from None


@dataclass(frozen=True)
class Board:
    """The deadline board: every clock, the running ones first by due time."""

    now: datetime
    deadlines: list[dl.Deadline]

    @property
    def running(self) -> list[dl.Deadline]:
        return [d for d in self.deadlines if d.running]

    @property
    def done(self) -> list[dl.Deadline]:
        return sorted([d for d in self.deadlines if not d.running], key=dl.sort_key, reverse=True)


class ComplianceDesk:
    def __init__(self, registry: Registry, store: ComplianceStore, audit: AuditLog, photos: PhotoStore,
                 files: FileStore, clock: Callable[[], datetime], *, incidents: "IncidentService | None" = None,
                 events: Any = None, readings: "ReadingsSource | None" = None, calibrations: Any = None,
                 reports: Any = None, thresholds: tuple[Threshold, ...] = DEFAULT_THRESHOLDS,
                 on_change: Callable[[], None] | None = None, corrections: Any = None):
        self.registry = registry
        self.store = store
        self.audit = audit
        self.photos = photos
        self.files = files
        self.clock = clock
        self.incidents = incidents
        self.events = events               # the store's DeviceEventSource: loggers' bottle records
        self.readings = readings
        self.calibrations = calibrations
        self.reports = reports             # inspection reports (workbench.db)
        self.corrections = corrections     # drift corrections (corrections.db): packets of corrected values
        self.thresholds = thresholds
        self.on_change = on_change
        self.trace_of: Callable[[Actor, int], Any] | None = None   # a case's source trace (services.tracing)
        self.map_outfalls: Callable[[], Any] | None = None          # the imported map's outfalls (services.tracing)
        self.reaches: Callable[[], Any] | None = None               # the town's sites on its map (network.current)
        self.cal = BusinessCalendar(registry.tz, registry.office_closures)

    @classmethod
    def thresholds_for(cls, data_dir: Path) -> tuple[Threshold, ...]:
        p = data_dir / "screening-thresholds.yaml"
        return load_thresholds(p) if p.exists() else DEFAULT_THRESHOLDS

    @property
    def municipality(self) -> str:
        return self.registry.municipality

    @property
    def tz(self):
        return self.registry.tz

    @property
    def laws(self) -> list[str]:
        return laws_for(self.municipality, self.registry.local_laws)

    def _adopted(self, key: str, what: str = "law") -> None:
        if key not in self.laws:
            how = ("the registry's local_laws: " + ", ".join(self.laws)) if self.registry.local_laws else \
                "its registry's local_laws"
            raise Refused(f"{what}: {key} is not a local law {self.municipality} has adopted ({how})")

    # -- the write pattern --------------------------------------------------------------------
    def check(self, actor: Actor, permission: Permission, action: str, target: str) -> None:
        """The role for a write, refused and audited before anything is read or parsed."""
        try:
            actor.require(permission)
        except WorkbenchError as e:
            self.audit.record(actor, action, target=target, outcome=f"refused: {e}")
            raise

    def _write(self, actor: Actor, permission: Permission, action: str, target: str,
               work: Callable[[], T], detail: Callable[[T], str]) -> T:
        self.check(actor, permission, action, target)
        try:
            out = work()
        except NoSuchRecord as e:
            self.audit.record(actor, action, target=target, outcome=f"refused: {e}")
            raise NotFound(str(e)) from None
        except ComplianceError as e:
            self.audit.record(actor, action, target=target, outcome=f"refused: {e}")
            raise Refused(str(e)) from None
        except WorkbenchError as e:
            self.audit.record(actor, action, target=target, outcome=f"refused: {e}")
            raise
        self.audit.record(actor, action, target=target, detail=detail(out))
        self._changed()
        return out

    def _changed(self) -> None:
        if self.on_change is not None:
            try:
                self.on_change()
            except Exception:  # noqa: BLE001 — the record is kept; the next tick raises its clocks
                log.exception("the alert pipeline was not told of a compliance record")

    def _not_future(self, at: datetime, what: str) -> None:
        if at > self.clock() + FUTURE_SLACK:
            raise Refused(f"{what}: {at.isoformat()} is in the future")

    def _outfall(self, oid: str | None) -> None:
        if oid and oid not in {o.id for o in self.registry.outfalls}:
            raise Refused(f"outfall: no outfall {oid!r} in the inventory of {self.municipality}")

    def _site(self, sid: str | None) -> None:
        if sid and sid not in {s.id for s in self.registry.construction_sites}:
            raise Refused(f"site: no construction site {sid!r} in {self.municipality}")

    def check_read(self, actor: Actor) -> None:
        actor.require(Permission.READ)

    def _get(self, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except ComplianceError as e:
            raise NotFound(str(e)) from None

    # -- cases --------------------------------------------------------------------------------
    def cases(self, actor: Actor) -> list[Case]:
        actor.require(Permission.READ)
        return self.store.cases()

    def case(self, actor: Actor, cid: int) -> Case:
        actor.require(Permission.READ)
        return self._get(lambda: self.store.case(cid))

    def open_case(self, actor: Actor, body: CaseIn) -> Case:
        def work() -> Case:
            self._outfall(body.outfall)
            self._not_future(body.observed_at, "observed_at")
            outfall = body.outfall
            if body.origin == "incident":
                if body.incident_id is None or self.incidents is None:
                    raise Refused("incident_id: a case opened from an incident names it")
                try:
                    inc = self.incidents.get(body.incident_id)
                except Exception:  # noqa: BLE001 — IncidentError
                    raise NotFound(f"no incident {body.incident_id}") from None
                outfall = outfall or (inc.subject if inc.subject in {o.id for o in self.registry.outfalls} else None)
            elif body.origin == "complaint" and not body.reporter:
                raise Refused("reporter: who reported it (a complaint's intake: who, where, what, when)")
            return self.store.open_case(origin=body.origin, incident_id=body.incident_id, outfall=outfall,
                                        location=body.location, description=body.description, reporter=body.reporter,
                                        reporter_contact=body.reporter_contact, observed_at=body.observed_at,
                                        by=actor.username)
        return self._write(actor, Permission.RECORD_CASE, "case.open", "cases", work,
                           lambda c: f"{c.number} ({c.origin}{f', incident {c.incident_id}' if c.incident_id else ''})"
                                     f" at {c.outfall or c.location}")

    def add_entry(self, actor: Actor, cid: int, body: EntryIn, photos: Sequence[tuple[str, bytes]] = (),
                  files: Sequence[tuple[str, bytes]] = ()) -> Case:
        target = f"case:{cid}"

        def work() -> Case:
            case = self._get(lambda: self.store.case(cid))
            if case.closure is not None:
                raise Conflict(f"case {case.number} is closed ({case.closure.at.date()})")
            self._not_future(body.at, "at")
            if body.kind == "closure" and (not body.outcome or not (body.verification or "").strip()):
                raise Refused("a closure needs its outcome and how it was verified (e.g. a follow-up dry-weather "
                              "screening with no flow)")
            if body.kind != "closure" and body.outcome:
                raise Refused("outcome: only a closure has one")
            if len(photos) + len(files) > MAX_FILES:
                raise Refused(f"at most {MAX_FILES} photos and files per visit")
            checked = [self.photos.check(data, name) for name, data in photos]   # all refused before any is kept
            kept = [self.photos.put(data, name) for name, data in photos]
            assert [p.sha256 for p in kept] == [p.sha256 for p in checked]
            atts = [(p.sha256, p.media_type, p.size, p.name, "photo") for p in kept]
            for name, data in files:
                if media_type(data):   # an image given as a file is a photo
                    p = self.photos.put(data, name)
                    atts.append((p.sha256, p.media_type, p.size, p.name, "photo"))
                else:
                    sha, kind, size = self.files.put(data, name)
                    atts.append((sha, kind, size, os.path.basename(name)[:120], "file"))
            self.store.add_entry(cid, kind=body.kind, at=body.at, by=body.by, notes=body.notes,
                                 location=body.location, dry_weather=body.dry_weather,
                                 flow_observed=body.flow_observed, finding=body.finding, outcome=body.outcome,
                                 verification=body.verification, recorded_by=actor.username, attachments=atts)
            return self.store.case(cid)
        try:
            return self._write(actor, Permission.RECORD_CASE, f"case.{body.kind}", target, work,
                               lambda c: f"{c.number}: {body.kind} at {body.at.isoformat()} by {body.by}; "
                                         f"{len(photos)} photo(s), {len(files)} file(s)")
        except PhotoRefused:
            raise

    def attachment(self, actor: Actor, cid: int, sha: str) -> tuple[Any, bytes]:
        case = self.case(actor, cid)
        att = next((a for e in case.entries for a in e.attachments if a.sha256 == sha), None)
        if att is None:
            raise NotFound(f"case {case.number} has no such photo or file")
        return att, (self.photos.read(sha) if att.kind == "photo" else self.files.read(sha))

    # -- samples ------------------------------------------------------------------------------
    def sync_samples(self) -> int:
        """Bottle records the loggers published (stored device events of kind ``sample_taken``)
        become sample records, once each, linked to their station, the episode or storm that
        triggered them, its incident, and the case of that incident or of the outfall."""
        if self.events is None or not hasattr(self.events, "device_events"):
            return 0
        try:
            events = self.events.device_events(kind="sample_taken", limit=10_000)
        except Exception as e:  # noqa: BLE001 — StoreUnavailable: asked again at the next read
            log.warning("bottle records not read from the store: %s", e)
            return 0
        new = 0
        for ev in sorted(events, key=lambda e: e.time_ns):
            key = f"{ev.device}/{ev.time_ns}/{ev.digest}"
            taken = datetime.fromtimestamp(ev.time_ns / 1e9, tz=self.tz)
            data = dict(ev.data)
            incident, episode = self._trigger_of(ev.station, taken, str(data.get("trigger") or ""))
            case = None
            if incident is not None:
                case = next((c.id for c in self.store.cases(incident_id=incident)), None)
            if case is None:
                case = next((c.id for c in self.store.cases(outfall=ev.station)
                             if c.status == "open" and c.observed_at <= taken), None)
            s = self.store.add_sample(
                station=ev.station, taken_at=taken, source="logger", event_key=key, device=ev.device,
                bottle=_int(data.get("bottle")), trigger=str(data.get("trigger") or "") or None,
                volume_ml=_float(data.get("volume_ml")), collected_by=f"autosampler on logger {ev.device}",
                episode=episode, incident_id=incident, case_id=case, by=SYSTEM,
                note=f"bottle record published on …/{ev.device}/events")
            if s is not None:
                new += 1
                self.audit.write(who=SYSTEM, via="logger", municipality=self.municipality, action="sample.record",
                                 target=f"sample:{s.id}", detail=f"{s.number}: bottle {s.bottle} at {s.station}, "
                                                                 f"{s.trigger or 'no trigger'}; incident {incident}")
        return new

    def _trigger_of(self, station: str, t: datetime, trigger: str) -> tuple[int | None, str | None]:
        """The incident (and its episode key) at the station covering ``t``: a dry-weather flow
        first; a first-flush bottle's storm at the outfall's gauge."""
        if self.incidents is None:
            return None, None
        gauges = next((list(o.rain_gauges) for o in self.registry.outfalls if o.id == station), [])
        candidates = self.incidents.list(subject=station, limit=200)
        if "flush" in trigger or not candidates:
            for g in gauges:
                candidates += self.incidents.list(kind="storm", subject=g, limit=200)
        for inc in candidates:
            end = inc.end or datetime.max.replace(tzinfo=t.tzinfo)
            if inc.start - timedelta(hours=1) <= t <= end + timedelta(hours=1):
                return inc.id, inc.key
        return None, None

    def samples(self, actor: Actor, *, case_id: int | None = None) -> list[Sample]:
        actor.require(Permission.READ)
        self.sync_samples()
        return self.store.samples(case_id=case_id)

    def sample(self, actor: Actor, sid: int) -> Sample:
        actor.require(Permission.READ)
        return self._get(lambda: self.store.sample(sid))

    def add_sample(self, actor: Actor, cid: int, body: SampleIn) -> Sample:
        def work() -> Sample:
            case = self._get(lambda: self.store.case(cid))
            self._not_future(body.taken_at, "taken_at")
            s = self.store.add_sample(station=body.station, taken_at=body.taken_at, source="field",
                                      collected_by=body.collected_by, by=actor.username, case_id=case.id,
                                      incident_id=case.incident_id, note=body.note)
            assert s is not None
            return s
        return self._write(actor, Permission.RECORD_CASE, "sample.record", f"case:{cid}", work,
                           lambda s: f"{s.number}: field sample at {s.station} by {s.collected_by}")

    def link_sample(self, actor: Actor, sid: int, cid: int) -> Sample:
        def work() -> Sample:
            self._get(lambda: self.store.case(cid))
            self._get(lambda: self.store.sample(sid))
            self.store.link_sample(sid, cid, by=actor.username)
            return self.store.sample(sid)
        return self._write(actor, Permission.RECORD_CASE, "sample.link", f"sample:{sid}", work,
                           lambda s: f"{s.number} linked to case {cid}")

    def add_custody(self, actor: Actor, sid: int, body: CustodyIn) -> Sample:
        def work() -> Sample:
            s = self._get(lambda: self.store.sample(sid))
            self._not_future(body.at, "at")
            if body.at < s.taken_at:
                raise Refused(f"at: the transfer {body.at.isoformat()} is before the sample was taken")
            if s.custody and body.relinquished_by != s.custody[-1].received_by:
                raise Refused(f"relinquished_by: the sample is with {s.custody[-1].received_by} "
                              f"(received {s.custody[-1].at.isoformat()}), not {body.relinquished_by}")
            self.store.add_custody(sid, at=body.at, relinquished_by=body.relinquished_by,
                                   received_by=body.received_by, lab=body.lab, note=body.note, by=actor.username)
            return self.store.sample(sid)
        return self._write(actor, Permission.RECORD_CASE, "sample.custody", f"sample:{sid}", work,
                           lambda s: f"{s.number}: {body.relinquished_by} -> {body.received_by}"
                                     f"{f' ({body.lab})' if body.lab else ''} at {body.at.isoformat()}")

    def import_lab_results(self, actor: Actor, cid: int, name: str, data: bytes) -> tuple[Case, int]:
        """A lab's CSV: every row checked, all stored or none (the error names each bad line)."""
        def work() -> tuple[Case, int]:
            case = self._get(lambda: self.store.case(cid))
            if not data:
                raise Refused("choose the lab's CSV file")
            sha = hashlib.sha256(data).hexdigest()
            known = self.store.imported(sha)
            if known is not None:
                raise Conflict(f"{name}: this file was imported already (import {known})")
            mine = {s.number: s.id for s in self.store.samples(case_id=cid)}

            def sample_id(number: str) -> int | None:
                if number in mine:
                    return mine[number]
                return None
            try:
                parsed = parse_file(name or "lab-results.csv", data, sample_id=sample_id, thresholds=self.thresholds,
                                    tz=self.tz)
            except ImportRefused as e:
                raise Refused(str(e)) from None
            self.store.add_lab_results(name=parsed.name, sha256=parsed.sha256, lab=parsed.lab, rows=parsed.rows,
                                       by=actor.username)
            return self.store.case(case.id), len(parsed.rows)
        return self._write(actor, Permission.RECORD_CASE, "lab.import", f"case:{cid}", work,
                           lambda out: f"{name}: {out[1]} result(s) for case {out[0].number}")

    # -- parties ------------------------------------------------------------------------------
    def parties(self, actor: Actor) -> list[Party]:
        actor.require(Permission.READ)
        return self.store.parties()

    def party_history(self, actor: Actor, pid: int) -> dict[str, Any]:
        """A party's places and notices: the history a repeat offence is judged by."""
        actor.require(Permission.READ)
        party = self._get(lambda: self.store.party(pid))
        return {"party": party, "links": self.store.links(party_id=pid), "notices": self.store.notices(party_id=pid)}

    def add_party(self, actor: Actor, body: PartyIn) -> Party:
        def work() -> Party:
            if body.place == "outfall":
                self._outfall(body.place_id)
            if body.place == "site":
                self._site(body.place_id)
            if body.place and not body.place_id:
                raise Refused("place_id: which outfall, site, case or property")
            p = self.store.add_party(name=body.name, address=body.address, phone=body.phone, email=body.email,
                                     by=actor.username)
            if body.place and body.place_id:
                since = datetime.combine(body.since or self.clock().astimezone(self.tz).date(), datetime.min.time(),
                                         tzinfo=self.tz)
                self.store.link_party(p.id, place=body.place, place_id=body.place_id, role=body.role, since=since,
                                      by=actor.username)
            return p
        return self._write(actor, Permission.ENFORCE, "party.add", "parties", work,
                           lambda p: f"party {p.id}: {p.name}" + (f", {body.role} of {body.place} {body.place_id}"
                                                                    if body.place else ""))

    def prior_violations(self, party_id: int, before: date, law: str, *, replacing: int | None = None) -> list[date]:
        """The party's earlier violations of the same law: the days its earlier notices of
        violation under ``law`` were issued. Ramapo § 218-44B and Schenectady § 148-32B count
        offences against "this article": a notice under another chapter or article is not one.
        These are notices, not convictions (the law's tiers are by conviction): the letter says so.
        A withdrawn notice, an overturned one, and one corrected by another (``replacing``: the
        notice being corrected) do not count: a correction counts once, as itself."""
        out = []
        for n in self.store.notices(party_id=party_id):
            d = n.issued_at.astimezone(self.tz).date()
            if n.kind != "nov" or n.law != law or d >= before or n.first("withdrawn"):
                continue
            if n.id == replacing or n.corrected_by is not None:
                continue
            last = n.last("decided")
            if last is None or last.outcome != "overturned":
                out.append(d)
        return sorted(out)

    # -- records made from a record ------------------------------------------------------------
    def of_incident(self, actor: Actor, iid: int) -> tuple[list[Case], list[Notice]]:
        """The cases opened from incident ``iid`` and the notices issued in them, newest first."""
        actor.require(Permission.READ)
        cases = self.store.cases(incident_id=iid)
        return cases, [n for c in cases for n in self.store.notices(case_id=c.id)]

    def of_outfall(self, actor: Actor, oid: str) -> tuple[list[Case], list[Notice]]:
        """The cases at outfall ``oid``, and the notices that name it or were issued in one of
        those cases, newest first."""
        actor.require(Permission.READ)
        cases = self.store.cases(outfall=oid)
        ids = {c.id for c in cases}
        return cases, [n for n in self.store.notices() if n.outfall == oid or n.case_id in ids]

    # -- notices ------------------------------------------------------------------------------
    def notices(self, actor: Actor) -> list[Notice]:
        actor.require(Permission.READ)
        return self.store.notices()

    def notice(self, actor: Actor, nid: int) -> Notice:
        actor.require(Permission.READ)
        return self._get(lambda: self.store.notice(nid))

    @staticmethod
    def _provision_key(lw: Law, ref: str, field: str) -> str:
        """A provision named as ``key`` or ``law:key``, checked against ``lw``'s catalogue."""
        law_key, _, key = ref.rpartition(":")
        if law_key and law_key != lw.key:
            raise Refused(f"{field}: {ref} is a provision of {law_key}, not of {lw.key} (the law the notice is issued "
                          "under)")
        try:
            lw.provision(key)
        except ValueError as e:
            raise Refused(f"{field}: {e}") from None
        return key

    def issue_notice(self, actor: Actor, body: NoticeIn) -> Notice:
        def work() -> Notice:
            lw = law_of(body.law)
            self._adopted(body.law)
            party = self._get(lambda: self.store.party(body.party_id))
            self._outfall(body.outfall)
            self._site(body.site)
            if (case_id := body.case_id) is not None:
                self._get(lambda: self.store.case(case_id))
            self._not_future(body.issued_at, "issued_at")
            if body.kind == "stop_work" and lw.stop_work is None:
                raise Refused(f"kind: stop-work orders are Schenectady ch. 148 § 148-18C's (construction); "
                              f"{lw.short} has none")
            if body.kind == "nov" and lw.remediation.n is None and body.remediation_days is None:
                raise Refused(f"remediation_days: {lw.remediation.provision}: the notice sets the deadline for "
                              "remediation or restoration")
            if lw.requirements and body.kind == "nov" and not body.requirements:
                raise Refused(f"requirements: what the notice requires ({lw.short} items (a)-(f))")
            if body.violation_since > body.issued_at.astimezone(self.tz).date():
                raise Refused("violation_since: after the notice's issuance")
            keys: list[str] = []
            for ref in body.provisions:
                k = self._provision_key(lw, ref, "provisions")
                if k not in keys:
                    keys.append(k)
            if not keys:
                raise Refused(f"provisions: name the provision(s) violated, from {lw.short}'s catalogue "
                              f"({', '.join(p.key for p in lw.provisions)})")
            remedies = {}
            for ref, text in body.remedies.items():
                k = self._provision_key(lw, ref, "remedies")
                if k not in keys:
                    raise Refused(f"remedies: {ref} is not among the provisions this notice cites")
                remedies[k] = text
            recipients = list(body.recipients)
            if body.party_id not in {r.party_id for r in recipients}:
                recipients.insert(0, RecipientIn(party_id=body.party_id))
            else:   # the addressee first
                recipients.sort(key=lambda r: r.party_id != body.party_id)
            seen: set[int] = set()
            parties = {}
            for r in recipients:
                if r.party_id in seen:
                    raise Refused(f"recipients: party {r.party_id} is named twice")
                seen.add(r.party_id)
                parties[r.party_id] = self._get(lambda: self.store.party(r.party_id))
            old = None
            if (corrects := body.corrects) is not None:
                old = self._get(lambda: self.store.notice(corrects))
                if (old.law, old.kind) != (body.law, body.kind):
                    raise Refused(f"corrects: {old.number} is a {old.kind} under {old.law}; a correction is of the "
                                  "same kind under the same law")
                if old.first("withdrawn"):
                    raise Conflict(f"corrects: {old.number} was withdrawn")
                if old.corrected_by is not None:
                    raise Conflict(f"corrects: {old.number} was corrected already by {old.corrected_by[1]}; correct "
                                   "that one")
            prior = self.prior_violations(party.id, body.issued_at.astimezone(self.tz).date(), body.law,
                                          replacing=body.corrects)
            town = self.town_name(body.law)
            return self.store.issue_notice(
                kind=body.kind, law=body.law, case_id=body.case_id, site=body.site, outfall=body.outfall,
                party_id=party.id, place=body.place, violation=body.violation, requirements=list(body.requirements),
                remedy=body.remedy, remediation_days=body.remediation_days, violation_since=body.violation_since,
                prior=prior, issued_at=body.issued_at, by=actor.username, signatory=body.signatory, provisions=keys,
                remedies=remedies, corrects=body.corrects,
                recipients=[Recipient(0, r.party_id, r.role, r.method, r.reference) for r in recipients],
                letter=lambda n: notice_letter(n, parties, cal=self.cal, tz=self.tz, town=town, replaces=old))
        return self._write(actor, Permission.ENFORCE, "notice.issue", "notices", work,
                           lambda n: f"{n.number} ({n.kind}, {n.law}) to "
                                     + ", ".join(f"party {r.party_id} ({r.role})" for r in n.recipients)
                                     + f"; citing {', '.join(n.provisions)}; prior violations within the record: "
                                       f"{len(n.prior)}" + (f"; corrects notice {n.corrects}" if n.corrects else "")
                                     + self._sha_note(n.id))

    def _sha_note(self, nid: int) -> str:
        frozen = self.store.notice_letter(nid)
        return f"; letter sha256 {frozen.pdf_sha256}" if frozen else ""

    _ORDER = {"hearing_held": ("appeal_filed",), "decided": ("appeal_filed",), "decision_filed": ("decided",)}
    DELIVERY = ("mailed", "posted", "delivered")

    def notice_event(self, actor: Actor, nid: int, body: NoticeEventIn) -> Notice:
        def work() -> Notice:
            n = self._get(lambda: self.store.notice(nid))
            lw = law_of(n.law)
            self._not_future(body.at, "at")
            if body.at < n.issued_at:
                raise Refused("at: before the notice was issued")
            if n.first("withdrawn"):
                raise Conflict(f"{n.number} was withdrawn")
            if body.kind == "withdrawn" and not (body.note or "").strip():
                raise Refused("note: the reason the notice is withdrawn")
            if body.kind in ("appeal_filed", "hearing_held", "decided", "decision_filed") and lw.appeal is None:
                raise Refused(f"kind: {lw.short} ({n.law}) has no appeal in its text")
            for need in self._ORDER.get(body.kind, ()):
                if n.first(need) is None:
                    raise Conflict(f"{body.kind.replace('_', ' ')} before {need.replace('_', ' ')}")
            if body.kind == "decided" and body.outcome is None:
                raise Refused("outcome: upheld, overturned or modified")
            if body.kind == "mailed" and not body.reference:
                raise Refused("reference: the certified mail article number")
            if body.kind == "lifted" and n.kind != "stop_work":
                raise Refused("kind: only a stop-work order is lifted")
            recipient = None
            if body.recipient_id is not None and body.kind not in self.DELIVERY:
                raise Refused("recipient_id: only a delivery (mailed, posted, delivered) is to one recipient")
            if body.kind in self.DELIVERY:
                r: Recipient | None
                if body.recipient_id is None:
                    r = n.recipients[0]
                else:
                    r = next((x for x in n.recipients if x.id == body.recipient_id and x.id), None)
                    if r is None:
                        raise Refused(f"recipient_id: {body.recipient_id} is not a recipient of {n.number}")
                if body.kind == "delivered" and (earlier := n.delivered_to(r)) is not None:
                    raise Conflict(f"{n.number} was delivered to that recipient already "
                                   f"({earlier.at.isoformat()})")
                recipient = r.id or None
            return self.store.notice_event(nid, kind=body.kind, at=body.at, by=actor.username,
                                           reference=body.reference, outcome=body.outcome, note=body.note,
                                           recipient_id=recipient)
        return self._write(actor, Permission.ENFORCE, f"notice.{body.kind}", f"notice:{nid}", work,
                           lambda n: f"{n.number}: {body.kind} at {body.at.isoformat()}"
                                     + (f" to recipient {body.recipient_id}" if body.recipient_id else "")
                                     + (f" ({body.reference})" if body.reference else "")
                                     + (f": {body.outcome}" if body.outcome else "")
                                     + (f"; reason: {body.note}" if body.kind == "withdrawn" else ""))

    def withdraw(self, actor: Actor, nid: int, reason: str, at: datetime | None = None) -> Notice:
        """Withdraw a notice, for a reason (required; audited). It cannot be undone: a notice
        withdrawn in error is issued again, as a new notice."""
        return self.notice_event(actor, nid, NoticeEventIn(kind="withdrawn", at=at or self.clock(),
                                                           note=reason.strip() or None))

    def parties_of(self, n: Notice) -> dict[int, Party]:
        return {r.party_id: self.store.party(r.party_id) for r in n.recipients}

    def frozen(self, n: Notice) -> FrozenLetter | None:
        return self.store.notice_letter(n.id)

    def letter(self, actor: Actor, nid: int) -> tuple[Notice, bytes]:
        """The letter as served: the PDF frozen at issue (a notice issued before letters were
        kept: rebuilt from its records as of its issue, which gives the same bytes each time)."""
        n = self.notice(actor, nid)
        frozen = self.store.notice_letter(nid)
        if frozen is not None:
            return n, frozen.pdf
        return n, notice_pdf(n, self.parties_of(n), cal=self.cal, tz=self.tz, town=self.town_name(n.law),
                             replaces=self._replaces(n))

    def _replaces(self, n: Notice) -> Notice | None:
        return self.store.notice(n.corrects) if n.corrects else None

    def sections(self, n: Notice) -> list:
        """The letter's text: as frozen at issue, else rebuilt from the records as of issue."""
        frozen = self.store.notice_letter(n.id)
        words = frozen_sections(frozen.facts) if frozen is not None else None
        if words is not None:
            return words
        return notice_sections(n, self.parties_of(n), cal=self.cal, tz=self.tz, town=self.town_name(n.law),
                               replaces=self._replaces(n))

    def town_name(self, law_key: str) -> str:
        lw = LAWS[law_key]
        return lw.municipality if lw.municipality.lower().endswith(self.municipality.lower()) \
            else self.municipality.replace("-", " ").title()

    # -- releases -----------------------------------------------------------------------------
    def releases(self, actor: Actor) -> list[Release]:
        actor.require(Permission.READ)
        return self.store.releases()

    def release(self, actor: Actor, rid: int) -> Release:
        actor.require(Permission.READ)
        return self._get(lambda: self.store.release(rid))

    def add_release(self, actor: Actor, body: ReleaseIn) -> Release:
        def work() -> Release:
            self._adopted(body.law)
            self._outfall(body.outfall)
            if (party_id := body.party_id) is not None:
                self._get(lambda: self.store.party(party_id))
            if (case_id := body.case_id) is not None:
                self._get(lambda: self.store.case(case_id))
            self._not_future(body.known_at, "known_at")
            if body.called_at is not None and body.called_at < body.known_at:
                raise Refused("called_at: before the release was known")
            r = self.store.add_release(law=body.law, kind=body.kind, material=body.material, location=body.location,
                                       outfall=body.outfall, party_id=body.party_id, case_id=body.case_id,
                                       known_at=body.known_at, reported_by=body.reported_by,
                                       commercial=body.commercial, note=body.note, by=actor.username)
            if body.called_at is not None:
                r = self.store.release_event(r.id, kind="called", at=body.called_at, note=None, by=actor.username)
            return r
        return self._write(actor, Permission.RECORD_CASE, "release.record", "releases", work,
                           lambda r: f"{r.number}: {r.kind} release of {r.material} known {r.known_at.isoformat()}")

    def release_event(self, actor: Actor, rid: int, body: ReleaseEventIn) -> Release:
        def work() -> Release:
            r = self._get(lambda: self.store.release(rid))
            self._not_future(body.at, "at")
            if body.at < r.known_at:
                raise Refused("at: before the release was known")
            if body.kind == "written" and r.first("called") is None:
                raise Conflict("a written confirmation confirms a notice in person or by telephone: record the call "
                               "first")
            return self.store.release_event(rid, kind=body.kind, at=body.at, note=body.note, by=actor.username)
        return self._write(actor, Permission.RECORD_CASE, f"release.{body.kind}", f"release:{rid}", work,
                           lambda r: f"{r.number}: {body.kind} at {body.at.isoformat()}")

    # -- SWPPP reviews --------------------------------------------------------------------------
    def swppps(self, actor: Actor) -> list[Swppp]:
        actor.require(Permission.READ)
        return self.store.swppps()

    def swppp(self, actor: Actor, sid: int) -> Swppp:
        actor.require(Permission.READ)
        return self._get(lambda: self.store.swppp(sid))

    def add_swppp(self, actor: Actor, body: SwpppIn) -> Swppp:
        def work() -> Swppp:
            if "schenectady-148-I" not in self.laws:
                raise Refused(f"site: SWPPP reviews are Schenectady ch. 148 Art. I's (§ 148-6); {self.municipality} "
                              f"has not adopted it (the registry's local_laws: {', '.join(self.laws)})")
            self._site(body.site)
            if (party_id := body.party_id) is not None:
                self._get(lambda: self.store.party(party_id))
            self._not_future(body.received_at, "received_at")
            return self.store.add_swppp(site=body.site, title=body.title, party_id=body.party_id,
                                        received_at=body.received_at, deviates=body.deviates, by=actor.username)
        return self._write(actor, Permission.ENFORCE, "swppp.receive", "swppp", work,
                           lambda s: f"{s.number}: {s.title} for {s.site}, received {s.received_at.isoformat()}"
                                     f"{' (deviates from the § 148-11 standards)' if s.deviates else ''}")

    def swppp_event(self, actor: Actor, sid: int, body: SwpppEventIn) -> Swppp:
        def work() -> Swppp:
            s = self._get(lambda: self.store.swppp(sid))
            self._not_future(body.at, "at")
            if body.at < s.received_at:
                raise Refused("at: before the plan was received")
            if body.kind == "decided":
                if body.outcome is None:
                    raise Refused("outcome: approved, approved with conditions, or disapproved")
                if s.last("complete") is None:
                    raise Conflict("decided before the plan was found complete")
            if body.kind == "extended" and body.days is None:
                raise Refused("days: the extension agreed with the applicant")
            return self.store.swppp_event(sid, kind=body.kind, at=body.at, by=actor.username, outcome=body.outcome,
                                          days=body.days, note=body.note)
        return self._write(actor, Permission.ENFORCE, f"swppp.{body.kind}", f"swppp:{sid}", work,
                           lambda s: f"{s.number}: {body.kind} at {body.at.isoformat()}"
                                     + (f": {body.outcome}" if body.outcome else ""))

    # -- deadlines ------------------------------------------------------------------------------
    def deadlines(self, now: datetime | None = None) -> list[dl.Deadline]:
        """Every clock of the records (no actor: the alert pipeline's view)."""
        return dl.all_deadlines(self.store, self.cal)

    def board(self, actor: Actor) -> Board:
        actor.require(Permission.READ)
        return Board(self.clock(), self.deadlines())

    def deadlines_of(self, record: str) -> list[dl.Deadline]:
        return [d for d in self.deadlines() if d.record == record]

    # -- the annual report ------------------------------------------------------------------------
    def annual_report(self, actor: Actor, year: int):
        from ...compliance import report as rp
        from .stations import stations_of
        actor.require(Permission.READ)
        if self.incidents is None:
            raise NotFound("no incident database in this process")
        self.sync_samples()
        return rp.build(registry=self.registry, store=self.store, incidents=self.incidents, year=year,
                        now=self.clock(), calibrations=self.calibrations, readings=self.readings,
                        stations=lambda: stations_of(self.registry), reports=self.reports,
                        overrides=self.overrides, hours_with_readings=self._hours_with_readings,
                        map_outfalls=self.map_outfalls() if self.map_outfalls is not None else None)

    @property
    def _hours_with_readings(self):
        """The report's uptime, counted once and kept up to date from the store's receipts."""
        from ...compliance.uptime import HoursWithReadings
        if getattr(self, "_uptime", None) is None:
            self._uptime = HoursWithReadings(self.readings)
        return self._uptime

    @property
    def overrides(self):
        """The annual report's counts stated by hand (in compliance.db)."""
        from ...compliance.report_overrides import ReportOverrides
        if getattr(self, "_overrides", None) is None:
            self._overrides = ReportOverrides(self.store.path, self.clock)
        return self._overrides

    def close_overrides(self) -> None:
        if getattr(self, "_overrides", None) is not None:
            self._overrides.close()
            self._overrides = None

    def override_count(self, actor: Actor, year: int, body: Any):
        """A count of the annual report stated by hand (``body``: line, value, reason): kept as
        a record of its own and audited; the report prints it beside the records' count."""
        from ...compliance import report as rp
        lines = {ln.id for ln in rp.AnnualReport(self.municipality, year, *rp.permit_year(year, self.tz),
                                                  self.clock(), {k: rp.Section(k, t, [], []) for k, t in rp.SECTIONS}
                                                  ).lines()}
        target = f"report:{year}:{body.line}"

        def work():
            if body.line not in lines and body.line.split(":", 1)[0] not in dict(rp.SECTIONS):
                raise Refused(f"line: no line {body.line!r} in the annual report")
            return self.overrides.add(year=year, line=body.line, value=body.value, reason=body.reason,
                                      by=actor.username)
        return self._write(actor, Permission.ENFORCE, "report.override", target, work,
                           lambda o: f"{o.line} = {o.value}: {o.reason}")

    # -- evidence packets -------------------------------------------------------------------------
    def packet(self, actor: Actor, fmt: str, *, case_id: int | None = None,
               incident_id: int | None = None, corrected: bool = False) -> tuple[str, bytes]:
        """An incident's or a case's evidence packet: ``pdf`` or ``zip`` (the data, the PDF,
        SHA256SUMS). ``corrected``: the readings with the drift corrections in force applied
        (USGS TM 1-D3; the packet says so, per incident, and its name ends ``-corrected``);
        raw readings as stored by default."""
        from ...compliance import packet as pk
        actor.require(Permission.READ)
        self.sync_samples()
        case = self.case(actor, case_id) if case_id is not None else None
        iids: list[int] = []
        if case is not None:
            if case.incident_id:
                iids.append(case.incident_id)
            samples = self.store.samples(case_id=case.id)
            notices = self.store.notices(case_id=case.id)
            subject, title = f"case-{case.number}", f"Case {case.number}: {case.location}"
        else:
            assert incident_id is not None
            iids.append(incident_id)
            samples = self.store.samples(incident_id=incident_id)
            cases = self.store.cases(incident_id=incident_id)
            notices = [n for c in cases for n in self.store.notices(case_id=c.id)]
            subject, title = f"incident-{incident_id}", f"Incident {incident_id}"
        iids += sorted({s.incident_id for s in samples if s.incident_id and s.incident_id not in iids})
        evidence = [self._evidence(i, corrected) for i in iids]
        if corrected:
            subject += "-corrected"
        if case is None and evidence:
            ev = evidence[0]
            title = f"Incident {incident_id}: {ev.incident.kind.replace('_', ' ')} at {ev.station_name}"
        inspections = []
        sites = {e.incident.subject for e in evidence} & {s.id for s in self.registry.construction_sites}
        if self.reports is not None:
            for site in sorted(sites):
                inspections += self.reports.list(self.municipality, site=site, limit=1000)
        law_key = self.laws[0]
        provisions = [PROHIBITION[law_key]] if law_key in PROHIBITION and not notices else []
        for n in notices:   # what each notice cites, then its clocks
            lw = LAWS[n.law]
            for pair in [(lw.cite(p), p.text) for p in cited(n)] + [(r.provision, r.text) for r in
                                                                    (lw.remediation, lw.appeal) if r is not None]:
                if pair not in provisions:
                    provisions.append(pair)
        letters = []
        for n in sorted(notices, key=lambda n: n.id):   # the letters as served (frozen at issue)
            _, pdf_bytes = self.letter(actor, n.id)
            letters.append((n, self.store.party(n.party_id), pdf_bytes))
        trace = None
        if case is not None and self.trace_of is not None:
            tr = self.trace_of(actor, case.id)
            trace = pk.TraceEvidence(tr.outfall, tr.visits, tr.suspect_pipes,
                                     tr.plan.suspect_length_ft if tr.plan else None, tr.next_structure, tr.why_not)
        p = pk.Packet(title=title, subject=subject, tz=self.tz, timezone_name=self.registry.timezone,
                      incidents=evidence, case=case, samples=samples, notices=letters, inspections=inspections,
                      provisions=provisions, trace=trace)
        files = pk.data_files(p, self._chart, self._readings_csv)
        pdf_bytes = pk.packet_pdf(p, files)
        self.audit.record(actor, "packet.build", target=f"case:{case.id}" if case else f"incident:{incident_id}",
                          detail=f"{fmt}: {len(files)} data file(s)" + (", corrected values" if corrected else ""))
        if fmt == "pdf":
            return f"{subject}.pdf", pdf_bytes
        return f"{subject}.zip", pk.packet_zip(files, pdf_bytes, subject)

    def _evidence(self, iid: int, corrected: bool = False):
        from ...alerts.delivery.dispatch import station_name
        from ...alerts.kinds import describe
        from ...compliance import packet as pk
        from ...evidence import StoreReadings
        if self.incidents is None:
            raise NotFound("no incident database in this process")
        try:
            inc = self.incidents.get(iid)
        except Exception:  # noqa: BLE001 — IncidentError
            raise NotFound(f"no incident {iid}") from None
        frame = None
        source = self.readings
        if corrected and source is not None and self.corrections is not None:
            from ...ingest.corrections import CorrectedReadings
            source = CorrectedReadings(source, self.corrections)
        if source is not None:
            start, end = pk.window(inc)
            try:
                frame = StoreReadings(source, self.registry)(inc.snapshot(), start, end)
            except Exception as e:  # noqa: BLE001 — the packet still holds the records
                log.warning("readings for incident %s not read: %s", iid, e)
        text = RULE_TEXT.get(inc.kind, PROHIBITION.get(self.laws[0], ("", "")))[1] \
            if inc.kind != "compliance_deadline" else ""
        words = describe(self.registry, inc.kind, inc.subject, self.reaches() if self.reaches is not None else None)
        return pk.IncidentEvidence(inc, station_name(self.registry, inc), self.incidents.audit(iid), frame,
                                   words.threshold, text, words.what, words.rule, words.runoff)

    def _chart(self, ev) -> bytes | None:
        from ...alerts.notifiers.email.chart import chart_png
        from ...compliance import packet as pk
        if ev.readings is None or ev.readings.empty:
            return None
        i = ev.incident
        start, _ = pk.window(i)
        return chart_png(ev.readings, title=f"{ev.what or i.kind.replace('_', ' ')} at {ev.station_name} ({i.subject})",
                         start=i.start, end=i.end, threshold=ev.threshold, tz=self.registry.timezone)

    def _readings_csv(self, ev) -> bytes | None:
        from ...alerts.notifiers.email.chart import csv_excerpt
        if ev.readings is None or ev.readings.empty:
            return None
        return csv_excerpt(ev.readings)


def _int(v: Any) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _float(v: Any) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


__all__ = ["ComplianceDesk", "FileStore", "Board", "Refused", "laws_for"]
