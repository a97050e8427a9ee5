"""A rehearsal's scenario (tests/support/scenario.py): a step that fails is recorded with its own name and message,
the steps after it do not run, and a test of a later step fails naming the step that broke."""

from __future__ import annotations

import pytest

from scripts.scratch_project import Run
from tests.support.scenario import Scenario, StepFailedError, succeeded


def three_steps(ran: list[str], failing: str) -> Scenario:
    """A scenario of the steps a, b and c, where `failing` exits 2."""

    def step(name: str) -> Run:
        ran.append(name)
        return Run(f"terraform apply {name}", 2 if name == failing else 0, f"... Error: {name} broke", 0.1)

    def steps(scenario: Scenario) -> None:
        for name in ("a", "b", "c"):
            scenario.step(name, lambda name=name: succeeded(step(name)))  # type: ignore[misc]

    return Scenario("the way out").run(steps)


def test_a_failing_step_stops_the_scenario_and_is_named_by_the_tests_of_later_steps() -> None:
    ran: list[str] = []
    scenario = three_steps(ran, failing="b")
    assert ran == ["a", "b"]  # c would act on what b did not make
    assert scenario.of("a").returncode == 0
    with pytest.raises(pytest.fail.Exception, match=r"^the way out: step 'b' failed: `terraform apply b` exited 2: "):
        scenario.of("b")
    with pytest.raises(pytest.fail.Exception, match=r"^the way out: step 'b' failed earlier: .*Error: b broke$"):
        scenario.of("c")


def test_every_step_that_ran_is_read_back() -> None:
    ran: list[str] = []
    scenario = three_steps(ran, failing="none")
    assert ran == ["a", "b", "c"]
    assert scenario.failed is None
    assert [scenario.of(name).command for name in ("a", "b", "c")] == [f"terraform apply {n}" for n in "abc"]
    with pytest.raises(pytest.fail.Exception, match=r"no step 'd' ran \(steps run: a, b, c\)"):
        scenario.of("d")


def test_an_unexpected_error_is_recorded_with_its_traceback() -> None:
    held: dict[str, str] = {}

    def steps(scenario: Scenario) -> None:
        scenario.step("read back", lambda: held["missing"])

    scenario = Scenario("the retirement").run(steps)
    assert scenario.failed is not None
    assert scenario.failed[0] == "read back"
    assert "KeyError: 'missing'" in scenario.failed[1]


def test_a_step_may_fail_with_a_message_of_its_own() -> None:
    def drain() -> None:
        raise StepFailedError("the lock was held")

    def steps(scenario: Scenario) -> None:
        scenario.step("drain", drain)

    assert Scenario("the retirement").run(steps).failed == ("drain", "the lock was held")
