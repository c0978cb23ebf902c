"""The two local laws as data: each clock (how many days, counted how, from what, citing the
section and quoting its words), the contents a notice of violation must have, the
penalties, release notification and — Schenectady ch. 148 Art. I — stop-work orders and the
SWPPP review. ``clocks.py`` computes deadlines from these; the letter (``letters.py``)
prints them; nothing else holds a number of days.

Three bodies of rules, because Schenectady's chapter has two articles with different
enforcement sections:

* ``ramapo-218``: Town of Ramapo Code ch. 218 (illicit discharges, L.L. No. 3-2006);
* ``schenectady-148-I``: City of Schenectady Code ch. 148 Art. I (construction, SWPPPs);
* ``schenectady-148-II``: City of Schenectady Code ch. 148 Art. II (illicit discharges).

Section numbers: the texts in ``shared/reference`` carry no headings, so each number is
counted from the cross-references the texts themselves make (§ 148-5, -6, -11, -17, -18A,
-20, -24, -26; § 218-34, -36, -37, -38). Check them against the town's published code
before a letter goes out; the quotations are word for word (a test compares them).

Only Ramapo's text has an appeal (§ 218-45) and corrective work after an appeal
(§ 218-46); neither Schenectady article has one in its text, so their notices state no
appeal clock.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from . import provisions as _provisions
from .provisions import Provision


class Counting(str, enum.Enum):
    CALENDAR_DAYS = "calendar days"
    BUSINESS_DAYS = "business days"
    IMMEDIATELY = "immediately"


@dataclass(frozen=True)
class ClockRule:
    """One clock of a law. ``n`` None: the notice sets the number (``days=`` to the clock).

    ``rollover``: a period ending on a Saturday, Sunday or public holiday runs to the next
    business day (N.Y. General Construction Law § 25-a). Applied to what a *person* must
    do (file an appeal, finish the work); not to the municipality's own duties (hold a
    hearing, file a decision, review a plan), which are planned for the earliest reading.
    """

    key: str
    what: str                 # "appeal to the Town Board"
    who: str                  # who must act
    n: int | None
    counting: Counting
    start: str                # what starts it
    provision: str            # "Ramapo ch. 218 § 218-45"
    text: str                 # the law's words, verbatim
    rollover: bool = False

    def describe(self) -> str:
        if self.counting is Counting.IMMEDIATELY:
            return f"{self.what}: immediately ({self.provision})"
        if self.n is None:
            return f"{self.what}: by the date the notice sets ({self.provision})"
        return f"{self.what}: within {self.n} {self.counting.value} of {self.start} ({self.provision})"


@dataclass(frozen=True)
class PenaltyTier:
    ordinal: int              # 1 first offence, 2 second within five years, 3 third or later
    fine_min_usd: int
    fine_max_usd: int
    imprisonment: str


@dataclass(frozen=True)
class PenaltyRule:
    provision: str
    per: str                  # "day" | "week": each continued day/week a separate offence
    tiers: tuple[PenaltyTier, ...]
    repeat_window_years: int | None   # None: no repeat tiers
    classification: str
    text: str                 # the separate-offence words, verbatim
    statement: str            # what the letter says (the penalties that can be assessed)


@dataclass(frozen=True)
class NoticeElement:
    """Something a notice of violation must hold (``required``) or, good practice, does."""

    key: str
    label: str
    provision: str
    required: bool = True


@dataclass(frozen=True)
class Requirement:
    """What a notice may require (§ 218-44A(1), § 148-32A(1): items (a)–(f))."""

    key: str
    item: str                 # "(a)"
    text: str


@dataclass(frozen=True)
class Law:
    key: str
    title: str
    municipality: str
    short: str                # "Ramapo ch. 218"
    remediation: ClockRule
    penalty: PenaltyRule
    elements: tuple[NoticeElement, ...]
    requirements: tuple[Requirement, ...] = ()
    delivery: str = "written notice"
    expense_warning: str | None = None          # § 218-44A(2), § 148-32A(2)
    appeal: ClockRule | None = None
    hearing: ClockRule | None = None
    decision_filing: ClockRule | None = None
    corrective_work: ClockRule | None = None
    release_hazardous: ClockRule | None = None
    release_notice: ClockRule | None = None
    release_written: ClockRule | None = None
    stop_work: str | None = None                # the stop-work provision's words (§ 148-18C)
    excerpts: dict[str, str] = field(default_factory=dict)   # provision -> its words, for evidence packets
    provisions: tuple[Provision, ...] = ()       # what a notice can cite (``provisions.py``)

    @property
    def label(self) -> str:
        """The law as a picker names it, from its title: ``Schenectady ch. 148, Art. II:
        Illicit Discharges`` (the city's two articles share a chapter)."""
        parts = [p.strip() for p in self.title.split(",")]
        article = next((p.replace("Article", "Art.") for p in parts if p.startswith("Article ")), None)
        subject = parts[-1].split(" (")[0]
        return f"{self.short}{', ' + article if article else ''}: {subject}"

    def provision(self, key: str) -> Provision:
        found = next((p for p in self.provisions if p.key == key), None)
        if found is None:
            raise ValueError(f"{self.key} has no provision {key!r} (known: {', '.join(p.key for p in self.provisions)})")
        return found

    def cite(self, p: Provision) -> str:
        """The citation, as "Schenectady ch. 148 § 148-13B"."""
        return f"{self.short} § {p.section}"

    @property
    def remedy_from_notification(self) -> bool:
        """The remediation clock runs from the violator's notification (§ 148-18B), not from
        the notice's issuance with a deadline the notice sets (§ 218-44A(2), § 148-32A(2))."""
        return self.remediation.n is not None

    def rules(self) -> list[ClockRule]:
        return [r for r in (self.remediation, self.appeal, self.hearing, self.decision_filing, self.corrective_work,
                            self.release_hazardous, self.release_notice, self.release_written) if r is not None]


# -- shared words --------------------------------------------------------------------------------
_ABATE = ("If abatement of a violation and/or restoration of affected property is required, the notice shall set "
          "forth a deadline within which such remediation or restoration must be completed.")
_EXPENSE = ("should the violator fail to remediate or restore within the established deadline, the work will be done "
            "by a designated governmental agency or a contractor and the expense thereof shall be charged to the "
            "violator.")
_WRITTEN = ("Notifications in person or by telephone shall be confirmed by written notice addressed and mailed to the "
            "municipality within three business days of the telephone notice.")


def _requirements(fine: str) -> tuple[Requirement, ...]:
    return (
        Requirement("eliminate", "(a)", "The elimination of illicit connections or discharges;"),
        Requirement("cease", "(b)", "That violating discharges, practices, or operations shall cease and desist;"),
        Requirement("abate", "(c)", "The abatement or remediation of stormwater pollution or contamination hazards "
                                    "and the restoration of any affected property;"),
        Requirement("monitor", "(d)", "The performance of monitoring, analyses, and reporting;"),
        Requirement("fine", "(e)", fine),
        Requirement("bmps", "(f)", "The implementation of source control or treatment BMPs."),
    )


def _idde_elements(section: str, short: str) -> tuple[NoticeElement, ...]:
    return (
        NoticeElement("recipient", "the responsible person, by name and address", f"{short} § {section}A"),
        NoticeElement("site", "the property where the violation is found", f"{short} § {section}A"),
        NoticeElement("violation", "the prohibition violated or requirement not met", f"{short} § {section}A"),
        NoticeElement("requirements", "what the notice requires, items (a)-(f)", f"{short} § {section}A(1)"),
        NoticeElement("deadline", "the deadline for remediation or restoration", f"{short} § {section}A(2)"),
        NoticeElement("expense", "the work done at the violator's expense if the deadline is missed",
                      f"{short} § {section}A(2)"),
        NoticeElement("penalties", "the penalties", f"{short} § {section}B", required=False),
    )


RAMAPO = Law(
    key="ramapo-218", title="Town of Ramapo Code, Chapter 218, Illicit Discharges (L.L. No. 3-2006)",
    municipality="Town of Ramapo", short="Ramapo ch. 218",
    remediation=ClockRule("remediation", "remediation or restoration", "the violator", None, Counting.CALENDAR_DAYS,
                          "the notice", "Ramapo ch. 218 § 218-44A(2)", _ABATE, rollover=True),
    appeal=ClockRule("appeal", "appeal to the Town Board", "the person receiving the notice", 15,
                     Counting.CALENDAR_DAYS, "the notice's issuance", "Ramapo ch. 218 § 218-45",
                     "Any person receiving a notice of violation may appeal the determination of the SMO to the Town "
                     "Board within 15 days of its issuance", rollover=True),
    hearing=ClockRule("hearing", "the Town Board hears the appeal", "the Town Board", 30, Counting.CALENDAR_DAYS,
                      "the filing of the appeal", "Ramapo ch. 218 § 218-45",
                      "which shall hear the appeal within 30 days after the filing of the appeal"),
    decision_filing=ClockRule("decision_filing", "the decision filed with the Municipal Clerk and mailed by certified "
                              "mail", "the Town Board", 5, Counting.CALENDAR_DAYS, "the decision",
                              "Ramapo ch. 218 § 218-45",
                              "within five days of making its decision, file its decision in the office of the "
                              "Municipal Clerk and mail a copy of its decision by certified mail to said person"),
    corrective_work=ClockRule("corrective_work", "corrective work after the notice is upheld", "the violator", 5,
                              Counting.BUSINESS_DAYS, "the decision upholding the notice", "Ramapo ch. 218 § 218-46A",
                              "within five business days of the decision of the municipal authority upholding the "
                              "decision of the SMO", rollover=True),
    release_hazardous=ClockRule("release_hazardous", "notice of a release of hazardous materials",
                                "the person responsible", 0, Counting.IMMEDIATELY, "knowledge of the release",
                                "Ramapo ch. 218 § 218-43",
                                "In the event of such a release of hazardous materials said person shall immediately "
                                "notify emergency response agencies, the municipality, and the responsible MS4 of the "
                                "occurrence via emergency dispatch services."),
    release_notice=ClockRule("release_notice", "notice of a release of nonhazardous materials, in person, by telephone "
                             "or facsimile", "the person responsible", 1, Counting.BUSINESS_DAYS,
                             "knowledge of the release", "Ramapo ch. 218 § 218-43",
                             "In the event of a release of nonhazardous materials, said person shall notify the "
                             "municipality and responsible MS4 in person or by telephone or facsimile no later than "
                             "the next business day."),
    release_written=ClockRule("release_written", "written confirmation of the notice, mailed", "the person responsible",
                              3, Counting.BUSINESS_DAYS, "the telephone notice", "Ramapo ch. 218 § 218-43", _WRITTEN),
    penalty=PenaltyRule(
        "Ramapo ch. 218 § 218-44B", "week",
        (PenaltyTier(1, 0, 1000, "up to 15 days"), PenaltyTier(2, 1000, 2500, "up to 15 days"),
         PenaltyTier(3, 2500, 5000, "up to 15 days")), 5, "a violation (an offense, for jurisdiction)",
        "Each week's continued violation shall constitute a separate additional offense.",
        "A violation of Chapter 218 is punishable by a fine not exceeding $1,000 or imprisonment for up to 15 days, "
        "or both, for a first offense; for a second offense within five years, a fine of $1,000 to $2,500 or "
        "imprisonment for up to 15 days, or both; for a third or subsequent offense within five years, a fine of "
        "$2,500 to $5,000 or imprisonment for up to 15 days, or both. Each week's continued violation shall "
        "constitute a separate additional offense (section 218-44B)."),
    elements=_idde_elements("218-44", "Ramapo ch. 218") + (
        NoticeElement("delivery", "delivery by certified mail and/or posting of the property", "Ramapo ch. 218 § 218-44A"),
        NoticeElement("appeal", "the right to appeal to the Town Board within 15 days", "Ramapo ch. 218 § 218-45",
                      required=False),
    ),
    requirements=_requirements("Payment of a fine and reimbursement of any costs and/or expenses incurred by the "
                               "municipality relating to the violation; and"),
    delivery="certified mail and/or posting of the property", expense_warning=_EXPENSE,
    provisions=_provisions.RAMAPO,
)

SCHENECTADY_II = Law(
    key="schenectady-148-II",
    title="City of Schenectady Code, Chapter 148, Article II, Illicit Discharges (L.L. No. 9-2007)",
    municipality="City of Schenectady", short="Schenectady ch. 148",
    remediation=ClockRule("remediation", "remediation or restoration", "the violator", None, Counting.CALENDAR_DAYS,
                          "the notice", "Schenectady ch. 148 § 148-32A(2)", _ABATE, rollover=True),
    release_hazardous=ClockRule("release_hazardous", "notice of a release of hazardous materials",
                                "the person responsible", 0, Counting.IMMEDIATELY, "knowledge of the release",
                                "Schenectady ch. 148 § 148-31",
                                "In the event of such a release of hazardous materials, said person shall immediately "
                                "notify emergency response agencies of the occurrence via emergency dispatch "
                                "services."),
    release_notice=ClockRule("release_notice", "notice of a release of nonhazardous materials, in person, by telephone "
                             "or facsimile", "the person responsible", 1, Counting.BUSINESS_DAYS,
                             "knowledge of the release", "Schenectady ch. 148 § 148-31",
                             "In the event of a release of nonhazardous materials, said person shall notify the "
                             "municipality in person or by telephone or facsimile no later than the next business "
                             "day."),
    release_written=ClockRule("release_written", "written confirmation of the notice, mailed", "the person responsible",
                              3, Counting.BUSINESS_DAYS, "the telephone notice", "Schenectady ch. 148 § 148-31",
                              _WRITTEN),
    penalty=PenaltyRule(
        "Schenectady ch. 148 § 148-32B", "week",
        (PenaltyTier(1, 0, 350, "up to six months"), PenaltyTier(2, 350, 700, "up to six months"),
         PenaltyTier(3, 700, 1000, "up to six months")), 5, "a violation (a misdemeanor, for jurisdiction)",
        "Each week's continued violation shall constitute a separate additional violation.",
        "A violation of Article II is punishable by a fine not exceeding $350 or imprisonment for up to six months, "
        "or both, for a first offense; for a second offense within five years, a fine of $350 to $700 or "
        "imprisonment for up to six months, or both; for a third or subsequent offense within five years, a fine of "
        "$700 to $1,000 or imprisonment for up to six months, or both. Each week's continued violation shall "
        "constitute a separate additional violation (section 148-32B)."),
    elements=_idde_elements("148-32", "Schenectady ch. 148"),
    requirements=_requirements("Payment of a fine; and"), expense_warning=_EXPENSE,
    provisions=_provisions.SCHENECTADY_II,
)

SCHENECTADY_I = Law(
    key="schenectady-148-I",
    title="City of Schenectady Code, Chapter 148, Article I, Stormwater Management and Erosion and Sediment Control "
          "(L.L. No. 5-2007)",
    municipality="City of Schenectady", short="Schenectady ch. 148",
    remediation=ClockRule("remediation", "remedial measures", "the violator", 15, Counting.CALENDAR_DAYS,
                          "notification of the violation", "Schenectady ch. 148 § 148-18B",
                          "Within 15 days of notification of violation (or as otherwise provided by the City of "
                          "Schenectady), the violator shall take the remedial measures necessary to bring the land "
                          "development activity into compliance with this article.", rollover=True),
    penalty=PenaltyRule(
        "Schenectady ch. 148 § 148-18D", "day", (PenaltyTier(1, 0, 250, "as for a misdemeanor"),), None,
        "a misdemeanor",
        "each day during which any violation of any of the provisions of this article is committed, continued, or "
        "permitted shall constitute a separate offense",
        "Any person violating Article I is guilty of a misdemeanor, and each day during which any violation is "
        "committed, continued, or permitted is a separate offense, punishable by a fine of not more than $250 for "
        "each offense; a person convicted shall also bear the expense of restoration. Noncompliance that violates "
        "the Clean Water Act and the Environmental Conservation Law may bring substantial criminal, civil, and "
        "administrative penalties (section 148-18D)."),
    elements=(
        NoticeElement("recipient", "(1) the name and address of the operator/landowner, developer, or applicant",
                      "Schenectady ch. 148 § 148-18A(1)"),
        NoticeElement("site", "(2) the address of the site, or a description of the building, structure or land",
                      "Schenectady ch. 148 § 148-18A(2)"),
        NoticeElement("violation", "(3) a statement specifying the nature of the violation",
                      "Schenectady ch. 148 § 148-18A(3)"),
        NoticeElement("remedy", "(4) the remedial measures necessary and a time schedule for their completion",
                      "Schenectady ch. 148 § 148-18A(4)"),
        NoticeElement("penalties", "(5) a statement of the penalties that can be assessed",
                      "Schenectady ch. 148 § 148-18A(5)"),
        NoticeElement("deadline", "the remedial measures within 15 days of notification, or as the City provides",
                      "Schenectady ch. 148 § 148-18B"),
    ),
    stop_work=("Persons receiving a stop-work order shall be required to halt all land development activities, except "
               "those activities that address the violation(s) identified in the stop-work order. The stop-work order "
               "shall be in effect until the City of Schenectady confirms that the land development activity is in "
               "compliance and the violation has been satisfactorily addressed."),
    provisions=_provisions.SCHENECTADY_I,
)

LAWS: dict[str, Law] = {law.key: law for law in (RAMAPO, SCHENECTADY_I, SCHENECTADY_II)}

# The provision an evidence packet cites for a record that names none (an incident of the
# town's first law; a notice issued before notices named their provisions): the catalogue's
# default for the law.
PROHIBITION = {k: (lw.cite(lw.provision(_provisions.DEFAULT[k])), lw.provision(_provisions.DEFAULT[k]).text)
               for k, lw in LAWS.items()}


# What an alert's rule implements, word for word, for the evidence packet.
RULE_TEXT = {
    "turbidity_contrast": ("Schenectady ch. 148 § 148-12A", "An increase in turbidity that will cause a substantial "
                           "visible contrast to natural conditions;"),
    "inspection_due": ("Schenectady ch. 148 § 148-13B", "Following the commencement of construction, site inspections "
                       "shall be conducted by a licensed/certified professional at least every seven calendar days "
                       "and within 24 hours of the end of a storm event 0.5 inch or greater."),
}


def law(key: str) -> Law:
    try:
        return LAWS[key]
    except KeyError:
        raise ValueError(f"unknown law {key!r} (known: {', '.join(LAWS)})") from None


__all__ = ["Law", "LAWS", "ClockRule", "Counting", "PenaltyRule", "PenaltyTier", "NoticeElement", "Requirement",
           "PROHIBITION", "RULE_TEXT", "law"]
