"""`make test` (scripts/make_test.py): every step runs, the rehearsal first and ahead of the rest for the CPU."""

from __future__ import annotations

import io
import os
import subprocess
import tempfile
from typing import Any

import pytest

from scripts import make_test
from tests.conftest import misplaced_rehearsal_tests


class Started:
    """A process as make_test uses one: waited for, its status."""

    def __init__(self, status: int) -> None:
        self.status = status

    def wait(self) -> int:
        return self.status


def test_the_rehearsal_starts_first_and_everything_after_it_runs_niced(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    events: list[Any] = []

    def popen(command: tuple[str, ...], *, preexec_fn: Any = None, **_: Any) -> Started:
        events.append(("beside", command))
        if preexec_fn is not None:
            preexec_fn()  # in the child, before it runs the command
        assert {name: os.environ.get(name) for name in make_test.GO_GC} == make_test.GO_GC  # Terraform's, inherited
        return Started(1 if command in (make_test.REHEARSAL, ("nice", "-n", "5", "mypy")) else 0)

    def run(command: tuple[str, ...]) -> int:
        events.append(("foreground", command))
        return 0

    monkeypatch.setattr(os, "environ", {k: v for k, v in os.environ.items() if k not in make_test.GO_GC})  # this one's own
    monkeypatch.setattr(subprocess, "Popen", popen)
    monkeypatch.setattr(os, "nice", lambda increment: events.append(("nice", increment)))
    monkeypatch.setattr(make_test, "_run", run)
    monkeypatch.setattr(tempfile, "TemporaryFile", lambda **_: io.StringIO())

    assert make_test.main() == 1  # mypy and the rehearsal failed: reported, after every other step ran
    assert events[:5] == [
        ("beside", make_test.REHEARSAL),
        ("nice", make_test.BESIDE_THE_REHEARSAL),
        ("beside", ("pytest", "-m", "background")),
        ("nice", make_test.BEHIND_THE_UNIT_TIER),  # the background tier's own, behind the unit tier
        ("beside", ("pytest", "-m", "emulated and not background")),  # at the unit tier's own priority
    ]
    later = events[5:]  # ruff and mypy on a thread of their own, beside the unit tier in the foreground
    assert [command for kind, command in later if kind == "foreground"] == list(make_test.FOREGROUND)
    lint = [(kind, command) for kind, command in later if kind != "foreground"]
    # One after another, each behind the unit tier, as the background tier is (`nice`: no preexec_fn on a thread).
    assert make_test.BEHIND_THE_UNIT_TIER == 5
    assert lint == [("beside", ("nice", "-n", "5", *command)) for command in make_test.LINT]
    out = capsys.readouterr().out
    assert "make test: FAILED: mypy; pytest -m rehearsal" in out
    assert "ruff check .\nruff format --check .\nvulture\nmypy\nmypy app/main.py\n" in out  # each command named in its output


def test_a_rehearsal_test_outside_the_rehearsal_modules_is_refused() -> None:
    """The rehearsal tier collects only REHEARSAL_MODULES: a rehearsal test anywhere else is named, so it cannot be
    left out of `make test` unseen."""
    inside = [f"{module}::test_something" for module in make_test.REHEARSAL_MODULES]
    assert misplaced_rehearsal_tests(inside) == []
    assert misplaced_rehearsal_tests([*inside, "tests/test_cli.py::test_a_deploy[x]"]) == ["tests/test_cli.py"]


def test_every_boto3_session_of_the_suite_reads_botocores_data_once() -> None:
    """tests/conftest.py: the operator commands the tests call each make a Session, as a command run by hand does; the
    second finds the service models and endpoint data the first parsed (~12 CPU-s of the unit tier)."""
    import boto3

    first, second = (boto3.Session(region_name="eu-west-1")._session for _ in range(2))
    assert first is not second
    assert first.get_component("data_loader") is second.get_component("data_loader")
