"""New York's public holidays (General Construction Law § 24) from the maintained ``holidays``
package: see :mod:`.calendar`, which imports this module when it first needs a holiday."""

from __future__ import annotations

from datetime import date
from typing import Any

from holidays.countries.united_states import UnitedStates
from holidays.holiday_base import DateArg
from holidays.observed_holiday_base import SUN_TO_NEXT_MON, ObservedRule


class NewYorkPublicHolidays(UnitedStates):
    """``holidays.US(subdiv="NY")`` held to N.Y. General Construction Law § 24 (see the module)."""

    def __init__(self, **kwargs: Any) -> None:   # holidays' own keyword arguments (years, language, …)
        kwargs.update(subdiv="NY", observed=True, observed_rule=SUN_TO_NEXT_MON)
        super().__init__(**kwargs)   # type: ignore[no-untyped-call]  # holidays leaves its constructors unannotated

    def _add_observed(self, dt: DateArg | None = None, name: str | None = None, *, rule: ObservedRule | None = None,
                      force_observed: bool = False, show_observed_label: bool = True) -> tuple[bool, date | None]:
        # "if any of such days ... is Sunday, the next day thereafter": the US class asks for
        # Saturday-to-Friday too, year by year; § 24 knows only the Sunday rule.
        return super()._add_observed(dt, name, rule=SUN_TO_NEXT_MON, force_observed=force_observed,
                                     show_observed_label=show_observed_label)

    def _populate_subdiv_ny_public_holidays(self) -> None:
        super()._populate_subdiv_ny_public_holidays()   # type: ignore[no-untyped-call]  # holidays leaves its populate hooks unannotated
        if self.get_named("Susan B. Anthony Day", lookup="iexact"):
            self.pop_named("Susan B. Anthony Day", lookup="iexact")


__all__ = ["NewYorkPublicHolidays"]
