"""Two upgrade cycles in a row, the way a platform team runs them from CI, on the AWS emulator (issue #43): every step the
GitHub workflows' own command, in a process of its own, with GitHub's variables set, in the order docs/ci.md gives;
the faults a team meets on the way injected from outside the code under test; judged only by what AWS holds
afterwards and what each command said. tests/support/upgrade_cycle.py runs it (its docstring lists every step and
fault), beside the suite (a background check, `upgrade_cycle`)."""

from __future__ import annotations

import re
from concurrent.futures import Future
from typing import Any

import pytest

from model.config import cluster_name
from tests.support.configs import validated
from tests.support.upgrade_cycle import Cycle

pytestmark = pytest.mark.background("upgrade_cycle")

# Before blue's cluster runs, the load balancer gives it the config's weight with nowhere to send it (a first deploy's
# order: traffic before the colours); and a configuration whose merge was refused is one AWS never got.
UNSERVED = ("changes: first push", "deploy common and traffic")
REFUSED_CONFIGURATIONS = (
    "changes: green's nodes",
    "deploy green's new nodes",
    "changes: blue removed too early",
    "deploy traffic without a running blue",
)


@pytest.fixture(scope="module")
def cycle(upgrade_cycle: Future[Cycle]) -> Cycle:
    return upgrade_cycle.result()


def ok(cycle: Cycle, name: str) -> str:
    run = cycle.steps[name].run
    assert run.returncode == 0, f"{name}: {run.output[-6000:]}"
    return run.output


def refused(cycle: Cycle, name: str) -> str:
    run = cycle.steps[name].run
    assert run.returncode != 0, f"{name} was not refused: {run.output[-6000:]}"
    return " ".join(run.output.split())


def everywhere(weights: dict[str, int], apps: tuple[str, ...] = ("sample-app",)) -> dict[str, Any]:
    """The live weights as the shift leaves them: the parameter, and every public rule forwarding the same."""
    forwarded = {colour: weight for colour, weight in weights.items()}
    return {"parameter": weights, "rules": {app: forwarded for app in apps}}


def test_after_every_step_each_public_host_reaches_healthy_targets_of_configured_deployed_colours_only(cycle: Cycle) -> None:
    problems = {name: found for name, found in cycle.routes.items() if found and name not in (*UNSERVED, *REFUSED_CONFIGURATIONS)}
    assert problems == {}
    assert len(cycle.routes) > 20  # every step of both cycles was followed


def test_each_stack_is_deployed_by_the_deploy_workflows_steps(cycle: Cycle) -> None:
    for name in ("deploy common and traffic", "deploy blue", "deploy green", "deploy blue-2"):
        assert re.search(r"Apply complete! Resources: \d+ added", ok(cycle, name)), name
    for name in ("deploy traffic without blue", "deploy traffic with blue-2", "deploy traffic without green"):
        ok(cycle, name)


def test_green_proves_itself_ready_in_a_process_of_its_own(cycle: Cycle) -> None:
    findings = [line for line in ok(cycle, "readiness of green").splitlines() if line.startswith(("  ok", "  MISSING"))]
    assert findings
    assert [line for line in findings if not line.startswith("  ok")] == []
    probe = "https://app-green.eks.example.com/probe: green answered through DNS, the shared load balancer and TLS"
    assert any(probe in line for line in findings), findings


def test_credentials_that_end_before_the_shift_could_are_refused_up_front(cycle: Cycle) -> None:
    said = refused(cycle, "shift with credentials that end first")
    assert cycle.steps["shift with credentials that end first"].run.returncode == 2
    assert said.startswith("refused: the AWS credentials expire at ")
    assert "before this shift of 2 step(s) could finish" in said
    assert cycle.weights["credentials refused"] == everywhere({"blue": 100, "green": 0})
    assert cycle.lock["credentials refused"] is None


def test_a_sigterm_mid_step_rolls_the_step_back_releases_the_lock_and_the_parameter_and_rules_agree(cycle: Cycle) -> None:
    """The cancelled run's last lines: the step in effect, then rolled back, in one line saying what is in place."""
    step = cycle.steps["shift stopped by SIGTERM"].run
    assert step.returncode == 1, step.output[-3000:]
    output = step.output.strip().splitlines()
    # Without a terminal, each event is also a plain line of its own (tools/shift/progress.py): told apart here.
    lines = [line for line in output if not line.startswith("[shift ")]
    kinds = [line.split("]", 1)[0].rsplit(" ", 1)[-1] for line in output if line.startswith("[shift ")]
    assert kinds[-2:] == ["rollback", "end"]
    assert "| in effect" in lines[-4]
    assert lines[-3:] == [
        "rolling back to blue 100  green 0: interrupted (SIGTERM)",
        "failed: interrupted (SIGTERM); rolled back to blue 100  green 0",
        "now: traffic in place: blue 100  green 0 (the weights parameter and every rule agree); the traffic lock is free",
    ]
    assert cycle.weights["stopped"] == everywhere({"blue": 100, "green": 0})
    assert cycle.lock["stopped"] is None


def test_the_gated_shifts_move_every_application_in_steps_to_the_new_colour(cycle: Cycle) -> None:
    said = ok(cycle, "shift to green")
    assert [line.split("|")[0].strip() for line in said.splitlines() if line.startswith("step ") and "| ok |" in line] == [
        "step 1/2  blue 50  green 50",
        "step 2/2  blue 0  green 100",
    ]
    assert cycle.weights["shifted to green"] == everywhere({"blue": 0, "green": 100})
    ok(cycle, "shift to blue-2")
    assert cycle.weights["shifted to blue-2"] == everywhere({"green": 0, "blue-2": 100})
    assert all(holder is None for holder in cycle.lock.values())


def test_a_replacing_change_to_the_live_serving_colour_is_refused_though_the_config_still_says_the_other_serves(
    cycle: Cycle,
) -> None:
    """After the shift the config still says blue 100, green 0 (no shift writes it): green's new instance type would
    replace the node group of the colour that carries the traffic. The deploy's plan refuses it; nothing changed."""
    said = refused(cycle, "deploy green's new nodes")
    assert "clusters.green.nodes: this change would replace the node group of the EKS cluster eks-bg-green while green " in said
    assert "serves (live weight 100 in /eks-bg/traffic/weights)" in said
    assert cycle.facts["green's instance types"] == [["m7i.large"]]


def test_the_node_group_of_a_colour_without_live_weight_is_replaced_create_before_destroy(cycle: Cycle) -> None:
    """The config still says blue 100, but the live weights give it nothing: its node group's replacement is planned,
    the new group created before the old one goes."""
    plan, actions = cycle.facts["blue's node group, planned"]
    assert plan.returncode == 0, plan.output[-6000:]
    assert actions == [["create", "delete"]]


def test_drains_back_and_forth_move_everything_at_once(cycle: Cycle) -> None:
    assert cycle.weights["drained to blue"] == everywhere({"blue": 100, "green": 0})
    assert cycle.weights["drained to green"] == everywhere({"blue": 0, "green": 100})


def test_removing_a_colour_before_it_is_retired_is_refused_saying_retire_it_first(cycle: Cycle) -> None:
    assert cycle.facts["removed too early"]["removed"] == ["blue"]
    summary = cycle.steps["changes: blue removed too early"].summary
    assert "- blue: removed from the configuration. The traffic stack refuses this while blue's cluster runs" in summary
    said = refused(cycle, "deploy traffic without a running blue")
    assert "clusters.blue (its cluster eks-bg-blue): removed from the configuration, but the cluster still runs" in said
    assert "a colour is retired while the configuration still names it" in said


def test_blue_is_retired_by_the_retire_workflows_step_through_its_own_teardown(cycle: Cycle) -> None:
    said = re.sub(r"\x1b\[[0-9;]*m", "", ok(cycle, "retire blue"))
    lines = [line.split("teardown: ", 1)[1] for line in said.splitlines() if "(local-exec): teardown: " in line]
    assert "app-of-apps: automated sync off" in lines
    assert "TargetGroupBinding sample-app/sample-app: deleting" in lines
    assert lines[-1] == "blue: applications, targets, load balancers and records are gone; Terraform removes the rest"
    assert re.search(r"Destroy complete! Resources: \d+ destroyed\.", said), said[-3000:]
    after = cycle.facts["blue after its retirement"]
    assert (after.cluster, after.registered, after.forwarded, after.security_groups) == (None, {"sample-app": []}, {}, [])
    assert cycle.facts["blue's state"] == []


def test_a_drain_between_the_retirement_and_the_removal_never_writes_blue_back(cycle: Cycle) -> None:
    ok(cycle, "drain between the retirement and the removal")
    assert cycle.weights["drained after the retirement"]["rules"] == {"sample-app": {"green": 100}}
    assert cycle.facts["blue removed"]["removed"] == ["blue"]
    assert cycle.weights["blue removed"] == everywhere({"green": 100})


def test_replacing_the_serving_colours_target_group_is_refused_at_plan(cycle: Cycle) -> None:
    summary = " ".join(cycle.steps["plan traffic replacing its target groups"].summary.split())
    assert cycle.facts["plan replacing green's target group"].returncode == 1
    errors = [error for error in summary.split("Error: ")[1:] if error.startswith("Resource precondition failed")]
    assert len(errors) == 1, summary[-6000:]  # green's only: without weight, blue-2's group may be replaced
    assert "applications.sample-app: this change would replace green's target group of sample-app while green serves" in errors[0]
    assert "(live weight 100): eks-bg-sample-app-green runs HTTP:80:ip" in errors[0]


def test_retire_force_finishes_when_the_cluster_is_gone(cycle: Cycle) -> None:
    said = ok(cycle, "retire green, its cluster gone")
    assert "teardown: 1 target(s) of sample-app deregistered from green's target group: no controller of green is left" in said
    after = cycle.facts["green after its retirement"]
    assert (after.cluster, after.registered, after.forwarded) == (None, {"sample-app": []}, {})
    assert cycle.facts["green's state"] == []
    assert cycle.facts["green removed"]["removed"] == ["green"]
    assert cycle.weights["green removed"] == everywhere({"blue-2": 100})


def test_the_cycle_ran_in_the_order_docs_ci_gives(cycle: Cycle) -> None:
    """Deploy (traffic before a new colour), prove, shift, retire while the configuration names it, then remove it."""
    order = list(cycle.steps)
    for before, after in (
        ("deploy common and traffic", "deploy green"),
        ("readiness of green", "shift to green"),
        ("shift to green", "retire blue"),
        ("retire blue", "deploy traffic without blue"),
        ("deploy traffic with blue-2", "deploy blue-2"),
        ("shift to blue-2", "retire green, its cluster gone"),
    ):
        assert order.index(before) < order.index(after), (before, after)
    assert cluster_name(validated(cycle.facts["configurations"]["with-blue-2"]), "blue-2") == "eks-bg-blue-2"
