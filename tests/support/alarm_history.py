"""Two CloudWatch actions moto 5.2 lacks, taught to it in-process so one emulated account holds the alarms and their
history: PutCompositeAlarm and DescribeAlarmHistory.

The history is moto's own record of each alarm's state changes (`Alarm.history`: before each SetAlarmState, the state
it left and since when), answered in AWS's shape (CloudWatch API Reference, AlarmHistoryItem; its HistoryData as the
AWS CLI's describe-alarm-history example shows it: `{"version": "1.0", "oldState": {"stateValue": ...}, "newState":
{...}}`), filtered as DescribeAlarmHistory filters: by HistoryItemType, AlarmTypes (metric alarms only when omitted),
StartDate and EndDate; paged by MaxRecords and NextToken like the real action, so a caller that ignores NextToken
loses items here as it would in AWS.

And the alarms the tests make (`metric_alarm`, `alarm_state`): one shape for every test, since none of them judges a
threshold: each sets the states its alarm goes through."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from moto.cloudwatch.models import Alarm
from moto.cloudwatch.responses import CloudWatchResponse
from moto.core.responses import ActionResult, EmptyResult

METRIC_ALARM = "MetricAlarm"
COMPOSITE_ALARM = "CompositeAlarm"
DEFAULT_MAX_RECORDS = 50  # DescribeAlarmHistory's MaxRecords: 1-100 (CloudWatch API Reference); its default here


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def transitions(alarm: Alarm) -> list[tuple[datetime, str, str]]:
    """(when, old state, new state) of each change moto recorded: its history holds the state left and since when; the
    moment of leaving it is when the next state began (the next entry's start, or the current state's)."""
    if not alarm.history:
        return []
    starts = [*(_aware(entry[4]) for entry in alarm.history[1:]), _aware(alarm.state_updated_timestamp)]
    olds = [entry[3] for entry in alarm.history]
    news = [*olds[1:], alarm.state_value]
    return list(zip(starts, olds, news, strict=True))


def _put_composite_alarm(self: CloudWatchResponse) -> EmptyResult:
    """A composite alarm is an alarm with a rule (moto's Alarm keeps one for this); its state is set by SetAlarmState."""
    self.cloudwatch_backend.put_metric_alarm(
        name=self._get_param("AlarmName"),
        namespace="",
        metric_name="",
        comparison_operator="",
        evaluation_periods=0,
        period=0,
        threshold=0.0,
        statistic="",
        description=self._get_param("AlarmDescription") or "",
        dimensions=[],
        alarm_actions=self._get_param("AlarmActions", []),
        rule=self._get_param("AlarmRule"),
    )
    return EmptyResult()


def _describe_alarm_history(self: CloudWatchResponse) -> ActionResult:
    name = self._get_param("AlarmName")
    types = set(self._get_param("AlarmTypes", []) or [METRIC_ALARM])
    kind = self._get_param("HistoryItemType")
    start, end = self._get_param("StartDate"), self._get_param("EndDate")
    items = []
    for alarm in self.cloudwatch_backend.alarms.values():
        alarm_type = COMPOSITE_ALARM if alarm.rule is not None else METRIC_ALARM
        if (name and alarm.name != name) or alarm_type not in types or kind not in (None, "StateUpdate"):
            continue
        for when, old, new in transitions(alarm):
            if (start and when < _aware(start)) or (end and when > _aware(end)):
                continue
            data = {"version": "1.0", "oldState": {"stateValue": old}, "newState": {"stateValue": new}}
            items.append(
                {
                    "AlarmName": alarm.name,
                    "AlarmType": alarm_type,
                    "Timestamp": when,
                    "HistoryItemType": "StateUpdate",
                    "HistorySummary": f"Alarm updated from {old} to {new}",
                    "HistoryData": json.dumps(data),
                }
            )
    items.sort(key=lambda item: item["Timestamp"], reverse=self._get_param("ScanBy") != "TimestampAscending")
    first = int(self._get_param("NextToken") or 0)
    size = int(self._get_param("MaxRecords") or DEFAULT_MAX_RECORDS)
    result: dict[str, Any] = {"AlarmHistoryItems": items[first : first + size]}
    if first + size < len(items):
        result["NextToken"] = str(first + size)
    return ActionResult(result)


def metric_alarm(cloudwatch: Any, name: str) -> None:
    """A metric alarm on a metric nothing publishes: it leaves INSUFFICIENT_DATA only when a test sets its state."""
    cloudwatch.put_metric_alarm(
        AlarmName=name,
        Namespace="Shop",
        MetricName="Errors",
        Statistic="Sum",
        Period=60,
        EvaluationPeriods=1,
        Threshold=1,
        ComparisonOperator="GreaterThanThreshold",
    )


def alarm_state(cloudwatch: Any, name: str, value: str) -> None:
    """The alarm's state set as CloudWatch would on an evaluation (SetAlarmState), recorded in its history."""
    cloudwatch.set_alarm_state(AlarmName=name, StateValue=value, StateReason="set by the test")


def teach_alarm_history(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(CloudWatchResponse, "put_composite_alarm", _put_composite_alarm, raising=False)
    monkeypatch.setattr(CloudWatchResponse, "describe_alarm_history", _describe_alarm_history, raising=False)
