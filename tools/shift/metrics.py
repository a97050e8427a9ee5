"""A window of every application's metrics in the target colour: each one's target group of the shared load balancer,
read from CloudWatch (ALB metrics are kept per minute, `TargetGroup` and `LoadBalancer` dimensions) in one GetMetricData
call per poll for all applications, not one per application: a call takes at most 500 MetricDataQuery structures
(CloudWatch API Reference, GetMetricData: "A single GetMetricData call can include as many as 500 MetricDataQuery
structures"), four an application, so 125 applications a call, and each call follows its NextToken."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from tools.analysis.alarms import pages
from tools.analysis.metric_math import MAX_QUERIES_PER_CALL

# CloudWatch publishes ALB metrics per minute, about a minute late: a window is read this long after it closes.
METRICS_DELAY_SECONDS = 60


@dataclass(frozen=True)
class WindowMetrics:
    requests: float
    # 5xx the targets answered, and connections the load balancer could not open to them (each a 502 to the client).
    # The load balancer's own 5xx are counted per load balancer only, so the target group's connection errors stand in
    # for the ones a broken colour causes: pods that refuse or reset connections.
    errors: float
    p99: float | None  # TargetResponseTime p99, seconds; None without requests


def dimension(arn: str) -> str:
    """CloudWatch's dimension value of a load balancer or target group: its ARN after the resource type's colon
    (`app/<name>/<id>`, `targetgroup/<name>/<id>`; Elastic Load Balancing, "CloudWatch metrics for your Application
    Load Balancer", Metric dimensions)."""
    return arn.split(":", 5)[5].removeprefix("loadbalancer/")


# Each application's queries: (Id suffix, metric, statistic); the window's totals are made of them (read_window_metrics).
QUERIES = (
    ("requests", "RequestCount", "Sum"),
    ("target5xx", "HTTPCode_Target_5XX_Count", "Sum"),
    ("connection", "TargetConnectionErrorCount", "Sum"),
    ("p99", "TargetResponseTime", "p99"),
)


def read_window_metrics(
    cloudwatch: Any, load_balancer_arn: str, groups: Mapping[str, str], start: datetime, period: int
) -> dict[str, WindowMetrics]:
    """Totals of each application's target group (groups: application -> target group ARN) over [start, start +
    period), one period: start is a whole minute and period a multiple of 60 s. In groups' order."""
    balancer = {"Name": "LoadBalancer", "Value": dimension(load_balancer_arn)}
    owners: dict[str, tuple[str, str]] = {}  # query Id -> (application, query)
    queries: list[dict[str, Any]] = []
    for place, (app, group) in enumerate(groups.items()):
        # The target group first: moto matches dimensions in order, as the emulated ALB publishes them.
        dimensions = [{"Name": "TargetGroup", "Value": dimension(group)}, balancer]
        for name, metric, stat in QUERIES:
            # An Id starts with a lowercase letter and holds letters, digits and '_' (MetricDataQuery, Id).
            key = f"g{place}_{name}"
            owners[key] = (app, name)
            found = {"Namespace": "AWS/ApplicationELB", "MetricName": metric, "Dimensions": dimensions}
            queries.append({"Id": key, "MetricStat": {"Metric": found, "Period": period, "Stat": stat}})
    values: dict[str, dict[str, list[float]]] = {app: {} for app in groups}
    window = {"StartTime": start, "EndTime": start + timedelta(seconds=period)}
    for first in range(0, len(queries), MAX_QUERIES_PER_CALL):
        for page in pages(cloudwatch.get_metric_data, MetricDataQueries=queries[first : first + MAX_QUERIES_PER_CALL], **window):
            for result in page["MetricDataResults"]:
                app, name = owners[result["Id"]]
                values[app].setdefault(name, []).extend(v for v in result["Values"] if v is not None)
    return {app: _totals(mine) for app, mine in values.items()}


def _totals(values: Mapping[str, list[float]]) -> WindowMetrics:
    p99 = values.get("p99", [])
    return WindowMetrics(
        requests=sum(values.get("requests", [])),
        errors=sum(values.get("target5xx", [])) + sum(values.get("connection", [])),
        p99=max(p99) if p99 else None,
    )


def describe_metrics(m: WindowMetrics) -> str:
    ratio = f"{m.errors / m.requests:.2%}" if m.requests else "-"
    p99 = f"{m.p99:.3f} s" if m.p99 is not None else "-"
    return f"requests {m.requests:.0f}  5xx {ratio} ({m.errors:.0f})  p99 {p99}"


# The gate's two judged numbers, by the names a verdict event carries them under and the start event their limits
# (docs/shift-events.md): a report draws each against its limit.
ERROR_RATIO, P99_SECONDS = "error_ratio", "p99_seconds"


def gate_values(m: WindowMetrics) -> dict[str, float | None]:
    """The window's numbers as an event carries them (docs/shift-events.md): requests, 5xx and refused connections,
    their ratio, and p99 in seconds (None without requests)."""
    return {
        "requests": m.requests,
        "errors": m.errors,
        ERROR_RATIO: m.errors / m.requests if m.requests else None,
        P99_SECONDS: m.p99,
    }
