"""The Prometheus provider against a real Prometheus server (Debian's package, tests/support/prometheus_server.py)
scraping an exporter this module serves: the shift's query judged as the server answers it. A healthy series passes,
a breaching one rolls the step back, no series and NaN are no evidence (a breach unless the application allows idle
windows), a query the server refuses breaches, and the server stopped breaches whatever the application allows."""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from model.config.analysis import Analysis, PrometheusQuery
from tests.support.prometheus_server import METRIC, Exporter, Scraped, scraped
from tools.analysis.verdict import PROMETHEUS, Verdict, Window
from tools.analysis.window import Sources, Subject, breaches, judge_window

APP = "orders"
THRESHOLD = 0.05
# A server started per module, waited on until it holds each value (~10 s): the out-of-process tier's.
pytestmark = pytest.mark.background

SERIES = Exporter(METRIC).series(APP)


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scraped]:
    with scraped(tmp_path_factory.mktemp("prometheus")) as started:
        yield started


def query(endpoint: str, expression: str = SERIES, *, comparison: str = "above") -> PrometheusQuery:
    return PrometheusQuery.model_validate(
        {"name": "error_ratio", "endpoint": endpoint, "query": expression, "threshold": THRESHOLD, "comparison": comparison}
    )


def judged(found: PrometheusQuery, *, allow_idle: bool = False) -> Verdict:
    """The window that just closed, judged as the shift would judge it (the real clock: the server's samples are now)."""
    now = datetime.now(UTC)
    window = Window(now - timedelta(minutes=1), now)
    subject = Subject(Analysis(prometheus=(found,), allow_idle=allow_idle), {})
    (verdict,) = judge_window({APP: subject}, window, Sources())[APP]
    assert verdict.provider == PROMETHEUS
    return verdict


def test_a_healthy_series_passes_with_its_value_and_threshold(prometheus: Scraped) -> None:
    prometheus.set(APP, 0.01)
    verdict = judged(query(prometheus.server.endpoint))
    assert (verdict.breach, verdict.value, verdict.threshold) == (False, 0.01, THRESHOLD)
    assert "0.01" in verdict.detail
    assert f"threshold above {THRESHOLD:g}" in verdict.detail


def test_a_breaching_series_rolls_the_step_back(prometheus: Scraped) -> None:
    prometheus.set(APP, 0.25)
    verdict = judged(query(prometheus.server.endpoint))
    assert (verdict.breach, verdict.value) == (True, 0.25)
    assert breaches({APP: [verdict]}) == {APP: [verdict]}
    # The same value on the other side of a `below` threshold passes: the comparison is the configuration's.
    assert judged(query(prometheus.server.endpoint, comparison="below")).breach is False


def test_no_series_is_a_breach_unless_idle_windows_are_allowed(prometheus: Scraped) -> None:
    nothing = query(prometheus.server.endpoint, f'{METRIC}{{app="nobody"}}')
    assert prometheus.server.instant(nothing.query)["data"]["result"] == []  # the server itself has no such series
    verdict = judged(nothing)
    assert (verdict.breach, verdict.value) == (True, None)
    assert "no data" in verdict.detail
    assert judged(nothing, allow_idle=True).breach is False


def test_nan_is_a_breach_unless_idle_windows_are_allowed(prometheus: Scraped) -> None:
    prometheus.set(APP, math.nan)
    verdict = judged(query(prometheus.server.endpoint))
    assert verdict.breach is True
    assert "NaN" in verdict.detail
    assert judged(query(prometheus.server.endpoint), allow_idle=True).breach is False


def test_a_query_the_server_refuses_is_a_breach_even_when_idle_is_allowed(prometheus: Scraped) -> None:
    verdict = judged(query(prometheus.server.endpoint, "max(("), allow_idle=True)
    assert verdict.breach is True
    assert "HTTP 400" in verdict.detail


def test_the_server_stopped_is_a_breach_even_when_idle_is_allowed(prometheus: Scraped) -> None:
    """Last in this module: the server does not start again."""
    prometheus.set(APP, 0.0)
    assert judged(query(prometheus.server.endpoint)).breach is False  # the same query passes while the server runs
    prometheus.server.stop()
    verdict = judged(query(prometheus.server.endpoint), allow_idle=True)
    assert verdict.breach is True
    assert "did not answer" in verdict.detail
