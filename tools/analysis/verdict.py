"""What a provider says of one thing it judged in a window, and the judgement of numbers every numeric provider shares:
fail closed (no data and NaN are no evidence, a breach unless the application allows idle windows; an infinite value
is a breach, idle or not)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from model.config.analysis import Comparison

# Providers, named as their configuration keys so a verdict points at the setting that made it.
ALARMS = "alarms"
METRIC_MATH = "metric_math"
PROMETHEUS = "prometheus"
SYNTHETIC = "synthetic"


@dataclass(frozen=True)
class Window:
    """The moments a step's evidence must come from: [start, end)."""

    start: datetime
    end: datetime

    @property
    def seconds(self) -> int:
        return int((self.end - self.start).total_seconds())


@dataclass(frozen=True)
class Verdict:
    provider: str  # ALARMS, METRIC_MATH, PROMETHEUS or SYNTHETIC
    what: str  # the alarm, the query's name, the request
    value: float | str | None  # what was found (a number, an alarm's state); None: nothing was
    threshold: float | str | None  # what it may not pass
    breach: bool
    detail: str  # one line naming the value and the threshold

    def line(self) -> str:
        return f"{self.provider} {self.what}: {self.detail} | {'BREACH' if self.breach else 'ok'}"


def past(value: float, threshold: float, comparison: Comparison) -> bool:
    """A value on the wrong side of its threshold (equal to it is not past)."""
    return value > threshold if comparison == "above" else value < threshold


def judge_values(
    provider: str,
    what: str,
    values: Sequence[float],
    threshold: float,
    comparison: Comparison,
    *,
    allow_idle: bool,
) -> Verdict:
    """The verdict on a window's values (datapoints, series): the worst finite one against the threshold; an infinite
    one breaches (it passes any `below` or `above` test by accident of its sign); no value, or NaN, is no evidence: a
    breach unless allow_idle (a comparison with NaN is always false: judged as a number, it would pass)."""
    bound = f"threshold {comparison} {threshold:g}"
    if infinite := [v for v in values if math.isinf(v)]:
        return Verdict(provider, what, infinite[0], threshold, True, f"{infinite[0]} is not a finite number ({bound})")
    finite = [v for v in values if not math.isnan(v)]
    unknown = len(values) - len(finite)
    if finite:
        worst = max(finite) if comparison == "above" else min(finite)
        of = f"worst of {len(finite)}" + (f", {unknown} NaN" if unknown else "")
        if past(worst, threshold, comparison) or (unknown and not allow_idle):
            why = "" if past(worst, threshold, comparison) else f"; {unknown} NaN value(s) (allow_idle is off)"
            return Verdict(provider, what, worst, threshold, True, f"{worst:g} ({of}), {bound}{why}")
        return Verdict(provider, what, worst, threshold, False, f"{worst:g} ({of}), {bound}")
    found = f"{unknown} NaN value(s)" if unknown else "no data"
    if allow_idle:
        return Verdict(provider, what, math.nan if unknown else None, threshold, False, f"{found}, {bound}: idle allowed")
    return Verdict(
        provider,
        what,
        math.nan if unknown else None,
        threshold,
        True,
        f"{found}, {bound}: no evidence is a breach (allow_idle is off)",
    )


def failed(provider: str, what: str, threshold: float | str | None, why: str) -> Verdict:
    """A source that could not be asked, or answered nothing usable: a breach, idle windows allowed or not."""
    return Verdict(provider, what, None, threshold, True, why)
