"""Every CSV the project writes goes through this writer: a cell a spreadsheet would run as a
formula is written with a leading ``'``.

A text cell starting with ``=``, ``+``, ``-``, ``@``, TAB or CR is a formula to Excel,
LibreOffice and Google Sheets (``=HYPERLINK(…)``, ``-2+3+cmd|' /C calc'!A0``); prefixing a
single quote makes it text (OWASP, "CSV Injection"). Numbers stay numbers: an ``int`` or
``float`` cell, or a text cell that is a plain decimal number (``-3.5``, ``-1e-3``), is
written as it is, so a negative temperature is still a number in the sheet.

Callers format their own times (UTC in a packet, the town's zone in an export); ``None`` is
an empty cell.
"""

from __future__ import annotations

import csv
import io
import re
from typing import IO, Any, Iterable, Sequence

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


def safe_cell(value: Any) -> Any:
    """``value`` as a CSV cell no spreadsheet runs: numbers as they are, text neutralised."""
    if value is None:
        return ""
    if isinstance(value, (bool, int, float)):
        return value
    text = value if isinstance(value, str) else str(value)
    if text.startswith(FORMULA_START) and not _PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


class CsvWriter:
    """``csv.writer`` whose every cell goes through :func:`safe_cell`. A row with a CR or LF
    in a text cell is written with its text quoted (``csv`` quotes only the characters of its
    own line terminator, so a lone CR would split the row for the reader)."""

    def __init__(self, out: IO[str], *, lineterminator: str = "\n"):
        self._w = csv.writer(out, lineterminator=lineterminator)
        self._quoted = csv.writer(out, lineterminator=lineterminator, quoting=csv.QUOTE_NONNUMERIC)

    def writerow(self, row: Iterable[Any]) -> None:
        cells = [safe_cell(v) for v in row]
        breaks = any(isinstance(c, str) and ("\r" in c or "\n" in c) for c in cells)
        (self._quoted if breaks else self._w).writerow(cells)

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def writer(out: IO[str], *, lineterminator: str = "\n") -> CsvWriter:
    return CsvWriter(out, lineterminator=lineterminator)


def csv_text(header: Sequence[str], rows: Iterable[Iterable[Any]], *, lineterminator: str = "\n") -> str:
    """A header row and ``rows`` as CSV text."""
    buf = io.StringIO()
    w = writer(buf, lineterminator=lineterminator)
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


__all__ = ["FORMULA_START", "CsvWriter", "csv_text", "safe_cell", "writer"]
