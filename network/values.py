"""Attribute values as towns keep them, read for the network: a field by its name in any
case, numbers with the GIS no-data marker, whole numbers kept as reals, codes in any case.
Messages name the layer, the feature and the field."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .errors import NetworkError
from .model import Finding


def field_name(row: dict, field: str, where: str) -> str:
    """The layer's name for the mapping's ``field``: the same, else the one field differing
    only in case (GDAL matches field names so; a shapefile's are upper case)."""
    if field in row:
        return field
    alike = [k for k in row if not k.startswith("__") and k.casefold() == field.casefold()]
    if len(alike) == 1:
        return alike[0]
    cut = [k for k in row if len(field) > 10 and k.casefold() == field[:10].casefold()]
    hint = f"; a shapefile keeps 10 characters of a name: {cut[0]}?" if cut else ""
    raise NetworkError(f"{where}: the mapping names field {field!r}, which the layer does not have "
                       f"(it has {', '.join(k for k in row if not k.startswith('__'))}{hint})")


def feature(where: str, row: dict) -> str:
    """The layer and the feature's id in it (GDAL's FID, as QGIS shows it), for messages."""
    return f"{where} feature {row['__fid__']}"


NO_DATA_MARKER = -9999.0      # GIS tools' "no value" (-9999, -99999…): no invert or size is this low


def number(row: dict, field: str | None, fid: str, what: str, where: str, findings: list[Finding],
            no_data: Sequence[float] = (), size: bool = False) -> float | None:
    """The field's number; None when empty or one of the town's ``no_data`` values, and,
    said, when a no-data marker (-9999 or below) or, for a ``size``, not above 0."""
    if not field:
        return None
    field = field_name(row, field, where)
    v = row[field]
    if v is None or (isinstance(v, str) and not v.strip()):
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        findings.append(Finding("bad_value", fid, f"{feature(where, row)}: {what} {fid}: {field} = {v!r} is not a "
                                "number; read as unknown"))
        return None
    if x in no_data:
        return None
    if x <= NO_DATA_MARKER or (size and x <= 0):
        why = "is a no-data marker" if x <= NO_DATA_MARKER else "is not a size"
        findings.append(Finding("bad_value", fid, f"{feature(where, row)}: {what} {fid}: {field} = {as_text(v)} {why}; "
                                "read as unknown"))
        return None
    return x


def as_text(v: Any) -> str | None:
    """A value as the town writes it: None when empty; a whole number stored as a real
    (12.0, as shapefiles and spreadsheet exports keep ids and codes; "12.0", as GDAL writes
    one in a column of mixed types) as ``12``, its digits kept (``004``)."""
    if v is None:
        return None
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    written = str(v).strip()
    if WHOLE_AS_REAL.match(written):        # "12.0": GDAL's text for a real in a column of mixed types
        written = written[:written.index(".")]
    return written or None


WHOLE_AS_REAL = re.compile(r"^[+-]?\d+\.0+$")


def text(row: dict, field: str | None, where: str) -> str | None:
    """The field's value as text (:func:`as_text`); None when the mapping names no field."""
    if not field:
        return None
    return as_text(row[field_name(row, field, where)])


def code(value: str | None, table: dict[str, Any]) -> Any:
    """What the mapping's ``table`` says a value means: the same code, else the one code
    differing only in case (``mh`` for ``MH``); None when it has none."""
    if value is None:
        return None
    if value in table:
        return table[value]
    alike = [meaning for code, meaning in table.items() if code.strip().casefold() == value.casefold()]
    return alike[0] if len(alike) == 1 else None
