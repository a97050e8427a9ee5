"""`--report`: one run of the shift's record told as charts, in an HTML page (inline SVG: no network, no script, no
font of its own) and a PNG of the same charts for a pull-request comment.

This module reads the run's events into what the charts show (a Story: per application its weights per colour over
time, each provider's values against their limits, the verdicts and roll-backs); tools/shift/chart.py lays the
charts out once, as shapes; tools/shift/render.py draws those shapes as SVG and as PNG, so the two cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tools.shift.events import Kind
from tools.shift.metrics import ERROR_RATIO, P99_SECONDS

WEIGHTS, PROVIDER = "weights", "provider"  # the two kinds of chart
# The gate's numbers, each a chart of its own: what it is called there.
GATE_CHARTS = {ERROR_RATIO: "gate: 5xx ratio", P99_SECONDS: "gate: p99 seconds"}


@dataclass(frozen=True)
class Point:
    at: float  # seconds since the run's first event
    value: float | None  # None: no number (an alarm's state, no data): drawn as a verdict on a row
    breach: bool = False
    text: str = ""  # what was found, as the event says it


@dataclass(frozen=True)
class Series:
    name: str
    points: tuple[Point, ...]
    limit: float | None = None  # the threshold it may not pass, when a number


@dataclass(frozen=True)
class Mark:
    at: float
    kind: str  # passed, breach, rollback, drain, end
    text: str


@dataclass(frozen=True)
class Panel:
    kind: str  # WEIGHTS (key: the application) or PROVIDER (key: the provider)
    key: str
    title: str
    series: tuple[Series, ...]

    @property
    def numeric(self) -> bool:
        return any(point.value is not None for series in self.series for point in series.points)


@dataclass(frozen=True)
class Story:
    shift_id: str
    heading: tuple[str, ...]  # the lines above the charts: who, what, when, how it ended
    span: float  # seconds from the first event to the last
    marks: tuple[Mark, ...]
    panels: tuple[Panel, ...] = field(default_factory=tuple)


def story(shift_id: str, events: Sequence[Mapping[str, Any]], outcome: str) -> Story:
    """The run's events (in order) as the charts tell them."""
    start = datetime.fromisoformat(events[0]["time"])
    at = [(datetime.fromisoformat(event["time"]) - start).total_seconds() for event in events]
    first = events[0]
    heading = (
        f"{first.get('project', '')} shift {shift_id}: {', '.join(first.get('from', [])) or '-'} -> {first.get('to', '?')}",
        f"{first.get('command', '')}",
        f"by {first.get('who') or '?'}, from {start:%Y-%m-%d %H:%M:%S} UTC, {round(at[-1] / 60)} min: {outcome}",
    )
    marks = tuple(mark for event, t in zip(events, at, strict=True) if (mark := _mark(event, t)) is not None)
    panels = (*_weights(events, at), *_gate(events, at), *_analysis(events, at))
    return Story(shift_id, heading, at[-1], marks, panels)


def _mark(event: Mapping[str, Any], at: float) -> Mark | None:
    details = event.get("details", {})
    if event["kind"] == Kind.VERDICT:
        passed = bool(details.get("passed"))
        return Mark(at, "passed" if passed else "breach", "ok" if passed else "breach")
    if event["kind"] == Kind.ROLLBACK:
        return Mark(at, "rollback", "rollback")
    if event["kind"] == Kind.DRAIN:
        return Mark(at, "drain", f"drain to {event.get('to', '?')}")
    if event["kind"] == Kind.END:
        return Mark(at, "end", str(details.get("outcome", "end")))
    return None


def _weights(events: Sequence[Mapping[str, Any]], at: Sequence[float]) -> list[Panel]:
    """Per application, its weight per colour at each event that names it, carried forward to the end: a step that
    moved other applications leaves its split as it was."""
    points: dict[str, dict[str, list[Point]]] = {}
    last: dict[str, dict[str, int]] = {}

    def note(app: str, split: Mapping[str, int], t: float) -> None:
        colours = points.setdefault(app, {})
        for colour in {*colours, *split}:
            colours.setdefault(colour, []).append(Point(t, float(split.get(colour, 0))))
        last[app] = dict(split)

    for event, t in zip(events, at, strict=True):
        for app, split in event.get("details", {}).get("before", {}).items():  # a drain: what it found
            note(app, split, t)
        for app, split in event.get("weights", {}).items():
            note(app, split, t)
    for app, split in last.items():  # to the run's end
        note(app, split, at[-1])
    return [
        Panel(WEIGHTS, app, f"{app}: weight per colour", tuple(Series(c, tuple(p)) for c, p in sorted(colours.items())))
        for app, colours in sorted(points.items())
    ]


def _gate(events: Sequence[Mapping[str, Any]], at: Sequence[float]) -> list[Panel]:
    limits: Mapping[str, float] = next((e["details"].get("limits", {}) for e in events if e["kind"] == Kind.START), {})
    found: dict[str, dict[str, list[Point]]] = {}
    for event, t in zip(events, at, strict=True):
        for app, numbers in event.get("details", {}).get("gate", {}).items() if event["kind"] == Kind.VERDICT else ():
            for metric in GATE_CHARTS:
                value, limit = numbers.get(metric), limits.get(metric)
                over = value is not None and limit is not None and value > limit
                found.setdefault(metric, {}).setdefault(app, []).append(Point(t, value, over, _text(value)))
    return [
        Panel(
            PROVIDER, GATE_CHARTS[m], GATE_CHARTS[m], tuple(Series(a, tuple(p), limits.get(m)) for a, p in sorted(apps.items()))
        )
        for m, apps in found.items()
    ]


def _analysis(events: Sequence[Mapping[str, Any]], at: Sequence[float]) -> list[Panel]:
    """Per provider, each application's things it judged (an alarm, a query, a request), value against threshold."""
    found: dict[str, dict[str, list[Point]]] = {}
    limits: dict[str, float | None] = {}
    for event, t in zip(events, at, strict=True):
        analysis = event.get("details", {}).get("analysis", {}) if event["kind"] == Kind.VERDICT else {}
        for app, verdicts in analysis.items():
            for verdict in verdicts:
                name = f"{app}: {verdict['what']}"
                value = verdict.get("value")
                number = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
                threshold = verdict.get("threshold")
                limits[name] = float(threshold) if isinstance(threshold, int | float) else None
                point = Point(t, number, bool(verdict.get("breach")), _text(value))
                found.setdefault(verdict["provider"], {}).setdefault(name, []).append(point)
    return [
        Panel(
            PROVIDER, provider, f"analysis: {provider}", tuple(Series(n, tuple(p), limits[n]) for n, p in sorted(named.items()))
        )
        for provider, named in sorted(found.items())
    ]


def _text(value: object) -> str:
    return "no data" if value is None else f"{value:.4g}" if isinstance(value, float) else str(value)
