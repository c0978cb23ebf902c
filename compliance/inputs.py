"""What the workbench's forms and the API give to make a compliance record (pydantic:
refused at the boundary with the field named). The services check what needs the town's
records (an outfall, a party, a notice's state)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..contract.text import NOT_BLANK
from ..contract.when import RecordDay, RecordTime

Text = Field(min_length=1, max_length=4000, pattern=NOT_BLANK)
Name = Field(min_length=1, max_length=200, pattern=NOT_BLANK)
Opt = Field(default=None, max_length=4000)
Id = Field(default=None, ge=1, le=2**53 - 1)
StationId = Field(default=None, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class CaseIn(_In):
    """A case's intake: from a dry-weather-flow incident, a complaint (who reported, where,
    what was seen, when) or a routine dry-weather screening."""

    origin: Literal["incident", "complaint", "screening"]
    incident_id: int | None = Id
    outfall: str | None = StationId
    location: str = Text
    description: str = Text
    reporter: str | None = Field(default=None, max_length=200)
    reporter_contact: str | None = Field(default=None, max_length=200)
    observed_at: RecordTime


class EntryIn(_In):
    """A visit or note in a case's thread; a closure needs its verification."""

    kind: Literal["screening", "tracing", "sampling", "follow_up", "note", "closure"]
    at: RecordTime
    by: str = Name
    notes: str = Text
    location: str | None = Field(default=None, max_length=400)
    dry_weather: bool | None = None
    flow_observed: bool | None = None
    finding: Literal["illicit_discharge", "illicit_connection", "exempt_flow", "no_flow", "source_not_found"] | None \
        = None
    outcome: Literal["eliminated", "exempt", "not_found", "referred"] | None = None
    verification: str | None = Field(default=None, max_length=4000)


Reading = Field(default=None, ge=0, le=1e9, allow_inf_nan=False)


class TraceVisitIn(_In):
    """A trace visit at a structure of the network: flow present or absent, what was seen and
    smelt, and the field tests, each in the unit its name says (temperature and E. coli: the
    unit is given beside)."""

    structure: str = Field(min_length=1, max_length=100, pattern=r"\S")
    at: RecordTime
    by: str = Name
    flow: Literal["present", "absent"]
    odour: str | None = Field(default=None, max_length=200)
    colour: str | None = Field(default=None, max_length=200)
    notes: str = Field(default="", max_length=4000)
    ammonia_mg_l: float | None = Reading
    surfactants_mg_l: float | None = Reading
    fluoride_mg_l: float | None = Reading
    potassium_mg_l: float | None = Reading
    temperature: float | None = Field(default=None, ge=-40, le=212, allow_inf_nan=False)
    temperature_unit: Literal["°C", "°F"] = "°C"
    e_coli: float | None = Reading
    e_coli_unit: Literal["CFU/100 mL", "MPN/100 mL"] = "CFU/100 mL"


class SampleIn(_In):
    station: str = Field(max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")
    taken_at: RecordTime
    collected_by: str = Name
    note: str | None = Opt


class CustodyIn(_In):
    at: RecordTime
    relinquished_by: str = Name
    received_by: str = Name
    lab: str | None = Field(default=None, max_length=200)
    note: str | None = Opt


class PartyIn(_In):
    """An owner or operator with a postal address, and (optionally) the place they answer for."""

    name: str = Name
    address: str = Field(min_length=1, max_length=1000, pattern=NOT_BLANK)
    phone: str | None = Field(default=None, max_length=64)
    email: str | None = Field(default=None, max_length=254)
    place: Literal["outfall", "site", "case", "property"] | None = None
    place_id: str | None = Field(default=None, max_length=200)
    role: Literal["owner", "operator", "developer", "applicant", "contractor"] = "owner"
    since: RecordDay | None = None


ProvisionRef = Annotated[str, Field(max_length=80, pattern=r"^([a-z0-9-]+(-I|-II)?:)?[a-z0-9_]+$")]


class RecipientIn(_In):
    """Someone the notice is sent to (§ 148-18A: the operator/landowner, the applicant and all
    contractors), how it is served, and the certified mail article number if known."""

    party_id: int = Field(ge=1, le=2**53 - 1)
    role: Literal["operator", "landowner", "owner", "applicant", "developer", "contractor", "subcontractor",
                  "responsible person"] = "responsible person"
    method: Literal["certified_mail", "posting", "personal_service", "first_class_mail"] = "certified_mail"
    reference: str | None = Field(default=None, max_length=200, description="certified mail article number")


class NoticeIn(_In):
    kind: Literal["nov", "stop_work"] = "nov"
    law: Literal["ramapo-218", "schenectady-148-I", "schenectady-148-II"]
    case_id: int | None = Id
    site: str | None = StationId
    outfall: str | None = StationId
    party_id: int = Field(ge=1, le=2**53 - 1, description="the addressee (the first recipient)")
    recipients: list[RecipientIn] = Field(default_factory=list, max_length=20,
                                          description="everyone the notice goes to; the addressee if left out")
    place: str = Field(min_length=1, max_length=1000, pattern=NOT_BLANK)
    provisions: list[ProvisionRef] = Field(default_factory=list, max_length=20,
                                           description="the provisions violated: keys of the law's catalogue "
                                                       "(GET /api/v1/laws), optionally as law:key")
    violation: str = Field(min_length=1, max_length=4000, pattern=NOT_BLANK,
                           description="the statement of the violation (§ 148-18A(3), § 218-44A)")
    requirements: list[Literal["eliminate", "cease", "abate", "monitor", "fine", "bmps"]] = Field(default_factory=list,
                                                                                                max_length=6)
    remedies: dict[ProvisionRef, Annotated[str, Field(max_length=4000)]] = Field(
        default_factory=dict, max_length=20, json_schema_extra={"additionalProperties": False},
        description="remedial measures per provision, by the provision's key (default: the catalogue's)")
    remedy: str = Field(default="", max_length=4000, description="further remedial measures")
    remediation_days: int | None = Field(default=None, ge=1, le=365, description="days from issuance (the IDDE "
                                         "laws), or from notification (ch. 148 Art. I: 15 unless set)")
    violation_since: RecordDay
    issued_at: RecordTime
    signatory: str = Name
    corrects: int | None = Field(default=None, ge=1, le=2**53 - 1, description="the notice this one corrects")

    @field_validator("remedies")
    @classmethod
    def _remedy_words(cls, v: dict[str, str]) -> dict[str, str]:
        return {k: t.strip() for k, t in v.items() if t.strip()}


class NoticeEventIn(_In):
    kind: Literal["mailed", "posted", "delivered", "appeal_filed", "hearing_held", "decided", "decision_filed",
                  "complied", "lifted", "withdrawn"]
    at: RecordTime
    reference: str | None = Field(default=None, max_length=200, description="certified mail number, where posted")
    outcome: Literal["upheld", "overturned", "modified"] | None = None
    note: str | None = Field(default=None, max_length=4000, description="a note; for a withdrawal, its reason "
                                                                       "(required)")
    recipient_id: int | None = Field(default=None, ge=1, le=2**53 - 1,
                                     description="mailed, posted, delivered: to which recipient (default: the "
                                                 "addressee)")


class ReleaseIn(_In):
    law: Literal["ramapo-218", "schenectady-148-II"]
    kind: Literal["hazardous", "non_hazardous"]
    material: str = Name
    location: str = Text
    outfall: str | None = StationId
    party_id: int | None = Id
    case_id: int | None = Id
    known_at: RecordTime = Field(description="when the person responsible knew of the release")
    reported_by: str = Name
    called_at: RecordTime | None = Field(default=None, description="the notice in person, by telephone or fax")
    commercial: bool = False
    note: str | None = Opt


class ReleaseEventIn(_In):
    kind: Literal["called", "written", "emergency_dispatch"]
    at: RecordTime
    note: str | None = Opt


class SwpppIn(_In):
    site: str = Field(max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")
    title: str = Name
    party_id: int | None = Id
    received_at: RecordTime
    deviates: bool = False


class SwpppEventIn(_In):
    kind: Literal["complete", "incomplete", "revised", "decided", "extended"]
    at: RecordTime
    outcome: Literal["approved", "approved_with_conditions", "disapproved"] | None = None
    days: int | None = Field(default=None, ge=1, le=365)
    note: str | None = Opt


__all__ = ["CaseIn", "EntryIn", "SampleIn", "CustodyIn", "PartyIn", "NoticeIn", "RecipientIn", "NoticeEventIn", "ReleaseIn",
           "ReleaseEventIn", "SwpppIn", "SwpppEventIn"]
