"""Readiness, second: EKS upgrade insights that speak of the cluster as it is now.

EKS refreshes insights about once a day (AWS, Amazon EKS User Guide, "Prepare for Kubernetes version upgrades
with cluster insights"), so on a colour built an hour ago the listed ones may predate it. Readiness asks for a
refresh (StartInsightsRefresh) and waits, bounded, until a refresh that started after the cluster's last change
has completed (DescribeInsightsRefresh), then reads them: ERROR blocks, WARNING and UNKNOWN are listed. Where a
refresh cannot be had (not allowed, not offered), it says so and how to go on with the insights as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from tools.aws_problems import aws_problem
from tools.clock import POLL_SECONDS, Clock
from tools.readiness.types import Finding, Target

# A refresh usually completes within a minute or two; past this the check fails and says so.
REFRESH_TIMEOUT_SECONDS = 600
SKIP_FLAG = "--skip-insights-refresh"
_BLOCKING = "ERROR"
_LISTED = ("WARNING", "UNKNOWN")


def fresh_insights(
    eks: Any, target: Target, changed_at: datetime | None, clock: Clock, *, refresh: bool, say: Callable[[str], None]
) -> Finding:
    cluster = target.cluster
    if refresh:
        refreshed = _refresh(eks, cluster, changed_at, clock, say)
        if isinstance(refreshed, Finding):
            return refreshed
        age = f"refreshed {_when(refreshed)}, after the cluster's last change at {_when(changed_at)}"
    else:
        age = f"as EKS last computed them ({SKIP_FLAG}: not refreshed)"
    found = _listed(eks, cluster)
    blocking = [_name(i) for i in found if i["insightStatus"]["status"] == _BLOCKING]
    notes = tuple(f"{i['insightStatus']['status']}: {_name(i)}" for i in found if i["insightStatus"]["status"] in _LISTED)
    if not refresh:
        stale = [_name(i) for i in found if changed_at and i.get("lastRefreshTime") and i["lastRefreshTime"] < changed_at]
        if stale:
            notes += (f"older than the cluster's last change ({_when(changed_at)}): {', '.join(stale)}",)
    if blocking:
        return Finding(False, f"EKS upgrade insights of {cluster} in ERROR ({age}): {', '.join(blocking)}", notes)
    listed = f"; listed below: {len(notes)}" if notes else ""
    return Finding(True, f"EKS upgrade insights of {cluster}: none in ERROR ({age}){listed}", notes)


def _refresh(eks: Any, cluster: str, changed_at: datetime | None, clock: Clock, say: Callable[[str], None]) -> Any:
    """The start of a completed refresh newer than changed_at, or the Finding that says why there is none."""
    how = f"to go on with the insights EKS last computed (about daily), run again with {SKIP_FLAG}"
    try:
        eks.start_insights_refresh(clusterName=cluster)
    except Exception as err:
        said = aws_problem(err)
        if said is None:
            raise
        return Finding(False, f"EKS upgrade insights of {cluster}: could not ask for a refresh ({said}); {how}")
    deadline = clock.now() + timedelta(seconds=REFRESH_TIMEOUT_SECONDS)
    say(f"  ...      EKS upgrade insights of {cluster}: refresh asked for, waiting (at most {REFRESH_TIMEOUT_SECONDS} s)")
    while True:
        state = eks.describe_insights_refresh(clusterName=cluster)
        started = state.get("startedAt")
        fresh = started is not None and (changed_at is None or started >= changed_at)
        if state["status"] == "COMPLETED" and fresh:
            return started
        if state["status"] == "FAILED" and fresh:
            reason = state.get("message") or "no reason given"
            return Finding(False, f"EKS upgrade insights of {cluster}: the refresh failed ({reason}); {how}")
        if clock.now() >= deadline:
            return Finding(
                False,
                f"EKS upgrade insights of {cluster}: no refresh newer than the cluster's last change ({_when(changed_at)}) "
                f"completed within {REFRESH_TIMEOUT_SECONDS} s (last: {state['status']}, started {_when(started)}); "
                f"run again, or {how}",
            )
        clock.sleep(POLL_SECONDS)


def _listed(eks: Any, cluster: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    more: dict[str, str] = {}
    while True:
        page = eks.list_insights(clusterName=cluster, filter={"statuses": [_BLOCKING, *_LISTED]}, **more)
        found += page["insights"]
        if not page.get("nextToken"):
            return found
        more = {"nextToken": page["nextToken"]}


def _name(insight: dict[str, Any]) -> str:
    return f"{insight['name']} ({insight.get('category', 'insight')})"


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment else "unknown"
