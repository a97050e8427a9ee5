"""One window judged: every provider of every application, the verdicts by application. CloudWatch is asked once per
kind for all applications together (tools/analysis/alarms.py, metric_math.py); the HTTP providers go one query, one
check at a time. A shift step breaches when any verdict does."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from model.config.analysis import Analysis, HostKind
from tools.analysis.alarms import judge_alarms
from tools.analysis.http import Opener, urllib_opener
from tools.analysis.metric_math import judge_metric_math
from tools.analysis.prometheus import Credentials, judge_query
from tools.analysis.synthetic import judge_check
from tools.analysis.verdict import Verdict, Window
from tools.clock import Clock, SystemClock


@dataclass(frozen=True)
class Subject:
    """One application as analysis sees it: its resolved analysis and its hosts' base URLs by kind."""

    analysis: Analysis
    hosts: Mapping[HostKind, str]


@dataclass(frozen=True)
class Sources:
    """Where the evidence comes from. cloudwatch: a boto3 client, made by the caller (needed only when an application
    has alarms or metric math); credentials: the operator's, for SigV4 (asked only when a query signs)."""

    cloudwatch: Any = None
    credentials: Credentials = lambda: None
    opener: Opener = urllib_opener
    clock: Clock = field(default_factory=SystemClock)


def judge_window(subjects: Mapping[str, Subject], window: Window, sources: Sources) -> dict[str, list[Verdict]]:
    """Every verdict of the window by application (an application with nothing configured has none), in the order:
    alarms, metric math, Prometheus, synthetic."""
    analyses = {app: subject.analysis for app, subject in subjects.items()}
    by_app: dict[str, list[Verdict]] = {app: [] for app in subjects}
    cloudwatch = (
        judge_alarms(sources.cloudwatch, analyses, window, sources.clock.now()),
        judge_metric_math(sources.cloudwatch, analyses, window),
    )
    for found in cloudwatch:
        for app, verdicts in found.items():
            by_app[app].extend(verdicts)
    for app, subject in subjects.items():
        for query in subject.analysis.prometheus:
            by_app[app].append(
                judge_query(
                    query,
                    window,
                    allow_idle=subject.analysis.allow_idle,
                    opener=sources.opener,
                    credentials=sources.credentials,
                )
            )
        for check in subject.analysis.synthetic:
            by_app[app].append(judge_check(check, subject.hosts, opener=sources.opener, clock=sources.clock))
    return by_app


def breaches(verdicts: Mapping[str, list[Verdict]]) -> dict[str, list[Verdict]]:
    """The breaching verdicts by application (empty: the window passes)."""
    return {app: found for app, mine in verdicts.items() if (found := [v for v in mine if v.breach])}


def bake_seconds(analyses: Mapping[str, Analysis]) -> int:
    """The last window at the final split: the longest any application asks for (the final split is every
    application's at once)."""
    return max((analysis.bake_seconds for analysis in analyses.values()), default=0)
