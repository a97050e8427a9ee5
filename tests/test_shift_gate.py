"""The gate a step's window must pass (tools/shift/gate.py), per application: each threshold named when it is broken,
a quiet application idle rather than failed, a window quiet everywhere no evidence."""

from __future__ import annotations

import pytest

from model.config import ShiftConfig
from tools.shift.gate import breach, judge
from tools.shift.metrics import WindowMetrics, dimension

GATE = ShiftConfig(max_5xx_ratio=0.01, max_p99_seconds=1.0, min_requests=10)
QUIET = WindowMetrics(requests=0, errors=0, p99=None)
FINE = WindowMetrics(requests=1000, errors=0, p99=0.2)


@pytest.mark.parametrize(
    ("metrics", "reason"),
    [
        (WindowMetrics(requests=1000, errors=10, p99=0.9), None),
        (
            WindowMetrics(requests=1000, errors=11, p99=0.2),
            "5xx ratio 1.10% (11 of 1000 requests) above traffic.shift.max_5xx_ratio 1.00%",
        ),
        (
            WindowMetrics(requests=1000, errors=0, p99=1.5),
            "p99 response time 1.500 s above traffic.shift.max_p99_seconds 1.000 s",
        ),
    ],
)
def test_the_gate_names_the_threshold_a_window_breaks(metrics: WindowMetrics, reason: str | None) -> None:
    assert breach(metrics, GATE) == reason


def test_every_application_is_judged_on_its_own_and_each_breach_named() -> None:
    windows = {"orders": WindowMetrics(requests=1000, errors=50, p99=0.2), "catalogue": FINE, "search": FINE}
    found = judge(windows, dict.fromkeys(windows, 10), GATE)
    assert found == {"orders": "5xx ratio 5.00% (50 of 1000 requests) above traffic.shift.max_5xx_ratio 1.00%"}


def test_an_application_below_its_own_minimum_is_idle_not_failed() -> None:
    """A low-traffic application never blocks a shift: below its minimum it is not judged (its 5xx on 3 requests is
    noise), while the others carry the evidence."""
    windows = {"admin": WindowMetrics(requests=3, errors=3, p99=9.0), "orders": FINE}
    assert judge(windows, {"admin": 10, "orders": 10}, GATE) == {}
    # Its own minimum decides: at 0 it is always judged.
    assert judge(windows, {"admin": 0, "orders": 10}, GATE) == {
        "admin": "5xx ratio 100.00% (3 of 3 requests) above traffic.shift.max_5xx_ratio 1.00%"
    }


def test_a_window_quiet_for_every_application_fails_unless_idle_windows_are_allowed() -> None:
    windows = {"orders": QUIET, "catalogue": WindowMetrics(requests=4, errors=0, p99=0.1)}
    assert judge(windows, dict.fromkeys(windows, 10), GATE) == {
        "(every application)": "too little traffic to judge: every application had fewer requests than its minimum "
        "(send traffic to the target, or let quiet windows pass with --allow-idle or traffic.shift.allow_idle)"
    }
    assert judge(windows, dict.fromkeys(windows, 10), GATE.model_copy(update={"allow_idle": True})) == {}


def test_an_application_judged_at_any_traffic_is_no_evidence_without_requests() -> None:
    """min_requests 0 means: judge it whatever its traffic; not: a window nobody called proves the colour."""
    windows = {"orders": QUIET, "catalogue": QUIET}
    assert list(judge(windows, {"orders": 10, "catalogue": 0}, GATE)) == ["(every application)"]
    assert judge({"orders": QUIET, "catalogue": FINE}, {"orders": 10, "catalogue": 0}, GATE) == {}


def test_cloudwatch_dimensions_are_the_arns_tails() -> None:
    """Elastic Load Balancing, CloudWatch metrics, Metric dimensions: `app/<name>/<id>` and `targetgroup/<name>/<id>`."""
    assert dimension(
        "arn:aws:elasticloadbalancing:ap-northeast-1:123456789012:loadbalancer/app/eks-bg-traffic/50dc6c495c0c9188"
    ) == ("app/eks-bg-traffic/50dc6c495c0c9188")
    arn = "arn:aws:elasticloadbalancing:ap-northeast-1:123456789012:targetgroup/eks-bg-orders-green/73e2d6bc24d8a067"
    assert dimension(arn) == "targetgroup/eks-bg-orders-green/73e2d6bc24d8a067"


@pytest.mark.parametrize(
    ("metrics", "named"),
    [
        (WindowMetrics(requests=1000, errors=float("nan"), p99=0.2), "5xx and connection errors is nan"),
        (WindowMetrics(requests=float("nan"), errors=0, p99=0.2), "RequestCount is nan"),
        (WindowMetrics(requests=1000, errors=0, p99=float("nan")), "p99 is nan"),
        (WindowMetrics(requests=1000, errors=0, p99=float("inf")), "p99 is inf"),
    ],
)
def test_a_metric_that_is_not_a_number_fails_closed_naming_it(metrics: WindowMetrics, named: str) -> None:
    """A comparison with NaN is false, so NaN passed every threshold: now it breaches, even in an idle window."""
    found = judge({"orders": metrics, "catalogue": FINE}, {"orders": 10, "catalogue": 10}, GATE)
    assert found == {"orders": f"{named}: a metric that is not a finite number fails the gate"}
