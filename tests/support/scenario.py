"""A scenario: one path of a rehearsal (deploy, shift, destroy, ...) run step by step, and read by tests step by step.

A step that fails is recorded with its name and message, and the steps after it do not run (they would act on what
the failed one did not make). A test reads the steps it checks (`Scenario.of`): what each did, or a failure naming the
step that broke, "step 'apply traffic' failed earlier: <its message>", so that one broken step fails every test after
it with that step's name instead of each test re-raising the same traceback.
"""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest

from scripts.scratch_project import Run

T = TypeVar("T")
OUTPUT_TAIL = 6000  # characters of a failed command's output a failure shows: Terraform's error is at its end


class StepFailedError(Exception):
    """What a step raises to fail with a message of its own (a command's exit and the end of its output)."""


class ScenarioStoppedError(Exception):
    """Raised by every step once one has failed: the scenario ends there (its runner catches it)."""


def succeeded(run: Run) -> Run:
    """run, when its command exited 0; else the step fails with the command, its exit and the end of its output."""
    if run.returncode != 0:
        raise StepFailedError(f"`{run.command}` exited {run.returncode}: {run.output[-OUTPUT_TAIL:]}")
    return run


@dataclass
class Scenario:
    name: str
    done: dict[str, Any] = field(default_factory=dict)  # step -> what it returned, in the order run
    failed: tuple[str, str] | None = None  # (step, message) of the first step that failed

    def step(self, name: str, action: Callable[[], T]) -> T:
        """Run action as the step `name`, unless a step failed before (then raise ScenarioStoppedError)."""
        if self.failed is not None:
            raise ScenarioStoppedError(self.failed[0])
        try:
            result = action()
        except StepFailedError as error:
            self.failed = (name, str(error))
            raise ScenarioStoppedError(name) from error
        except Exception as error:  # an assertion or an SDK error: its own traceback is the message
            self.failed = (name, "".join(traceback.format_exception(error))[-OUTPUT_TAIL:])
            raise ScenarioStoppedError(name) from error
        self.done[name] = result
        return result

    def run(self, steps: Callable[[Scenario], None]) -> Scenario:
        """Run steps (a function calling `step` in order) to the end or to the first failure; this scenario either way."""
        with contextlib.suppress(ScenarioStoppedError):  # the step that failed is recorded: nothing more to run
            steps(self)
        return self

    def of(self, name: str) -> Any:
        """For a test: what the step `name` returned; or fail naming the step that failed (this one, or one before)."""
        if name in self.done:
            return self.done[name]
        if self.failed is None:
            pytest.fail(f"{self.name}: no step {name!r} ran (steps run: {', '.join(self.done) or 'none'})")
        step, message = self.failed
        if step == name:
            pytest.fail(f"{self.name}: step {step!r} failed: {message}", pytrace=False)
        pytest.fail(f"{self.name}: step {step!r} failed earlier: {message}", pytrace=False)
