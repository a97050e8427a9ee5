"""The frozen rule in CI decides "serving" from the live weights, when the job runs (scripts/ci/serving.py): after a
shift to green, config.json still says blue 100 (no shift writes it), and a change that names neither colour must
deploy blue and leave green, which carries the traffic, alone. The deploy and plan steps run against moto (the
weights parameter and the public rules of the shared load balancer), Terraform replaced by a recorder."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.ci import deploy_stacks, plan_stacks
from tests.support.configs import write_project
from tests.support.emulated_aws import Emulated, base_config, forward_all
from tools.live_routes import read_routes

# What config.json says, as it was before the shift: blue serves.
CONFIG = base_config(blue={"kubernetes_version": "1.35", "weight": 100}, green={"kubernetes_version": "1.36", "weight": 0})


@pytest.fixture
def shifted_to_green(tmp_path: Path, emulated: Emulated, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[str]]:
    """The traffic stack deployed, then a shift moved everything to green: the parameter and every public rule."""
    write_project(tmp_path, CONFIG)
    emulated.deploy_traffic({"sample-app": "app", "shop": "shop"}, {"blue": 100, "green": 0})
    emulated.ssm.put_parameter(Name="/eks-bg/traffic/weights", Value='{"blue": 0, "green": 100}', Overwrite=True, Type="String")
    forward_all(emulated.elbv2, read_routes(emulated.elbv2, "eks-bg"), {"blue": 0, "green": 100})
    applied: list[str] = []

    def deploy(project: Path, stack: str) -> bool:
        applied.append(stack)
        return True

    monkeypatch.setattr(deploy_stacks, "deploy", deploy)
    monkeypatch.setattr(deploy_stacks, "summary", lambda markdown: applied.append(f"summary: {markdown}"))
    return tmp_path, applied


def test_the_deploy_freezes_the_colour_with_live_weight_not_the_one_the_config_names(
    shifted_to_green: tuple[Path, list[str]],
) -> None:
    project, applied = shifted_to_green
    assert deploy_stacks.main(["blue", "green", "--named", "[]", "--project-dir", str(project)]) == 0
    (said,) = [line for line in applied if line.startswith("summary: ")]
    assert [line for line in applied if not line.startswith("summary: ")] == ["blue"]
    assert "- green: serving (live weight 100), frozen, not deployed (its entry `clusters.green` is unchanged)" in said
    assert "blue: serving" not in said
    # The config's stale weights are shown beside the live ones, and called what they are.
    assert "Live weights (/eks-bg/traffic/weights and the public rules): blue 0, green 100" in said
    assert "The config says blue 100, green 0: it differs from the live weights" in said


def test_a_change_that_names_the_serving_colour_deploys_it(shifted_to_green: tuple[Path, list[str]]) -> None:
    project, applied = shifted_to_green
    assert deploy_stacks.main(["green", "--named", '["green"]', "--project-dir", str(project)]) == 0
    assert applied[-1] == "green"
    assert not any("frozen" in line for line in applied)


def test_a_rule_still_forwarding_counts_as_serving(shifted_to_green: tuple[Path, list[str]], emulated: Emulated) -> None:
    """The parameter says blue 0, but a change stopped half-way left a rule sending blue a share: blue serves."""
    project, applied = shifted_to_green
    route = read_routes(emulated.elbv2, "eks-bg").public["shop"]
    forward = [{"TargetGroupArn": arn, "Weight": 10 if colour == "blue" else 90} for colour, arn in route.target_groups.items()]
    emulated.elbv2.modify_rule(RuleArn=route.rule_arn, Actions=[{"Type": "forward", "ForwardConfig": {"TargetGroups": forward}}])
    assert deploy_stacks.main(["blue", "--named", "[]", "--project-dir", str(project)]) == 0
    assert [line for line in applied if not line.startswith("summary: ")] == []


def test_by_hand_without_named_every_stack_given_is_deployed(shifted_to_green: tuple[Path, list[str]]) -> None:
    """At a shell, `deploy_stacks green` deploys green: the frozen rule is CI's, for changes nobody named."""
    project, applied = shifted_to_green
    assert deploy_stacks.main(["green", "--project-dir", str(project)]) == 0
    assert applied == ["green"]


def test_a_pull_requests_plan_says_a_merge_would_not_deploy_the_live_serving_colour(
    shifted_to_green: tuple[Path, list[str]],
) -> None:
    project, _ = shifted_to_green
    green = plan_stacks.serving_note(project, "green", named=[])
    assert "**green serves now (live weight 100) and this change does not edit its entry `clusters.green`" in green
    assert "The config says blue 100, green 0: it differs from the live weights" in green
    assert "A merge deploys blue." in plan_stacks.serving_note(project, "blue", named=[])
    assert "A merge deploys green." in plan_stacks.serving_note(project, "green", named=["green"])
