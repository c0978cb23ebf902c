"""A station's chart as SVG, drawn on the server from readings already summarised in time
buckets (``ingest/stores/summary.py``: one bucket per pixel column).

Each quantity is a stroke through its buckets' least and greatest values, so every peak
and every threshold crossing shows at any zoom (LTTB, one point per bucket, would drop
an extreme that crossed a threshold); rain hangs from the top as bars of the bucket's
depth (depths add up) on an axis of its own; thresholds are dashed; storms and alert
episodes are shaded bands with their label. SVG: crisp on a phone, text a screen reader
reads (``<title>``, ``<desc>``), no script, a few kilobytes for a year.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from html import escape
from typing import Literal, Mapping, Sequence

from ..ingest.stores.base import Bucket

COLOURS = ("#0b5394", "#b3261e", "#1a7f37", "#7a4fb3")
RAIN = "#4a90d9"


@dataclass(frozen=True)
class Line:
    label: str
    buckets: Sequence[Bucket]
    colour: str = COLOURS[0]


@dataclass(frozen=True)
class Threshold:
    """A level (``value``) or one that moves (``points``: (time [ns], value) per bucket)."""
    label: str
    value: float | None = None
    points: Sequence[tuple[int, float]] = ()


@dataclass(frozen=True)
class Band:
    start_ns: int
    end_ns: int
    label: str
    kind: str = "storm"          # storm | episode


@dataclass(frozen=True)
class Chart:
    title: str
    start_ns: int
    end_ns: int
    unit: str                                   # the lines' unit
    lines: Sequence[Line] = ()
    rain: Sequence[Bucket] = ()                 # bucket sums [in]
    thresholds: Sequence[Threshold] = ()
    bands: Sequence[Band] = ()
    width_ns: int = 0                           # the buckets' width
    notes: Sequence[str] = field(default_factory=tuple)
    basis: Mapping[str, Literal["corrected"]] = field(default_factory=dict)   # a line's label (or "rain") -> "corrected"


W, H = 800, 320
LEFT, RIGHT, TOP, BOTTOM = 56, 46, 40, 34


def render(c: Chart, tz: tzinfo, width: int = W, height: int = H) -> str:
    """The chart as an SVG document (``image/svg+xml``)."""
    pw, ph = width - LEFT - RIGHT, height - TOP - BOTTOM
    span = max(c.end_ns - c.start_ns, 1)

    def x(t: int) -> float:
        return LEFT + (t - c.start_ns) / span * pw

    lo, hi = _range(c)
    y_ticks = _nice_ticks(lo, hi)
    lo, hi = min(lo, y_ticks[0]), max(hi, y_ticks[-1])

    def y(v: float) -> float:
        return TOP + ph - (v - lo) / (hi - lo) * ph

    half = c.width_ns / 2
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
           f'height="{height}" role="img" aria-labelledby="chart-title chart-desc" font-family="system-ui, sans-serif" '
           'font-size="12">',
           f'<title id="chart-title">{escape(c.title)}</title>',
           f'<desc id="chart-desc">{escape(_describe(c, tz))}</desc>',
           f'<rect x="0" y="0" width="{width}" height="{height}" fill="#fff"/>']
    # bands first, under everything
    for b in c.bands:
        x0, x1 = max(x(b.start_ns), LEFT), min(x(b.end_ns), LEFT + pw)
        if x1 < LEFT or x0 > LEFT + pw:
            continue
        fill, op = (RAIN, 0.13) if b.kind == "storm" else ("#e69500", 0.2)
        out.append(f'<rect class="band {b.kind}" x="{x0:.1f}" y="{TOP}" width="{max(x1 - x0, 1.5):.1f}" '
                   f'height="{ph}" fill="{fill}" fill-opacity="{op}"><title>{escape(b.label)}</title></rect>')
        if x1 - x0 > 40:   # storms labelled along the bottom, episodes along the top
            ly = TOP + ph - 4 if b.kind == "storm" else TOP + 11
            out.append(f'<text x="{x0 + 3:.1f}" y="{ly}" fill="#3b4651" font-size="10" paint-order="stroke" '
                       f'stroke="#fff" stroke-width="3">{escape(b.label)}</text>')
    # grid and axes
    for v in y_ticks:
        out.append(f'<line x1="{LEFT}" x2="{LEFT + pw}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#e3e7eb"/>'
                   f'<text x="{LEFT - 6}" y="{y(v) + 4:.1f}" text-anchor="end" fill="#5f6b76">{_fmt(v)}</text>')
    for t, label in _time_ticks(c.start_ns, c.end_ns, tz, max_ticks=max(3, pw // 90)):
        out.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{TOP}" y2="{TOP + ph}" stroke="#eef1f4"/>'
                   f'<text x="{x(t):.1f}" y="{TOP + ph + 16}" text-anchor="middle" fill="#5f6b76">{escape(label)}</text>')
    out.append(f'<text x="14" y="{TOP + ph / 2:.0f}" transform="rotate(-90 14 {TOP + ph / 2:.0f})" '
               f'text-anchor="middle" fill="#5f6b76">{escape(c.unit)}</text>')
    # rain hanging from the top, a third of the height at most
    if c.rain:
        top = max(b.sum or 0.0 for b in c.rain) or 0.01
        scale = ph / 3 / top
        bw = max(c.width_ns / span * pw, 1.0)
        bars = "".join(f'<rect x="{x(b.start_ns):.1f}" y="{TOP}" width="{bw:.1f}" height="{b.sum * scale:.1f}"/>'
                       for b in c.rain if b.sum)
        out.append(f'<g class="rain" fill="{RAIN}" fill-opacity="0.55">{bars}</g>')
        out.append(f'<text x="{LEFT + pw + 4}" y="{TOP + 10}" fill="{RAIN}">{_fmt(top)} in</text>'
                   f'<text x="{LEFT + pw + 4}" y="{TOP + 22}" fill="{RAIN}" font-size="10">rain per</text>'
                   f'<text x="{LEFT + pw + 4}" y="{TOP + 33}" fill="{RAIN}" font-size="10">{_dur(c.width_ns)}</text>')
    # the readings: a stroke through each bucket's least and greatest
    gap = 3 * c.width_ns
    for line in c.lines:
        d: list[str] = []
        prev = None
        for bucket in line.buckets:
            if bucket.min is None or bucket.max is None:    # no reading in it
                continue
            cx = x(int(bucket.start_ns + half))
            move = prev is None or bucket.start_ns - prev > gap
            d.append(f"{'M' if move else 'L'}{cx:.1f} {y(bucket.max):.1f}")
            if bucket.min != bucket.max:
                d.append(f"L{cx:.1f} {y(bucket.min):.1f}")
            prev = bucket.start_ns
        if d:
            out.append(f'<path class="series" d="{" ".join(d)}" fill="none" stroke="{line.colour}" '
                       f'stroke-width="1.4" stroke-linejoin="round"><title>{escape(line.label)}</title></path>')
    for th in c.thresholds:
        if th.value is not None and lo <= th.value <= hi:
            out.append(f'<line class="threshold" x1="{LEFT}" x2="{LEFT + pw}" y1="{y(th.value):.1f}" '
                       f'y2="{y(th.value):.1f}" stroke="#b3261e" stroke-dasharray="6 4" stroke-width="1.2">'
                       f'<title>{escape(th.label)}</title></line>')
        elif th.points:
            steps = " ".join(f"{'M' if i == 0 else 'L'}{x(int(t + half)):.1f} {y(min(v, hi)):.1f}"
                             for i, (t, v) in enumerate(th.points))
            out.append(f'<path class="threshold" d="{steps}" fill="none" stroke="#b3261e" stroke-dasharray="6 4" '
                       f'stroke-width="1.2"><title>{escape(th.label)}</title></path>')
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#c5ccd3"/>')
    # legend along the top
    lx: float = LEFT
    items = [(ln.label, ln.colour, "line") for ln in c.lines] + [(t.label, "#b3261e", "dash") for t in c.thresholds]
    if c.rain:
        items.append(("rain", RAIN, "bar"))
    if any(b.kind == "storm" for b in c.bands):
        items.append(("storm", RAIN, "band"))
    if any(b.kind == "episode" for b in c.bands):
        items.append(("alert episode", "#e69500", "band"))
    row = 0
    for label, colour, how in items:
        w = 34 + 7.0 * len(label)
        if lx + w > width - 6:
            lx, row = LEFT, row + 1
        ly = 14 + row * 14
        if row > 1:
            break
        if how == "line":
            out.append(f'<line x1="{lx}" x2="{lx + 18}" y1="{ly - 4}" y2="{ly - 4}" stroke="{colour}" stroke-width="2"/>')
        elif how == "dash":
            out.append(f'<line x1="{lx}" x2="{lx + 18}" y1="{ly - 4}" y2="{ly - 4}" stroke="{colour}" '
                       'stroke-dasharray="5 3" stroke-width="1.5"/>')
        else:
            opacity = "0.55" if how == "bar" else "0.25"
            out.append(f'<rect x="{lx}" y="{ly - 9}" width="18" height="9" fill="{colour}" fill-opacity="{opacity}"/>')
        out.append(f'<text x="{lx + 22}" y="{ly}" fill="#1b1f24">{escape(label)}</text>')
        lx += w
    if not c.lines and not c.rain:
        out.append(f'<text x="{LEFT + pw / 2}" y="{TOP + ph / 2}" text-anchor="middle" fill="#5f6b76" font-size="16">'
                   'No readings are stored for this window.</text>')
    out.append("</svg>")
    return "".join(out)


def _range(c: Chart) -> tuple[float, float]:
    vals = [v for ln in c.lines for b in ln.buckets for v in (b.min, b.max) if v is not None]
    vals += [t.value for t in c.thresholds if t.value is not None]
    if not vals:
        return 0.0, 1.0
    lo, hi = min(min(vals), 0.0), max(vals)
    if hi <= lo:
        hi = lo + 1.0
    return lo, hi + (hi - lo) * 0.05


def _nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.floor(lo / step) * step
    ticks = []
    v = first
    while v < hi + step * 0.999:
        ticks.append(round(v, 10))
        v += step
    return ticks


_STEPS = [timedelta(minutes=m) for m in (10, 30)] + [timedelta(hours=h) for h in (1, 2, 3, 6, 12)] + \
         [timedelta(days=d) for d in (1, 2, 7, 14)]
_MONTHS = (1, 2, 3, 6, 12)


def _time_ticks(start_ns: int, end_ns: int, tz: tzinfo, max_ticks: int = 8) -> list[tuple[int, str]]:
    """Tick times [ns] on round local times, and their labels."""
    start = datetime.fromtimestamp(start_ns / 1e9, tz=timezone.utc).astimezone(tz)
    end = datetime.fromtimestamp(end_ns / 1e9, tz=timezone.utc).astimezone(tz)
    span = end - start
    for step in _STEPS:
        if span / step <= max_ticks:
            break
    else:
        months = next((m for m in _MONTHS if span.days / 30.4 / m <= max_ticks), 24)
        out: list[tuple[int, str]] = []
        t = start.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        while t <= end:
            if t >= start and (t.month - 1) % months == 0:
                out.append((_ns(t), t.strftime("%b %Y" if t.month == 1 or not out else "%b")))
            t = (t.replace(day=28) + timedelta(days=4)).replace(day=1)
        return out
    out = []
    if step >= timedelta(days=1):
        t = start.replace(hour=0, minute=0, second=0, microsecond=0)
        if t < start:
            t = (t + timedelta(days=1)).replace(hour=0)
        while t <= end:
            out.append((_ns(t), t.strftime("%b %d")))
            t = (t + step + timedelta(hours=3)).replace(hour=0, minute=0, second=0, microsecond=0)  # DST-safe midnight
        return out
    minutes = int(step.total_seconds() // 60)
    walk = timedelta(minutes=minutes if minutes < 60 else 60)   # whole hours in local time, across DST
    t = start.replace(second=0, microsecond=0, minute=0)
    while t <= end:
        local = t.astimezone(tz)
        if t >= start and (minutes < 60 and local.minute % minutes == 0
                           or minutes >= 60 and local.minute == 0 and local.hour % (minutes // 60) == 0):
            out.append((_ns(local), local.strftime("%b %d" if local.hour == 0 and local.minute == 0 else "%H:%M")))
        t = (t.astimezone(timezone.utc) + walk).astimezone(tz)
    return out


def _ns(dt: datetime) -> int:
    return int(round(dt.timestamp() * 1e9))


def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}".rstrip("0").rstrip(".")
    return f"{v:.3g}"


def _dur(ns: int) -> str:
    s = ns / 1e9
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    if s < 2 * 86400:
        return f"{s / 3600:.1f} h".replace(".0 h", " h")
    return f"{s / 86400:.1f} d".replace(".0 d", " d")


def _describe(c: Chart, tz: tzinfo) -> str:
    def when(ns: int) -> str:
        return datetime.fromtimestamp(ns / 1e9, tz=timezone.utc).astimezone(tz).strftime("%Y-%m-%d %H:%M")

    parts = [f"From {when(c.start_ns)} to {when(c.end_ns)}."]
    for ln in c.lines:
        lows = [b.min for b in ln.buckets if b.min is not None]
        highs = [b.max for b in ln.buckets if b.max is not None]
        if lows and highs:
            parts.append(f"{ln.label}: from {_fmt(min(lows))} to {_fmt(max(highs))} {c.unit}.")
    if c.rain:
        parts.append(f"Rain: {_fmt(sum(b.sum or 0.0 for b in c.rain))} in in all.")
    for t in c.thresholds:
        parts.append(f"Threshold {t.label}" + (f" at {_fmt(t.value)} {c.unit}." if t.value is not None else "."))
    storms = [b for b in c.bands if b.kind == "storm"]
    if storms:
        parts.append(f"{len(storms)} storm{'s' if len(storms) != 1 else ''}: " + "; ".join(b.label for b in storms[:8])
                     + ("…" if len(storms) > 8 else "") + ".")
    episodes = [b for b in c.bands if b.kind == "episode"]
    if episodes:
        parts.append(f"{len(episodes)} alert episode{'s' if len(episodes) != 1 else ''}.")
    parts += list(c.notes)
    return " ".join(parts)


__all__ = ["Chart", "Line", "Threshold", "Band", "render", "COLOURS", "RAIN"]
