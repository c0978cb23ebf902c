"""One root exception per package; third-party errors are translated at the boundary."""

from __future__ import annotations


class Ms4Error(Exception):
    """Root of every error ms4watch raises on purpose."""


class ConfigError(Ms4Error):
    """A configuration file (registry, firmware config) or CSV is invalid.

    The message names the file, the line and the field, e.g.
    ``sites.yaml:12: outfalls[0].flow_floor_gpm: Input should be greater than or equal to 0``.
    """

    def __init__(self, source: str, problems: list[tuple[int | None, str, str]]):
        self.source = source
        self.problems = problems  # (line, field path, message)
        lines = []
        for line, where, msg in problems:
            loc = f"{source}:{line}" if line else source
            lines.append(f"{loc}: {where}: {msg}" if where else f"{loc}: {msg}")
        super().__init__("\n".join(lines))


class ConfigValueError(ConfigError, ValueError):
    """One value — a command-line argument, a setting, a URL — is not one we understand, e.g.
    ``--now 2026-06-01T09:00: time without a UTC offset``. Raised by the parsers of such
    values, so a command catches :class:`Ms4Error` alone; a ValueError too, so code that
    parses values and catches that still does."""

    def __init__(self, message: str, source: str = ""):
        self.source = source
        self.problems = [(None, "", message)]
        Ms4Error.__init__(self, f"{source}: {message}" if source else message)


class ContractError(Ms4Error):
    """A message on the wire does not follow the contract. Names the topic and field."""

    def __init__(self, topic: str, field: str, message: str):
        self.topic = topic
        self.field = field
        super().__init__(f"{topic}: {field}: {message}" if field else f"{topic}: {message}")


class UnitError(Ms4Error):
    """A unit is unknown or does not fit the quantity."""
