"""The shift's record (tools/shift/record.py): every shift's and drain's events in the traffic stack's CloudWatch Logs
group, a stream per run, in order, on the emulator (moto in-process, the world of tests/test_shift.py); a missing group
or a refused write said once, the shift going on; no record of a dry run. `--report` draws a run as an HTML page and a
PNG of the same charts (one per application's weights and per provider, the verdicts and the roll-back marked), judged
by decoding the PNG and reading the HTML. `--history` is run as the operator runs it, in its own process against a moto
server: it lists the test's runs, newest first."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from PIL import Image

from model.paths import PROJECT_DIR
from tests import test_shift, test_shift_analysis, test_shift_field
from tests.support.configs import THREE_APPLICATIONS, write_project
from tests.support.emulated_aws import PROJECT, REGION, Emulated, FakeClock
from tests.test_shift import APPS, Counting, ShiftIn, World, all_at, clients_of, config_of
from tools.shift import ShiftError
from tools.shift.command import main
from tools.shift.events import Kind, ShiftEvents
from tools.shift.record import IdFileSink, RecordSink, Run
from tools.shift.run import Shift
from tools.shift.story import story

# Whole shifts against moto in this process: the emulated tier (pyproject.toml's markers), beside the unit tier.
pytestmark = pytest.mark.emulated

deployed, preview, green_runs, green_ready, shift_in = (
    test_shift.deployed,
    test_shift.preview,
    test_shift.green_runs,
    test_shift.green_ready,
    test_shift.shift_in,
)
server, world = test_shift_field.server, test_shift_field.world
# The record's name as the traffic stack gives it (tests/test_traffic_stack.py holds the stack to the same).
GROUP = f"/{PROJECT}/traffic/shifts"
SHIFT_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{8}")
# The report's page: 960 pixels wide, a heading of 84 and 240 per chart (tools/shift/chart.py, as the PNG must hold).
WIDTH, HEADING, CHART = 960, 84, 240


class Kept:
    """The record's log group, and what it holds."""

    def __init__(self) -> None:
        self.logs = boto3.client("logs", region_name=REGION)
        self.logs.create_log_group(logGroupName=GROUP)

    def streams(self) -> list[str]:
        return [s["logStreamName"] for s in self.logs.describe_log_streams(logGroupName=GROUP)["logStreams"]]

    def entries(self, stream: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.logs.get_log_events(logGroupName=GROUP, logStreamName=stream, startFromHead=True)[
            "events"
        ]
        return found

    def remove(self) -> None:
        self.logs.delete_log_group(logGroupName=GROUP)


@pytest.fixture
def kept(deployed: Emulated) -> Iterator[Kept]:
    record = Kept()
    yield record
    record.remove()


def recorded(shift: Shift, out: io.StringIO, **clients: Any) -> Shift:
    """The shift with its events to the record, as the command gives it them (tools/shift/command.py)."""
    shift.aws._clients.update(clients)
    shift.events = ShiftEvents(
        None,
        project=PROJECT,
        target="green",
        command="python -m tools.shift --to green",
        clock=shift.clock,
        out=out,
        sinks=[RecordSink(shift.aws, PROJECT, out)],
        limits={"error_ratio": 0.02, "p99_seconds": 1.0},
    )
    return shift


def said(out: io.StringIO) -> list[str]:
    return [line for line in out.getvalue().splitlines() if line.startswith("record:")]


def test_a_shift_records_each_event_as_it_happens_in_a_stream_of_its_own(
    shift_in: ShiftIn, deployed: Emulated, kept: Kept
) -> None:
    shift, _, out = shift_in(deployed, step=50)
    recorded(shift, out).run("green")
    (stream,) = kept.streams()
    assert SHIFT_ID.fullmatch(stream)
    entries = kept.entries(stream)
    events = [json.loads(entry["message"]) for entry in entries]
    assert [event["kind"] for event in events] == ["start", "step", "verdict", "step", "verdict", "end"]
    assert [event["sequence"] for event in events] == [1, 2, 3, 4, 5, 6]
    assert {event["shift_id"] for event in events} == {stream}
    # Each entry at its event's own time (Logs Insights' @timestamp), not when it was sent.
    assert [entry["timestamp"] for entry in entries] == [
        int(datetime.fromisoformat(event["time"]).timestamp() * 1000) for event in events
    ]
    assert events[0]["details"]["limits"] == {"error_ratio": 0.02, "p99_seconds": 1.0}
    assert events[-1]["details"] == {"outcome": "done", "outcomes": dict.fromkeys(APPS, "done")}
    assert said(out) == []


def test_the_command_records_a_gated_shift_with_the_gates_limits(
    tmp_path: Path, deployed: Emulated, kept: Kept, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`python -m tools.shift --to green` as the command builds its events (tools/shift/command.py): the record is one
    of their sinks, and the start carries the configuration's limits (config_of: 2% and 1 s)."""
    path = write_project(tmp_path, config_of())
    argv = ["--to", "green", "--step", "100", "--skip-readiness", "--config", str(path)]
    monkeypatch.setattr(sys, "argv", ["tools/shift/__main__.py", *argv])
    clock = FakeClock()
    World(deployed, clock, config_path=path)  # the target's requests, minute by minute, as the shift waits
    assert main(argv, aws=clients_of(deployed, None), clock=clock) == 0
    (stream,) = kept.streams()
    events = [json.loads(entry["message"]) for entry in kept.entries(stream)]
    assert [event["kind"] for event in events] == ["start", "step", "verdict", "end"]
    assert events[0]["details"]["limits"] == {"error_ratio": 0.02, "p99_seconds": 1.0}
    assert events[0]["who"].startswith("arn:aws:")


def test_the_id_file_names_the_run_the_record_holds_and_a_refused_run_writes_none(
    tmp_path: Path, deployed: Emulated, kept: Kept, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--id-file (what shift.yml's report step reads): the id of this run's stream, written at its first event, and
    --report of it draws this run; a run refused before it started (an unknown application) writes no file, so no
    earlier run is drawn as if it were this one's; --id-file without --to is refused."""
    path = write_project(tmp_path, config_of())
    refused = tmp_path / "refused-id"
    assert (
        main(
            ["--to", "green", "--now", "--application", "nope", "--id-file", str(refused), "--config", str(path)],
            aws=clients_of(deployed, None),
        )
        == 2
    )
    assert not refused.exists()
    written = tmp_path / "shift-id"
    argv = ["--to", "green", "--now", "--id-file", str(written), "--config", str(path)]
    monkeypatch.setattr(sys, "argv", ["tools/shift/__main__.py", *argv])
    assert main(argv, aws=clients_of(deployed, None)) == 0
    (stream,) = kept.streams()
    assert written.read_text() == f"{stream}\n"
    out = tmp_path / "report"
    assert (
        main(["--report", written.read_text().strip(), "--out", str(out), "--config", str(path)], aws=clients_of(deployed, None))
        == 0
    )
    assert sorted(p.name for p in out.iterdir()) == [f"shift-{stream}.html", f"shift-{stream}.png"]
    with pytest.raises(SystemExit) as usage:
        main(["--status", "--id-file", str(written), "--config", str(path)], aws=clients_of(deployed, None))
    assert usage.value.code == 2
    assert "--id-file applies to a shift or a drain (--to <colour>)" in capsys.readouterr().err


def test_an_id_file_that_cannot_be_written_is_said_and_the_run_goes_on(tmp_path: Path) -> None:
    said = io.StringIO()
    events = ShiftEvents(None, target="green", sinks=[IdFileSink(tmp_path / "no-such-dir" / "shift-id", said)])
    events.emit(Kind.START, all_at({"blue": 100, "green": 0}))
    events.emit(Kind.STEP, all_at({"blue": 50, "green": 50}))
    assert said.getvalue().count("--id-file: cannot write ") == 1  # said at the first event only
    assert said.getvalue().rstrip().endswith("(No such file or directory); the run goes on")


def test_a_drain_records_its_one_event(tmp_path: Path, deployed: Emulated, kept: Kept, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_project(tmp_path, config_of())
    argv = ["--to", "green", "--now", "--config", str(path)]
    monkeypatch.setattr(sys, "argv", ["tools/shift/__main__.py", *argv])
    assert main(argv, aws=clients_of(deployed, None)) == 0
    (stream,) = kept.streams()
    (event,) = [json.loads(entry["message"]) for entry in kept.entries(stream)]
    assert (event["kind"], event["shift_id"], event["weights"]) == ("drain", stream, all_at({"blue": 0, "green": 100}))
    assert event["details"]["before"] == all_at({"blue": 100, "green": 0})


def test_without_the_log_group_the_shift_says_so_once_and_goes_on(shift_in: ShiftIn, deployed: Emulated) -> None:
    """A traffic stack deployed before the record existed: the shift moves the traffic all the same."""
    shift, _, out = shift_in(deployed, step=50)
    logs = Counting(boto3.client("logs", region_name=REGION))
    recorded(shift, out, logs=logs).run("green")
    assert said(out) == [
        f"record: no log group {GROUP} in this account and region (a traffic stack deployed before it: `cdktf deploy "
        "traffic` creates it); this run leaves no record"
    ]
    assert logs.calls == ["create_log_stream"]  # asked once, then never again
    assert deployed.forwarded() == all_at({"blue": 0, "green": 100})


class Refusing(Counting):
    """CloudWatch Logs refusing every write, as it does an identity without logs:PutLogEvents on the record."""

    def put_log_events(self, **_: Any) -> Any:
        self.calls.append("put_log_events")
        raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "not authorized"}}, "PutLogEvents")


def test_a_refused_write_is_said_once_and_the_shift_goes_on(shift_in: ShiftIn, deployed: Emulated, kept: Kept) -> None:
    shift, _, out = shift_in(deployed, step=50)
    logs = Refusing(kept.logs)
    recorded(shift, out, logs=logs).run("green")
    (line,) = said(out)
    assert line.startswith(f"record: writing the start event to {GROUP}: AWS denied PutLogEvents to this identity")
    assert "logs:CreateLogStream and logs:PutLogEvents on the shift record" in line
    assert line.endswith("this run records no more (the shift goes on)")
    assert logs.count("put_log_events") == 1
    assert deployed.forwarded() == all_at({"blue": 0, "green": 100})


@pytest.mark.parametrize("mode", [[], ["--now"]])
def test_a_dry_run_records_nothing(tmp_path: Path, deployed: Emulated, kept: Kept, mode: list[str]) -> None:
    path = write_project(tmp_path, config_of())
    logs = Counting(kept.logs, forbidden="a dry run writes no record")
    aws = clients_of(deployed, None, logs=logs)
    assert main(["--to", "green", *mode, "--dry-run", "--skip-readiness", "--config", str(path)], aws=aws) == 0
    assert kept.streams() == []


# --- the report ------------------------------------------------------------------------------------------------


def report(tmp_path: Path, deployed: Emulated, shift_id: str, capsys: pytest.CaptureFixture[str]) -> tuple[str, Image.Image]:
    """`--report <id> --out <dir>` as the command runs it: the HTML's text and the PNG, decoded."""
    path = write_project(tmp_path, config_of())
    out = tmp_path / "report"
    assert main(["--report", shift_id, "--out", str(out), "--config", str(path)], aws=clients_of(deployed, None)) == 0
    html, png = sorted(out.iterdir())  # the run's two files, and nothing else
    assert SHIFT_ID.fullmatch(html.name.removeprefix("shift-").removesuffix(".html"))
    assert png.name == html.name.replace(".html", ".png")
    assert capsys.readouterr().out.strip() == f"wrote {html} and {png}"
    page = html.read_text()
    image = Image.open(png)
    image.load()  # decodes the whole image: a truncated or broken PNG fails here
    return page, image


def charts(page: str, kind: str) -> list[str]:
    return re.findall(rf'<svg [^>]*class="chart {kind}" data-key="([^"]+)"', page)


def test_the_report_of_a_shift_that_rolled_back(
    tmp_path: Path, shift_in: ShiftIn, deployed: Emulated, kept: Kept, capsys: pytest.CaptureFixture[str]
) -> None:
    shift, world, out = shift_in(deployed, step=50)
    world.error_ratio_at[("orders", 50)] = 0.08
    with pytest.raises(ShiftError):
        recorded(shift, out).run("green")
    page, image = report(tmp_path, deployed, "latest", capsys)
    # One weights chart per application, one chart per provider: the gate's two numbers (no analysis configured).
    assert sorted(charts(page, "weights")) == sorted(APPS)
    assert charts(page, "provider") == ["gate: 5xx ratio", "gate: p99 seconds"]
    assert image.format == "PNG"
    assert image.size == (WIDTH, HEADING + CHART * (len(APPS) + 2))
    assert "rolled back" in page  # the outcome, in the heading
    assert page.count(">rollback</text>") == len(APPS)  # marked on each application's weights
    assert page.count(">breach</text>") == len(APPS)
    # orders' 5xx ratio over its limit: the one red dot of the ratio's chart, and the limit drawn.
    ratio = page.split('data-key="gate: 5xx ratio"')[1].split("</svg>")[0]
    assert ratio.count('fill="#d62728"') == 1
    assert "orders (limit 0.02)" in ratio
    # Self-contained: no script, and nothing to fetch (the one URL is SVG's namespace, a name never fetched).
    assert "<script" not in page
    assert re.findall(r"https?://[^\"' ]+", page) == ["http://www.w3.org/2000/svg"] * page.count("<svg ")
    # The PNG holds the same charts: drawn, not blank, and red where the breach is.
    colours = {colour for _, colour in image.convert("RGB").getcolors(maxcolors=1 << 20) or []}
    assert len(colours) > 8
    assert (214, 39, 40) in colours


def test_the_report_draws_an_analysis_providers_values_against_their_threshold(
    tmp_path: Path, shift_in: ShiftIn, deployed: Emulated, kept: Kept, capsys: pytest.CaptureFixture[str]
) -> None:
    """orders' metric math (a Metrics Insights query moto answers with the sum of the window's datapoints) judged
    each step: its chart has a value per step and the threshold."""
    query = {"name": "requests", "expression": 'SELECT SUM(RequestCount) FROM "AWS/ApplicationELB"', "threshold": 1e9}
    applications = test_shift_analysis.with_analysis(orders={"metric_math": [query]})
    shift, _, out = shift_in(deployed, step=50, applications=applications)
    recorded(shift, out).run("green")
    page, image = report(tmp_path, deployed, "latest", capsys)
    assert charts(page, "provider") == ["gate: 5xx ratio", "gate: p99 seconds", "metric_math"]
    assert image.size == (WIDTH, HEADING + CHART * (len(THREE_APPLICATIONS) + 3))
    math_chart = page.split('data-key="metric_math"')[1].split("</svg>")[0]
    assert "orders: requests (limit 1e+09)" in math_chart
    assert math_chart.count("<circle") == 2  # one value per step
    assert "stroke-dasharray" in math_chart  # the threshold


def event(kind: str, sequence: int, minute: int, weights: dict[str, dict[str, int]], **details: Any) -> dict[str, Any]:
    """An event as the record holds it (docs/shift-events.md)."""
    return {
        "kind": kind,
        "sequence": sequence,
        "time": f"2026-11-29T04:{minute:02d}:00+00:00",
        "from": ["blue"],
        "to": "green",
        "weights": weights,
        "details": details,
    }


def test_each_application_is_drawn_from_the_events_that_name_it_its_last_split_carried_on() -> None:
    """A run of per-application shifts (--independent): a step names only the applications it moved; the end says
    each one's outcome. orders moves at minute 2 and is rolled back at 8; catalogue moves at 5 and stays."""
    both = {"orders": {"blue": 100, "green": 0}, "catalogue": {"blue": 100, "green": 0}}
    events = [
        event("start", 1, 0, both),
        event("step", 2, 2, {"orders": {"blue": 50, "green": 50}}),
        event("step", 3, 5, {"catalogue": {"blue": 0, "green": 100}}),
        event("rollback", 4, 8, {"orders": {"blue": 100, "green": 0}}, reason="orders: breach"),
        event("end", 5, 10, {}, outcome="rolled back", outcomes={"orders": "rolled back", "catalogue": "done"}),
    ]
    run = Run("20261129T040000Z-1a2b3c4d", events)
    assert run.outcome() == "rolled back (orders rolled back; catalogue done)"
    told = story(run.shift_id, events, run.outcome())
    weights = {panel.key: {s.name: [(p.at / 60, p.value) for p in s.points] for s in panel.series} for panel in told.panels}
    assert weights["orders"]["green"] == [(0, 0), (2, 50), (8, 0), (10, 0)]
    assert weights["catalogue"]["green"] == [(0, 0), (5, 100), (10, 100)]  # on to the end: no later event names it
    assert [(mark.at / 60, mark.kind) for mark in told.marks] == [(8, "rollback"), (10, "end")]


def test_a_run_without_an_end_says_so_in_the_history() -> None:
    """A run killed mid-step (the machine gone, SIGKILL): every event up to its death, and no end."""
    run = Run("20261129T040000Z-1a2b3c4d", [event("start", 1, 0, {}), event("step", 2, 1, {})])
    assert run.outcome() == "no end (still running, or the run died)"


def test_a_report_of_no_such_run_is_refused_naming_it(
    tmp_path: Path, deployed: Emulated, kept: Kept, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_project(tmp_path, config_of())
    aws = clients_of(deployed, None)
    assert main(["--report", "20261129T045600Z-1a2b3c4d", "--config", str(path)], aws=aws) == 2
    assert capsys.readouterr().err.strip() == (
        f"refused: no run 20261129T045600Z-1a2b3c4d in the shift record {GROUP} (`python -m tools.shift --history` lists them)"
    )
    with pytest.raises(SystemExit):
        main(["--report", "../../etc/passwd", "--config", str(path)], aws=aws)
    assert "'../../etc/passwd' is no shift id" in capsys.readouterr().err


# --- --history, as the operator runs it ---------------------------------------------------------------------


@pytest.mark.background
@pytest.mark.usefixtures("world_on_a_server")
def test_history_lists_the_tests_runs_newest_first(tmp_path: Path) -> None:
    """Two drains by the real command, then `--history` and `--report latest` by the real command, each in its own
    process against the moto server."""
    config = write_project(tmp_path, config_of(interval_seconds=60))
    for colour in ("green", "blue"):
        assert run(config, "--to", colour, "--now").returncode == 0
    listed = run(config, "--history")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0] == f"2 run(s) of {GROUP}, newest first:"
    newest, oldest = (line.split("  ") for line in lines[1:])
    assert SHIFT_ID.fullmatch(newest[1])
    assert newest[1] > oldest[1]
    assert (newest[4], newest[5], newest[6]) == (
        "green -> blue",
        "drained",
        f"python -m tools.shift --to blue --now --config {config}",
    )
    assert (oldest[4], oldest[5]) == ("blue -> green", "drained")
    assert newest[3].startswith("arn:aws:")  # who: the emulator's caller identity
    drawn = run(config, "--report", "latest", "--out", str(tmp_path / "out"))
    assert drawn.returncode == 0, drawn.stderr
    assert drawn.stdout.strip().endswith(f"shift-{newest[1]}.png")
    with Image.open(tmp_path / "out" / f"shift-{newest[1]}.png") as image:
        assert image.size == (WIDTH, HEADING + CHART * len(APPS))  # a drain: the weights alone, no provider


@pytest.fixture
def world_on_a_server(world: Emulated) -> Emulated:
    """tests/test_shift_field.py's world on the module's server, with the record's log group."""
    boto3.client("logs", region_name=REGION).create_log_group(logGroupName=GROUP)
    return world


def run(config: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "tools.shift", *arguments, "--config", str(config)]
    return subprocess.run(command, cwd=PROJECT_DIR, capture_output=True, text=True, timeout=300, check=False)
