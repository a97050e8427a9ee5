"""The shift's events (tools/shift/events.py) arrive, in order and with the fields docs/shift-events.md documents, in an
SQS queue subscribed to the topic the traffic stack creates (moto delivers SNS to SQS): a shift that succeeds, one that
rolls back, a drain; a missing topic or a refused publish is said once and stops nothing; a dry run calls no topic."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from tests import test_shift
from tests.support.configs import write_project
from tests.support.emulated_aws import PROJECT, REGION, Emulated
from tests.test_shift import APPS, Counting, ShiftIn, all_at, clients_of, config_of
from tools.shift import ShiftError
from tools.shift.command import main
from tools.shift.events import EVENT_VERSION, ShiftEvents
from tools.shift.run import Shift

# Whole shifts against moto in this process: the emulated tier (pyproject.toml's markers), beside the unit tier.
pytestmark = pytest.mark.emulated

# The shift's world on the emulator, as tests/test_shift.py builds it: its fixtures, by the names pytest finds them.
deployed, preview, green_runs, green_ready, shift_in, stops_handled = (
    test_shift.deployed,
    test_shift.preview,
    test_shift.green_runs,
    test_shift.green_ready,
    test_shift.shift_in,
    test_shift.stops_handled,
)
# The topic as the traffic stack names it (tests/test_traffic_stack.py holds the stack to the same name).
TOPIC_NAME = f"{PROJECT}-shift-events"
# Every event's fields, as docs/shift-events.md lists them.
FIELDS = {"version", "kind", "project", "shift_id", "sequence", "time", "who", "command", "from", "to", "weights", "details"}


class Subscribed:
    """The topic, and an SQS queue subscribed to it with raw message delivery (the event's JSON is the body)."""

    def __init__(self) -> None:
        self.sns, self.sqs = boto3.client("sns", region_name=REGION), boto3.client("sqs", region_name=REGION)
        self.topic = self.sns.create_topic(Name=TOPIC_NAME)["TopicArn"]
        self.queue = self.sqs.create_queue(QueueName="shift-events")["QueueUrl"]
        queue_arn = self.sqs.get_queue_attributes(QueueUrl=self.queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        self.sns.subscribe(TopicArn=self.topic, Protocol="sqs", Endpoint=queue_arn, Attributes={"RawMessageDelivery": "true"})

    def events(self) -> list[dict[str, Any]]:
        """Every event the queue holds, in the order received, each with its message attributes under `attributes`."""
        found = []
        while messages := self.sqs.receive_message(
            QueueUrl=self.queue, MaxNumberOfMessages=10, MessageAttributeNames=["All"]
        ).get("Messages"):
            for message in messages:
                event = json.loads(message["Body"])
                event["attributes"] = {k: v["StringValue"] for k, v in message.get("MessageAttributes", {}).items()}
                found.append(event)
                self.sqs.delete_message(QueueUrl=self.queue, ReceiptHandle=message["ReceiptHandle"])
        return found

    def remove(self) -> None:
        self.sns.delete_topic(TopicArn=self.topic)
        self.sqs.delete_queue(QueueUrl=self.queue)


@pytest.fixture
def subscribed(deployed: Emulated) -> Iterator[Subscribed]:
    queue = Subscribed()
    yield queue
    queue.remove()


def told(shift: Shift, out: io.StringIO, **clients: Any) -> Shift:
    """The shift with its events published, as the command gives it them (tools/shift/command.py)."""
    shift.aws._clients.update(clients)
    shift.events = ShiftEvents(
        shift.aws,
        project=PROJECT,
        target="green",
        command="python -m tools.shift --to green",
        clock=shift.clock,
        out=out,
    )
    return shift


def held_to_the_documented_fields(events: list[dict[str, Any]], *, command: str) -> None:
    """One run's events: every field, one shift id, numbered in order, in the shift's time, filterable by kind."""
    assert f"| `version` | `{EVENT_VERSION}`;" in (Path(__file__).parents[1] / "docs" / "shift-events.md").read_text()
    assert all(set(event) - {"attributes"} == FIELDS for event in events)
    assert len({event["shift_id"] for event in events}) == 1
    assert [event["sequence"] for event in events] == list(range(1, len(events) + 1))
    assert [event["time"] for event in events] == sorted(event["time"] for event in events)
    for event in events:
        assert (event["version"], event["project"], event["command"]) == (EVENT_VERSION, PROJECT, command)
        assert (event["from"], event["to"]) == (["blue"], "green") or event["kind"] == "drain"
        assert event["who"].startswith("arn:aws:")  # the caller identity of the emulator
        assert event["attributes"] == {"kind": event["kind"], "project": PROJECT}
        assert sorted(event["weights"]) == sorted(APPS)


def test_a_shift_that_succeeds_tells_its_start_each_step_and_verdict_and_its_end(
    shift_in: ShiftIn, deployed: Emulated, subscribed: Subscribed
) -> None:
    shift, _, out = shift_in(deployed, step=50)
    told(shift, out).run("green")
    events = subscribed.events()
    assert [event["kind"] for event in events] == ["start", "step", "verdict", "step", "verdict", "end"]
    held_to_the_documented_fields(events, command="python -m tools.shift --to green")
    start, step, verdict, _, _, end = events
    assert start["weights"] == all_at({"blue": 100, "green": 0})
    plan = [{"blue": 50, "green": 50}, {"blue": 0, "green": 100}]
    assert start["details"] == {"plan": dict.fromkeys(APPS, plan), "interval_seconds": 300}
    assert step["weights"] == all_at({"blue": 50, "green": 50})
    assert step["details"] == {"step": "step 1/2  blue 50  green 50", "rule_changes": len(APPS)}
    assert (verdict["details"]["passed"], verdict["details"]["breaches"]) == (True, {})
    # 10 requests a minute per weight point (tests/test_shift.py World): green at 50 for the 5-minute window.
    assert verdict["details"]["metrics"]["orders"] == "requests 2500  5xx 0.00% (0)  p99 0.300 s"
    # The same numbers as numbers, for a record or a chart; no application has analysis here: none is carried.
    assert verdict["details"]["gate"]["orders"] == {"requests": 2500, "errors": 0, "error_ratio": 0.0, "p99_seconds": 0.3}
    assert verdict["details"]["analysis"] == {}
    outcomes = dict.fromkeys(APPS, "done")
    assert (end["weights"], end["details"]) == (all_at({"blue": 0, "green": 100}), {"outcome": "done", "outcomes": outcomes})
    # One day's events: the run's clock (a test's runs three hours in the past), never the machine's.
    assert start["time"] < end["time"]
    assert deployed.forwarded() == all_at({"blue": 0, "green": 100})


def test_a_shift_that_rolls_back_tells_the_breach_the_roll_back_and_its_end(
    shift_in: ShiftIn, deployed: Emulated, subscribed: Subscribed
) -> None:
    shift, world, out = shift_in(deployed, step=50)
    world.error_ratio_at[("orders", 50)] = 0.08  # 40 of 500 requests each minute
    with pytest.raises(ShiftError):
        told(shift, out).run("green")
    events = subscribed.events()
    assert [event["kind"] for event in events] == ["start", "step", "verdict", "rollback", "end"]
    held_to_the_documented_fields(events, command="python -m tools.shift --to green")
    _, _, verdict, rollback, end = events
    breach = "5xx ratio 8.00% (200 of 2500 requests) above traffic.shift.max_5xx_ratio 2.00%"
    assert (verdict["details"]["passed"], verdict["details"]["breaches"]) == (False, {"orders": breach})
    assert rollback["weights"] == all_at({"blue": 100, "green": 0})
    assert rollback["details"] == {"reason": f"step 1/2  blue 50  green 50: orders: {breach}"}
    assert end["details"]["outcome"] == "rolled back"
    assert end["details"]["reason"].endswith("rolled back to blue 100  green 0")
    assert end["weights"] == all_at({"blue": 100, "green": 0})


@pytest.mark.usefixtures("stops_handled")
def test_a_shift_stopped_by_a_sigterm_ends_interrupted(shift_in: ShiftIn, deployed: Emulated, subscribed: Subscribed) -> None:
    """A cancelled CI run (tests/test_shift.py: a real SIGTERM while step 2 is watched): rolled back, and the end says
    interrupted, not rolled back."""
    shift, world, out = shift_in(deployed, step=50)
    test_shift.stopped_at(world, 100)
    with pytest.raises(ShiftError):
        told(shift, out).run("green")
    events = subscribed.events()
    assert [event["kind"] for event in events] == ["start", "step", "verdict", "step", "rollback", "end"]
    held_to_the_documented_fields(events, command="python -m tools.shift --to green")
    assert events[-2]["details"] == {"reason": "interrupted (SIGTERM)"}
    assert (events[-1]["details"]["outcome"], events[-1]["weights"]) == ("interrupted", all_at({"blue": 50, "green": 50}))


def test_a_drain_tells_what_it_moved(
    tmp_path: Path, deployed: Emulated, subscribed: Subscribed, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_project(tmp_path, config_of())
    argv = ["--to", "green", "--now", "--config", str(path)]
    monkeypatch.setattr(sys, "argv", ["tools/shift/__main__.py", *argv])  # the command line the event repeats
    assert main(argv, aws=clients_of(deployed, None)) == 0
    (event,) = subscribed.events()
    assert event["kind"] == "drain"
    held_to_the_documented_fields([event], command=f"python -m tools.shift {' '.join(argv)}")
    assert (event["from"], event["to"]) == (["blue"], "green")
    assert event["weights"] == all_at({"blue": 0, "green": 100})
    assert event["details"] == {"before": all_at({"blue": 100, "green": 0}), "forced": False, "broke_lock": False}


def test_without_the_topic_the_shift_says_so_once_and_goes_on(
    shift_in: ShiftIn, deployed: Emulated, capsys: pytest.CaptureFixture[str]
) -> None:
    """A traffic stack deployed before the topic existed: the shift moves the traffic all the same."""
    shift, _, out = shift_in(deployed, step=50)
    sns = Counting(boto3.client("sns", region_name=REGION))
    told(shift, out, sns=sns).run("green")
    said = [line for line in out.getvalue().splitlines() if line.startswith("events:")]
    assert said == [
        f"events: no SNS topic {TOPIC_NAME} in this account and region (a traffic stack deployed before it: `cdktf "
        "deploy traffic` creates it); this run publishes no events"
    ]
    assert sns.count("publish") == 0
    assert deployed.forwarded() == all_at({"blue": 0, "green": 100})


class Refusing(Counting):
    """SNS that refuses every publish, as it does an identity without sns:Publish on the topic."""

    def publish(self, **_: Any) -> Any:
        self.calls.append("publish")
        raise ClientError({"Error": {"Code": "AuthorizationError", "Message": "not authorized"}}, "Publish")


def test_a_refused_publish_is_said_once_and_the_shift_goes_on(
    shift_in: ShiftIn, deployed: Emulated, subscribed: Subscribed
) -> None:
    shift, _, out = shift_in(deployed, step=50)
    sns = Refusing(subscribed.sns)
    told(shift, out, sns=sns).run("green")
    said = [line for line in out.getvalue().splitlines() if line.startswith("events:")]
    assert len(said) == 1
    assert said[0].startswith(f"events: publishing the start event to {subscribed.topic}: AWS denied Publish")
    assert said[0].endswith("this run publishes no more events (the shift goes on)")
    assert sns.count("publish") == 1
    assert deployed.forwarded() == all_at({"blue": 0, "green": 100})


@pytest.mark.parametrize("mode", [[], ["--now"]])
def test_a_dry_run_calls_no_topic(tmp_path: Path, deployed: Emulated, subscribed: Subscribed, mode: list[str]) -> None:
    path = write_project(tmp_path, config_of())
    sns = Counting(subscribed.sns, forbidden="a dry run calls no topic")
    aws = clients_of(deployed, None, sns=sns)
    assert main(["--to", "green", *mode, "--dry-run", "--skip-readiness", "--config", str(path)], aws=aws) == 0
    assert subscribed.events() == []
