"""The analysis settings (model/config/analysis.py) as synth will read them once they are wired into the configuration
(`traffic.shift.analysis`, `applications.<name>.analysis`): parsed as model/loading.py parses the configuration (its
JSON, strictly) and worded by model/problems.py, each rule refused with a message naming the key, the value and what
is allowed; and how an application's settings merge with the project's (`resolved`)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from model.config.analysis import AlarmSelector, Analysis, AnalysisConfig, SyntheticCheck, resolved
from model.problems import Problems, report

AMP = "https://aps-workspaces.eu-west-1.amazonaws.com/workspaces/ws-0123abcd"
MATH = {"name": "error_rate", "expression": 'SELECT SUM(Errors) FROM "Shop"', "threshold": 5}
PROMQL = {"name": "p99", "endpoint": AMP, "query": "max(p99)", "threshold": 0.5, "sigv4": True, "region": "eu-west-1"}


def parsed(raw: dict[str, Any]) -> AnalysisConfig:
    """As model/loading.py parses the configuration: its JSON, strictly (`"5"` is no number, `1` no boolean)."""
    return AnalysisConfig.model_validate_json(json.dumps(raw), strict=True)


def problems_of(raw: dict[str, Any]) -> list[str]:
    found = Problems()
    with pytest.raises(ValidationError) as caught:
        parsed(raw)
    report(caught.value, AnalysisConfig, found)
    return found.lines(AnalysisConfig, raw)


def one_problem(raw: dict[str, Any]) -> str:
    (problem,) = problems_of(raw)
    return problem


def test_every_kind_of_evidence_is_accepted() -> None:
    analysis = parsed(
        {
            "alarms": [{"name": "orders-5xx"}, {"prefix": "orders-"}],
            "metric_math": [MATH],
            "prometheus": [PROMQL, {**PROMQL, "name": "local", "endpoint": "http://localhost:9090", "sigv4": False}],
            "synthetic": [{"host": "public", "path": "/healthz", "count": 5, "expect_json": {"build": {"tag": "1.2"}}}],
            "bake_seconds": 600,
            "allow_idle": True,
        }
    )
    assert analysis.metric_math is not None
    assert (analysis.metric_math[0].comparison, analysis.metric_math[0].period, analysis.metric_math[0].threshold) == (
        "above",
        60,
        5.0,
    )
    assert analysis.synthetic is not None
    assert dict(analysis.synthetic[0].expect_json) == {"build": {"tag": "1.2"}}


def test_nothing_set_is_nothing_to_judge() -> None:
    assert resolved(parsed({}), parsed({})) == Analysis()
    assert resolved(None, None) == Analysis()


def test_an_application_s_key_replaces_the_project_s_and_an_unset_one_inherits() -> None:
    project = parsed({"synthetic": [{"path": "/healthz"}], "alarms": [{"prefix": "shop-"}], "bake_seconds": 300})
    own = parsed({"alarms": [{"name": "orders-5xx"}], "synthetic": [], "allow_idle": True})
    merged = resolved(project, own)
    assert merged.alarms == (AlarmSelector(name="orders-5xx"),)  # replaced whole, not appended to
    assert merged.synthetic == ()  # an application drops a default with an empty list
    assert (merged.bake_seconds, merged.allow_idle) == (300, True)  # inherited; its own
    assert resolved(project, None).synthetic == (SyntheticCheck(path="/healthz"),)
    # false and 0 set by the application are settings too, not "unset".
    assert (
        resolved(parsed({"allow_idle": True, "bake_seconds": 60}), parsed({"allow_idle": False, "bake_seconds": 0})) == Analysis()
    )


def test_fails_on_an_alarm_with_both_a_name_and_a_prefix_or_neither() -> None:
    assert problems_of({"alarms": [{"name": "a", "prefix": "b"}, {}]}) == [
        'alarms[0]: {"name": "a", "prefix": "b"} is not allowed; set `name` or `prefix`, exactly one of the two',
        "alarms[1]: {} is not allowed; set `name` or `prefix`, exactly one of the two",
    ]


def test_fails_on_an_alarm_name_with_a_control_character() -> None:
    assert one_problem({"alarms": [{"prefix": "orders\n"}]}) == (
        'alarms[0].prefix: "orders\\n" is not allowed; use 1-255 characters, no control characters'
    )


@pytest.mark.parametrize("name", ["Error-Rate", "errors\n", "e" * 65])
def test_fails_on_a_query_name_that_cannot_be_a_get_metric_data_id(name: str) -> None:
    assert one_problem({"metric_math": [{**MATH, "name": name}]}) == (
        f"metric_math[0].name: {json.dumps(name)} is not allowed; use a lowercase letter, then letters, digits or '_' (at "
        "most 64 characters)"
    )


def test_fails_on_a_query_without_its_required_settings() -> None:
    assert problems_of({"metric_math": [{}]}) == [
        "metric_math[0].name: \"\" is not allowed; use a lowercase letter, then letters, digits or '_' (at most 64 characters)",
        'metric_math[0].expression: "" is not allowed; write the expression, 1-2048 characters',
        "metric_math[0].threshold: {} is not allowed; use a finite number (required)",
    ]


def test_fails_on_two_queries_of_one_name() -> None:
    problem = one_problem({"metric_math": [MATH, {**MATH, "threshold": 9}]})
    assert problem.startswith('metric_math: [{"name": "error_rate"')
    assert problem.endswith("is not allowed; name each query once (error_rate more than once)")


@pytest.mark.parametrize("period", [30, 90, 7200])
def test_fails_on_a_period_that_is_not_whole_minutes_up_to_an_hour(period: int) -> None:
    assert one_problem({"metric_math": [{**MATH, "period": period}]}) == (
        f"metric_math[0].period: {period} is not allowed; use a multiple of 60 from 60 to 3600 seconds"
    )


def test_fails_on_a_threshold_that_is_no_number() -> None:
    assert one_problem({"metric_math": [{**MATH, "threshold": "5"}]}) == (
        'metric_math[0].threshold: "5" is not allowed; use a number'
    )


def test_fails_on_a_comparison_other_than_above_or_below() -> None:
    assert one_problem({"prometheus": [{**PROMQL, "comparison": "over"}]}) == (
        'prometheus[0].comparison: "over" is not allowed; use one of "above", "below"'
    )


@pytest.mark.parametrize("endpoint", ["http://prometheus.internal:9090", "ftp://x", "https://", "localhost:9090"])
def test_fails_on_an_endpoint_in_clear_text_over_the_network(endpoint: str) -> None:
    assert one_problem({"prometheus": [{**PROMQL, "endpoint": endpoint}]}) == (
        f'prometheus[0].endpoint: "{endpoint}" is not allowed; use the https:// URL of a Prometheus-compatible API (for '
        "Amazon Managed Service for Prometheus 'https://aps-workspaces.<region>.amazonaws.com/workspaces/<id>'), or "
        "http://localhost[:port]"
    )


def test_fails_on_sigv4_without_a_region() -> None:
    raw = {**PROMQL}
    del raw["region"]
    problem = one_problem({"prometheus": [raw]})
    assert problem.startswith('prometheus[0]: {"name": "p99"')
    assert problem.endswith("is not allowed; with `sigv4` true, name the workspace's `region`")


def test_fails_on_a_region_that_is_no_region() -> None:
    assert one_problem({"prometheus": [{**PROMQL, "region": "Ireland"}]}) == (
        "prometheus[0].region: \"Ireland\" is not allowed; use an AWS region code such as 'ap-northeast-1'"
    )


def test_fails_on_synthetic_settings_out_of_range() -> None:
    assert problems_of({"synthetic": [{"host": "internal", "path": "healthz", "count": 0, "expect_status": 700}]}) == [
        'synthetic[0].host: "internal" is not allowed; use one of "preview", "public"',
        "synthetic[0].path: \"healthz\" is not allowed; use an absolute URL path such as '/healthz'",
        "synthetic[0].count: 0 is not allowed; use 1-100 requests",
        "synthetic[0].expect_status: 700 is not allowed; use an HTTP status 100-599",
    ]


def test_fails_on_a_bake_time_out_of_range_and_an_idle_switch_that_is_no_boolean() -> None:
    assert problems_of({"bake_seconds": 3601, "allow_idle": 1}) == [
        "bake_seconds: 3601 is not allowed; use 0-3600 seconds",
        "allow_idle: 1 is not allowed; use true or false",
    ]


def test_fails_on_an_unknown_key() -> None:
    assert one_problem({"synthetics": []}) == (
        "synthetics: [] is not allowed; unknown key; allowed keys: alarms, allow_idle, bake_seconds, metric_math, "
        "prometheus, synthetic"
    )
