"""The episode chart (PNG) and the CSV excerpt, from the readings the caller provides.

``readings_lookup(incident, start, end) -> pandas.DataFrame``: ``incident`` is the
snapshot dict, ``start``/``end`` aware datetimes. The frame is indexed by time (or has a
``time`` column); each numeric column is one series with its unit in its name
(``flow_gpm``, ``turbidity_down_ntu``, ``rain_in``). Columns whose name starts with
``rain`` are drawn as bars on a second axis; ``threshold*`` columns as dashed lines.
"""

from __future__ import annotations

import io
import threading
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Callable, cast

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

ReadingsLookup = Callable[[dict, datetime, datetime], "pd.DataFrame"]
MAX_CSV_ROWS = 5000
MARGIN = timedelta(hours=1)
MAX_WINDOW = timedelta(days=3)  # a long-open episode: its first three days are the evidence


def evidence_window(inc: dict[str, Any], now: datetime) -> tuple[datetime, datetime | None, datetime, datetime]:
    """For an incident snapshot: the episode (start, end) to shade and the readings window
    (from, to) to draw — the episode with an hour either side; for an inspection item, its
    storm from 12 h before it began."""
    start = datetime.fromisoformat(inc["start"])
    end = datetime.fromisoformat(inc["end"]) if inc.get("end") else None
    if inc.get("kind") == "inspection_due":
        ev = inc.get("event", {})
        start = datetime.fromisoformat(str(ev.get("storm_start") or inc["start"]).replace("Z", "+00:00")) - timedelta(hours=12)
        end = datetime.fromisoformat(str(ev.get("storm_end") or inc["start"]).replace("Z", "+00:00"))
    return start, end, start - MARGIN, min((end or now) + MARGIN, start - MARGIN + MAX_WINDOW)


def normalise(df: "pd.DataFrame") -> "pd.DataFrame":
    import pandas as pd

    if "time" in df.columns:
        df = df.set_index("time")
    idx = pd.to_datetime(df.index, utc=True)
    out = df.copy()
    out.index = idx
    out.index.name = "time"
    return out.sort_index()


def csv_excerpt(df: "pd.DataFrame") -> bytes:
    """The readings as CSV; values corrected for drift (``df.attrs["values"]``) say so first."""
    from ....contract.csvfile import csv_text
    d = df.iloc[:MAX_CSV_ROWS]
    head = "# values: corrected for fouling and drift (USGS TM 1-D3); raw values kept in the store\n" \
        if df.attrs.get("values") == "corrected" else ""
    rows = ([t, *(None if v != v else v for v in values)]          # NaN: an empty cell, as pandas writes it
            for t, values in zip(cast("pd.DatetimeIndex", d.index).strftime("%Y-%m-%dT%H:%M:%SZ"), d.itertuples(index=False, name=None)))
    return (head + csv_text(["time", *map(str, d.columns)], rows)).encode("utf-8")


def chart_png(df: "pd.DataFrame", *, title: str, start: datetime, end: datetime | None,
              threshold: dict[str, Any] | None, tz: str) -> bytes:
    """Lines for readings, bars for rain, the threshold dashed, the episode shaded (PNG).

    Drawn once (no layout engine: it draws the figure twice), compressed lightly, and on this
    thread's figure, used again: the delivery worker draws it between an alert's queue row
    and its email, and a new figure's axes and tick labels were half its cost (issue 22)."""
    buf = io.BytesIO()
    _reused().draw(df, title=title, start=start, end=end, threshold=threshold, tz=tz).savefig(
        buf, format="png", pil_kwargs={"compress_level": 1})
    return buf.getvalue()


_local = threading.local()


def _reused() -> "_Chart":
    """This thread's chart (the delivery worker's, a workbench request thread's): a figure is
    not to be drawn from two threads at once."""
    chart = getattr(_local, "chart", None)
    if chart is None:
        chart = _local.chart = _Chart()
    return chart


def warm_up() -> None:
    """Draw one small chart and throw it away: matplotlib's first chart in a process costs
    its imports, font loading and caches. The delivery worker calls this as it starts, so
    the first alert's email does not pay it."""
    import pandas as pd

    t = pd.date_range("2026-01-01", periods=3, freq="5min", tz="UTC")
    frame = pd.DataFrame({"flow_gpm": [0.0, 1.0, 2.0], "rain_in": [0.0, 0.01, 0.0]}, index=t)
    chart_png(frame, title="warm-up", start=t[0].to_pydatetime(), end=None,
              threshold={"label": "threshold", "value": 1.0, "unit": "gpm"}, tz="UTC")


def _x(index: Any) -> Any:
    """Times as matplotlib's date numbers (UTC), converted as one array: handed a tz-aware
    index, matplotlib converts it one Timestamp at a time."""
    import matplotlib.dates as mdates
    import pandas as pd

    return mdates.date2num(pd.DatetimeIndex(index).tz_convert("UTC").tz_localize(None).to_numpy())


def chart_figure(df: "pd.DataFrame", *, title: str, start: datetime, end: datetime | None,
                 threshold: dict[str, Any] | None, tz: str) -> "Figure":
    """The chart as a new matplotlib Figure, not yet rendered (what :func:`chart_png` draws,
    on a figure of its own). The data are UTC instants; the time axis reads the town's wall
    clock (``tz``)."""
    return _Chart().draw(df, title=title, start=start, end=end, threshold=threshold, tz=tz)


class _Chart:
    """One figure with its axes (readings; rain on a twin axis, hidden without rain), drawn
    again for each chart: :meth:`draw` first takes the last chart's artists away and gives the
    axes back their fresh state (data limits, autoscale, colour cycle), so a chart drawn here
    is the chart a new figure would show (``test_chart.py`` compares the pixels)."""

    def __init__(self) -> None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure  # imported when a chart is drawn: keeps start-up light

        self.fig = Figure(figsize=(8, 4), dpi=100)
        # its own Agg canvas: savefig draws with it, and with its renderer, kept from chart to
        # chart (the tick labels' sizes cached), instead of a new canvas and renderer per save
        FigureCanvasAgg(self.fig)
        self.ax = self.fig.subplots()
        self.ax2 = self.ax.twinx()
        self.drawn = False

    def _clear(self) -> None:
        from matplotlib.transforms import Bbox

        for ax in (self.ax, self.ax2):
            for artist in [*ax.lines, *ax.collections, *ax.patches]:
                artist.remove()
            legend = ax.get_legend()
            if legend is not None:
                legend.remove()
            ax.dataLim.set(Bbox.null())        # as a new axes: no data yet, autoscaled on the next
            ax.ignore_existing_data_limits = True
            ax.set_autoscale_on(True)
            ax.set_prop_cycle(None)            # the colours start again at the first of the cycle

    def draw(self, df: "pd.DataFrame", *, title: str, start: datetime, end: datetime | None,
             threshold: dict[str, Any] | None, tz: str) -> "Figure":
        from zoneinfo import ZoneInfo

        import matplotlib.dates as mdates
        import pandas as pd

        if self.drawn:
            self._clear()
        self.drawn = True
        fig, ax = self.fig, self.ax
        zone = ZoneInfo(tz)
        rain = [c for c in df.columns if str(c).lower().startswith("rain")]
        thresholds = [c for c in df.columns if str(c).lower().startswith("threshold")]
        series = [c for c in df.columns if c not in rain and c not in thresholds
                  and pd.api.types.is_numeric_dtype(df[c])]
        # Each series from its own readings: the frame's columns have different cadences (5-minute
        # flow beside 1-minute rain), so on the union of their times a column is mostly gaps, and
        # a line through the gaps is no line.
        own = {c: pd.to_numeric(df[c], errors="coerce").dropna() for c in series + thresholds + rain}
        for c in series:
            ax.plot(_x(own[c].index), own[c].to_numpy(), label=str(c), linewidth=1.2)
        for c in thresholds:
            ax.plot(_x(own[c].index), own[c].to_numpy(), label=str(c), linestyle="--", color="tab:red")
        up = next((c for c in series if "up" in str(c).lower()), None)
        down = next((c for c in series if "down" in str(c).lower()), None)
        if threshold and threshold.get("kind") == "turbidity_contrast" and up is not None and down is not None:
            # The contrast rule's line: downstream above it is a contrast (per reading).
            limit = own[up] + (own[up] * float(threshold["fraction"])).clip(lower=float(threshold["delta"]))
            ax.plot(_x(limit.index), limit.to_numpy(), linestyle="--", color="tab:red",
                    label=f"threshold: {threshold['label']}")
        if threshold and threshold.get("value") is not None:
            ax.axhline(float(threshold["value"]), linestyle="--", color="tab:red",
                       label=f"{threshold.get('label', 'threshold')} {threshold['value']} "
                             f"{threshold.get('unit', '')}".strip())
        shaded = _x([pd.Timestamp(start), pd.Timestamp(end) if end is not None else df.index.max()])
        ax.axvspan(shaded[0], shaded[1], color="tab:orange", alpha=0.15, label="episode")
        locator = mdates.AutoDateLocator(tz=zone)
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz=zone))
        ax2 = self.ax2
        ax2.set_visible(bool(rain))
        if rain:
            for c in rain:  # a filled step, not bars: cheap for thousands of readings
                ax2.fill_between(_x(own[c].index), 0, own[c].to_numpy(), step="mid", alpha=0.4, color="tab:blue",
                                 linewidth=0, label=str(c))
            top = float(pd.concat([own[c] for c in rain]).max())
            top = top if top == top else 0.0           # no rain reading in the window (NaN)
            ax2.set_ylim(max(top * 3, 0.01), 0)  # hanging from the top, a third of the height
            ax2.set_ylabel("rain [in]")
            ax2.yaxis.set_label_coords(1.09, 0.5)
            h2, l2 = ax2.get_legend_handles_labels()
        else:
            h2, l2 = [], []
        h1, l1 = ax.get_legend_handles_labels()
        ax.legend(h1 + h2, l1 + l2, loc="upper left", fontsize=8)
        ax.grid(alpha=0.3)
        # Fixed places for the margins, the title and the axis labels: matplotlib would otherwise
        # measure every tick label to place them, most of a chart's cost.
        fig.subplots_adjust(left=0.08, right=0.88 if rain else 0.97, bottom=0.13, top=0.92)
        fig.suptitle(title, fontsize=10, y=0.975)
        ax.set_xlabel(f"time ({tz})")
        ax.xaxis.set_label_coords(0.5, -0.09)
        return fig
