"""The report's layout (tools/shift/story.py): each chart of a Story laid out once as plain shapes in pixels, which
tools/shift/render.py draws as SVG and as PNG alike. A page is a heading and one chart per application's weights and
per provider, stacked; every size is fixed, so a page of N charts is HEADING + N * CHART pixels high."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from tools.shift.story import WEIGHTS, Mark, Panel, Series, Story

WIDTH, HEADING, CHART = 960, 84, 240
LEFT, RIGHT, TOP, BOTTOM = 64, 220, 40, 30  # the plot area's margins inside a chart (the legend on the right)
PALETTE = ("#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f")
GREY, INK, RED, GREEN = "#bbbbbb", "#222222", "#d62728", "#2ca02c"
MARK_COLOURS = {"passed": GREEN, "breach": RED, "rollback": RED, "drain": "#9467bd", "end": INK}


@dataclass(frozen=True)
class Line:
    points: tuple[tuple[float, float], ...]
    colour: str
    width: float = 1.0
    dashed: bool = False


@dataclass(frozen=True)
class Dot:
    x: float
    y: float
    r: float
    colour: str


@dataclass(frozen=True)
class Text:
    x: float
    y: float  # the baseline
    text: str
    colour: str = INK
    size: int = 12
    anchor: str = "start"  # start, middle, end (SVG's text-anchor)


Shape = Line | Dot | Text


@dataclass(frozen=True)
class Drawn:
    """One chart (or the heading), its shapes in its own coordinates."""

    kind: str  # "heading", or the panel's kind
    key: str
    height: int
    shapes: tuple[Shape, ...]


@dataclass(frozen=True)
class Page:
    title: str
    width: int
    charts: tuple[Drawn, ...]

    @property
    def height(self) -> int:
        return sum(chart.height for chart in self.charts)


def page(story: Story) -> Page:
    heading = tuple(Text(12, 24 + 22 * n, line, size=16 if n == 0 else 12) for n, line in enumerate(story.heading))
    span = max(story.span, 60.0)  # a drain is one moment: a minute's axis around it
    charts = [_chart(panel, span, story.marks) for panel in story.panels]
    return Page(story.heading[0], WIDTH, (Drawn("heading", story.shift_id, HEADING, heading), *charts))


def _chart(panel: Panel, span: float, marks: tuple[Mark, ...]) -> Drawn:
    x0, x1, y0, y1 = LEFT, WIDTH - RIGHT, TOP, CHART - BOTTOM

    def x(at: float) -> float:
        return x0 + (x1 - x0) * at / span

    shapes: list[Shape] = [Text(12, 22, panel.title, size=14), Line(((x0, y0), (x0, y1), (x1, y1)), GREY)]
    for minute in _ticks(span / 60):
        shapes += [
            Line(((x(minute * 60), y1), (x(minute * 60), y1 + 4)), GREY),
            Text(x(minute * 60), y1 + 16, f"{minute:g}m", size=10, anchor="middle"),
        ]
    row, last = 0, -math.inf
    for mark in marks:
        colour = MARK_COLOURS[mark.kind]
        shapes.append(Line(((x(mark.at), y0), (x(mark.at), y1)), colour, 1.5 if mark.kind == "rollback" else 1, dashed=True))
        if panel.kind == WEIGHTS:  # labelled on each application's chart; marks close together take rows of their own
            row, last = (row + 1 if x(mark.at) - last < 60 else 0), x(mark.at)
            shapes.append(Text(x(mark.at) - 3, y0 + 10 + 11 * (row % 4), mark.text, colour, size=9, anchor="end"))
    if panel.numeric:
        shapes += _numbers(panel.series, x, y0, y1, x1)
    else:
        shapes += _verdicts(panel.series, x, y0, y1, x1)
    return Drawn(panel.kind, panel.key, CHART, tuple(shapes))


def _numbers(series: tuple[Series, ...], x: Callable[[float], float], y0: float, y1: float, x1: float) -> list[Shape]:
    """Values as lines (weights as steps: a weight holds until the next change), each limit dashed in its colour."""
    values = [p.value for s in series for p in s.points if p.value is not None] + [s.limit for s in series if s.limit is not None]
    top = max(values, default=1.0) * 1.1 or 1.0

    def y(value: float) -> float:
        return y1 - (y1 - y0) * value / top

    shapes: list[Shape] = [Text(LEFT - 6, y(v) + 4, f"{v:.3g}", size=10, anchor="end") for v in (0, top / 2, top)]
    for n, one in enumerate(series):
        colour = PALETTE[n % len(PALETTE)]
        known = [p for p in one.points if p.value is not None]
        steps: list[tuple[float, float]] = []
        for p in known:
            assert p.value is not None
            steps += [(x(p.at), steps[-1][1])] if steps else []
            steps.append((x(p.at), y(p.value)))
        shapes += [Line(tuple(steps), colour, 2)] if len(steps) > 1 else []
        shapes += [
            Dot(x(p.at), y(p.value), 4 if p.breach else 2.5, RED if p.breach else colour) for p in known if p.value is not None
        ]
        legend = one.name if one.limit is None else f"{one.name} (limit {one.limit:.3g})"
        if one.limit is not None:
            shapes.append(Line(((LEFT, y(one.limit)), (x1, y(one.limit))), colour, 1, dashed=True))
        shapes += [
            Line(((x1 + 12, y0 + 14 * n - 4), (x1 + 26, y0 + 14 * n - 4)), colour, 3),
            Text(x1 + 30, y0 + 14 * n, legend, size=10),
        ]
    return shapes


def _verdicts(series: tuple[Series, ...], x: Callable[[float], float], y0: float, y1: float, x1: float) -> list[Shape]:
    """Verdicts without a number (an alarm's state): a row per thing judged, a dot per window, red for a breach."""
    shapes: list[Shape] = []
    row = (y1 - y0) / max(len(series), 1)
    for n, one in enumerate(series):
        y = y0 + row * (n + 0.5)
        shapes += [Line(((LEFT, y), (x1, y)), GREY, 1, dashed=True), Text(x1 + 12, y + 4, one.name, size=10)]
        for p in one.points:
            shapes += [Dot(x(p.at), y, 4, RED if p.breach else GREEN), Text(x(p.at), y - 7, p.text, size=9, anchor="middle")]
    return shapes


def _ticks(minutes: float) -> list[float]:
    """Up to about six round minutes along the axis."""
    every = next(step for step in (1, 2, 5, 10, 15, 30, 60, 120, 240, 480) if minutes / step <= 6)
    return [n * every for n in range(math.floor(minutes / every) + 1)]
