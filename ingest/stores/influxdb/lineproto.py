"""Prepared InfluxDB line protocol (no ``Point`` objects: ~5× faster, see DEVELOPERS.md).

Identifiers in ms4watch are ``[A-Za-z0-9_.-]`` (contract/ids.py) and units come from the
canonical table, so tag values never need escaping in practice; :func:`tag_escape` is
applied anyway to anything that is not an identifier we validated.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping

from ....contract.wire import CanonicalReading
from ..base import StoredMessage
from .schema import READING

FieldValue = str | int | float | bool


def tag_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=").replace(" ", "\\ ")


def str_field(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def field_value(v: FieldValue) -> str:
    """Typed field: bool → true/false, int → 12i, float → repr, str → quoted."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"{v}i"
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"field value {v!r} is not finite")
        return repr(v)
    if isinstance(v, str):
        return str_field(v)
    raise TypeError(f"unsupported field type {type(v).__name__}")


class LineEncoder:
    """Encodes readings; caches the escaped series key per tag set (bounded)."""

    __slots__ = ("_keys", "_max_keys")

    def __init__(self, max_keys: int = 100_000):
        self._keys: dict[tuple[str, str, str, str], str] = {}
        self._max_keys = max_keys

    def series_key(self, r: CanonicalReading) -> str:
        k = (r.station, r.device, r.sensor, r.quantity)      # the unit follows from the quantity
        key = self._keys.get(k)
        if key is None:
            if len(self._keys) >= self._max_keys:
                self._keys.clear()
            # tag keys in sorted order: InfluxDB sorts them anyway, sorted input is faster
            key = (f"{READING},device={tag_escape(r.device)},quantity={tag_escape(r.quantity)},"
                   f"sensor={tag_escape(r.sensor)},station={tag_escape(r.station)},unit={tag_escape(r.unit)}")
            self._keys[k] = key
        return key

    def reading(self, r: CanonicalReading, epoch: int = 0) -> str:
        key = self._keys.get((r.station, r.device, r.sensor, r.quantity)) or self.series_key(r)
        flags = r.flags
        if flags and ('"' in flags or "\\" in flags):
            flags = flags.replace("\\", "\\\\").replace('"', '\\"')
        ident = f"seq={r.seq}i,epoch={epoch}i" if epoch else f"seq={r.seq}i"    # no epoch field for epoch 0
        value = r.value
        if value is None:
            return f'{key} flags="{flags}",{ident} {r.time_ns}'
        return f'{key} value={value if type(value) is float else float(value)!r},flags="{flags}",{ident} {r.time_ns}'

    def messages(self, batch: Iterable[StoredMessage]) -> list[list[str]]:
        """Lines per message, in order (kept apart so a refused batch can be narrowed down).

        The same lines as :meth:`reading` gives, written without a call per reading, and the
        part after the value (flags, seq, epoch, time) built once for consecutive readings
        that share it (a message's readings usually do: one sample cycle, one time)."""
        keys = self._keys
        series_key = self.series_key
        out = []
        for m in batch:
            epoch = m.epoch
            lines: list[str] = []
            append = lines.append
            last_t = last_flags = last_seq = None
            tail = ""
            for r in m.readings:
                t, value, flags, seq = r[0], r[5], r[7], r[8]
                key = keys.get((r[1], r[2], r[3], r[4])) or series_key(r)
                if t != last_t or flags is not last_flags or seq != last_seq:
                    last_t, last_flags, last_seq = t, flags, seq
                    if flags and ('"' in flags or "\\" in flags):
                        flags = flags.replace("\\", "\\\\").replace('"', '\\"')
                    tail = f'flags="{flags}",seq={seq}i,epoch={epoch}i {t}' if epoch else f'flags="{flags}",seq={seq}i {t}'
                if value is None:
                    append(f"{key} {tail}")
                else:
                    append(f"{key} value={value if type(value) is float else float(value)!r},{tail}")
            out.append(lines)
        return out


def record_line(measurement: str, tags: Mapping[str, str], fields: Mapping[str, FieldValue | None],
                time_ns: int) -> str:
    """One line for a non-reading record (status, alert, incident, storm, inspection, calibration).

    ``None`` fields are left out; at least one field must remain.
    """
    tag_part = "".join(f",{tag_escape(k)}={tag_escape(v)}" for k, v in sorted(tags.items()) if v != "")
    field_part = ",".join(f"{tag_escape(k)}={field_value(v)}" for k, v in fields.items() if v is not None)
    if not field_part:
        raise ValueError(f"{measurement}: a record needs at least one field")
    return f"{tag_escape(measurement)}{tag_part} {field_part} {int(time_ns)}"
