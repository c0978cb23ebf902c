"""New York business days: the public holidays of General Construction Law § 24 from the
maintained ``holidays`` package, configured to the statute, plus the town's own office
closures.

GCL § 24 names the public holidays (New Year's Day, Martin Luther King Jr. Day, Lincoln's
Birthday, Washington's Birthday, Memorial Day, Flag Day, Juneteenth, Independence Day,
Labor Day, Columbus Day, Veterans' Day, Thanksgiving Day, Christmas Day) "and if any of such
days except Flag day is Sunday, the next day thereafter; each general election day". So:

* only a holiday falling on a **Sunday** moves, to the Monday; one falling on a Saturday
  stays there (``holidays``' US default also moves it to the Friday before: not New York's
  law) — :class:`~.nyholidays.NewYorkPublicHolidays` applies ``SUN_TO_NEXT_MON`` alone;
* Lincoln's Birthday and the general Election Day are holidays (``subdiv="NY"``); Susan B.
  Anthony Day, which ``holidays`` lists for New York, is a commemoration outside § 24 and
  is dropped; the day after Thanksgiving is no holiday;
* Flag Day is always a Sunday and moves nowhere, so it never changes a business day;
* days the President or the Governor appoints for general thanksgiving, fasting or prayer
  are not in any calendar: enter one as an office closure.

A business day is any day but a Saturday, a Sunday or such a public holiday (GCL § 25-a's
"next succeeding business day"). The town's office closures (``office_closures`` in its
registry: a snow day, a flood) are not business days either; they are named as closures on
the board and in letters (:attr:`~ms4watch.contract.due.Due.closures`).
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, tzinfo
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterable, Protocol

from ..contract.due import NonBusinessDay

if TYPE_CHECKING:
    from .nyholidays import NewYorkPublicHolidays


def __getattr__(name: str) -> Any:
    """:class:`~.nyholidays.NewYorkPublicHolidays`, still importable from here; the
    ``holidays`` package is imported when a calendar first needs a holiday, not with this
    module (a server whose town has no compliance clock never does: ~0.1 s of its start-up)."""
    if name == "NewYorkPublicHolidays":
        from .nyholidays import NewYorkPublicHolidays
        return NewYorkPublicHolidays
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Closure(Protocol):
    """An office closure of the town (``contract.registry.OfficeClosure``)."""

    day: date
    name: str


class BusinessCalendar:
    """Business days of a New York town, in its zone; ``closures``: its own office closures."""

    def __init__(self, tz: tzinfo, closures: Iterable[Closure] = ()):
        self.tz = tz
        self._closures = {c.day: c.name for c in closures}

    @cached_property
    def _holidays(self) -> "NewYorkPublicHolidays":
        from .nyholidays import NewYorkPublicHolidays
        return NewYorkPublicHolidays()

    @property
    def tz_name(self) -> str:
        key = getattr(self.tz, "key", None)
        if not isinstance(key, str) or not key:
            raise ValueError(f"the town's zone must be an IANA zone (ZoneInfo), got {self.tz!r}")
        return key

    def non_business_day(self, d: date) -> NonBusinessDay | None:
        """Why ``d`` is not a business day (a weekend day, a public holiday, an office closure), or None."""
        if d in self._closures:
            return NonBusinessDay(d, self._closures[d], closure=True)
        names = ([f"{d:%A}"] if d.weekday() >= 5 else []) + ([self._holidays[d]] if d in self._holidays else [])
        return NonBusinessDay(d, ", ".join(names)) if names else None

    def is_business_day(self, d: date) -> bool:
        return d.weekday() < 5 and d not in self._holidays and d not in self._closures

    def holiday_name(self, d: date) -> str | None:
        """The public holiday on ``d`` (GCL § 24), or the office closure, or None."""
        return self._closures.get(d) or self._holidays.get(d)

    def closures_between(self, first: date, last: date) -> tuple[NonBusinessDay, ...]:
        """The town's office closures from ``first`` to ``last`` (both included)."""
        return tuple(NonBusinessDay(d, n, closure=True) for d, n in sorted(self._closures.items())
                     if first <= d <= last)

    def add_business_days(self, d: date, n: int) -> date:
        """The ``n``-th business day after ``d`` (``d`` itself not counted)."""
        if n < 0:
            raise ValueError(f"a number of business days must not be negative, got {n}")
        while n > 0:
            d += timedelta(days=1)
            if self.is_business_day(d):
                n -= 1
        return d

    def next_business_day_from(self, d: date) -> date:
        """``d`` if it is a business day, else the next one."""
        while not self.is_business_day(d):
            d += timedelta(days=1)
        return d

    def local_date(self, at: datetime) -> date:
        if at.tzinfo is None:
            raise ValueError(f"a time without a UTC offset: {at.isoformat()}")
        return at.astimezone(self.tz).date()

    def end_of(self, d: date) -> datetime:
        """The end of day ``d`` in the town's zone: the next local midnight (aware)."""
        return datetime.combine(d + timedelta(days=1), time(0), tzinfo=self.tz)


__all__ = ["BusinessCalendar", "NewYorkPublicHolidays", "Closure"]
