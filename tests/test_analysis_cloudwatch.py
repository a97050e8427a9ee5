"""The CloudWatch providers: alarms (metric and composite, by name or prefix, in ALARM at any moment of the window) and
metric math (every application's queries in one GetMetricData call per poll), against moto in-process, taught the two
alarm actions it lacks (tests/support/alarm_history.py). Calls are counted through botocore's own event hooks, and
the limits they are held to are AWS's (500 queries per GetMetricData call, 100 names per DescribeAlarms call), not
the code's. What moto cannot answer (a second page of GetMetricData, a query CloudWatch could not complete, a denied
call) comes from botocore's Stubber, which checks each request and answer against the service's own model."""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.stub import ANY, Stubber
from moto import mock_aws

from model.config.analysis import AlarmSelector, Analysis, MetricMathQuery
from tests.support.alarm_history import alarm_state, metric_alarm, teach_alarm_history
from tools.analysis.alarms import judge_alarms
from tools.analysis.metric_math import judge_metric_math
from tools.analysis.verdict import ALARMS, METRIC_MATH, Verdict, Window

REGION = "ap-northeast-1"
GET_METRIC_DATA_LIMIT = 500  # "A single GetMetricData call can include up to 500 MetricDataQuery structures" (API Reference)
ALARM_NAMES_LIMIT = 100  # DescribeAlarms' AlarmNames: "Maximum number of 100 items" (API Reference)
# A Metrics Insights query: moto answers one with the sum of every datapoint of each period, which is all these tests
# need of it (each application's threshold, not its query, decides its verdict).
INSIGHTS = 'SELECT SUM(Errors) FROM "Shop"'


@pytest.fixture
def cloudwatch(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A fresh emulated account per test."""
    for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    teach_alarm_history(monkeypatch)
    with mock_aws():
        yield boto3.client("cloudwatch", region_name=REGION)


def calls(client: Any, operation: str) -> list[dict[str, Any]]:
    """The parameters of every call of operation the client makes from now on, as botocore sends them."""
    seen: list[dict[str, Any]] = []
    client.meta.events.register(f"provide-client-params.cloudwatch.{operation}", lambda params, **_: seen.append(params))
    return seen


def window_from_now(minutes: int = 5) -> Window:
    """A window opening now and still open: the changes a test makes next fall inside it."""
    start = datetime.now(UTC)
    return Window(start, start + timedelta(minutes=minutes))


def judge(cloudwatch: Any, window: Window, *selectors: dict[str, str], allow_idle: bool = False) -> Verdict:
    analysis = Analysis(alarms=tuple(AlarmSelector.model_validate(s) for s in selectors), allow_idle=allow_idle)
    (verdict,) = judge_alarms(cloudwatch, {"orders": analysis}, window, datetime.now(UTC))["orders"]
    assert verdict.provider == ALARMS
    return verdict


# --- alarms ----------------------------------------------------------------------------------------------------------


def test_a_composite_alarm_that_fired_and_recovered_inside_the_window_breaches(cloudwatch: Any) -> None:
    metric_alarm(cloudwatch, "orders-latency")
    cloudwatch.put_composite_alarm(AlarmName="orders-health", AlarmRule='ALARM("orders-latency")')
    window = window_from_now()
    alarm_state(cloudwatch, "orders-health", "ALARM")
    alarm_state(cloudwatch, "orders-health", "OK")
    # Its state now is OK: only its history shows the window's ALARM.
    now = cloudwatch.describe_alarms(AlarmNames=["orders-health"], AlarmTypes=["CompositeAlarm"])["CompositeAlarms"]
    assert [alarm["StateValue"] for alarm in now] == ["OK"]
    verdict = judge(cloudwatch, window, {"prefix": "orders-"})
    assert (verdict.breach, verdict.value, verdict.threshold) == (True, "ALARM", "never ALARM")
    assert verdict.detail.startswith("orders-health in ALARM during the window")


def test_an_alarm_that_fired_and_recovered_before_the_window_passes(cloudwatch: Any) -> None:
    metric_alarm(cloudwatch, "orders-5xx")
    alarm_state(cloudwatch, "orders-5xx", "ALARM")
    alarm_state(cloudwatch, "orders-5xx", "OK")
    verdict = judge(cloudwatch, window_from_now(), {"name": "orders-5xx"})
    assert (verdict.breach, verdict.value) == (False, "OK")


def test_an_alarm_in_alarm_at_the_window_s_start_breaches_though_it_recovered(cloudwatch: Any) -> None:
    metric_alarm(cloudwatch, "orders-5xx")
    alarm_state(cloudwatch, "orders-5xx", "ALARM")
    window = window_from_now()
    assert judge(cloudwatch, window, {"name": "orders-5xx"}).breach is True  # still in ALARM
    alarm_state(cloudwatch, "orders-5xx", "OK")
    assert judge(cloudwatch, window, {"name": "orders-5xx"}).breach is True  # was, at the start


def test_an_alarm_without_data_through_the_window_is_a_breach_unless_idle_is_allowed(cloudwatch: Any) -> None:
    metric_alarm(cloudwatch, "orders-5xx")
    alarm_state(cloudwatch, "orders-5xx", "INSUFFICIENT_DATA")
    window = window_from_now()
    verdict = judge(cloudwatch, window, {"name": "orders-5xx"})
    assert (verdict.breach, verdict.value) == (True, "INSUFFICIENT_DATA")
    assert "allow_idle is off" in verdict.detail
    assert judge(cloudwatch, window, {"name": "orders-5xx"}, allow_idle=True).breach is False


@pytest.mark.parametrize("selector", [{"name": "orders-missing"}, {"prefix": "nobody-"}])
def test_an_alarm_that_does_not_exist_breaches_even_when_idle_is_allowed(cloudwatch: Any, selector: dict[str, str]) -> None:
    metric_alarm(cloudwatch, "orders-5xx")
    verdict = judge(cloudwatch, window_from_now(), selector, allow_idle=True)
    assert verdict.breach is True
    assert "it watches nothing" in verdict.detail


def test_the_history_is_read_past_its_first_page(cloudwatch: Any) -> None:
    """Another alarm's changes fill the first pages; the one that matters comes after them."""
    metric_alarm(cloudwatch, "orders-5xx")
    metric_alarm(cloudwatch, "billing-noisy")
    window = window_from_now()
    for flip in range(60):
        alarm_state(cloudwatch, "billing-noisy", "ALARM" if flip % 2 else "OK")
    alarm_state(cloudwatch, "orders-5xx", "ALARM")
    alarm_state(cloudwatch, "orders-5xx", "OK")
    history = calls(cloudwatch, "DescribeAlarmHistory")
    assert judge(cloudwatch, window, {"name": "orders-5xx"}).breach is True
    assert len(history) >= 2, history
    assert all(set(call["AlarmTypes"]) == {"MetricAlarm", "CompositeAlarm"} for call in history)


def test_every_application_s_alarms_are_read_together_and_judged_apart(cloudwatch: Any) -> None:
    apps = [f"app{number:03d}" for number in range(150)]
    for app in apps:
        metric_alarm(cloudwatch, f"{app}-5xx")
    window = window_from_now()
    alarm_state(cloudwatch, "app007-5xx", "ALARM")
    described, history = calls(cloudwatch, "DescribeAlarms"), calls(cloudwatch, "DescribeAlarmHistory")
    analyses = {app: Analysis(alarms=(AlarmSelector(name=f"{app}-5xx"),)) for app in apps}
    verdicts = judge_alarms(cloudwatch, analyses, window, datetime.now(UTC))
    assert [app for app, found in verdicts.items() if any(v.breach for v in found)] == ["app007"]
    assert [len(call["AlarmNames"]) for call in described] == [ALARM_NAMES_LIMIT, 150 - ALARM_NAMES_LIMIT]
    assert len(history) == 1


def test_cloudwatch_refusing_the_alarms_is_a_breach() -> None:
    client = boto3.client("cloudwatch", region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stub:
        stub.add_client_error("describe_alarms", "AccessDeniedException", "not authorized", 400)
        (verdict,) = judge_alarms(
            client, {"orders": Analysis(alarms=(AlarmSelector(name="x"),))}, window_from_now(), datetime.now(UTC)
        )["orders"]
    assert verdict.breach is True
    assert "AWS denied DescribeAlarms" in verdict.detail


# --- metric math -----------------------------------------------------------------------------------------------------


def put_errors(cloudwatch: Any, window: Window, value: float) -> None:
    cloudwatch.put_metric_data(
        Namespace="Shop", MetricData=[{"MetricName": "Errors", "Value": value, "Timestamp": window.start + timedelta(seconds=30)}]
    )


def last_minutes(minutes: int = 5) -> Window:
    end = datetime.now(UTC).replace(second=0, microsecond=0)
    return Window(end - timedelta(minutes=minutes), end)


def math_expression(app: str, number: int) -> str:
    """A metric math expression of its own per application and query (moto evaluates none: it answers no datapoints)."""
    return f"SUM(SEARCH('{{Shop,App}} MetricName=\"Errors\" App=\"{app}\"', 'Sum', 60)) * {number + 1}"


def queries(app: str, threshold: float = 10, count: int = 3, insights: int = 0) -> tuple[MetricMathQuery, ...]:
    """count math queries of the application, the first `insights` of them Metrics Insights queries instead."""
    return tuple(
        MetricMathQuery(
            name=f"errors_{number}",
            expression=INSIGHTS if number < insights else math_expression(app, number),
            threshold=threshold,
        )
        for number in range(count)
    )


def test_twenty_applications_with_three_queries_each_take_one_call(cloudwatch: Any) -> None:
    # Every other application allows idle windows: its verdicts (no datapoints: moto evaluates no math), and only its,
    # pass; a query judged by another application's settings would show.
    apps = [f"app-{number:02d}" for number in range(20)]
    analyses = {app: Analysis(metric_math=queries(app), allow_idle=number % 2 == 0) for number, app in enumerate(apps)}
    sent = calls(cloudwatch, "GetMetricData")
    verdicts = judge_metric_math(cloudwatch, analyses, last_minutes())
    assert len(sent) == 1
    ids = [query["Id"] for query in sent[0]["MetricDataQueries"]]
    assert len(ids) == len(set(ids)) == 60
    for number, app in enumerate(apps):
        assert [v.what for v in verdicts[app]] == ["errors_0", "errors_1", "errors_2"]
        assert {(v.provider, v.value, v.breach) for v in verdicts[app]} == {(METRIC_MATH, None, number % 2 == 1)}


def test_more_queries_than_a_call_takes_are_sent_in_calls_of_the_limit(cloudwatch: Any) -> None:
    analyses = {f"app-{number:03d}": Analysis(metric_math=queries(f"app-{number:03d}")) for number in range(200)}
    sent = calls(cloudwatch, "GetMetricData")
    verdicts = judge_metric_math(cloudwatch, analyses, last_minutes())
    assert [len(call["MetricDataQueries"]) for call in sent] == [GET_METRIC_DATA_LIMIT, 600 - GET_METRIC_DATA_LIMIT]
    assert sum(len(found) for found in verdicts.values()) == 600


def test_each_metrics_insights_query_takes_a_call_of_its_own_filled_up_with_math(cloudwatch: Any) -> None:
    window = last_minutes()
    put_errors(cloudwatch, window, 5)
    # Three applications, each with one Insights query and two math queries; one threshold below the value.
    analyses = {f"app-{n}": Analysis(metric_math=queries(f"app-{n}", 1 if n == 1 else 10, insights=1)) for n in range(3)}
    sent = calls(cloudwatch, "GetMetricData")
    verdicts = judge_metric_math(cloudwatch, analyses, window)
    expressions = [[query["Expression"] for query in call["MetricDataQueries"]] for call in sent]
    assert [sum(e.startswith("SELECT") for e in call) for call in expressions] == [1, 1, 1]
    assert sum(len(call) for call in expressions) == 9
    # moto sums the namespace's datapoints for an Insights query: 5, judged against each application's threshold.
    insights = {app: (found[0].value, found[0].breach) for app, found in verdicts.items()}
    assert insights == {"app-0": (5.0, False), "app-1": (5.0, True), "app-2": (5.0, False)}
    assert "5 (worst of 1), threshold above 1" in verdicts["app-1"][0].detail


def test_a_query_without_datapoints_is_a_breach_unless_idle_is_allowed(cloudwatch: Any) -> None:
    quiet = queries("orders", count=1)
    (verdict,) = judge_metric_math(cloudwatch, {"orders": Analysis(metric_math=quiet)}, last_minutes())["orders"]
    assert (verdict.breach, verdict.value) == (True, None)
    assert "no data" in verdict.detail
    idle = Analysis(metric_math=quiet, allow_idle=True)
    assert judge_metric_math(cloudwatch, {"orders": idle}, last_minutes())["orders"][0].breach is False


def answering_by_expression(client: Any, values: dict[str, list[float]]) -> None:
    """CloudWatch as a double on the real client: each query answered with the datapoints the test gave its expression,
    in the reverse order of the request (an answer's order is no promise; its Ids are)."""
    asked: list[dict[str, Any]] = []
    client.meta.events.register("provide-client-params.cloudwatch.GetMetricData", lambda params, **_: asked.append(params))

    def answer(**_: Any) -> tuple[AWSResponse, dict[str, Any]]:
        found = [
            {"Id": query["Id"], "Values": values[query["Expression"]], "Timestamps": [], "StatusCode": "Complete"}
            for query in asked[-1]["MetricDataQueries"]
        ]
        return AWSResponse("", 200, {}, None), {"MetricDataResults": found[::-1]}

    client.meta.events.register("before-call.cloudwatch.GetMetricData", answer)


def test_each_answer_is_judged_by_the_query_that_asked_for_it() -> None:
    client = stubbed()
    apps = [f"app-{number:02d}" for number in range(20)]
    # Each query's own datapoints: app n's query k answers n + k; every threshold is 20.
    answering_by_expression(client, {math_expression(app, k): [float(n + k)] for n, app in enumerate(apps) for k in range(3)})
    verdicts = judge_metric_math(client, {app: Analysis(metric_math=queries(app, 20)) for app in apps}, last_minutes())
    for n, app in enumerate(apps):
        assert [(v.value, v.breach) for v in verdicts[app]] == [(float(n + k), n + k > 20) for k in range(3)]


def stubbed() -> Any:
    return boto3.client("cloudwatch", region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x")


def result(values: list[float], status: str = "Complete") -> dict[str, Any]:
    stamps = [datetime(2026, 11, 29, 4, minute, tzinfo=UTC) for minute in range(len(values))]
    return {"Id": "a0_errors_0", "Label": "orders errors_0", "Values": values, "Timestamps": stamps, "StatusCode": status}


def test_every_page_of_an_answer_is_judged() -> None:
    """The breaching datapoint is on the second page: a reader that stopped at the first would pass it."""
    client = stubbed()
    with Stubber(client) as stub:
        first = {"MetricDataQueries": ANY, "StartTime": ANY, "EndTime": ANY, "ScanBy": "TimestampAscending"}
        stub.add_response("get_metric_data", {"MetricDataResults": [result([1.0], "PartialData")], "NextToken": "more"}, first)
        stub.add_response("get_metric_data", {"MetricDataResults": [result([1.0, 50.0])]}, {**first, "NextToken": "more"})
        (verdict,) = judge_metric_math(client, {"orders": Analysis(metric_math=queries("orders", 10, 1))}, last_minutes())[
            "orders"
        ]
        stub.assert_no_pending_responses()
    assert (verdict.breach, verdict.value) == (True, 50.0)
    assert "worst of 3" in verdict.detail


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ({"MetricDataResults": [result([], "InternalError")]}, "CloudWatch answered InternalError"),
        ({"MetricDataResults": [result([math.inf])]}, "inf is not a finite number"),
    ],
)
def test_an_answer_that_cannot_be_judged_is_a_breach_even_when_idle_is_allowed(answer: dict[str, Any], said: str) -> None:
    client = stubbed()
    with Stubber(client) as stub:
        stub.add_response("get_metric_data", answer)
        analysis = Analysis(metric_math=queries("orders", 10, 1), allow_idle=True)
        (verdict,) = judge_metric_math(client, {"orders": analysis}, last_minutes())["orders"]
    assert verdict.breach is True
    assert said in verdict.detail


def test_a_denied_call_is_a_breach_of_every_query_it_held() -> None:
    client = stubbed()
    with Stubber(client) as stub:
        stub.add_client_error("get_metric_data", "AccessDenied", "not authorized", 403)
        verdicts = judge_metric_math(client, {"orders": Analysis(metric_math=queries("orders", 10, 2))}, last_minutes())["orders"]
    assert [(v.breach, "AWS denied GetMetricData" in v.detail) for v in verdicts] == [(True, True), (True, True)]
