"""`make bench`'s shift poll: what judging one window of a gated shift costs with a team's catalogue, against the
emulator (scripts/emulator.py's moto server, a process of its own, as AWS is one). A poll is what the shift does once a
window has closed (tools/shift/run.py `_window`): the load balancer gate's metrics of every application
(tools/shift/metrics.py), then every application's analysis (tools/analysis/window.py), here three providers each: a
metric math query, a Prometheus query and a synthetic check, the last two answered by a small HTTP server of this
process (a Prometheus API's instant vector; a preview host's JSON).

It counts a poll's AWS calls by operation (botocore's own `before-call` event: what is sent, whatever sends it) and
its HTTP requests, and times each poll. The calls are the same every poll (a budget holds them); the time is reported.
CloudWatch alarms are not among the providers: the moto server has no DescribeAlarmHistory (tests/support/
alarm_history.py teaches it to moto in-process only), so a poll would time botocore's retries of an error."""

from __future__ import annotations

import functools
import json
import statistics
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from model.config import ShiftConfig
from model.config.analysis import Analysis, HostKind, MetricMathQuery, PrometheusQuery, SyntheticCheck
from scripts.emulator import MotoProcess, client
from tools.analysis.prometheus import QUERY_PATH
from tools.analysis.verdict import Window
from tools.analysis.window import Sources, Subject, breaches, judge_window
from tools.shift.metrics import dimension, read_window_metrics

POLLS = 10
REGION = "eu-west-1"
WINDOW_MINUTES = ShiftConfig().interval_seconds // 60  # a step's window by default
ARN = f"arn:aws:elasticloadbalancing:{REGION}:123456789012"
BALANCER = f"{ARN}:loadbalancer/app/bench-shared/50dc6c495c0c9188"
HEALTH_PATH = "/health"
PROVIDERS = ("metric math", "Prometheus", "synthetic")  # each application's (analysis)
REQUESTS = 50  # a minute's, per application (put_traffic)


@dataclass(frozen=True)
class PollReport:
    applications: int
    calls: dict[str, int]  # a poll's AWS calls by operation (every poll's: measure checks they are the same)
    http_requests: int  # a poll's requests to the Prometheus API and the preview host
    breaching: int  # a poll's breaching verdicts: none, or the poll timed an error's path
    seconds: list[float]  # each poll's wall time

    @property
    def aws_calls(self) -> int:
        return sum(self.calls.values())

    def lines(self) -> list[str]:
        times = f"median {statistics.median(self.seconds):.3f}, min {min(self.seconds):.3f}, max {max(self.seconds):.3f}"
        said = ", ".join(f"{operation} {count}" for operation, count in sorted(self.calls.items()))
        return [
            f"shift poll: {self.applications} applications x {len(PROVIDERS)} providers ({', '.join(PROVIDERS)}) and the "
            "gate, against the emulator",
            f"  AWS calls per poll: {self.aws_calls} ({said})",
            f"  HTTP requests per poll: {self.http_requests}; breaching verdicts: {self.breaching}",
            f"  seconds per poll: {times} ({len(self.seconds)} polls)",
        ]


def app(number: int) -> str:
    return f"app-{number:02d}"


def group(number: int) -> str:
    return f"{ARN}:targetgroup/{app(number)}/{number:016x}"


def analysis(number: int, base: str) -> Analysis:
    """An application's providers (PROVIDERS), its own query in each; idle windows allowed (moto evaluates no metric math)."""
    errors = f"SEARCH('{{AWS/ApplicationELB,LoadBalancer,TargetGroup}} TargetGroup=\"{dimension(group(number))}\"', 'Sum', 60)"
    return Analysis(
        metric_math=(MetricMathQuery.model_validate({"name": "errors", "expression": f"SUM({errors})", "threshold": 10}),),
        prometheus=(
            PrometheusQuery.model_validate(
                {"name": "error_ratio", "endpoint": base, "query": f'max(error_ratio{{app="{app(number)}"}})', "threshold": 0.05}
            ),
        ),
        synthetic=(SyntheticCheck.model_validate({"path": HEALTH_PATH, "count": 1}),),
        allow_idle=True,
    )


def put_traffic(cloudwatch: Any, groups: dict[str, str], start: datetime) -> None:
    """Each application's window of ALB metrics, as the load balancer publishes them (one datapoint a minute). Few
    requests: the moto server keeps each response time as a datapoint of its own and scans them all for each query,
    so a real minute's thousands would time the emulator (~25 s a poll with 1,000 a minute), not the shift."""
    balancer = {"Name": "LoadBalancer", "Value": dimension(BALANCER)}
    for arn in groups.values():
        dimensions = [{"Name": "TargetGroup", "Value": dimension(arn)}, balancer]
        data = []
        for minute in range(WINDOW_MINUTES):
            at = start + timedelta(minutes=minute, seconds=30)
            data += [
                {"MetricName": "RequestCount", "Value": REQUESTS, "Timestamp": at, "Dimensions": dimensions},
                {"MetricName": "HTTPCode_Target_5XX_Count", "Value": 2, "Timestamp": at, "Dimensions": dimensions},
                {"MetricName": "TargetConnectionErrorCount", "Value": 0, "Timestamp": at, "Dimensions": dimensions},
                {
                    "MetricName": "TargetResponseTime",
                    "Values": [0.05, 0.4],
                    "Counts": [REQUESTS - 1, 1],
                    "Timestamp": at,
                    "Dimensions": dimensions,
                },
            ]
        cloudwatch.put_metric_data(Namespace="AWS/ApplicationELB", MetricData=data)


@contextmanager
def serving_http(requests: list[str]) -> Iterator[str]:
    """The Prometheus API (an instant vector of one series, whatever the query) and the preview hosts (a JSON status)
    as static files on one loopback port (the providers read the body, not its type); each request's path appended to
    requests. Yields its base URL."""
    with tempfile.TemporaryDirectory(prefix="shift-poll-") as directory:
        vector = {"resultType": "vector", "result": [{"metric": {}, "value": [0, "0.001"]}]}
        answers = {QUERY_PATH: {"status": "success", "data": vector}, HEALTH_PATH: {"status": "ok"}}
        for path, document in answers.items():
            file = Path(directory) / path.lstrip("/")
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(json.dumps(document))

        class Counted(SimpleHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                """Said once per request: counted instead of printed."""
                requests.append(self.path)

        server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Counted, directory=directory))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()


def measure(applications: int, polls: int = POLLS) -> PollReport:
    """polls polls of applications' window on a fresh emulator; SystemExit when two polls' calls or verdicts differ."""
    groups = {app(number): group(number) for number in range(applications)}
    start = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=WINDOW_MINUTES + 1)
    window = Window(start, start + timedelta(minutes=WINDOW_MINUTES))
    emulator = MotoProcess()
    try:
        cloudwatch = client("cloudwatch", emulator.ready(), REGION)
        put_traffic(cloudwatch, groups, start)
        calls: Counter[str] = Counter()
        cloudwatch.meta.events.register("before-call.cloudwatch", lambda model, **_: calls.update([model.name]))
        requests: list[str] = []
        with serving_http(requests) as base:
            hosts: dict[HostKind, str] = {"preview": base, "public": base}
            subjects = {name: Subject(analysis(number, base), hosts) for number, name in enumerate(groups)}
            seen, seconds = [], []
            for _ in range(polls):
                calls.clear()
                requests.clear()
                began = time.perf_counter()
                read_window_metrics(cloudwatch, BALANCER, groups, window.start, WINDOW_MINUTES * 60)
                verdicts = judge_window(subjects, window, Sources(cloudwatch=cloudwatch))
                seconds.append(time.perf_counter() - began)
                seen.append((dict(calls), len(requests), sum(map(len, breaches(verdicts).values()))))
    finally:
        emulator.stop()
    if any(poll != seen[0] for poll in seen):
        raise SystemExit(f"shift poll: the polls' calls differ: {seen}")
    first_calls, http_requests, breaching = seen[0]
    return PollReport(applications, first_calls, http_requests, breaching, seconds)
