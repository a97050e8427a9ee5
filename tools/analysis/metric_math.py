"""CloudWatch metric math (and Metrics Insights queries) with a threshold: every application's queries in ONE
GetMetricData call per poll, not one per application. A call takes at most 500 MetricDataQuery structures, and at
most one Metrics Insights query (CloudWatch API Reference, GetMetricData: "If you include a Metrics Insights query,
each GetMetricData operation can include only one query"), so more math than that is batched 500 a call and each
Insights query takes a call of its own, filled up with math; each call follows its NextToken (a call returns at most
100,800 datapoints). An Id must be unique within a call, start with a lowercase letter and hold
letters, digits and '_' (MetricDataQuery, Id): `a<i>_<name>`, i the application's place in name order.

Every datapoint of the window is judged (the worst one against the threshold); a query whose status is not Complete
after its pages (InternalError, Forbidden) breaches, and one without datapoints, or with NaN, is no evidence."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from model.config.analysis import Analysis, MetricMathQuery
from tools.analysis.alarms import pages
from tools.analysis.verdict import METRIC_MATH, Verdict, Window, failed, judge_values
from tools.aws_problems import aws_errors_as

MAX_QUERIES_PER_CALL = 500
# A Metrics Insights query is SQL-like, `SELECT ... FROM ...`; anything else in Expression is metric math.
INSIGHTS_KEYWORD = "SELECT"
COMPLETE = "Complete"


class MetricDataError(Exception):
    """GetMetricData could not be asked: every query of the call breaches."""


@dataclass(frozen=True)
class Owned:
    app: str
    query: MetricMathQuery
    allow_idle: bool


@dataclass
class Result:
    values: list[float]
    status: str = COMPLETE
    messages: tuple[str, ...] = ()


def query_id(place: int, name: str) -> str:
    return f"a{place}_{name}"


def judge_metric_math(cloudwatch: Any, analyses: Mapping[str, Analysis], window: Window) -> dict[str, list[Verdict]]:
    """Each application's metric math verdicts, in its queries' order."""
    owned: dict[str, Owned] = {}
    queries: list[dict[str, Any]] = []
    for place, app in enumerate(sorted(analyses)):
        for query in analyses[app].metric_math:
            key = query_id(place, query.name)
            owned[key] = Owned(app, query, analyses[app].allow_idle)
            queries.append(
                {
                    "Id": key,
                    "Expression": query.expression,
                    "Period": query.period,
                    "Label": f"{app} {query.name}",
                    "ReturnData": True,
                }
            )
    results: dict[str, Result] = {}
    refused: dict[str, str] = {}
    for batch in batches(queries):
        try:
            with aws_errors_as(MetricDataError):
                _read(cloudwatch, batch, window, results)
        except MetricDataError as err:
            refused.update({query["Id"]: str(err) for query in batch})
    verdicts: dict[str, list[Verdict]] = {}
    for key, owner in owned.items():
        verdicts.setdefault(owner.app, []).append(_verdict(owner, results.get(key), refused.get(key)))
    return verdicts


def is_insights(expression: str) -> bool:
    return expression.lstrip().upper().startswith(INSIGHTS_KEYWORD)


def batches(queries: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The fewest calls: one per Metrics Insights query (at most one a call), the math filling them up to the limit,
    then calls of math alone."""
    calls: list[list[dict[str, Any]]] = [[query] for query in queries if is_insights(query["Expression"])]
    for query in (query for query in queries if not is_insights(query["Expression"])):
        room = next((call for call in calls if len(call) < MAX_QUERIES_PER_CALL), None)
        if room is None:
            room = []
            calls.append(room)
        room.append(query)
    return calls


def _read(cloudwatch: Any, batch: list[dict[str, Any]], window: Window, results: dict[str, Result]) -> None:
    request = {"MetricDataQueries": batch, "StartTime": window.start, "EndTime": window.end, "ScanBy": "TimestampAscending"}
    for page in pages(cloudwatch.get_metric_data, **request):
        for found in page.get("MetricDataResults", []):
            result = results.setdefault(found["Id"], Result([]))
            result.values.extend(float(value) for value in found.get("Values", []))
            result.status = found.get("StatusCode", COMPLETE)
            result.messages += tuple(f"{m.get('Code', '')}: {m.get('Value', '')}" for m in found.get("Messages", []))


def _verdict(owner: Owned, result: Result | None, refused: str | None) -> Verdict:
    query = owner.query
    if refused is not None:
        return failed(METRIC_MATH, query.name, query.threshold, f"cannot read it: {refused}")
    if result is not None and result.status != COMPLETE:
        said = f" ({'; '.join(result.messages)})" if result.messages else ""
        return failed(METRIC_MATH, query.name, query.threshold, f"CloudWatch answered {result.status}{said}: a breach")
    values = result.values if result is not None else []
    return judge_values(METRIC_MATH, query.name, values, query.threshold, query.comparison, allow_idle=owner.allow_idle)
