"""Prometheus-compatible instant queries at the window's end (`GET <endpoint>/api/v1/query?query=...&time=...`; the
Prometheus HTTP API answers `{"status": "success", "data": {"resultType": "vector", "result": [{"metric": {...},
"value": [<time>, "<value>"]}]}}`, values as strings, NaN and infinities as "NaN", "+Inf", "-Inf"). Every series must
stay on its side of the threshold.

Amazon Managed Service for Prometheus takes the same queries at
`https://aps-workspaces.<region>.amazonaws.com/workspaces/<id>/api/v1/query`, signed with SigV4 for the service `aps`
("Query using Prometheus-compatible APIs", Amazon Managed Service for Prometheus User Guide): signed here with the
operator's credentials through botocore's own SigV4Auth.

Fails closed: no answer, an HTTP error, an answer that is not a vector, or an error status breach always; an empty
vector (no series) or NaN is no evidence, a breach unless the application allows idle windows."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest

from model.config.analysis import PrometheusQuery
from tools.analysis.http import TIMEOUT_SECONDS, Answer, Opener
from tools.analysis.verdict import PROMETHEUS, Verdict, Window, failed, judge_values

QUERY_PATH = "/api/v1/query"
SIGV4_SERVICE = "aps"  # Amazon Managed Service for Prometheus's signing name
# The operator's AWS credentials (botocore's, with a session token when temporary), or None without any.
Credentials = Callable[[], Any]


class AnswerError(Exception):
    """An answer that says nothing a threshold can be held against."""


def query_url(query: PrometheusQuery, window: Window) -> str:
    """The instant query at the window's end, to the millisecond (the API takes RFC 3339 or Unix seconds)."""
    params = urlencode({"query": query.query, "time": f"{window.end.timestamp():.3f}"})
    return f"{query.endpoint.rstrip('/')}{QUERY_PATH}?{params}"


def signed_headers(url: str, region: str, credentials: Any, headers: dict[str, str]) -> dict[str, str]:
    """headers with SigV4's (Authorization, X-Amz-Date, X-Amz-Security-Token for temporary credentials) for a GET of url."""
    request = AWSRequest(method="GET", url=url, headers=headers)
    SigV4Auth(credentials, SIGV4_SERVICE, region).add_auth(request)
    return dict(request.headers.items())


def series_values(answer: Answer) -> list[float]:
    """The value of each series of an instant vector (or of a scalar), or AnswerError saying why there are none to judge."""
    try:
        document = json.loads(answer.body)
    except ValueError:
        raise AnswerError(f"not a JSON answer: {answer.text()}") from None
    if not isinstance(document, dict) or document.get("status") != "success":
        said = document.get("error", answer.text()) if isinstance(document, dict) else answer.text()
        raise AnswerError(f"the query failed: {said}")
    data = document.get("data") or {}
    kind: Any = data.get("resultType")
    result: Any = data.get("result")
    try:
        if kind == "vector":
            return [float(series["value"][1]) for series in result]
        if kind == "scalar":
            return [float(result[1])]
    except (TypeError, KeyError, IndexError, ValueError):
        raise AnswerError(f"a {kind} answer of an unknown shape: {answer.text()}") from None
    raise AnswerError(f"a {kind} answer, not an instant vector (write an instant query, not a range): {answer.text()}")


def judge_query(query: PrometheusQuery, window: Window, *, allow_idle: bool, opener: Opener, credentials: Credentials) -> Verdict:
    url = query_url(query, window)
    headers = {"Accept": "application/json"}
    if query.sigv4 and query.region:
        found = credentials()
        if found is None:
            return failed(PROMETHEUS, query.name, query.threshold, "no AWS credentials to sign the query with (sigv4)")
        headers = signed_headers(url, query.region, found, headers)
    try:
        answer = opener(url, headers=headers, timeout=TIMEOUT_SECONDS)
    except OSError as err:
        return failed(PROMETHEUS, query.name, query.threshold, f"{query.endpoint} did not answer ({err}): a breach")
    if answer.status != 200:
        return failed(PROMETHEUS, query.name, query.threshold, f"{query.endpoint} answered HTTP {answer.status}: {answer.text()}")
    try:
        values = series_values(answer)
    except AnswerError as err:
        return failed(PROMETHEUS, query.name, query.threshold, f"{query.endpoint}: {err}")
    return judge_values(PROMETHEUS, query.name, values, query.threshold, query.comparison, allow_idle=allow_idle)
