"""The gate's window read for every application at once: one GetMetricData call per poll for all applications (not one
each), calls of at most AWS's 500 queries when there are more, every page of an answer followed. Calls are counted
through botocore's own event hooks (what is sent, whatever sends it), never timed: the time per poll is `make bench`'s
(bench/shift_poll.py)."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from moto import mock_aws

from model.config import Config
from tests.support.configs import THREE_APPLICATIONS, validated
from tests.support.emulated_aws import PROJECT, Emulated, FakeClock
from tests.test_shift import clients_of, config_of
from tools.live_routes import read_routes
from tools.readiness import Readiness
from tools.shift.metrics import WindowMetrics, read_window_metrics
from tools.shift.run import Shift
from tools.traffic_lock import TrafficLock

APPLICATIONS = 20  # issue #47: a team's catalogue judged per poll
# "A single GetMetricData call can include as many as 500 MetricDataQuery structures" (CloudWatch API Reference):
# AWS's limit, written here so that a wrong one in the code fails.
GET_METRIC_DATA_LIMIT = 500
WINDOW_SECONDS = 300
ARN = "arn:aws:elasticloadbalancing:eu-west-1:123456789012"
BALANCER = f"{ARN}:loadbalancer/app/eks-bg-shared/50dc6c495c0c9188"


def catalogue(count: int = APPLICATIONS) -> dict[str, Any]:
    """count applications like THREE_APPLICATIONS' catalogue, each with its own host and namespace."""
    model = THREE_APPLICATIONS["catalogue"]
    return {f"app-{n:02d}": {**model, "host": f"app-{n:02d}", "namespace": f"app-{n:02d}"} for n in range(count)}


def get_metric_data(client: Any) -> list[dict[str, Any]]:
    """The parameters of every GetMetricData call the client sends from now on."""
    sent: list[dict[str, Any]] = []
    client.meta.events.register("provide-client-params.cloudwatch.GetMetricData", lambda params, **_: sent.append(params))
    return sent


@pytest.mark.emulated  # twenty applications' windows on moto: the emulated tier
def test_twenty_applications_are_read_in_one_call_per_window(emulated: Emulated, percentiles: None) -> None:
    apps = catalogue()
    config: Config = validated(config_of(apps))
    emulated.deploy_traffic({name: app["host"] for name, app in apps.items()}, {"blue": 100, "green": 0})
    start = FakeClock().now()
    # Each application's own numbers: an answer judged under another application's name would show.
    for n, app in enumerate(apps):
        for minute in range(WINDOW_SECONDS // 60):
            emulated.put_app_traffic("green", app, start + timedelta(minutes=minute), 100 + n, n, 0.1 + n / 100)
    clients = clients_of(emulated, None)
    clock = FakeClock()
    checks = Readiness(config, clients, clock, prober=lambda *_: None, out=print)
    lock = TrafficLock(clients.ssm, clients.sts, PROJECT, "python -m tools.shift --to green", clock)
    shift = Shift(config, config.traffic.shift, clients, clock, io.StringIO(), checks, lock)
    sent = get_metric_data(emulated.cloudwatch)
    windows = shift._metrics(read_routes(emulated.elbv2, PROJECT), "green", start, WINDOW_SECONDS)
    assert len(sent) == 1, f"{len(sent)} GetMetricData calls for {APPLICATIONS} applications' window"
    assert len(sent[0]["MetricDataQueries"]) == 4 * APPLICATIONS
    assert list(windows) == list(apps)
    minutes = WINDOW_SECONDS // 60
    for n, app in enumerate(apps):
        assert windows[app].requests == minutes * (100 + n)
        assert windows[app].errors == minutes * n
        assert windows[app].p99 == pytest.approx(0.1 + n / 100)


@pytest.fixture
def cloudwatch(monkeypatch: pytest.MonkeyPatch) -> Any:
    for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    with mock_aws():
        yield boto3.client("cloudwatch", region_name="eu-west-1")


def group(n: int) -> str:
    return f"{ARN}:targetgroup/app-{n:03d}/{n:016x}"


def test_more_applications_than_a_call_takes_are_read_in_calls_of_the_limit(cloudwatch: Any) -> None:
    groups = {f"app-{n:03d}": group(n) for n in range(200)}  # 800 queries
    start = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=10)
    last = "app-199"  # in the second call: its answer must still reach it
    dimensions = [
        {"Name": "TargetGroup", "Value": "targetgroup/app-199/00000000000000c7"},
        {"Name": "LoadBalancer", "Value": "app/eks-bg-shared/50dc6c495c0c9188"},
    ]
    cloudwatch.put_metric_data(
        Namespace="AWS/ApplicationELB",
        MetricData=[{"MetricName": "RequestCount", "Value": 42, "Timestamp": start, "Dimensions": dimensions}],
    )
    sent = get_metric_data(cloudwatch)
    windows = read_window_metrics(cloudwatch, BALANCER, groups, start, 60)
    assert [len(call["MetricDataQueries"]) for call in sent] == [GET_METRIC_DATA_LIMIT, 4 * 200 - GET_METRIC_DATA_LIMIT]
    ids = [query["Id"] for call in sent for query in call["MetricDataQueries"]]
    assert len(set(ids)) == len(ids)
    assert windows[last] == WindowMetrics(requests=42, errors=0, p99=None)
    assert windows["app-000"] == WindowMetrics(requests=0, errors=0, p99=None)


def test_every_page_of_an_answer_is_read() -> None:
    """moto answers in one page: here CloudWatch is a double on the real client, answering each query by its metric in
    two pages; a reader that stopped at the first would miss half of the requests and all of p99."""
    client = boto3.client("cloudwatch", region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="x")
    pages = [
        {"RequestCount": [10.0], "HTTPCode_Target_5XX_Count": [1.0]},
        {"RequestCount": [5.0], "TargetConnectionErrorCount": [2.0], "TargetResponseTime": [0.4]},
    ]
    asked = get_metric_data(client)

    def answer(**_: Any) -> tuple[AWSResponse, dict[str, Any]]:
        call = asked[-1]
        page = pages[1] if call.get("NextToken") == "more" else pages[0]
        found = [
            {"Id": query["Id"], "Values": page.get(query["MetricStat"]["Metric"]["MetricName"], [])}
            for query in call["MetricDataQueries"]
        ]
        return AWSResponse("", 200, {}, None), {"MetricDataResults": found, **({} if page is pages[1] else {"NextToken": "more"})}

    client.meta.events.register("before-call.cloudwatch.GetMetricData", answer)
    windows = read_window_metrics(client, BALANCER, {"orders": group(0)}, datetime(2025, 1, 1, tzinfo=UTC), 60)
    assert len(asked) == 2
    assert windows == {"orders": WindowMetrics(requests=15, errors=3, p99=0.4)}
