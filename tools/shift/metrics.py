"""A window of one application's metrics in the target colour: its target group of the shared load balancer, read
from CloudWatch (ALB metrics are kept per minute, `TargetGroup` and `LoadBalancer` dimensions)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

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


def read_metrics(cloudwatch: Any, load_balancer_arn: str, target_group_arn: str, start: datetime, period: int) -> WindowMetrics:
    """Totals of one target group over [start, start + period), one period: start is a whole minute and period a
    multiple of 60 s."""
    dimensions = [
        {"Name": "TargetGroup", "Value": dimension(target_group_arn)},
        {"Name": "LoadBalancer", "Value": dimension(load_balancer_arn)},
    ]

    def query(query_id: str, metric: str, stat: str) -> dict[str, Any]:
        name = {"Namespace": "AWS/ApplicationELB", "MetricName": metric}
        return {"Id": query_id, "MetricStat": {"Metric": {**name, "Dimensions": dimensions}, "Period": period, "Stat": stat}}

    response = cloudwatch.get_metric_data(
        MetricDataQueries=[
            query("requests", "RequestCount", "Sum"),
            query("target5xx", "HTTPCode_Target_5XX_Count", "Sum"),
            query("connection", "TargetConnectionErrorCount", "Sum"),
            query("p99", "TargetResponseTime", "p99"),
        ],
        StartTime=start,
        EndTime=start + timedelta(seconds=period),
    )
    values = {result["Id"]: [v for v in result["Values"] if v is not None] for result in response["MetricDataResults"]}
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
