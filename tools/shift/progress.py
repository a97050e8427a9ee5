"""The shift's progress as the operator watches it: a sink of the run's events (events.py) and the window's polls.

In a terminal, a block of live lines at the bottom, one per application (its step, its weights, the time left in the
window, its healthy targets, its last window's values and verdict), redrawn in place with ANSI cursor movements; the
shift's own lines scroll above it (`above`), and the run's end leaves it as the summary. Without one (a pipe, CI,
`TERM=dumb`), no escape code ever: one plain line per event, `[shift <id> #<sequence> <kind>] ...`, each application
with what the event says of it, and nothing per poll. The plain line is an index, not a second account: the shift's own
lines above it already give the weights, the values and the reasons, so it adds only what they lack: the run's id and
sequence (the same as the topic's messages), the kind, and each application the event is about with its verdict or
outcome, greppable per application when applications move on their own.
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TextIO

from tools.live_routes import describe
from tools.shift.events import Event, Kind

# ANSI (ECMA-48) control sequences: the cursor up n lines, to the line's start, and everything below it erased.
UP = "\x1b[{}A"
ERASE_BELOW = "\r\x1b[J"
# What the block falls back to when the terminal does not say its width (a pseudo-terminal never sized).
DEFAULT_WIDTH = 80


def is_terminal(stream: TextIO, environ: Mapping[str, str]) -> bool:
    """Live lines only where a person watches a terminal that moves its cursor: a CI job may give its steps a
    pseudo-terminal (and sets CI), and a dumb terminal prints escape codes as they are."""
    ci = environ.get("CI", "").lower() not in ("", "0", "false")
    return stream.isatty() and not ci and environ.get("TERM", "") != "dumb"


@dataclass
class _Application:
    """One application as the block shows it: its own state, from whichever events name it."""

    weights: Mapping[str, int] = field(default_factory=dict)
    step: str = ""
    phase: str = "waiting"
    health: tuple[int, int] | None = None  # healthy and registered targets of the target colour
    last: str = ""  # the last judged window: its values and verdict

    def line(self, name: str, width: int) -> str:
        targets = f"targets {self.health[0]}/{self.health[1]}" if self.health else ""
        cells = [name.ljust(width), self.step.ljust(8), describe(self.weights), self.phase, targets, self.last]
        return "  ".join(cell for cell in cells if cell)


class Progress:
    """live: the terminal's block (is_terminal); else the plain lines. width: the terminal's columns (default: asked
    of the stream at each draw, so a resized window is followed; a row longer is cut, as a wrapped one would leave
    its tail behind on the next redraw)."""

    def __init__(self, stream: TextIO, *, live: bool, width: int | None = None) -> None:
        self._stream, self._live, self._width = stream, live, width
        self._apps: dict[str, _Application] = {}
        self._title = ""
        self._drawn = 0  # the block's lines on the screen now, below the cursor's line
        self._over = False  # the run ended: the block stays as its summary, and is never redrawn

    @classmethod
    def of(cls, stream: TextIO, environ: Mapping[str, str] = os.environ) -> Progress:
        return cls(stream, live=is_terminal(stream, environ))

    def above(self, stream: TextIO) -> TextIO:
        """What to print the run's own lines to so that they stay readable: each whole line goes above the block
        (without a terminal, the stream itself)."""
        return _Above(self, stream) if self._live else stream

    def receive(self, event: Event) -> None:
        names = list(event.weights)
        for name in names:
            self._apps.setdefault(name, _Application()).weights = event.weights[name]
        said = {
            Kind.START: self._start,
            Kind.STEP: self._step,
            Kind.VERDICT: self._verdict,
            Kind.ROLLBACK: self._rollback,
            Kind.DRAIN: self._drain,
            Kind.END: self._end,
        }[event.kind](event, names)
        if self._live:
            self._title = f"shift {event.shift_id} to {event.to_colour}"
            self._over = self._over or event.kind in (Kind.END, Kind.DRAIN)
            self._redraw()
        else:
            print(f"[shift {event.shift_id} #{event.sequence} {event.kind}] {said}", file=self._stream, flush=True)

    def watching(self, *, label: str, until: datetime, now: datetime, health: Mapping[str, tuple[int, int]]) -> None:
        """A poll while a window passes (label: the step's or the bake's): each polled application's healthy and
        registered targets, and the time left. Nothing without a terminal: a log must not fill with ticks."""
        if not self._live or self._over:
            return
        seconds = math.ceil((until - now).total_seconds())
        phase = f"{seconds // 60}:{seconds % 60:02d} left" if seconds > 0 else "judging"
        for name, counts in health.items():
            if app := self._apps.get(name):
                app.step, app.phase, app.health = short_step(label), phase, counts
        self._redraw()

    def _start(self, event: Event, names: list[str]) -> str:
        return f"{', '.join(event.from_colours) or '-'} -> {event.to_colour}: {', '.join(names)}"

    def _step(self, event: Event, names: list[str]) -> str:
        step = short_step(str(event.details.get("step", "")))
        for name in names:
            self._apps[name].step, self._apps[name].phase = step, "in effect"
        return f"{step}: {', '.join(names)}"

    def _verdict(self, event: Event, names: list[str]) -> str:
        step = short_step(str(event.details.get("step", "")))
        breaches = _mapping(event.details.get("breaches"))
        metrics, analysis = _mapping(event.details.get("metrics")), _mapping(event.details.get("analysis"))
        # A breach of no one application (every application idle) is every application's.
        every = any(name not in self._apps for name in breaches)
        verdicts = {name: "BREACH" if name in breaches or every else "ok" for name in names}
        for name in names:
            providers = analysis.get(name)
            values = [str(metrics.get(name, "")), *map(_provider, providers if isinstance(providers, list) else [])]
            self._apps[name].phase = "judged"
            self._apps[name].last = f"| {step}: {'  '.join(v for v in values if v)} | {verdicts[name]}"
        return f"{step}: {', '.join(f'{name} {verdict}' for name, verdict in verdicts.items())}"

    def _rollback(self, event: Event, names: list[str]) -> str:
        for name in names:
            self._apps[name].phase = "rolling back"
        return ", ".join(names)

    def _drain(self, event: Event, names: list[str]) -> str:
        for name in names:
            self._apps[name].step, self._apps[name].phase = "now", "drained"
        return ", ".join(names)

    def _end(self, event: Event, names: list[str]) -> str:
        outcomes = _mapping(event.details.get("outcomes"))
        each = {name: str(outcomes.get(name, event.details.get("outcome", ""))) for name in names}
        for name, outcome in each.items():
            self._apps[name].phase = outcome
        return ", ".join(f"{name} {outcome}" for name, outcome in each.items())

    def _redraw(self, between: str = "", stream: TextIO | None = None) -> None:
        """The block erased, `between` written (to stream: the block's own, or another on the same screen), the block
        drawn again below it; each part flushed before the next so that two streams interleave in order."""
        self._stream.write(UP.format(self._drawn) + ERASE_BELOW if self._drawn else "")
        self._stream.flush()
        if between:
            (stream or self._stream).write(between)
            (stream or self._stream).flush()
        width = self._width or _columns(self._stream)
        names = max((len(name) for name in self._apps), default=0)
        rows = [self._title, *(app.line(name, names) for name, app in self._apps.items())]
        self._stream.write("".join(f"{_cut(row, width)}\n" for row in rows))
        self._stream.flush()
        self._drawn = len(rows)

    def write_above(self, text: str, stream: TextIO) -> None:
        """Whole lines of the run's own, to stream, above the live block (once the run is over, simply below it)."""
        if self._drawn and not self._over:
            self._redraw(text, stream)
        else:
            stream.write(text)
            stream.flush()


class _Above(io.StringIO):
    """A stream whose whole lines go above the block; the start of a line not yet ended waits here (print writes a
    line and its newline apart)."""

    def __init__(self, progress: Progress, stream: TextIO) -> None:
        super().__init__()
        self._progress, self._target = progress, stream

    def write(self, text: str) -> int:
        written = super().write(text)
        pending = self.getvalue()
        if "\n" in pending:
            whole, _, rest = pending.rpartition("\n")
            self.seek(0)
            self.truncate()
            super().write(rest)
            self._progress.write_above(whole + "\n", self._target)
        return written

    def isatty(self) -> bool:
        return self._target.isatty()


def short_step(label: str) -> str:
    """The step's short name from its label (`step 2/5  blue 60  green 40` -> `step 2/5`; `bake  ...` -> `bake`)."""
    return label.split("  ")[0]


def _provider(verdict: object) -> str:
    """One analysis provider's verdict, short: what it judged, its value against its threshold."""
    said = _mapping(verdict)
    value = "no data" if said.get("value") is None else _number(said["value"])
    return f"{said.get('provider')} {said.get('what')} {value} vs {_number(said.get('threshold'))}"


def _number(value: object) -> str:
    return f"{value:g}" if isinstance(value, float | int) and not isinstance(value, bool) else str(value)


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _columns(stream: TextIO) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns or DEFAULT_WIDTH
    except (OSError, ValueError):  # not a terminal's file (a test's stream), or a closed one
        return DEFAULT_WIDTH


def _cut(row: str, width: int) -> str:
    """The row within width - 1 columns: a terminal that wraps a full last column would push the cursor a line."""
    return row if len(row) < width else row[: width - 2] + "~"
