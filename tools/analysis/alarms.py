"""CloudWatch alarms, metric and composite, chosen by name or by a prefix of their names: a step breaches when one was
in ALARM at any moment of its window, or is in ALARM when it is judged. The current state alone would miss an alarm
that fired and recovered inside the window, so its state changes are read too.

Every application's alarms in few calls: DescribeAlarms with up to 100 AlarmNames per call and one AlarmNamePrefix per
call (the two cannot be combined), AlarmTypes both kinds (composite alarms are returned only when asked for);
DescribeAlarmHistory once for the account's StateUpdate items since the window's start, both kinds again (without
AlarmTypes only metric alarms' history is returned). Each paginated by NextToken. (CloudWatch API Reference,
DescribeAlarms and DescribeAlarmHistory; a StateUpdate's HistoryData is JSON with `oldState.stateValue` and
`newState.stateValue`, as the AWS CLI's describe-alarm-history example shows.)

Fails closed: a named alarm that does not exist, or a prefix no alarm has, breaches (it watches nothing); an alarm that
had no data through the whole window (INSUFFICIENT_DATA) is no evidence, a breach unless idle windows are allowed."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from model.config.analysis import AlarmSelector, Analysis
from tools.analysis.verdict import ALARMS, Verdict, Window, failed
from tools.aws_problems import aws_errors_as

ALARM_TYPES = ["CompositeAlarm", "MetricAlarm"]
MAX_ALARM_NAMES = 100  # DescribeAlarms' AlarmNames: at most 100 items
ALARM, OK, NO_DATA = "ALARM", "OK", "INSUFFICIENT_DATA"
THRESHOLD = f"never {ALARM}"


class AlarmsError(Exception):
    """CloudWatch could not be asked: every alarm verdict breaches."""


@dataclass(frozen=True)
class Change:
    when: datetime
    old: str
    new: str


def pages(call: Callable[..., dict[str, Any]], **kwargs: Any) -> Iterator[dict[str, Any]]:
    """Each page of a paginated CloudWatch call, following NextToken."""
    while True:
        page = call(**kwargs)
        yield page
        if not page.get("NextToken"):
            return
        kwargs["NextToken"] = page["NextToken"]


def _states(cloudwatch: Any, names: list[str], prefixes: list[str]) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Each alarm's current state by name, and the alarms' names under each prefix."""
    found: dict[str, str] = {}
    members: dict[str, list[str]] = {}

    def read(**selection: Any) -> list[str]:
        seen = []
        for page in pages(cloudwatch.describe_alarms, AlarmTypes=ALARM_TYPES, **selection):
            for alarm in [*page.get("MetricAlarms", []), *page.get("CompositeAlarms", [])]:
                found[alarm["AlarmName"]] = alarm["StateValue"]
                seen.append(alarm["AlarmName"])
        return seen

    for first in range(0, len(names), MAX_ALARM_NAMES):
        read(AlarmNames=names[first : first + MAX_ALARM_NAMES])
    for prefix in prefixes:
        members[prefix] = sorted(set(read(AlarmNamePrefix=prefix)))
    return found, members


def _changes(cloudwatch: Any, names: set[str], since: datetime, until: datetime) -> dict[str, list[Change]]:
    """The state changes of these alarms from since to until, oldest first."""
    changes: dict[str, list[Change]] = {}
    selection = {"HistoryItemType": "StateUpdate", "AlarmTypes": ALARM_TYPES, "ScanBy": "TimestampAscending"}
    for page in pages(cloudwatch.describe_alarm_history, StartDate=since, EndDate=until, **selection):
        for item in page.get("AlarmHistoryItems", []):
            if item["AlarmName"] not in names:
                continue
            data = json.loads(item["HistoryData"])
            change = Change(item["Timestamp"], data["oldState"]["stateValue"], data["newState"]["stateValue"])
            changes.setdefault(item["AlarmName"], []).append(change)
    return {name: sorted(found, key=lambda change: change.when) for name, found in changes.items()}


def states_in_window(current: str, changes: list[Change], window: Window) -> set[str]:
    """Every state the alarm was in during the window, and its current one if that is ALARM (it fired since: the split
    is still in place). Its state at the window's start is what its first change since then left, else its current."""
    at_start = changes[0].old if changes else current
    during = {change.new for change in changes if change.when < window.end}
    return {at_start, *during} | ({current} & {ALARM})


def _verdict(selector: AlarmSelector, alarms: Mapping[str, set[str]], *, allow_idle: bool) -> Verdict:
    what = _what(selector)
    if not alarms:
        why = "no alarm has this name" if selector.name is not None else "no alarm's name starts with this"
        return failed(ALARMS, what, THRESHOLD, f"{why}: it watches nothing, a breach")
    fired = sorted(name for name, states in alarms.items() if ALARM in states)
    if fired:
        return Verdict(ALARMS, what, ALARM, THRESHOLD, True, f"{', '.join(fired)} in {ALARM} during the window ({THRESHOLD})")
    quiet = sorted(name for name, states in alarms.items() if states == {NO_DATA})
    if quiet and not allow_idle:
        said = f"{', '.join(quiet)} {NO_DATA} through the window: no evidence is a breach (allow_idle is off)"
        return Verdict(ALARMS, what, NO_DATA, THRESHOLD, True, said)
    idle = f"; {', '.join(quiet)} {NO_DATA} (idle allowed)" if quiet else ""
    return Verdict(ALARMS, what, OK, THRESHOLD, False, f"{len(alarms)} alarm(s), none in {ALARM} during the window{idle}")


def judge_alarms(cloudwatch: Any, analyses: Mapping[str, Analysis], window: Window, now: datetime) -> dict[str, list[Verdict]]:
    """Each application's alarm verdicts, one per selector; now: when the history is read up to."""
    wanted = {app: analysis.alarms for app, analysis in analyses.items() if analysis.alarms}
    if not wanted:
        return {}
    selectors = [selector for chosen in wanted.values() for selector in chosen]
    names = sorted({s.name for s in selectors if s.name is not None})
    prefixes = sorted({s.prefix for s in selectors if s.prefix is not None})
    try:
        with aws_errors_as(AlarmsError):
            found, members = _states(cloudwatch, names, prefixes)
            changes = _changes(cloudwatch, set(found), window.start, now) if found else {}
    except AlarmsError as err:
        return {
            app: [failed(ALARMS, _what(s), THRESHOLD, f"cannot read the alarms: {err}") for s in chosen]
            for app, chosen in wanted.items()
        }
    states = {name: states_in_window(state, changes.get(name, []), window) for name, state in found.items()}
    verdicts: dict[str, list[Verdict]] = {}
    for app, chosen in wanted.items():
        for selector in chosen:
            alarms = (
                [selector.name]
                if selector.name is not None and selector.name in found
                else members.get(selector.prefix or "", [])
            )
            allow_idle = analyses[app].allow_idle
            verdicts.setdefault(app, []).append(
                _verdict(selector, {name: states[name] for name in alarms}, allow_idle=allow_idle)
            )
    return verdicts


def _what(selector: AlarmSelector) -> str:
    return f"name {selector.name}" if selector.name is not None else f"prefix {selector.prefix}*"
