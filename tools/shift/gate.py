"""The gate a step's window must pass (`traffic.shift`), judged for every application on its own: 5xx ratio and p99
latency of the target colour's target group. An application with fewer requests than its minimum (its own
`min_requests`, else `traffic.shift.min_requests`) is idle: not judged, and said so, so a quiet application never
blocks a shift; a window in which every application is idle is no evidence at all, and fails unless idle windows are
allowed (traffic.shift.allow_idle, --allow-idle)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from model.config import ShiftConfig
from tools.shift.metrics import ERROR_RATIO, P99_SECONDS, WindowMetrics


def is_idle(metrics: WindowMetrics, min_requests: int) -> bool:
    """Too few requests to judge an application by."""
    return metrics.requests < min_requests


def not_a_number(metrics: WindowMetrics) -> str | None:
    """Why a window cannot be judged at all: a metric CloudWatch gave as NaN or infinite fails closed, idle or not (a
    comparison with NaN is always false, so it would pass every threshold)."""
    values = {"RequestCount": metrics.requests, "5xx and connection errors": metrics.errors, "p99": metrics.p99}
    bad = [f"{name} is {value}" for name, value in values.items() if value is not None and not math.isfinite(value)]
    return f"{', '.join(bad)}: a metric that is not a finite number fails the gate" if bad else None


def breach(metrics: WindowMetrics, settings: ShiftConfig) -> str | None:
    """Why one application's window fails the gate, or None."""
    if unjudged := not_a_number(metrics):
        return unjudged
    if metrics.requests > 0 and metrics.errors / metrics.requests > settings.max_5xx_ratio:
        ratio = metrics.errors / metrics.requests
        return (
            f"5xx ratio {ratio:.2%} ({metrics.errors:.0f} of {metrics.requests:.0f} requests) "
            f"above traffic.shift.max_5xx_ratio {settings.max_5xx_ratio:.2%}"
        )
    if metrics.p99 is not None and metrics.p99 > settings.max_p99_seconds:
        return f"p99 response time {metrics.p99:.3f} s above traffic.shift.max_p99_seconds {settings.max_p99_seconds:.3f} s"
    return None


def is_evidence(metrics: WindowMetrics, min_requests: int) -> bool:
    """Enough requests for the window to say something: at least its minimum, and at least one (an application whose
    minimum is 0 is judged whatever its traffic, but a window of no request at all proves nothing)."""
    return metrics.requests >= max(1, min_requests)


def judge(windows: Mapping[str, WindowMetrics], minimums: Mapping[str, int], settings: ShiftConfig) -> dict[str, str]:
    """Each breach by application (empty: the window passes)."""
    found = {
        app: why
        for app, metrics in windows.items()
        if (why := not_a_number(metrics) if is_idle(metrics, minimums[app]) else breach(metrics, settings))
    }
    evidence = any(is_evidence(m, minimums[app]) for app, m in windows.items())
    if not found and windows and not evidence and not settings.allow_idle:
        found["(every application)"] = (
            "too little traffic to judge: every application had fewer requests than its minimum (send traffic to the "
            "target, or let quiet windows pass with --allow-idle or traffic.shift.allow_idle)"
        )
    return found


def limits(settings: ShiftConfig) -> dict[str, float]:
    """The gate's limits by the names of the numbers they bound (a verdict event's `gate`), for the start event."""
    return {ERROR_RATIO: settings.max_5xx_ratio, P99_SECONDS: settings.max_p99_seconds}


def describe_gate(settings: ShiftConfig) -> str:
    """What a step must show, as the operator reads it before the shift starts."""
    quiet = (
        "a window in which every application is idle PASSES (idle allowed)"
        if settings.allow_idle
        else "at least one application with its minimum of requests"
    )
    return (
        f"each application: 5xx <= {settings.max_5xx_ratio:.2%}, p99 <= {settings.max_p99_seconds:.3f} s, judged from "
        f"{settings.min_requests} request(s) (its own min_requests where set); {quiet}; any target group without a "
        "healthy target rolls the step back at once"
    )
