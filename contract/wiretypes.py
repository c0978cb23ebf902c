"""The field types of the wire contract (:mod:`.wire`), each with its rule as data in its
``Annotated`` metadata: the pydantic models validate with them, and the ingest hot path
(:mod:`.wire_fast`) reads the same metadata, so the two cannot drift apart."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import Field, PlainValidator, Strict, ValidationInfo

from .bounds import COUNT_LIMIT, DEFAULT_WINDOW, TimeWindow
from .ids import IdRule
from .timeutil import parse_wire_time, to_ns


def reading_time(v: Any, info: ValidationInfo) -> datetime:
    """A reading's time: the RFC 3339 form only, within the :class:`~.bounds.TimeWindow` around
    the receive time the decoder was given (validation context ``received_ns``, ``window``)."""
    when = parse_wire_time(v)
    context = info.context or {}
    window: TimeWindow = context.get("window", DEFAULT_WINDOW)
    problem = window.problem(to_ns(when), v, context.get("received_ns"))
    if problem:
        raise ValueError(problem)
    return when


ReadingTime = Annotated[datetime, PlainValidator(reading_time)]
Count = Annotated[int, Strict(), Field(ge=0, lt=COUNT_LIMIT)]
"""``seq`` and ``epoch``: a JSON integer (not a string, a float or a boolean), 0 ≤ n < 2^63."""

DeviceIdText = Annotated[str, IdRule("device id")]
SensorIdText = Annotated[str, IdRule("sensor id")]
StationIdText = Annotated[str, IdRule("station id")]
DeviceEventKindText = Annotated[str, IdRule("event kind")]
