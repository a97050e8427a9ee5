"""The shift's record: every shift's and drain's events, kept in the traffic stack's CloudWatch Logs group
(`/<project>/traffic/shifts`, components/shift_record.py), one log stream per run named by its shift id, one log event
per shift event (its JSON, Event.as_json). `python -m tools.shift --history` lists the runs, `--report` draws one
(tools/shift/story.py); docs/shift-record.md says why CloudWatch Logs.

Each event is appended as it happens (PutLogEvents), so a run killed mid-step keeps every event up to its death. Like
the topic (tools/shift/events.py), the record never stops a shift: a log group that is not there (a traffic stack
deployed before it) or a call AWS refuses is said once, and the run goes on without a record.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from model.routes import shift_record_log_group
from tools.aws import Aws
from tools.aws_problems import aws_problem, error_code
from tools.shift.events import Event, Kind, QuietSink, say

# What the record needs, said after a refusal (policies/traffic_operator.json and policies/deployer.json allow them).
WRITES = "logs:CreateLogStream and logs:PutLogEvents on the shift record (policies/traffic_operator.json)"
READS = "logs:DescribeLogStreams and logs:GetLogEvents on the shift record (policies/traffic_operator.json)"
LATEST = "latest"  # --report latest: the newest run (a pipeline passes its own run's id instead: --id-file)
# A shift id (tools/shift/events.py ShiftEvents): the run's start in UTC and 8 hex digits. Checked before it names a
# stream or a file (shift-<id>.html).
SHIFT_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{8}")
MAX_LIMIT = 1000
NO_END = "no end (still running, or the run died)"


class RecordError(Exception):
    """The record cannot answer: no log group, no such run."""


class IdFileSink:
    """--id-file: the run's shift id written to a file at its first event, for a pipeline's next step to pass to
    --report: it then draws this run, not the record's newest (a drain started meanwhile would be that). Written only
    once the run has an event, so a run refused before it started leaves no file, and no report of an earlier run is
    drawn as if it were this one's. Like every sink it never stops the run: a file it cannot write is said."""

    def __init__(self, path: Path, out: TextIO | None) -> None:
        self._path, self._out, self._written = path, out, False

    def receive(self, event: Event) -> None:
        if self._written:
            return
        self._written = True
        try:
            self._path.write_text(f"{event.shift_id}\n", encoding="utf-8")
        except OSError as err:
            say(self._out, f"--id-file: cannot write {self._path} ({err.strerror}); the run goes on")


class RecordSink(QuietSink):
    """Appends each event of a run to its own stream of the record (made on the run's first event)."""

    def __init__(self, aws: Aws, project: str, out: TextIO | None) -> None:
        super().__init__(aws, out)
        self._group = shift_record_log_group(project)
        self._stream = ""

    def receive(self, event: Event) -> None:
        if self._aws is None:
            return
        logs = self._aws.logs
        try:
            if not self._stream:
                logs.create_log_stream(logGroupName=self._group, logStreamName=event.shift_id)
                self._stream = event.shift_id
            # The event's own time (the shift's clock): Logs Insights' @timestamp is when it happened.
            entry = {"timestamp": int(event.time.timestamp() * 1000), "message": event.as_json()}
            logs.put_log_events(logGroupName=self._group, logStreamName=self._stream, logEvents=[entry])
        except Exception as err:
            if error_code(err) == "ResourceNotFoundException" and not self._stream:
                self._stop(
                    f"record: no log group {self._group} in this account and region (a traffic stack deployed before it: "
                    "`cdktf deploy traffic` creates it); this run leaves no record"
                )
                return
            doing = f"writing the {event.kind} event to {self._group}"
            self._give_up(
                err, needs=WRITES, line=lambda said: f"record: {doing}: {said}; this run records no more (the shift goes on)"
            )


@dataclass(frozen=True)
class Run:
    """One run as the record holds it: its events in order (each as its JSON, docs/shift-events.md)."""

    shift_id: str
    events: list[dict[str, Any]]

    def outcome(self) -> str:
        last = self.events[-1] if self.events else {}
        if last.get("kind") == Kind.DRAIN:
            return "drained" + (" (forced)" if last.get("details", {}).get("forced") else "")
        if last.get("kind") != Kind.END:
            return NO_END
        details = last.get("details", {})
        outcomes = details.get("outcomes") or {}  # --independent: each application's own
        each = "; ".join(f"{app} {outcome}" for app, outcome in outcomes.items())
        return f"{details.get('outcome', '?')}" + (f" ({each})" if each else "")

    def line(self) -> str:
        """One line of --history: id, start, who, from -> to, outcome, command."""
        first = self.events[0] if self.events else {}
        started = datetime.fromisoformat(first["time"]).strftime("%Y-%m-%d %H:%M UTC") if "time" in first else "?"
        moved = f"{','.join(first.get('from', [])) or '-'} -> {first.get('to', '?')}"
        return "  ".join([self.shift_id, started, first.get("who") or "?", moved, self.outcome(), first.get("command", "?")])


class Record:
    """Reads the record: the runs newest first, and one run's events."""

    def __init__(self, aws: Aws, project: str) -> None:
        self.logs = aws.logs
        self.group = shift_record_log_group(project)

    def runs(self, limit: int) -> list[Run]:
        """The newest runs, newest first. By stream name, which is the shift id and begins with the run's start in
        UTC: exact at once, where CloudWatch's last-event time of a stream is updated eventually."""
        found: list[Run] = []
        for name in self._names():
            found.append(self.run(name))
            if len(found) >= limit:
                break
        return found

    def latest(self) -> str:
        for name in self._names():
            return name
        raise RecordError(f"the shift record {self.group} holds no run yet")

    def run(self, shift_id: str) -> Run:
        """Every event of a run, in order (GetLogEvents from its first, page after page)."""
        events: list[dict[str, Any]] = []
        token: str | None = None
        while True:
            page = self._call(
                self.logs.get_log_events,
                f"no run {shift_id} in the shift record {self.group} (`python -m tools.shift --history` lists them)",
                logGroupName=self.group,
                logStreamName=shift_id,
                startFromHead=True,
                **({"nextToken": token} if token else {}),
            )
            events += [json.loads(entry["message"]) for entry in page["events"]]
            if not page["events"] or page.get("nextForwardToken") in (None, token):
                break  # the same token again: the end of the stream
            token = page["nextForwardToken"]
        return Run(shift_id, sorted(events, key=lambda event: int(event.get("sequence", 0))))

    def _names(self) -> Iterator[str]:
        token: str | None = None
        while True:
            page = self._call(
                self.logs.describe_log_streams,
                f"no shift record: no log group {self.group} in this account and region (`cdktf deploy traffic` creates it)",
                logGroupName=self.group,
                orderBy="LogStreamName",
                descending=True,
                **({"nextToken": token} if token else {}),
            )
            yield from (stream["logStreamName"] for stream in page["logStreams"])
            token = page.get("nextToken")
            if not token:
                return

    @staticmethod
    def _call(operation: Any, missing: str, **request: Any) -> Any:
        """One read; a log group or stream that is not there is `missing`, said as a RecordError."""
        try:
            return operation(**request)
        except Exception as err:
            if error_code(err) == "ResourceNotFoundException":
                raise RecordError(missing) from None
            said = aws_problem(err, needs=READS)
            if said is None:
                raise
            raise RecordError(said) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The record's flags of `python -m tools.shift`."""
    parser.add_argument("--history", action="store_true", help="list the shifts and drains of the record, newest first")
    parser.add_argument("--limit", type=_limit, default=20, help=f"with --history: how many runs, 1-{MAX_LIMIT} (default: 20)")
    parser.add_argument(
        "--report",
        type=_shift_id,
        metavar="ID",
        help=f"write shift-<ID>.html and shift-<ID>.png of one run of the record (its shift id, or {LATEST})",
    )
    parser.add_argument("--out", type=Path, default=Path("."), help="with --report: the directory they go in (default: here)")
    parser.add_argument(
        "--id-file",
        type=Path,
        metavar="FILE",
        help="with --to: write this run's shift id to FILE at its first event (what --report takes; none for a run "
        "refused before it started, or a dry run)",
    )


def answer(args: argparse.Namespace, project: str, aws: Aws, out: TextIO) -> None:
    """--history or --report, from the record: reads only."""
    record = Record(aws, project)
    if args.history:
        runs = record.runs(args.limit)
        print(f"{len(runs)} run(s) of {record.group}, newest first:" if runs else f"{record.group} holds no run yet", file=out)
        for run in runs:
            print(f"  {run.line()}", file=out)
        return
    run = record.run(record.latest() if args.report == LATEST else args.report)
    if not run.events:
        raise RecordError(f"the run {run.shift_id} of {record.group} holds no event")
    # Here, not at the top: every shift and drain imports this module for its sink, and --help must stay fast; only
    # --report draws (the three modules compile afresh where no bytecode is cached).
    from tools.shift.chart import page  # only --report draws (above)
    from tools.shift.render import html, png  # only --report draws (above)
    from tools.shift.story import story  # only --report draws (above)

    laid = page(story(run.shift_id, run.events, run.outcome()))
    args.out.mkdir(parents=True, exist_ok=True)
    written = args.out / f"shift-{run.shift_id}.html", args.out / f"shift-{run.shift_id}.png"
    written[0].write_text(html(laid), encoding="utf-8")
    png(laid, written[1])
    print(f"wrote {written[0]} and {written[1]}", file=out)


def _limit(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= MAX_LIMIT:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; use a whole number from 1 to {MAX_LIMIT}")
    return int(text)


def _shift_id(text: str) -> str:
    if text != LATEST and not SHIFT_ID.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is no shift id; use one `--history` lists (like 20261129T045600Z-1a2b3c4d) or {LATEST}"
        )
    return text
