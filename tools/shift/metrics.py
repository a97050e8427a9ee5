"""A window of the target's load balancer metrics, read from CloudWatch (ALB metrics are kept per minute)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

# CloudWatch publishes ALB metrics per minute, about a minute late: a window is read this long after it closes.
METRICS_DELAY_SECONDS = 60


@dataclass(frozen=True)
class WindowMetrics:
    requests: float
    errors: float  # 5xx from the targets plus 5xx the load balancer answered itself
    p99: float | None  # TargetResponseTime p99, seconds; None without requests


def read_metrics(cloudwatch: Any, dimension: str, start: datetime, period: int) -> WindowMetrics:
    """Totals of one ALB (CloudWatch `LoadBalancer` dimension) over [start, start + period), one period.

    start is a whole minute and period a multiple of 60 s: ALB metrics are kept per minute.
    """

    def query(query_id: str, metric: str, stat: str) -> dict[str, Any]:
        name = {"Namespace": "AWS/ApplicationELB", "MetricName": metric}
        dimensions = [{"Name": "LoadBalancer", "Value": dimension}]
        return {"Id": query_id, "MetricStat": {"Metric": {**name, "Dimensions": dimensions}, "Period": period, "Stat": stat}}

    response = cloudwatch.get_metric_data(
        MetricDataQueries=[
            query("requests", "RequestCount", "Sum"),
            query("target5xx", "HTTPCode_Target_5XX_Count", "Sum"),
            query("elb5xx", "HTTPCode_ELB_5XX_Count", "Sum"),
            query("p99", "TargetResponseTime", "p99"),
        ],
        StartTime=start,
        EndTime=start + timedelta(seconds=period),
    )
    values = {result["Id"]: [v for v in result["Values"] if v is not None] for result in response["MetricDataResults"]}
    p99 = values.get("p99", [])
    return WindowMetrics(
        requests=sum(values.get("requests", [])),
        errors=sum(values.get("target5xx", [])) + sum(values.get("elb5xx", [])),
        p99=max(p99) if p99 else None,
    )


def describe_metrics(m: WindowMetrics) -> str:
    ratio = f"{m.errors / m.requests:.2%}" if m.requests else "-"
    p99 = f"{m.p99:.3f} s" if m.p99 is not None else "-"
    return f"requests {m.requests:.0f}  5xx {ratio} ({m.errors:.0f})  p99 {p99}"
