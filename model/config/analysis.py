"""What a shift step must also show besides the load balancer's numbers: the evidence each team already watches
(`traffic.shift.analysis` for every application, `applications.<name>.analysis` for one). CloudWatch alarms (metric and
composite), CloudWatch metric math, Prometheus-compatible queries, synthetic HTTP checks through the application's
hosts, and a bake time at the final split. tools/analysis/ judges a window with them.

An application's settings and the project's merge key by key (`resolved`): a key the application sets replaces the
project's whole, so an application can also drop a default (`"synthetic": []`)."""

# No `from __future__ import annotations` in model/config/: pydantic reads these annotations as objects, with their
# metadata.
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from model.config.fields import AS_DICT, FROZEN, REGION_ALLOWED, REGION_PATTERN, Section, Shown
from model.problems import Allowed, frozen_mapping

# The end of a value: Python's `$` also matches before a last newline (`"orders\n"` would pass), which an alarm name, a
# query Id or a URL must not end with. (Valid in the JSON Schema's ECMAScript regexes too.)
END = r"$(?!\n)"
# A query's name becomes part of a GetMetricData query Id, which "must be unique within a single call"; "the valid
# characters are letters, numbers, and underscore; the first character must be a lowercase letter" (CloudWatch API
# Reference, MetricDataQuery, Id: at most 255 characters, of which the provider's per-application prefix takes some).
QUERY_NAME = r"^[a-z][A-Za-z0-9_]{0,63}" + END
QUERY_NAME_ALLOWED = "use a lowercase letter, then letters, digits or '_' (at most 64 characters)"
# CloudWatch alarm names and AlarmNamePrefix: 1-255 characters (CloudWatch API Reference, DescribeAlarms), no ASCII
# control character (PutMetricAlarm, AlarmName).
ALARM_NAME = r"^[^\x00-\x1f\x7f]{1,255}" + END
ALARM_NAME_ALLOWED = "use 1-255 characters, no control characters"
# MetricDataQuery.Expression: 1-2048 characters (CloudWatch API Reference, MetricDataQuery).
MAX_EXPRESSION_CHARACTERS = 2048
# GetMetricData's periods: a multiple of 60 for metrics of regular resolution (CloudWatch API Reference, MetricStat,
# Period); at most an hour, the longest shift window (model/config/traffic_settings.py MAX_SHIFT_INTERVAL_SECONDS).
MIN_PERIOD_SECONDS = 60
MAX_PERIOD_SECONDS = 3600
# A Prometheus-compatible API's base URL (`<endpoint>/api/v1/query` is asked): HTTPS, or plain HTTP to this machine only
# (a port-forward, a local agent): a query answered over the network in clear text could be changed on the way.
ENDPOINT = r"^(https://[A-Za-z0-9.-]+(:\d{1,5})?|http://(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?)(/[A-Za-z0-9._~%/-]*)?" + END
ENDPOINT_ALLOWED = (
    "use the https:// URL of a Prometheus-compatible API (for Amazon Managed Service for Prometheus "
    "'https://aps-workspaces.<region>.amazonaws.com/workspaces/<id>'), or http://localhost[:port]"
)
_HTTP_PATH = r"^/[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*" + END
MAX_SYNTHETIC_COUNT = 100
MAX_BAKE_SECONDS = 3600

Comparison = Literal["above", "below"]
HostKind = Literal["preview", "public"]


class AlarmSelector(Section):
    """CloudWatch alarms, metric or composite: one by its name, or every alarm whose name starts with a prefix."""

    name: Annotated[
        str | None,
        Field(pattern=ALARM_NAME, description="the alarm's name; or `prefix`, not both"),
        Allowed(ALARM_NAME_ALLOWED),
        Shown("(none)"),
    ] = None
    prefix: Annotated[
        str | None,
        Field(pattern=ALARM_NAME, description="every alarm whose name starts with this; or `name`, not both"),
        Allowed(ALARM_NAME_ALLOWED),
        Shown("(none)"),
    ] = None

    @model_validator(mode="after")
    def _one_of_the_two(self) -> "AlarmSelector":
        if (self.name is None) == (self.prefix is None):
            raise PydanticCustomError("alarm_selector", "set `name` or `prefix`, exactly one of the two")
        return self


class MetricMathQuery(Section):
    """A CloudWatch metric math expression (or a Metrics Insights query) and the value it must stay on the right side of."""

    name: Annotated[
        str,
        Field(
            pattern=QUERY_NAME,
            validate_default=True,
            description="the query's name in verdicts, unique among the application's queries",
        ),
        Allowed(QUERY_NAME_ALLOWED),
        Shown("(required)"),
    ] = ""
    expression: Annotated[
        str,
        Field(
            min_length=1,
            max_length=MAX_EXPRESSION_CHARACTERS,
            validate_default=True,
            description="a metric math expression that stands alone (`SEARCH(...)` inside a function, say) or a Metrics "
            "Insights query (`SELECT ...`), as GetMetricData takes it (required)",
        ),
        Allowed(f"write the expression, 1-{MAX_EXPRESSION_CHARACTERS} characters"),
        Shown("(required)"),
    ] = ""
    threshold: Annotated[
        float,
        Field(allow_inf_nan=False, description="the value a datapoint of the window may not pass (required)"),
        Allowed("use a finite number (required)"),
        Shown("(required)"),
    ]
    comparison: Annotated[
        Comparison,
        Field(description="`above`: a datapoint above the threshold is a breach; `below`: one below it"),
    ] = "above"
    period: Annotated[
        int,
        Field(
            ge=MIN_PERIOD_SECONDS,
            le=MAX_PERIOD_SECONDS,
            multiple_of=MIN_PERIOD_SECONDS,
            description="60-3600, a multiple of 60; the seconds each datapoint covers",
        ),
        Allowed(f"use a multiple of 60 from {MIN_PERIOD_SECONDS} to {MAX_PERIOD_SECONDS} seconds"),
    ] = MIN_PERIOD_SECONDS


class PrometheusQuery(Section):
    """A PromQL query against a Prometheus-compatible API, evaluated at the window's end: every series it returns must
    stay on the right side of the threshold (use a range function over the window, `max_over_time(...[5m])`)."""

    name: Annotated[
        str,
        Field(
            pattern=QUERY_NAME,
            validate_default=True,
            description="the query's name in verdicts, unique among the application's queries",
        ),
        Allowed(QUERY_NAME_ALLOWED),
        Shown("(required)"),
    ] = ""
    endpoint: Annotated[
        str,
        Field(pattern=ENDPOINT, validate_default=True, description="the API's base URL, before `/api/v1/query` (required)"),
        Allowed(ENDPOINT_ALLOWED),
        Shown("(required)"),
    ] = ""
    query: Annotated[
        str,
        Field(min_length=1, max_length=10000, validate_default=True, description="the PromQL expression (required)"),
        Allowed("write the PromQL expression, 1-10000 characters"),
        Shown("(required)"),
    ] = ""
    threshold: Annotated[
        float,
        Field(allow_inf_nan=False, description="the value no series may pass (required)"),
        Allowed("use a finite number (required)"),
        Shown("(required)"),
    ]
    comparison: Annotated[
        Comparison,
        Field(description="`above`: a value above the threshold is a breach; `below`: one below it"),
    ] = "above"
    sigv4: Annotated[
        bool,
        Field(
            description="`true`: requests are signed with the operator's AWS credentials (SigV4, service `aps`), as "
            "Amazon Managed Service for Prometheus requires"
        ),
    ] = False
    region: Annotated[
        str | None,
        Field(pattern=REGION_PATTERN, description="the workspace's region, required with `sigv4`"),
        Allowed(REGION_ALLOWED),
        Shown("(none)"),
    ] = None

    @model_validator(mode="after")
    def _signed_in_a_region(self) -> "PrometheusQuery":
        if self.sigv4 and self.region is None:
            raise PydanticCustomError("sigv4_region", "with `sigv4` true, name the workspace's `region`")
        return self


class SyntheticCheck(Section):
    """GET requests the shift sends to the application, each of which must answer as configured."""

    host: Annotated[
        HostKind,
        Field(description="`preview`: the target colour's preview host `<host>-<colour>`; `public`: the public host"),
    ] = "preview"
    path: Annotated[
        str,
        Field(pattern=_HTTP_PATH, description="the path requested"),
        Allowed("use an absolute URL path such as '/healthz'"),
    ] = "/"
    count: Annotated[
        int,
        Field(ge=1, le=MAX_SYNTHETIC_COUNT, description=f"1-{MAX_SYNTHETIC_COUNT}; requests per window, every one must pass"),
        Allowed(f"use 1-{MAX_SYNTHETIC_COUNT} requests"),
    ] = 3
    expect_status: Annotated[
        int,
        Field(ge=100, le=599, description="100-599; the status every answer must have"),
        Allowed("use an HTTP status 100-599"),
    ] = 200
    expect_json: Annotated[
        Mapping[str, Any],
        FROZEN,
        AS_DICT,
        Field(description="fields the JSON answer must hold with these values (nested objects are matched the same way)"),
    ] = Field(default_factory=lambda: frozen_mapping({}))


def _unique_names(items: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
    """A query's name is its id in GetMetricData's call and in the verdicts: two of one name would be one."""
    names = [item.name for item in items or ()]
    if twice := sorted({name for name in names if names.count(name) > 1}):
        raise PydanticCustomError("unique_names", "name each query once ({names} more than once)", {"names": ", ".join(twice)})
    return items


class AnalysisConfig(Section):
    """What else a step's window must show, beyond the load balancer's numbers. Set for the project at
    `traffic.shift.analysis`, for one application at `applications.<name>.analysis`: a key the application sets replaces
    the project's (a list whole); one unset there is the project's, unset in both none."""

    alarms: Annotated[
        tuple[AlarmSelector, ...] | None,
        Field(
            description="CloudWatch alarms (metric or composite), by `name` or `prefix`: a step breaches when one was in "
            "ALARM at any moment of its window"
        ),
        Shown("none"),
    ] = None
    metric_math: Annotated[
        tuple[MetricMathQuery, ...] | None,
        Field(
            description="CloudWatch metric math expressions, each with a threshold: a datapoint of the window past it breaches"
        ),
        Shown("none"),
    ] = None
    prometheus: Annotated[
        tuple[PrometheusQuery, ...] | None,
        Field(
            description="Prometheus-compatible queries (Amazon Managed Service for Prometheus with `sigv4`), each "
            "with a threshold: a series past it breaches; an endpoint that does not answer breaches"
        ),
        Shown("none"),
    ] = None
    synthetic: Annotated[
        tuple[SyntheticCheck, ...] | None,
        Field(description="GET requests the shift sends through the application's preview or public host in each window"),
        Shown("none"),
    ] = None
    bake_seconds: Annotated[
        int | None,
        Field(
            ge=0,
            le=MAX_BAKE_SECONDS,
            description=f"0-{MAX_BAKE_SECONDS}; one more window at the final split, judged like every step's, before the "
            "shift is done and the traffic lock released (0: none)",
        ),
        Allowed(f"use 0-{MAX_BAKE_SECONDS} seconds"),
        Shown("0"),
    ] = None
    allow_idle: Annotated[
        bool | None,
        Field(
            description="`true`: a query that finds no data, or NaN, passes (said in its verdict); an endpoint that does "
            "not answer still breaches"
        ),
        Shown("false"),
    ] = None

    _names = field_validator("metric_math", "prometheus")(_unique_names)


@dataclass(frozen=True)
class Analysis:
    """One application's analysis, resolved: every setting concrete."""

    alarms: tuple[AlarmSelector, ...] = ()
    metric_math: tuple[MetricMathQuery, ...] = ()
    prometheus: tuple[PrometheusQuery, ...] = ()
    synthetic: tuple[SyntheticCheck, ...] = ()
    bake_seconds: int = 0
    allow_idle: bool = False


def resolved(defaults: AnalysisConfig | None, own: AnalysisConfig | None) -> Analysis:
    """An application's analysis: each key the application sets (`own`) overrides the project's (`defaults`) whole, a
    list is never appended to the project's (so `[]` drops a default); a key neither sets is none, 0 or false."""
    settings: dict[str, Any] = {}
    for key in AnalysisConfig.model_fields:
        mine = getattr(own, key) if own is not None else None
        value = mine if mine is not None else getattr(defaults, key) if defaults is not None else None
        if value is not None:
            settings[key] = value
    return Analysis(**settings)
