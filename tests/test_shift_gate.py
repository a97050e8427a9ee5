"""The gate a step's window must pass (tools/shift/gate.py): each threshold named when it is broken."""

from __future__ import annotations

import pytest

from model.config import ShiftConfig
from tools.shift.gate import judge
from tools.shift.metrics import WindowMetrics

GATE = ShiftConfig(max_5xx_ratio=0.01, max_p99_seconds=1.0, min_requests=10)


@pytest.mark.parametrize(
    ("metrics", "reason"),
    [
        (WindowMetrics(requests=1000, errors=10, p99=0.9), None),
        (
            WindowMetrics(requests=1000, errors=11, p99=0.2),
            "5xx ratio 1.10% (11 of 1000 requests) above traffic.shift.max_5xx_ratio",
        ),
        (
            WindowMetrics(requests=1000, errors=0, p99=1.5),
            "p99 response time 1.500 s above traffic.shift.max_p99_seconds 1.000 s",
        ),
        (WindowMetrics(requests=9, errors=0, p99=0.1), "9 requests in the window, fewer than traffic.shift.min_requests 10"),
    ],
)
def test_the_gate_names_the_threshold_a_window_breaks(metrics: WindowMetrics, reason: str | None) -> None:
    verdict = judge(metrics, GATE)
    assert verdict == reason if reason is None else verdict is not None and verdict.startswith(reason)


def test_a_quiet_window_fails_unless_idle_windows_are_allowed() -> None:
    quiet = WindowMetrics(requests=0, errors=0, p99=None)
    assert judge(quiet, ShiftConfig()) == (
        "0 requests in the window, fewer than traffic.shift.min_requests 1: too little traffic to judge (send traffic "
        "to the target, or let quiet windows pass with --allow-idle or traffic.shift.allow_idle)"
    )
    assert judge(quiet, ShiftConfig(allow_idle=True)) is None
    # Allowed idle still judges what traffic there is.
    assert judge(WindowMetrics(requests=5, errors=5, p99=0.1), ShiftConfig(min_requests=10, allow_idle=True)) is not None
