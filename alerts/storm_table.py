"""The storm table printed by ``ms4watch storms`` (CSV)."""

from __future__ import annotations

from typing import IO, Any, Iterable

import numpy as np
import pandas as pd

from ..contract.csvfile import writer as csv_writer
from .rainfiles import MM_PER_IN

HEADER = ["start", "end", "depth_in", "depth_mm", "duration_h",
          "peak_i5_in_h", "peak_i15_in_h", "peak_i60_in_h", "qualifying"]


def _fmt_time(t: pd.Timestamp, naive: bool) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S") if naive else t.isoformat()


def write_storm_table(table: pd.DataFrame, out: IO[str], *, naive: bool) -> int:
    """Write one CSV row per storm; times without offset when the record had none."""
    w = csv_writer(out)
    w.writerow(HEADER)
    # the columns of rules.storms.COLUMNS: start, end (Timestamp), depth_uin (int), duration_h, peaks (float), qualifying
    rows: Iterable[Any] = table.itertuples(index=False)
    for r in rows:
        w.writerow([_fmt_time(r.start, naive), _fmt_time(r.end, naive),
                    f"{r.depth_uin / 1e6:.6f}".rstrip("0").rstrip("."),
                    f"{r.depth_uin / 1e6 * MM_PER_IN:.2f}", f"{r.duration_h:.4f}",
                    *(("" if np.isnan(x) else f"{x:.3f}") for x in (r.peak_i5_in_h, r.peak_i15_in_h, r.peak_i60_in_h)),
                    "true" if r.qualifying else "false"])
    return len(table)
