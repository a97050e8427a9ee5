"""The shift's plan of weights (tools/shift/plan.py): every step keeps traffic somewhere and gives the target more."""

from __future__ import annotations

import pytest

from tools.shift import UnsafeShiftError
from tools.shift.plan import plan_weights


def test_two_colours_move_by_the_step_until_the_target_has_everything() -> None:
    plan = plan_weights({"blue": 100, "green": 0}, "green", 20)
    assert plan == [{"blue": 100 - g, "green": g} for g in (20, 40, 60, 80, 100)]


def test_the_last_step_is_shorter_when_the_step_does_not_divide_the_total() -> None:
    assert [p["green"] for p in plan_weights({"blue": 100, "green": 0}, "green", 30)] == [30, 60, 90, 100]
    assert plan_weights({"blue": 100, "green": 0}, "green", 255) == [{"blue": 0, "green": 100}]


def test_other_colours_give_up_weight_in_proportion_and_the_total_is_kept() -> None:
    plan = plan_weights({"blue": 60, "green": 0, "red": 30}, "green", 30)
    assert plan == [
        {"blue": 40, "green": 30, "red": 20},
        {"blue": 20, "green": 60, "red": 10},
        {"blue": 0, "green": 90, "red": 0},
    ]


def test_a_total_above_255_is_brought_within_route53s_range() -> None:
    plan = plan_weights({"blue": 200, "green": 100}, "green", 100)
    assert plan[-1] == {"blue": 0, "green": 255}
    assert all(0 <= w <= 255 for state in plan for w in state.values())


@pytest.mark.parametrize("weights", [{"blue": 100, "green": 0}, {"blue": 7, "green": 3, "red": 1}, {"blue": 255, "green": 255}])
@pytest.mark.parametrize("step", [1, 13, 255])
def test_every_step_keeps_traffic_somewhere_and_gives_the_target_a_larger_share(weights: dict[str, int], step: int) -> None:
    plan = plan_weights(weights, "green", step)
    before = weights
    for state in plan:
        assert sum(state.values()) > 0
        assert state["green"] / sum(state.values()) > before["green"] / sum(before.values())
        assert all(state[c] <= before[c] for c in state if c != "green")
        before = state
    assert plan[-1]["green"] > 0
    assert sum(w for c, w in plan[-1].items() if c != "green") == 0


def test_nothing_to_do_when_the_target_already_has_all_traffic() -> None:
    assert plan_weights({"blue": 0, "green": 100}, "green", 20) == []


@pytest.mark.parametrize(
    ("weights", "target", "step", "message"),
    [
        ({"blue": 100, "green": 0}, "green", 0, "--step: 0 is not allowed; use 1-255"),
        ({"blue": 100, "green": 0}, "green", 256, "--step: 256 is not allowed; use 1-255"),
        ({"blue": 100, "green": 0}, "purple", 20, "--to: 'purple' is not a configured colour; use one of blue, green"),
        ({"blue": 0, "green": 0}, "green", 20, "every weight is 0"),
    ],
)
def test_unsafe_plans_are_refused(weights: dict[str, int], target: str, step: int, message: str) -> None:
    with pytest.raises(UnsafeShiftError, match=message.replace("(", r"\(").replace(")", r"\)")):
        plan_weights(weights, target, step)
