"""The shift's progress as the operator sees it (tools/shift/progress.py). In a terminal: one live line per application,
redrawn in place, the shift's own lines readable above it, the block left as the summary. Without one (a pipe, CI,
TERM=dumb): no escape code at all, one plain line per event, nothing per poll. Judged by what a terminal would show
(tests/support/terminal.py reads the bytes as a VT100 does), first fed by the events hub, then in a real shift on the
emulator, then by the real command in its own process under a pseudo-terminal and in a CI pipe."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from model.paths import PROJECT_DIR
from tests import test_shift
from tests.support.emulated_aws import Emulated
from tests.support.terminal import screen
from tests.test_shift import ShiftIn, all_at
from tests.test_shift_field import CLOCK_SCALE, FIELD_DIR, config, server, world
from tools.shift.events import Kind, ShiftEvents
from tools.shift.progress import Progress, is_terminal

# The shift's world on the emulator (tests/test_shift.py, tests/test_shift_field.py): their fixtures, by the names
# pytest finds them.
deployed, preview, green_runs, green_ready, shift_in = (
    test_shift.deployed,
    test_shift.preview,
    test_shift.green_runs,
    test_shift.green_ready,
    test_shift.shift_in,
)
_fixtures = (config, server, world)

APPS = ("orders", "catalogue", "search")
STEP = "step 2/5  blue 60  green 40"
NOW = datetime(2026, 11, 29, 4, 56, tzinfo=UTC)
ESC = "\x1b"


class Terminal(io.StringIO):
    """A stream that says it is a terminal: what the display writes is read back as a screen."""

    def isatty(self) -> bool:
        return True


def split(blue: int, apps: tuple[str, ...] = APPS) -> dict[str, dict[str, int]]:
    return {app: {"blue": blue, "green": 100 - blue} for app in apps}


def hub(progress: Progress) -> ShiftEvents:
    return ShiftEvents(None, target="green", sinks=[progress])


def verdict(events: ShiftEvents, *, breaching: str = "") -> None:
    events.emit(
        Kind.VERDICT,
        split(60),
        step=STEP,
        passed=not breaching,
        breaches={breaching: "5xx ratio 7.50%"} if breaching else {},
        metrics={app: f"requests {1250 + n}  5xx 0.00% (0)  p99 0.300 s" for n, app in enumerate(APPS)},
        gate={},
        analysis={"orders": [{"provider": "prometheus", "what": "errors", "value": 0.5, "threshold": 0.1, "breach": True}]},
    )


def test_is_a_terminal_only_where_a_person_watches_one() -> None:
    assert is_terminal(Terminal(), {"TERM": "xterm-256color"})
    assert not is_terminal(io.StringIO(), {"TERM": "xterm-256color"})  # a pipe, a file
    assert not is_terminal(Terminal(), {"TERM": "xterm", "CI": "true"})  # a CI job's pseudo-terminal
    assert not is_terminal(Terminal(), {"TERM": "dumb"})  # Emacs's shell: escape codes printed as they are
    assert is_terminal(Terminal(), {"TERM": "xterm", "CI": "false"})


def test_a_terminal_shows_one_live_line_per_application_redrawn_in_place() -> None:
    out = Terminal()
    progress = Progress(out, live=True, width=200)
    events = hub(progress)
    events.emit(Kind.START, split(100), plan=[], interval_seconds=300)
    events.emit(Kind.STEP, split(60), step=STEP, rule_changes=3)
    for seconds in (300, 290, 200):  # three polls, one screen: each redraws the block where it stands
        progress.watching(
            label=STEP, until=NOW + timedelta(seconds=seconds), now=NOW, health={"orders": (3, 3), "search": (1, 2)}
        )
    shown = screen(out.getvalue())
    assert shown[0] == f"shift {events.shift_id} to green"
    assert [line.split()[0] for line in shown[1:]] == list(APPS)
    orders, catalogue, search = shown[1:]
    assert re.search(r"^orders +step 2/5 +blue 60  green 40  3:20 left  targets 3/3$", orders), orders
    assert re.search(r"^search +step 2/5 +blue 60  green 40  3:20 left  targets 1/2$", search), search
    assert catalogue.endswith("in effect")  # not polled: its last state stands
    # Drawn at the start, then moved up over its four lines and erased below at the step and at each poll: redrawn
    # where it stands, not a line per poll.
    assert out.getvalue().count(f"{ESC}[4A\r{ESC}[J") == 4


def test_the_shifts_own_lines_are_printed_above_the_block() -> None:
    out, warnings = Terminal(), Terminal()
    progress = Progress(out, live=True, width=200)
    events = hub(progress)
    above = progress.above(out)
    print("live weights: blue 100  green 0", file=above)
    events.emit(Kind.START, split(100), plan=[], interval_seconds=300)
    print("shifting to green", end="", file=above)  # a line in two writes, as print makes it
    print(" in 5 step(s)", file=above)
    events.emit(Kind.STEP, split(60), step=STEP, rule_changes=3)
    print(f"{STEP}  | in effect (3 rule change(s)); watching green", file=above)
    verdict(events)
    shown = screen(out.getvalue())
    assert shown[:4] == [
        "live weights: blue 100  green 0",
        "shifting to green in 5 step(s)",
        f"{STEP}  | in effect (3 rule change(s)); watching green",
        f"shift {events.shift_id} to green",
    ]
    assert [line.split()[0] for line in shown[4:]] == list(APPS)
    # The last window's values on each application's line, each provider's value against its threshold.
    assert shown[4].endswith("| step 2/5: requests 1250  5xx 0.00% (0)  p99 0.300 s  prometheus errors 0.5 vs 0.1 | ok")
    # Another stream on the same screen (the warnings' stderr): the block erased first, drawn again after it.
    progress.above(warnings).write("events: publishing the step event failed\n")
    assert warnings.getvalue() == "events: publishing the step event failed\n"
    assert out.getvalue().endswith(f"shift {events.shift_id} to green\n" + "".join(f"{line}\n" for line in shown[4:]))


def test_a_breach_is_on_its_applications_line_and_the_end_leaves_the_block_as_the_summary() -> None:
    out = Terminal()
    progress = Progress(out, live=True, width=200)
    events = hub(progress)
    above = progress.above(out)
    events.emit(Kind.START, split(100), plan=[], interval_seconds=300)
    events.emit(Kind.STEP, split(60), step=STEP, rule_changes=3)
    verdict(events, breaching="catalogue")
    events.emit(Kind.ROLLBACK, split(80), reason="step 2/5: catalogue: 5xx ratio 7.50%")
    events.emit(Kind.END, split(80), outcome="rolled back", reason="rolled back to blue 80  green 20")
    print("failed: rolled back to blue 80  green 20", file=above)
    progress.watching(label=STEP, until=NOW, now=NOW, health={"orders": (0, 3)})  # too late: the run is over
    shown = screen(out.getvalue())
    assert shown[-1] == "failed: rolled back to blue 80  green 20"  # below the summary, which stays
    orders, catalogue, search = shown[-4:-1]
    assert [line.rsplit("| ", 1)[1] for line in (orders, catalogue, search)] == ["ok", "BREACH", "ok"]
    assert all("blue 80  green 20  rolled back" in line for line in (orders, catalogue, search))


def test_each_application_keeps_its_own_state_from_the_events_that_name_it() -> None:
    """Applications moved on their own (--application, --independent): a step names only those it moved, and the end
    says each one's outcome."""
    out = Terminal()
    progress = Progress(out, live=True, width=200)
    events = hub(progress)
    events.emit(Kind.START, split(100), plan=[], interval_seconds=300)
    events.emit(Kind.STEP, split(60, ("orders",)), step=STEP, rule_changes=1)
    events.emit(Kind.STEP, split(80, ("search",)), step="step 1/5  blue 80  green 20", rule_changes=1)
    events.emit(Kind.END, split(60, ("orders",)) | split(80, ("search",)) | split(100, ("catalogue",)), outcome="done",
                outcomes={"orders": "done", "search": "rolled back", "catalogue": "done"})  # fmt: skip
    orders, catalogue, search = screen(out.getvalue())[1:]
    assert re.search(r"^orders +step 2/5 +blue 60  green 40  done$", orders), orders
    assert re.search(r"^catalogue +blue 100  green 0  done$", catalogue), catalogue
    assert re.search(r"^search +step 1/5 +blue 80  green 20  rolled back$", search), search


def test_a_line_wider_than_the_terminal_is_cut_not_wrapped() -> None:
    """A wrapped line takes two rows: the next redraw would move up one too few and leave a stale row behind."""
    out = Terminal()
    progress = Progress(out, live=True, width=40)
    events = hub(progress)
    events.emit(Kind.START, split(100), plan=[], interval_seconds=300)
    verdict(events)
    progress.watching(label=STEP, until=NOW + timedelta(seconds=90), now=NOW, health={"orders": (3, 3)})
    shown = screen(out.getvalue())
    assert len(shown) == 1 + len(APPS)
    assert all(len(line) < 40 for line in shown), shown


def test_without_a_terminal_one_plain_line_per_event_and_nothing_per_poll() -> None:
    out = io.StringIO()
    progress = Progress(out, live=False)
    assert progress.above(out) is out  # the shift's own lines go as they are
    events = hub(progress)
    events.emit(Kind.START, split(100), plan=[], interval_seconds=300)
    events.emit(Kind.STEP, split(60), step=STEP, rule_changes=3)
    before = out.getvalue()
    for seconds in (300, 200, 0):
        progress.watching(label=STEP, until=NOW + timedelta(seconds=seconds), now=NOW, health={"orders": (3, 3)})
    assert out.getvalue() == before
    verdict(events, breaching="orders")
    events.emit(Kind.ROLLBACK, split(100), reason="step 2/5: orders: 5xx ratio 7.50%")
    events.emit(Kind.END, split(100), outcome="rolled back", reason="rolled back to blue 100  green 0")
    assert ESC not in out.getvalue()
    tag = f"[shift {events.shift_id}"
    assert out.getvalue().splitlines() == [
        f"{tag} #1 start] blue -> green: orders, catalogue, search",
        f"{tag} #2 step] step 2/5: orders, catalogue, search",
        f"{tag} #3 verdict] step 2/5: orders BREACH, catalogue ok, search ok",
        f"{tag} #4 rollback] orders, catalogue, search",
        f"{tag} #5 end] orders rolled back, catalogue rolled back, search rolled back",
    ]


def test_a_shift_on_the_emulator_shows_each_windows_time_left_and_targets(shift_in: ShiftIn, deployed: Emulated) -> None:
    """The shift's polls reach the display: green's registered pods counted, the window's time counted down to its
    judgement, the block left as the summary under the shift's own lines."""
    shift, _, _ = shift_in(deployed, step=50, interval_seconds=60)
    out = Terminal()
    progress = Progress(out, live=True, width=300)
    shift.out, shift.progress = progress.above(out), progress
    shift.events = hub(progress)
    shift.run("green")
    assert deployed.forwarded() == all_at({"blue": 0, "green": 100})
    text = out.getvalue()
    # Each window's first poll, then its close (judged once CloudWatch has its minutes).
    assert re.search(r"step 1/2 +blue 50  green 50  1:00 left  targets (\d)/\1", text), text
    assert re.search(r"step 2/2 +blue 0  green 100  judging  targets (\d)/\1", text), text
    shown = screen(text)
    block = shown[shown.index(f"shift {shift.events.shift_id} to green") + 1 :]
    assert sorted(line.split()[0] for line in block) == sorted(test_shift.APPS)
    for line in block:
        assert re.search(r" +step 2/2 +blue 0  green 100  done  targets (\d)/\1  \| step 2/2: requests \d+ .* \| ok$", line), line
    assert "done: blue 0  green 100" in shown[: -len(block) - 1]


# --- the real command, in its own process ----------------------------------------------------------------------------


def environment(**more: str) -> dict[str, str]:
    """The field's (tests/test_shift_field.py): time runs faster; CI as the test says, not as the suite's shell has it."""
    env = {k: v for k, v in os.environ.items() if k not in ("AWS_PROFILE", "CI", "TERM")}
    return {**env, "PYTHONPATH": str(FIELD_DIR), "FIELD": f'{{"clock_scale": {CLOCK_SCALE}}}', **more}


SHIFT = [sys.executable, "-m", "tools.shift", "--to", "green", "--step", "50", "--skip-readiness"]


@pytest.mark.background
def test_the_real_command_in_a_terminal_shows_the_live_block(world: Emulated, config: Path) -> None:
    primary, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))  # rows, columns: a sized window
    shift = subprocess.Popen(
        [*SHIFT, "--config", str(config)],
        cwd=PROJECT_DIR,
        env=environment(TERM="xterm-256color"),
        stdin=subprocess.DEVNULL,
        stdout=secondary,
        stderr=secondary,
    )
    os.close(secondary)
    said = b""
    while select.select([primary], [], [], 300)[0]:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the child gone, its side closed (EIO)
            break
        if not chunk:
            break
        said += chunk
    os.close(primary)
    assert shift.wait(timeout=60) == 0, said
    text = said.decode()
    assert f"{ESC}[" in text  # redrawn in place
    shown = screen(text)
    title = next(line for line in shown if re.fullmatch(r"shift \S+ to green", line))
    block = shown[shown.index(title) + 1 :]
    assert sorted(line.split()[0] for line in block) == sorted(test_shift.APPS), shown
    assert all(re.search(r"step 2/2 +blue 0  green 100  done  targets (\d)/\1  \| step 2/2: requests", line) for line in block), (
        block
    )
    above = shown[: shown.index(title)]
    assert "done: blue 0  green 100" in above, shown
    assert any(line.startswith("shifting to green") for line in above), shown
    assert not any(line.startswith("[shift ") for line in shown)  # the block, not the plain lines


@pytest.mark.background
def test_the_real_command_in_ci_prints_plain_lines_and_no_escape(world: Emulated, config: Path) -> None:
    done = subprocess.run(
        [*SHIFT, "--config", str(config)],
        cwd=PROJECT_DIR,
        env=environment(CI="true", TERM="xterm-256color"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert ESC not in done.stdout + done.stderr
    tagged = [line for line in done.stdout.splitlines() if line.startswith("[shift ")]
    kinds = [re.match(r"\[shift \S+ #(\d+) (\w+)\]", line).groups() for line in tagged]  # type: ignore[union-attr]
    assert kinds == [("1", "start"), ("2", "step"), ("3", "verdict"), ("4", "step"), ("5", "verdict"), ("6", "end")], tagged
    assert tagged[2].endswith("step 1/2: " + ", ".join(f"{app} ok" for app in test_shift.APPS)), tagged
