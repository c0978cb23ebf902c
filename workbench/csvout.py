"""CSV exports of the tables the pages show (UTF-8, a header row, times in the town's zone
with their offset). A cell that a spreadsheet would run as a formula is quoted with ``'``
(:mod:`ms4watch.contract.csvfile`, the one writer of every CSV)."""

from __future__ import annotations

from datetime import datetime, tzinfo
from typing import Any, Iterable, Sequence

from fastapi.responses import Response

from ..contract.csvfile import csv_text, safe_cell


def cell(value: Any, tz: tzinfo) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.astimezone(tz).isoformat(timespec="seconds")
    if hasattr(value, "value"):   # enums
        value = value.value
    return safe_cell(value)


def csv_response(filename: str, header: Sequence[str], rows: Iterable[Sequence[Any]], tz: tzinfo) -> Response:
    text = csv_text(header, ([cell(v, tz) for v in row] for row in rows), lineterminator="\r\n")
    return Response(text, media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})


__all__ = ["csv_response", "cell"]
