"""The dashboard's plots as small SVG figures: geometry worked out here, drawn by one Jinja
macro (``_dash_plots.html``), which escapes every text.

Three shapes serve every plot: horizontal bars (stacked, optionally centred as a funnel),
a heatmap (rows by columns of counts) and lines over weeks (shares from 0 to 1). Each
figure carries a title and a description for screen readers; the page adds a data table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

WIDTH = 500
"""A figure's width in SVG units, about its panel's width in pixels at 1280 (it scales to
the panel, and so does its text)."""

WIDE = 1040
"""The width of a figure that spans both columns (the heatmap)."""

CHAR = 6.2
"""Rough width of a character of an 11-unit label, to fit label columns."""


@dataclass(frozen=True, slots=True)
class Mark:
    """One shape: ``rect`` (x, y, w, h), ``line`` (x, y to x2, y2), ``text`` at (x, y) or
    ``path`` (``d``); ``cls`` styles it, ``tip`` is its tooltip."""

    kind: str
    cls: str
    x: float = 0
    y: float = 0
    w: float = 0
    h: float = 0
    x2: float = 0
    y2: float = 0
    text: str = ""
    tip: str = ""
    d: str = ""
    anchor: str = "start"


@dataclass(frozen=True, slots=True)
class Figure:
    id: str
    title: str
    description: str
    height: float
    marks: list[Mark] = field(default_factory=list)
    width: float = WIDTH


@dataclass(frozen=True, slots=True)
class Segment:
    value: float
    cls: str
    tip: str


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    segments: Sequence[Segment]
    shown: str
    """The value written at the bar's end (a count, a duration)."""


def _clip(label: str, room: float) -> str:
    most = max(3, int(room / CHAR))
    return label if len(label) <= most else label[: most - 1] + "…"


def hbars(
    figure_id: str, title: str, description: str, bars: Sequence[Bar], *, centred: bool = False
) -> Figure:
    """One horizontal bar per row, its segments stacked; ``centred`` (a funnel) centres
    each bar on the widest."""
    row, gap, top = 22, 8, 4
    label_w = min(170.0, max((len(b.label) for b in bars), default=4) * CHAR + 8)
    value_w = max((len(b.shown) for b in bars), default=1) * CHAR + 10
    room = WIDTH - label_w - value_w
    peak = max((sum(s.value for s in b.segments) for b in bars), default=0) or 1
    marks: list[Mark] = []
    for i, bar in enumerate(bars):
        y = top + i * (row + gap)
        total = sum(s.value for s in bar.segments)
        x = label_w + ((peak - total) / peak * room / 2 if centred else 0)
        marks.append(
            Mark("text", "label", x=label_w - 8, y=y + row * 0.7, text=_clip(bar.label, label_w),
                 tip=bar.label, anchor="end")
        )  # fmt: skip
        for segment in bar.segments:
            w = segment.value / peak * room
            if w > 0:
                marks.append(
                    Mark("rect", segment.cls, x=x, y=y, w=max(w, 1.5), h=row, tip=segment.tip)
                )
            x += w
        marks.append(Mark("text", "value", x=x + 5, y=y + row * 0.7, text=bar.shown))
    marks.append(Mark("line", "axis", x=label_w, y=0, x2=label_w, y2=top + len(bars) * (row + gap)))
    return Figure(figure_id, title, description, top + len(bars) * (row + gap), marks)


def heatmap(
    figure_id: str,
    title: str,
    description: str,
    columns: Sequence[str],
    rows: Sequence[tuple[str, Sequence[int]]],
    tip: str,
    *,
    width: float = WIDE,
) -> Figure:
    """Counts as shaded cells, a row per label, a column per entry of ``columns``; ``tip``
    is a template with ``{row}``, ``{column}`` and ``{count}``."""
    cell_h, top = 22, 4
    label_w = min(150.0, max((len(r[0]) for r in rows), default=4) * CHAR + 8)
    cell_w = (width - label_w) / max(1, len(columns))
    peak = max((max(counts, default=0) for _label, counts in rows), default=0) or 1
    marks: list[Mark] = []
    for i, (label, counts) in enumerate(rows):
        y = top + i * cell_h
        marks.append(
            Mark("text", "label", x=label_w - 6, y=y + cell_h * 0.72, text=_clip(label, label_w),
                 tip=label, anchor="end")
        )  # fmt: skip
        for j, count in enumerate(counts):
            shade = 0 if count == 0 else 1 + min(4, int(count / peak * 4.999))
            marks.append(
                Mark("rect", f"heat h{shade}", x=label_w + j * cell_w + 0.5, y=y + 0.5,
                     w=cell_w - 1, h=cell_h - 1,
                     tip=tip.format(row=label, column=columns[j], count=count))
            )  # fmt: skip
    bottom = top + len(rows) * cell_h
    every = max(1, round(len(columns) / (width / 70)))
    for j in range(0, len(columns), every):
        marks.append(
            Mark("text", "tick", x=label_w + j * cell_w, y=bottom + 13, text=columns[j][5:])
        )
    return Figure(figure_id, title, description, bottom + 18, marks, width)


def lines(
    figure_id: str,
    title: str,
    description: str,
    columns: Sequence[str],
    series: Sequence[tuple[str, str, Sequence[float | None]]],
) -> Figure:
    """Shares (0 to 1) over ``columns``, one line per ``(label, cls, values)``; a gap where a
    value is None, a dot on each value (with its tooltip)."""
    left, top, plot_h = 34, 8, 120
    step = (WIDTH - left - 12) / max(1, len(columns) - 1)
    marks: list[Mark] = []
    for share in (0.0, 0.5, 1.0):
        y = top + (1 - share) * plot_h
        marks.append(Mark("line", "grid", x=left, y=y, x2=WIDTH - 6, y2=y))
        marks.append(Mark("text", "tick", x=left - 5, y=y + 4, text=f"{share:.0%}", anchor="end"))
    every = max(1, len(columns) // 6)
    for j in range(0, len(columns), every):
        x = left + j * step
        marks.append(
            Mark("text", "tick", x=x, y=top + plot_h + 16, text=columns[j][5:], anchor="middle")
        )
    dots: list[Mark] = []
    for label, cls, values in series:
        path: list[str] = []
        pen_up = True
        for j, value in enumerate(values):
            if value is None:
                pen_up = True
                continue
            x, y = left + j * step, top + (1 - value) * plot_h
            path.append(f"{'M' if pen_up else 'L'}{x:.1f},{y:.1f}")
            pen_up = False
            tip = f"{label} · {columns[j]}: {value:.0%}"
            dots.append(Mark("rect", f"dot {cls}", x=x - 3, y=y - 3, w=6, h=6, tip=tip))
        if path:
            marks.append(Mark("path", f"line {cls}", d=" ".join(path)))
    marks.extend(dots)
    return Figure(figure_id, title, description, top + plot_h + 22, marks)
