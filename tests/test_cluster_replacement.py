"""A change that replaces a colour's cluster (a ForceNew argument such as eks.service_ipv4_cidr) must not
collide with itself or orphan what the colour's controllers made.

- No resource of a colour is created before the old one is destroyed: Terraform would impose that on
  everything it depends on, the cluster included, whose fixed name cannot exist twice.
- Everything that lives in the cluster or is bound to it is replaced with it, the teardown hook among
  them: its destroy-time teardown (apps, ALB, records) then runs before the old cluster goes.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import pytest

from stacks.cluster import BOUND_TO_THE_CLUSTER
from tests.support.configs import EXAMPLE_COLOURS
from tests.support.emulator_plans import BOUND, CLUSTER, EmulatorPlans
from tests.support.synth import Synthesized

COLOURS = EXAMPLE_COLOURS
# What outlives a cluster replacement: the cluster's own inputs (its role, key, log group) and what it
# never names (the node role and launch template).
OUTLIVES_THE_CLUSTER = {
    "aws_iam_role",
    "aws_iam_role_policy",
    "aws_iam_role_policy_attachment",
    "aws_kms_key",
    "aws_cloudwatch_log_group",
    "aws_launch_template",
}


# What stacks/cluster.py binds to the cluster, by Terraform type (it names them by class).
BOUND_KINDS = {
    "aws_eks_node_group",
    "aws_eks_addon",
    "aws_eks_pod_identity_association",
    "aws_eks_access_entry",
    "aws_eks_access_policy_association",
    "kubernetes_namespace_v1",
    "helm_release",
    "terraform_data",  # the teardown hook
}


def test_the_bound_kinds_are_the_classes_the_stack_binds() -> None:
    assert {cls.TF_RESOURCE_TYPE for cls in BOUND_TO_THE_CLUSTER} == BOUND_KINDS


def resources(app: Synthesized, colour: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for kind, items in app.json(colour)["resource"].items():
        for body in items.values():
            yield kind, body


@pytest.mark.parametrize("fixture", ["example_app", "everything_on"])
@pytest.mark.parametrize("colour", COLOURS)
def test_nothing_in_a_colour_is_created_before_its_predecessor_is_destroyed(
    fixture: str, colour: str, request: pytest.FixtureRequest
) -> None:
    app: Synthesized = request.getfixturevalue(fixture)
    assert [kind for kind, body in resources(app, colour) if "create_before_destroy" in body.get("lifecycle", {})] == []


@pytest.mark.parametrize("fixture", ["example_app", "everything_on"])
@pytest.mark.parametrize("colour", COLOURS)
def test_everything_bound_to_the_cluster_is_replaced_with_it(fixture: str, colour: str, request: pytest.FixtureRequest) -> None:
    app: Synthesized = request.getfixturevalue(fixture)
    (cluster,) = app.json(colour)["resource"]["aws_eks_cluster"]
    trigger = [f"aws_eks_cluster.{cluster}.created_at"]
    kinds = {kind for kind, _ in resources(app, colour)}
    assert kinds == BOUND_KINDS | OUTLIVES_THE_CLUSTER | {"aws_eks_cluster"}  # a new kind is placed on purpose
    for kind, body in resources(app, colour):
        replaced_by = body.get("lifecycle", {}).get("replace_triggered_by")
        assert replaced_by == (trigger if kind in BOUND_KINDS else None), kind


# --- the trigger, planned for real (tests/support/emulator_plans.py, in the background) ------------------


@pytest.fixture(scope="module")
def plans(emulator_plans: Future[EmulatorPlans]) -> EmulatorPlans:
    return emulator_plans.result()


@pytest.mark.background("emulator_plans")
def test_an_in_place_upgrade_replaces_nothing_bound_to_the_cluster(plans: EmulatorPlans) -> None:
    assert plans.upgrade[CLUSTER] == ("update", None)
    assert plans.upgrade[BOUND] == ("no-op", None)


@pytest.mark.background("emulator_plans")
def test_a_replaced_cluster_takes_what_is_bound_to_it_along(plans: EmulatorPlans) -> None:
    assert plans.new_service_cidr[CLUSTER] == ("replace", "cannot_update")
    # Replaced, not created before destroyed (nothing in a colour is): the hook's destroy-time teardown
    # runs while the old cluster still stands.
    assert plans.new_service_cidr[BOUND] == ("replace", "replace_triggered_by")
