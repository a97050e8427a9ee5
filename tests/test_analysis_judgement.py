"""What every numeric provider shares, judged on its own: the worst value against the threshold, and failing closed
(no data and NaN are no evidence, a breach unless idle windows are allowed; an infinite value breaches always). Then
the Prometheus provider's reading of answers a real server gives rarely or never on demand (a scalar, a range
answer, several series, a body that is no JSON), through an opener of the test's; and the SigV4 signature of an Amazon
Managed Service for Prometheus query, checked against botocore's own verification of the same request."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import botocore.auth
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from model.config.analysis import Analysis, PrometheusQuery
from tools.analysis.http import Answer
from tools.analysis.prometheus import judge_query
from tools.analysis.verdict import PROMETHEUS, Verdict, Window, judge_values
from tools.analysis.window import bake_seconds

END = datetime(2026, 11, 29, 4, 5, tzinfo=UTC)
WINDOW = Window(END - timedelta(minutes=5), END)
AMP = "https://aps-workspaces.eu-west-1.amazonaws.com/workspaces/ws-0123abcd"


def values(found: list[float], comparison: str = "above", *, allow_idle: bool = False) -> Verdict:
    return judge_values("metric_math", "errors", found, 10.0, comparison, allow_idle=allow_idle)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("found", "comparison", "breach", "value"),
    [
        ([3.0, 9.0, 10.0], "above", False, 10.0),  # equal to the threshold is not past it
        ([3.0, 10.5], "above", True, 10.5),
        ([12.0, 10.0], "below", False, 10.0),
        ([12.0, 9.5], "below", True, 9.5),
    ],
)
def test_the_worst_value_is_held_against_the_threshold(found: list[float], comparison: str, breach: bool, value: float) -> None:
    verdict = values(found, comparison)
    assert (verdict.breach, verdict.value, verdict.threshold) == (breach, value, 10.0)
    assert f"threshold {comparison} 10" in verdict.detail


@pytest.mark.parametrize("found", [[], [math.nan], [math.nan, math.nan]])
def test_no_evidence_is_a_breach_unless_idle_windows_are_allowed(found: list[float]) -> None:
    assert values(found).breach is True
    assert "allow_idle is off" in values(found).detail
    assert values(found, allow_idle=True).breach is False
    assert "idle allowed" in values(found, allow_idle=True).detail


def test_nan_beside_numbers_is_a_breach_unless_idle_windows_are_allowed() -> None:
    assert values([1.0, math.nan]).breach is True
    assert values([1.0, math.nan], allow_idle=True).breach is False
    # ... but a number past the threshold breaches, NaN beside it or not.
    assert values([11.0, math.nan], allow_idle=True).breach is True


@pytest.mark.parametrize(("found", "comparison"), [([math.inf], "below"), ([-math.inf], "above"), ([1.0, math.inf], "above")])
def test_an_infinite_value_breaches_even_where_its_sign_would_pass(found: list[float], comparison: str) -> None:
    verdict = values(found, comparison, allow_idle=True)
    assert verdict.breach is True
    assert "is not a finite number" in verdict.detail


# --- Prometheus answers ----------------------------------------------------------------------------------------------


class Opener:
    """Answers every request with one answer, keeping the requests."""

    def __init__(self, status: int, body: Any) -> None:
        self.answer = Answer(status, body if isinstance(body, bytes) else json.dumps(body).encode())
        self.requests: list[tuple[str, dict[str, str]]] = []

    def __call__(self, url: str, *, headers: Mapping[str, str], timeout: float) -> Answer:
        self.requests.append((url, dict(headers)))
        return self.answer


def vector(*found: str) -> dict[str, Any]:
    result = [{"metric": {"pod": f"p{i}"}, "value": [END.timestamp(), value]} for i, value in enumerate(found)]
    return {"status": "success", "data": {"resultType": "vector", "result": result}}


def promql(**settings: Any) -> PrometheusQuery:
    return PrometheusQuery.model_validate(
        {"name": "p99", "endpoint": "http://localhost:9090", "query": 'max(p99{app="orders"})', "threshold": 0.5, **settings}
    )


def asked(opener: Opener, query: PrometheusQuery | None = None, *, allow_idle: bool = False) -> Verdict:
    verdict = judge_query(query or promql(), WINDOW, allow_idle=allow_idle, opener=opener, credentials=lambda: None)
    assert verdict.provider == PROMETHEUS
    return verdict


def test_the_query_is_asked_at_the_window_s_end() -> None:
    opener = Opener(200, vector("0.1"))
    asked(opener)
    ((url, _),) = opener.requests
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc, parts.path) == ("http", "localhost:9090", "/api/v1/query")
    assert parse_qs(parts.query) == {"query": ['max(p99{app="orders"})'], "time": [f"{END.timestamp():.3f}"]}


def test_every_series_is_judged_and_the_worst_reported() -> None:
    verdict = asked(Opener(200, vector("0.1", "0.7", "0.2")))
    assert (verdict.breach, verdict.value) == (True, 0.7)
    assert "worst of 3" in verdict.detail


def test_a_scalar_answer_is_judged_like_one_series() -> None:
    scalar = {"status": "success", "data": {"resultType": "scalar", "result": [END.timestamp(), "0.25"]}}
    assert (asked(Opener(200, scalar)).breach, asked(Opener(200, scalar)).value) == (False, 0.25)


@pytest.mark.parametrize(
    ("status", "body", "said"),
    [
        (200, {"status": "success", "data": {"resultType": "matrix", "result": []}}, "not an instant vector"),
        (200, b"<html>proxy login</html>", "not a JSON answer"),
        (200, {"status": "error", "errorType": "timeout", "error": "query timed out"}, "query timed out"),
        (200, {"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}}]}}, "unknown shape"),
        (503, {"status": "error", "error": "overloaded"}, "answered HTTP 503"),
    ],
)
def test_an_answer_that_cannot_be_judged_breaches_even_when_idle_is_allowed(status: int, body: Any, said: str) -> None:
    verdict = asked(Opener(status, body), allow_idle=True)
    assert verdict.breach is True
    assert said in verdict.detail


def test_a_signed_query_carries_a_sigv4_signature_for_the_aps_service(monkeypatch: pytest.MonkeyPatch) -> None:
    # botocore signs at its clock's second: one fixed moment, so that signing the request again gives the same.
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: END.replace(tzinfo=None))
    credentials = Credentials("AKIDEXAMPLE", "secret", "session-token")
    opener = Opener(200, vector("0.1"))
    query = promql(endpoint=AMP, sigv4=True, region="eu-west-1")
    verdict = judge_query(query, WINDOW, allow_idle=False, opener=opener, credentials=lambda: credentials)
    assert verdict.breach is False
    ((url, headers),) = opener.requests
    assert url.startswith(f"{AMP}/api/v1/query?")
    assert headers["X-Amz-Security-Token"] == "session-token"
    authorization = headers["Authorization"]
    scope = f"AKIDEXAMPLE/{headers['X-Amz-Date'][:8]}/eu-west-1/aps/aws4_request"
    assert scope == "AKIDEXAMPLE/20261129/eu-west-1/aps/aws4_request"
    assert authorization.startswith(f"AWS4-HMAC-SHA256 Credential={scope}, SignedHeaders=")
    # The request botocore alone signs for the same URL at the same moment carries the same signature: what was sent is
    # what was signed, for the service and region of the query's workspace.
    again = AWSRequest(method="GET", url=url, headers={"Accept": headers["Accept"]})
    SigV4Auth(credentials, "aps", "eu-west-1").add_auth(again)
    assert again.headers["Authorization"] == authorization


def test_a_signed_query_without_credentials_breaches_without_asking() -> None:
    opener = Opener(200, vector("0.1"))
    query = promql(endpoint=AMP, sigv4=True, region="eu-west-1")
    verdict = judge_query(query, WINDOW, allow_idle=True, opener=opener, credentials=lambda: None)
    assert (verdict.breach, opener.requests) == (True, [])
    assert "no AWS credentials" in verdict.detail


def test_the_bake_time_is_the_longest_any_application_asks_for() -> None:
    """The final split is every application's at once: its last window lasts as long as the most patient one wants."""
    assert (
        bake_seconds({"orders": Analysis(bake_seconds=120), "billing": Analysis(bake_seconds=600), "search": Analysis()}) == 600
    )
    assert bake_seconds({"search": Analysis()}) == 0
    assert bake_seconds({}) == 0


def test_a_verdict_reads_as_one_line_with_its_outcome() -> None:
    assert values([12.0]).line() == "metric_math errors: 12 (worst of 1), threshold above 10 | BREACH"
    assert values([2.0]).line() == "metric_math errors: 2 (worst of 1), threshold above 10 | ok"
