"""Times and days people give — in the workbench's forms, its API, a query string: within
the years the records can be about.

Python's ``datetime`` holds years 1 to 9999, but a time of year 1 with a +14:00 offset has
no UTC (``OverflowError``), year 9999 plus a day overflows, and neither is a time an
inspection, a case or a chart window can have. A time (or a window's end) is taken from
2000 to 2100 — as ingest takes readings from 2000 (``bounds.EARLIEST_NS``) — and a day
(a violation's first day, a party's "since") from 1900 to 2100. Checked on the value as
given, before any conversion, so the check itself cannot overflow; a ValueError names the
value and the range, and pydantic (or the caller) names the field.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, TypeVar

from pydantic import AfterValidator, AwareDatetime, Field

FIRST_YEAR, LAST_YEAR = 2000, 2100
FIRST_DAY_YEAR = 1900

D = TypeVar("D", date, datetime, None)


def plausible_time(value: D) -> D:
    """``value`` when its year is 2000-2100 (None passes); ValueError otherwise."""
    if value is not None and not FIRST_YEAR <= value.year <= LAST_YEAR:
        raise ValueError(f"{value.isoformat()} is outside the years {FIRST_YEAR}-{LAST_YEAR}")
    return value


def plausible_day(value: D) -> D:
    """``value`` when its year is 1900-2100 (None passes); ValueError otherwise."""
    if value is not None and not FIRST_DAY_YEAR <= value.year <= LAST_YEAR:
        raise ValueError(f"{value.isoformat()} is outside the years {FIRST_DAY_YEAR}-{LAST_YEAR}")
    return value


# The range in the OpenAPI schema too (a client, and a schema fuzzer, know a year-1 time is refused)
_TIME_SCHEMA = Field(json_schema_extra={"pattern": r"^(20[0-9]{2}|2100)-"})
_DAY_SCHEMA = Field(json_schema_extra={"pattern": r"^(19[0-9]{2}|20[0-9]{2}|2100)-"})

RecordTime = Annotated[AwareDatetime, AfterValidator(plausible_time), _TIME_SCHEMA]
"""A time with its UTC offset, 2000-2100 (an inspection, a case's observation, a notice)."""

AnyTime = Annotated[datetime, AfterValidator(plausible_time), _TIME_SCHEMA]
"""A time with or without an offset (the caller gives a naive one the town's zone), 2000-2100."""

RecordDay = Annotated[date, AfterValidator(plausible_day), _DAY_SCHEMA]
"""A calendar day, 1900-2100."""

__all__ = ["FIRST_YEAR", "LAST_YEAR", "FIRST_DAY_YEAR", "plausible_time", "plausible_day", "RecordTime", "AnyTime",
           "RecordDay"]
