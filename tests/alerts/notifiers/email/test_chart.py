"""The evidence chart draws a line for each quantity from that quantity's own readings.

The readings behind an incident come as one frame whose columns have different cadences
(5-minute flow or turbidity beside 1-minute rain, as ``evidence.StoreReadings`` builds it):
on the union of their times each column is mostly gaps, and a line drawn through the gaps
is no line at all. The figure is inspected before it is rendered (the Line2D data), and the
PNG itself is compared with the same chart without the readings line."""

from __future__ import annotations

import io
from datetime import datetime, timezone

import numpy as np
import pandas as pd
import pytest

from ms4watch.alerts.notifiers.email.chart import chart_figure, chart_png

START = datetime(2026, 6, 8, 14, tzinfo=timezone.utc)


def interleaved(quantity: str, threshold: str | None) -> pd.DataFrame:
    """``quantity`` every 5 minutes, rain every minute: the frame the packet and the page get."""
    five = pd.date_range(START, periods=37, freq="5min")
    one = pd.date_range(START, periods=181, freq="1min")
    cols = {quantity: pd.Series(np.linspace(0.2, 6.0, len(five)), index=five),
            "rain_in": pd.Series(0.0, index=one)}
    if threshold:
        cols[threshold] = pd.Series(0.5, index=five)
    frame = pd.DataFrame(cols)
    frame.index.name = "time"
    assert frame[quantity].isna().sum() > len(five)          # mostly gaps on the union of the times
    return frame


def lines(fig, label: str):
    return [ln for ax in fig.axes for ln in ax.get_lines() if ln.get_label() == label]


@pytest.mark.parametrize("quantity, threshold, rule", [
    ("flow_gpm", "threshold_gpm", {"label": "flow floor", "value": 0.5, "unit": "gpm"}),
    ("turbidity_down_ntu", None, None)])
def test_the_alerting_quantity_is_drawn_as_a_line(quantity, threshold, rule):
    frame = interleaved(quantity, threshold)
    fig = chart_figure(frame, title="t", start=START, end=None, threshold=rule, tz="America/New_York")
    [line] = lines(fig, quantity)
    y = np.asarray(line.get_ydata(), dtype=float)
    assert len(y) == 37 and np.isfinite(y).all()             # every reading, joined: a line, not 37 dots
    assert y[-1] == pytest.approx(6.0)
    if threshold:
        [t] = lines(fig, threshold)
        assert np.isfinite(np.asarray(t.get_ydata(), dtype=float)).all()


def test_the_png_shows_the_line():
    """Rendered, the readings line is there: pixels of its colour (the first of the cycle,
    tab:blue #1f77b4; the rain is all zero, so no rain is filled). Before the fix there were
    none: axes, threshold and episode only."""
    from PIL import Image
    frame = interleaved("flow_gpm", "threshold_gpm")
    png = chart_png(frame, title="t", start=START, end=None, threshold=None, tz="America/New_York")
    px = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=int)
    blue = (np.abs(px - np.array([0x1F, 0x77, 0xB4])).sum(axis=2) < 40).sum()
    assert blue > 300, blue


def test_a_dry_weather_flow_chart_from_the_store_has_its_flow_line(tmp_path):
    """The frame the page, the email and the packet draw: ``evidence.StoreReadings`` over a
    SQLite store holding an outfall's 5-minute flow and its gauge's 1-minute rain."""
    from ms4watch.contract.registry import load_registry
    from ms4watch.contract.timeutil import to_ns
    from ms4watch.contract.wire import CanonicalReading
    from ms4watch.demo import demo_configs
    from ms4watch.evidence import StoreReadings
    from ms4watch.ingest.stores import SqliteStore
    from ms4watch.ingest.stores.base import StoredMessage
    reg = load_registry(demo_configs() / "sites.yaml")
    outfall = reg.outfalls[0]
    gauge = outfall.rain_gauges[0]
    t0 = to_ns(START)
    msgs = [StoredMessage("LOG-OF", i, (CanonicalReading(t0 + i * 300 * 10**9, outfall.id, "LOG-OF", "flow", "flow",
                                                         2.0 + i / 10, "gpm", "", i),)) for i in range(37)]
    msgs += [StoredMessage("LOG-RG", i, (CanonicalReading(t0 + i * 60 * 10**9, gauge, "LOG-RG", "rain", "rain", 0.0,
                                                          "in", "", i),)) for i in range(181)]
    sink = SqliteStore(tmp_path / "store.db")
    sink.open()
    try:
        sink.write(msgs)
        incident = {"kind": "dry_weather_flow", "subject": outfall.id, "event": {"outfall": outfall.id}}
        frame = StoreReadings(sink, reg)(incident, START, START + pd.Timedelta(hours=3))
    finally:
        sink.close()
    assert {"flow_gpm", "rain_in", "threshold_gpm"} <= set(frame.columns) and frame["flow_gpm"].isna().any()
    fig = chart_figure(frame, title="t", start=START, end=None, tz=reg.timezone,
                       threshold={"label": "flow floor", "value": outfall.flow_floor_gpm, "unit": "gpm"})
    [line] = lines(fig, "flow_gpm")
    assert np.isfinite(np.asarray(line.get_ydata(), dtype=float)).sum() == 37 == len(line.get_ydata())


def test_a_png_is_drawn_in_one_pass(monkeypatch):
    """The chart sits between an alert's queue row and its email (the delivery worker draws
    it before the SMTP send), so it is drawn once: a layout engine (constrained layout) makes
    ``savefig`` draw the whole figure twice, which was most of the half second
    ``bench_alert_latency.py`` found between the incident and the SMTP server."""
    from matplotlib.figure import Figure
    draws = []
    real = Figure.draw
    monkeypatch.setattr(Figure, "draw", lambda self, renderer: (draws.append(1), real(self, renderer))[1])
    png = chart_png(interleaved("flow_gpm", "threshold_gpm"), title="t", start=START, end=None, threshold=None,
                    tz="America/New_York")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(draws) == 1


def test_the_time_axis_reads_the_towns_local_time():
    """Times on the axis are the town's wall clock: 14:00 UTC on 8 June is 10:00 in New York."""
    import matplotlib.dates as mdates
    fig = chart_figure(interleaved("flow_gpm", None), title="t", start=START, end=None, threshold=None,
                       tz="America/New_York")
    fig.draw_without_rendering()
    labels = {t.get_text() for t in fig.axes[0].get_xticklabels()}
    assert "11:00" in labels and not labels & {"14:00", "15:00", "16:00"}, labels   # 10:00 to 13:00 local
    [line] = lines(fig, "flow_gpm")
    assert mdates.num2date(line.get_xdata()[0]) == START          # the data themselves are UTC instants


def _pixels(png: bytes) -> np.ndarray:
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def _fresh_png(frame, **kw) -> bytes:
    buf = io.BytesIO()
    chart_figure(frame, **kw).savefig(buf, format="png", pil_kwargs={"compress_level": 1})
    return buf.getvalue()


def test_charts_drawn_one_after_another_are_each_the_chart_a_new_figure_shows():
    """``chart_png`` draws on its thread's figure again (issue 22: a new figure's axes and
    tick labels were half a chart's cost): nothing of the chart before may show — not its
    lines, rain axis, legend, limits, colours, title or time zone."""
    contrast = interleaved("turbidity_up_ntu", None)
    contrast["turbidity_down_ntu"] = contrast["turbidity_up_ntu"] * 3
    contrast["rain_in"] = 0.25
    charts = [
        (contrast, dict(title="turbidity contrast at Site 7", start=START, end=None, tz="America/Chicago",
                        threshold={"kind": "turbidity_contrast", "label": "10 % or 5 NTU", "fraction": 0.1,
                                   "delta": 5.0})),
        (interleaved("flow_gpm", "threshold_gpm").drop(columns=["rain_in"]),      # no rain: no rain axis
         dict(title="dry-weather flow", start=START, end=None, tz="America/New_York",
              threshold={"label": "flow floor", "value": 0.5, "unit": "gpm"})),
        (interleaved("flow_gpm", None), dict(title="t", start=START, end=START + pd.Timedelta(hours=1), tz="UTC",
                                             threshold=None)),
    ]
    for frame, kw in charts + charts[:1]:
        reused, fresh = _pixels(chart_png(frame, **kw)), _pixels(_fresh_png(frame, **kw))
        # a shade of anti-aliasing may differ where two lines cross (seen: 9 pixels); a line,
        # axis, legend or limit left over from the chart before differs in thousands
        assert (reused != fresh).any(axis=2).sum() < 100, kw["title"]


def test_a_chart_after_the_first_on_a_thread_makes_no_new_figure(monkeypatch):
    from matplotlib.figure import Figure
    chart_png(interleaved("flow_gpm", None), title="t", start=START, end=None, threshold=None, tz="UTC")
    made = []
    real = Figure.__init__
    monkeypatch.setattr(Figure, "__init__", lambda self, *a, **k: (made.append(1), real(self, *a, **k))[1])
    chart_png(interleaved("turbidity_down_ntu", None), title="u", start=START, end=None, threshold=None, tz="UTC")
    assert made == []
