"""CSV exports of the tables the pages show (UTF-8, a header row, times in the town's zone
with their offset). A cell that a spreadsheet would run as a formula is quoted with ``'``."""

from __future__ import annotations

import csv
import io
from datetime import datetime, tzinfo
from typing import Any, Iterable, Sequence

from fastapi.responses import Response

_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def cell(value: Any, tz: tzinfo) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.astimezone(tz).isoformat(timespec="seconds")
    if hasattr(value, "value"):   # enums
        value = value.value
    text = str(value)
    return "'" + text if text.startswith(_FORMULA) and not _number(text) else text


def _number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def csv_response(filename: str, header: Sequence[str], rows: Iterable[Sequence[Any]], tz: tzinfo) -> Response:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(header)
    for row in rows:
        w.writerow([cell(v, tz) for v in row])
    return Response(buf.getvalue(), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})


__all__ = ["csv_response", "cell"]
