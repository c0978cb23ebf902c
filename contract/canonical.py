"""A readings message as the stores and the rules see it: canonical readings, UTC ns."""

from __future__ import annotations

from typing import NamedTuple


class CanonicalReading(NamedTuple):
    """One reading as the store and the rules see it: UTC ns, canonical unit.

    ``flags`` is a comma-separated string of :class:`~.wire.QualityFlag` values ("" when
    clean), so it is a plain field in every store.
    """

    time_ns: int
    station: str
    device: str
    sensor: str
    quantity: str
    value: float | None
    unit: str
    flags: str
    seq: int


class DecodedReadings(NamedTuple):
    """A readings message as ingest stores it: its identity and its canonical readings (in
    the order of :class:`~ms4watch.ingest.stores.base.StoredMessage`)."""

    device: str
    seq: int
    readings: list[CanonicalReading]
    epoch: int = 0
