"""The shift's events: one JSON message per start, step, verdict, roll-back, drain and end, published to the traffic
stack's SNS topic (`<project>-shift-events`, components/shift_events.py) for whoever subscribes: e-mail, a chat channel
through AWS Chatbot, a webhook (docs/shift-events.md says how, and what each field means).

Telling is never a reason for the shift to stop or fail: a topic that is not there (a traffic stack deployed before it
was) or a call AWS refuses is said once, and the run goes on without events. A dry run makes no topic call at all.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Protocol, TextIO

from model.routes import events_topic_name
from tools.analysis.verdict import Verdict
from tools.aws import Aws
from tools.aws_problems import aws_problem
from tools.clock import Clock, SystemClock
from tools.shift import PartlyDoneError, ShiftError, ShiftLockLostError

# Bumped when a field changes meaning or goes: subscribers that parse the events can tell (docs/shift-events.md).
EVENT_VERSION = 2
# What the events need, said after a refusal (policies/traffic_operator.json and policies/deployer.json allow both).
NEEDS = "sns:ListTopics, and sns:Publish on the topic (policies/traffic_operator.json)"


class Kind(StrEnum):
    START = "start"  # the gated shift begins: readiness passed, the plan is known, nothing moved yet
    STEP = "step"  # a step's weights are in effect on every application's rule
    VERDICT = "verdict"  # a window was judged
    ROLLBACK = "rollback"  # the shift puts the previous step's weights back
    DRAIN = "drain"  # --now moved all traffic in one change
    END = "end"  # the gated shift is over: done, rolled back, interrupted, stopped or failed


@dataclass(frozen=True)
class Event:
    kind: Kind
    project: str
    shift_id: str  # one per run of the command: every event of a run carries it
    sequence: int  # 1, 2, ... within the run: SNS does not promise order to every subscriber, this does
    time: datetime  # the shift's clock
    who: str  # the caller identity's ARN
    command: str
    from_colours: Sequence[str]  # the colours that held weight besides `to` when the run began
    to_colour: str
    weights: Mapping[str, Mapping[str, int]]  # application -> colour -> weight
    details: Mapping[str, object] = field(default_factory=dict)

    def as_json(self) -> str:
        return json.dumps(
            {
                "version": EVENT_VERSION,
                "kind": str(self.kind),
                "project": self.project,
                "shift_id": self.shift_id,
                "sequence": self.sequence,
                "time": self.time.isoformat(),
                "who": self.who,
                "command": self.command,
                "from": list(self.from_colours),
                "to": self.to_colour,
                "weights": {app: dict(weights) for app, weights in self.weights.items()},
                "details": dict(self.details),
            },
            default=str,
        )


def verdict_values(verdict: Verdict) -> dict[str, object]:
    """One provider's verdict as an event carries it (docs/shift-events.md): a number stays a number; NaN is null and
    an infinite value the string "inf" or "-inf" (JSON has neither)."""

    def number(value: float | str | None) -> float | str | None:
        if isinstance(value, float) and not math.isfinite(value):
            return None if math.isnan(value) else str(value)
        return value

    return {
        "provider": verdict.provider,
        "what": verdict.what,
        "value": number(verdict.value),
        "threshold": number(verdict.threshold),
        "breach": verdict.breach,
        "detail": verdict.detail,
    }


class Sink(Protocol):
    """Where a run's events go: the topic (TopicSink), and whatever else the command gives the run. A sink never
    stops the shift: it says a problem once on its own and drops what follows."""

    def receive(self, event: Event) -> None: ...


class ShiftEvents:
    """A run's events, numbered and handed to each sink in order. aws None: no topic and no caller identity (a dry
    run, or a test's silent shift); `sinks` still receive."""

    def __init__(
        self,
        aws: Aws | None,
        *,
        project: str = "",
        target: str = "",
        command: str = "",
        clock: Clock | None = None,
        out: TextIO | None = None,
        sinks: Sequence[Sink] = (),
        limits: Mapping[str, float] | None = None,
    ) -> None:
        """limits: the gate's, by the numbers they bound (tools/shift/gate.py): the start event carries them as
        `limits`, so the record can be drawn against them (tools/shift/story.py)."""
        self._aws, self._project, self._target, self._command = aws, project, target, command
        self._limits = dict(limits or {})
        self._clock = clock or SystemClock()
        self._out = out
        self._sinks: list[Sink] = [*([TopicSink(aws, project, out)] if aws is not None else []), *sinks]
        self.shift_id = f"{self._clock.now():%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"
        self._sequence = 0
        self._who: str | None = None
        self._from: list[str] | None = None
        self._last: dict[str, dict[str, int]] = {}
        self._rolled_back = ""  # the last roll-back's reason: what the end says the run came to

    @classmethod
    def silent(cls) -> ShiftEvents:
        return cls(None)

    def emit(self, kind: Kind, weights: Mapping[str, Mapping[str, int]], **details: object) -> None:
        """One event about these weights (application -> colour -> weight: the applications it is about). An event
        that is a run's whole move (the drain's) gives the weights it found as `before` (the same shape)."""
        if self._from is None:  # the run's first event: the colours that held weight besides the target
            began = details.get("before", weights)
            assert isinstance(began, Mapping)
            held: dict[str, int] = {}
            for split in began.values():
                for colour, weight in split.items():
                    held[colour] = max(held.get(colour, 0), weight)
            self._from = sorted((c for c, w in held.items() if w and c != self._target), key=lambda c: -held[c])
        if kind is Kind.ROLLBACK:
            self._rolled_back = str(details.get("reason", ""))
        self._last = {**self._last, **{app: dict(split) for app, split in weights.items()}}
        if not self._sinks:
            return
        self._sequence += 1
        event = Event(
            kind=kind,
            project=self._project,
            shift_id=self.shift_id,
            sequence=self._sequence,
            time=self._clock.now(),
            who=self._caller(),
            command=self._command,
            from_colours=self._from,
            to_colour=self._target,
            weights={app: dict(split) for app, split in weights.items()},
            details=details,
        )
        for sink in self._sinks:
            sink.receive(event)

    @contextmanager
    def running(self, weights: Mapping[str, Mapping[str, int]], **details: object) -> Iterator[dict[str, object]]:
        """The gated shift's start, and its end with what it came to (the exception, if any, goes on). Yields the end's
        details for the run to add to (each application's outcome)."""
        self.emit(Kind.START, weights, **details, **({"limits": self._limits} if self._limits else {}))
        end: dict[str, object] = {}
        try:
            yield end
        except PartlyDoneError as err:
            self.emit(Kind.END, self._last, outcome="partly done", reason=str(err), outcomes=err.outcomes)
            raise
        except BaseException as err:
            self.emit(Kind.END, self._last, outcome=self._outcome(err), reason=str(err), **end)
            raise
        self.emit(Kind.END, self._last, outcome="done", **end)

    def _outcome(self, err: BaseException) -> str:
        if isinstance(err, KeyboardInterrupt) or self._rolled_back.startswith("interrupted"):
            return "interrupted"
        if isinstance(err, ShiftLockLostError):
            return "stopped"  # a drain took the lock: the weights are the drain's
        if isinstance(err, ShiftError) and self._rolled_back and "rolled back to " in str(err):
            return "rolled back"
        return "failed"

    def _caller(self) -> str:
        """Who runs the command (STS GetCallerIdentity, asked once); empty when it cannot be said."""
        if self._who is None:
            self._who = ""
            if self._aws is not None:
                try:
                    self._who = str(self._aws.sts.get_caller_identity()["Arn"])
                except Exception as err:
                    said = aws_problem(err)
                    if said is None:
                        raise
                    say(self._out, f"events: who runs this could not be read ({said}); the events name nobody")
        return self._who


class QuietSink:
    """What every sink of the run shares: it never stops the shift. A problem is said once (to out), and the sink
    drops what follows (its aws None)."""

    def __init__(self, aws: Aws | None, out: TextIO | None) -> None:
        self._aws, self._out = aws, out

    def _stop(self, line: str) -> None:
        self._aws = None
        say(self._out, line)

    def _give_up(self, err: Exception, *, needs: str, line: Callable[[str], str]) -> None:
        """An AWS error stops the sink, said once (line: the sentence around AWS's problem); any other is a bug."""
        said = aws_problem(err, needs=needs)
        if said is None:
            raise err
        self._stop(line(said))


class TopicSink(QuietSink):
    """Publishes each event to the traffic stack's topic, found by its name once; a topic that is not there or a call
    AWS refuses is said once, and the run goes on without publishing."""

    def __init__(self, aws: Aws, project: str, out: TextIO | None) -> None:
        super().__init__(aws, out)
        self._project = project
        self._topic: str | None = None

    def receive(self, event: Event) -> None:
        if self._aws is None:
            return
        topic = self._topic or self._find_topic()
        if topic is None:
            return
        attributes = {
            name: {"DataType": "String", "StringValue": value}
            for name, value in (("kind", str(event.kind)), ("project", self._project))
        }
        try:
            self._aws.sns.publish(TopicArn=topic, Message=event.as_json(), MessageAttributes=attributes)
        except Exception as err:
            self._failed(err, f"publishing the {event.kind} event to {topic}")

    def _find_topic(self) -> str | None:
        """The topic's ARN by its name (ListTopics); None, said once, when it cannot be used."""
        assert self._aws is not None
        name = events_topic_name(self._project)
        try:
            pages = self._aws.sns.get_paginator("list_topics").paginate()
            arns = [topic["TopicArn"] for page in pages for topic in page["Topics"]]
        except Exception as err:
            self._failed(err, "finding the shift's events topic")
            return None
        found = next((arn for arn in arns if arn.rsplit(":", 1)[-1] == name), None)
        if found is None:
            self._stop(
                f"events: no SNS topic {name} in this account and region (a traffic stack deployed before it: `cdktf "
                "deploy traffic` creates it); this run publishes no events"
            )
        self._topic = found
        return found

    def _failed(self, err: Exception, doing: str) -> None:
        self._give_up(
            err, needs=NEEDS, line=lambda said: f"events: {doing}: {said}; this run publishes no more events (the shift goes on)"
        )


def say(out: TextIO | None, line: str) -> None:
    """A sink's line to its out, if it has one (a test's silent run has none)."""
    if out is not None:
        print(line, file=out, flush=True)
