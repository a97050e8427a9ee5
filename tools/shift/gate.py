"""The gate a step's window must pass (`traffic.shift`): 5xx ratio, p99 latency, and enough requests to judge by."""

from __future__ import annotations

from model.config import ShiftConfig
from tools.shift.metrics import WindowMetrics


def is_idle(metrics: WindowMetrics, settings: ShiftConfig) -> bool:
    """Too few requests to judge the target by."""
    return metrics.requests < settings.min_requests


def judge(metrics: WindowMetrics, settings: ShiftConfig) -> str | None:
    """Why the window fails the gate, or None when it passes. A quiet window is no evidence: it fails
    unless idle windows are allowed (traffic.shift.allow_idle, --allow-idle)."""
    if is_idle(metrics, settings) and not settings.allow_idle:
        return (
            f"{metrics.requests:.0f} requests in the window, fewer than traffic.shift.min_requests "
            f"{settings.min_requests}: too little traffic to judge (send traffic to the target, or let quiet "
            "windows pass with --allow-idle or traffic.shift.allow_idle)"
        )
    if metrics.requests > 0 and metrics.errors / metrics.requests > settings.max_5xx_ratio:
        ratio = metrics.errors / metrics.requests
        return (
            f"5xx ratio {ratio:.2%} ({metrics.errors:.0f} of {metrics.requests:.0f} requests) "
            f"above traffic.shift.max_5xx_ratio {settings.max_5xx_ratio:.2%}"
        )
    if metrics.p99 is not None and metrics.p99 > settings.max_p99_seconds:
        return f"p99 response time {metrics.p99:.3f} s above traffic.shift.max_p99_seconds {settings.max_p99_seconds:.3f} s"
    return None


def describe_gate(settings: ShiftConfig) -> str:
    """What a step must show, as the operator reads it before the shift starts."""
    quiet = (
        f"a window with fewer than {settings.min_requests} request(s) PASSES (idle allowed)"
        if settings.allow_idle
        else f"at least {settings.min_requests} request(s)"
    )
    return f"5xx <= {settings.max_5xx_ratio:.2%}, p99 <= {settings.max_p99_seconds:.3f} s, {quiet}"
