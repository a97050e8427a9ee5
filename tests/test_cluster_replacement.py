"""A change that would replace a colour's existing cluster (a ForceNew argument such as
eks.service_ipv4_cidr) is refused at plan, with a message that says so, never a provider error.

- The cluster carries a precondition against the live cluster, read through data sources: a cluster
  that does not exist yet passes, one that runs what the config names passes, one that runs another
  Service network is refused, naming the colour, both values and the way out (a new colour).
- Nothing in a colour but its node group is created before the old one is destroyed: the cluster's fixed name
  cannot exist twice. The node group may be, being named by a prefix; what it depends on has fixed names and
  arguments per colour, or (the cluster) is never replaced.
- A change that would replace the node group of a colour with live weight (instance types, AMI or capacity type:
  ForceNew in the aws provider) is refused at plan the same way, against the live group and the live weights (the
  weights parameter, never the config's weights); a colour without live weight passes.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from model.routes import weights_parameter
from tests.support.configs import EXAMPLE_COLOURS, example, example_raw, validated
from tests.support.emulator_plans import (
    DRIFTED_INSTANCE_TYPE,
    DRIFTED_SERVICE_CIDR,
    NODE_GROUP_SUFFIX,
    EmulatorPlans,
    shifted,
)
from tests.support.synth import Synthesized, synthesize

COLOURS = EXAMPLE_COLOURS


@pytest.fixture(scope="module")
def swapped_app(inside_project: Path) -> Synthesized:
    """The shipped example with its colours' weights swapped (the serving one at 0, the standby at 100)."""
    raw = example_raw()
    for entry in raw["clusters"].values():
        entry["weight"] = 0 if entry.get("weight") else 100
    return synthesize(validated(raw), inside_project / "swapped-weights" / "cdktf.out")


def resources(app: Synthesized, colour: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for kind, items in app.json(colour)["resource"].items():
        for body in items.values():
            yield kind, body


@pytest.mark.parametrize("fixture", ["example_app", "everything_on"])
@pytest.mark.parametrize("colour", COLOURS)
def test_only_the_node_group_is_created_before_its_predecessor_is_destroyed(
    fixture: str, colour: str, request: pytest.FixtureRequest
) -> None:
    app: Synthesized = request.getfixturevalue(fixture)
    created_first = [kind for kind, body in resources(app, colour) if "create_before_destroy" in body.get("lifecycle", {})]
    assert created_first == ["aws_eks_node_group"]
    (group,) = app.json(colour)["resource"]["aws_eks_node_group"].values()
    assert group["lifecycle"]["create_before_destroy"] is True
    # A name of its own for the new group: a fixed node_group_name could not exist twice.
    assert "node_group_name" not in group
    assert group["node_group_name_prefix"].endswith("-")


@pytest.mark.parametrize("colour", COLOURS)
def test_nothing_is_replaced_along_with_the_cluster(colour: str, example_app: Synthesized) -> None:
    """A replacement is refused, so nothing may be planned to follow one (a trigger would only hide it)."""
    assert [kind for kind, body in resources(example_app, colour) if "replace_triggered_by" in body.get("lifecycle", {})] == []


@pytest.mark.parametrize("colour", COLOURS)
def test_the_guard_reads_the_live_cluster_of_that_name(colour: str, example_app: Synthesized) -> None:
    document = example_app.json(colour)
    (cluster,) = document["resource"]["aws_eks_cluster"].values()
    (existing,) = document["data"]["aws_eks_cluster"].values()
    assert existing["name"] == cluster["name"]
    # The control plane's list of clusters, the only one: the node group's guard reads it too.
    (listed,) = document["data"]["aws_eks_clusters"]
    assert listed.startswith("eks_")
    # Read only when a cluster of that name exists: a new colour's first plan passes.
    assert existing["count"] == f'${{contains(data.aws_eks_clusters.{listed}.names, "{cluster["name"]}") ? 1 : 0}}'
    (precondition,) = cluster["lifecycle"]["precondition"]
    assert cluster["kubernetes_network_config"]["service_ipv4_cidr"] in precondition["condition"]


@pytest.mark.parametrize("colour", COLOURS)
def test_the_node_group_guard_reads_the_live_groups_of_that_cluster(colour: str, example_app: Synthesized) -> None:
    document = example_app.json(colour)
    (cluster,) = document["resource"]["aws_eks_cluster"].values()
    (group,) = document["resource"]["aws_eks_node_group"].values()
    ((groups_id, groups),) = document["data"]["aws_eks_node_groups"].items()
    ((existing_id, existing),) = document["data"]["aws_eks_node_group"].items()
    assert groups["cluster_name"] == existing["cluster_name"] == cluster["name"]
    (listed,) = document["data"]["aws_eks_clusters"]  # the control plane's: one ListClusters per plan
    assert groups["count"].startswith(f"${{contains(data.aws_eks_clusters.{listed}.names")
    assert f'"{cluster["name"]}"' in groups["count"]
    # Every group of the cluster named as the stack names its own (`<cluster>-<suffix>`), by name.
    assert f"data.aws_eks_node_groups.{groups_id}[*].names" in existing["for_each"]
    assert f'startswith(n, "{cluster["name"]}-")' in existing["for_each"]
    assert existing["node_group_name"] == "${each.value}"
    (precondition,) = group["lifecycle"]["precondition"]
    assert f"values(data.aws_eks_node_group.{existing_id})" in precondition["condition"]
    for key in ("ami_type", "capacity_type"):
        assert f'g.{key} == "{group[key]}"' in precondition["condition"]
    assert f'join(",", g.instance_types) == "{",".join(group["instance_types"])}"' in precondition["condition"]


@pytest.mark.parametrize("colour", COLOURS)
def test_the_node_group_guard_holds_while_the_colour_has_live_weight(colour: str, example_app: Synthesized) -> None:
    """Whether the colour serves is read at plan from the live weights (the weights parameter), not the config's."""
    document = example_app.json(colour)
    (group,) = document["resource"]["aws_eks_node_group"].values()
    (precondition,) = group["lifecycle"]["precondition"]
    ((parameter_id, parameter),) = document["data"]["aws_ssm_parameter"].items()
    assert parameter["name"] == weights_parameter(example().project)
    live = f'lookup(jsondecode(data.aws_ssm_parameter.{parameter_id}.insecure_value), "{colour}", 0)'
    assert precondition["condition"].startswith(f"${{{live} == 0 || ")
    assert f"(live weight ${{{live}}} in {parameter['name']})" in precondition["error_message"]


def test_the_config_weights_reach_no_colour_stack(example_app: Synthesized, swapped_app: Synthesized) -> None:
    """Config weights only seed a new traffic stack: swapping them leaves every colour's synthesized stack byte for byte
    what it was (the traffic stack, whose new weights parameter they seed, changes)."""
    for colour in COLOURS:
        assert swapped_app.text(colour) == example_app.text(colour), colour
    assert swapped_app.text("traffic") != example_app.text("traffic")


# --- the guard, planned for real against existing clusters (tests/support/emulator_plans.py) ------------


@pytest.fixture(scope="module")
def guarded(emulator_plans: Future[EmulatorPlans]) -> tuple[int, str]:
    return emulator_plans.result().guarded


@pytest.mark.background("emulator_plans")
def test_a_replacing_change_is_refused_naming_the_colour_and_both_networks(
    guarded: tuple[int, str], example_app: Synthesized
) -> None:
    status, output = guarded
    drifted = COLOURS[-1]
    (cluster,) = example_app.json(drifted)["resource"]["aws_eks_cluster"].values()
    configured = cluster["kubernetes_network_config"]["service_ipv4_cidr"]
    assert status == 1, output
    flat = " ".join(output.split())
    assert (
        f"clusters.{drifted}: this change would replace the EKS cluster {cluster['name']}: it runs with Service "
        f"network {DRIFTED_SERVICE_CIDR}, eks.service_ipv4_cidr is now {configured}"
    ) in flat
    assert f"build the change as a new colour, shift to it and retire {drifted}" in flat
    assert flat.count("Error:") == 1, output  # the refusal, and nothing else


@pytest.mark.background("emulator_plans")
def test_a_cluster_that_runs_what_its_config_names_passes(guarded: tuple[int, str]) -> None:
    flat = " ".join(guarded[1].split())
    assert flat.count("Error: Resource precondition failed") == 1, flat
    assert f"clusters.{COLOURS[0]}: this change would replace" not in flat
    # Its guard did read the live cluster (the refusal above is not a cluster that merely went unread).
    assert f"module.guard_{COLOURS[0]}[0].data.aws_eks_cluster." in flat


# --- the node group guard, planned for real against existing node groups ----------------------------------


@pytest.fixture(scope="module")
def nodes_guarded(emulator_plans: Future[EmulatorPlans]) -> tuple[int, str]:
    return emulator_plans.result().nodes_guarded


# What the live weights say after a shift the config never heard of (tests/support/emulator_plans.py): the colour the
# config calls serving holds nothing, the standby all of it.
LIVE = shifted(example().weights)


@pytest.mark.background("emulator_plans")
def test_replacing_the_live_serving_colours_node_group_is_refused_naming_the_key_both_and_the_way_out(
    nodes_guarded: tuple[int, str], example_app: Synthesized
) -> None:
    status, output = nodes_guarded
    serving = [colour for colour in COLOURS if LIVE[colour] > 0]
    assert serving, "the live weights must give a colour weight for this test to mean anything"
    assert all(example().clusters[colour].weight == 0 for colour in serving)  # the config's weight is stale
    assert status == 1, output
    flat = " ".join(output.split())
    for colour in serving:
        (group,) = example_app.json(colour)["resource"]["aws_eks_node_group"].values()
        (cluster,) = example_app.json(colour)["resource"]["aws_eks_cluster"].values()
        assert (
            f"clusters.{colour}.nodes: this change would replace the node group of the EKS cluster {cluster['name']} "
            f"while {colour} serves (live weight {LIVE[colour]} in {weights_parameter(example().project)}): "
            f"{cluster['name']}-{NODE_GROUP_SUFFIX} runs instance_types {DRIFTED_INSTANCE_TYPE}, ami_type "
            f"{group['ami_type']}, capacity_type {group['capacity_type']}; the config now names instance_types "
            f"{','.join(group['instance_types'])}"
        ) in flat
        assert f"build the change as a new colour, shift to it and retire {colour}" in flat
    assert flat.count("Error: Resource precondition failed") == len(serving), output


@pytest.mark.background("emulator_plans")
def test_a_colour_without_live_weight_may_replace_its_node_group(nodes_guarded: tuple[int, str]) -> None:
    """Even the colour the config still calls serving: the shift took its traffic away."""
    flat = " ".join(nodes_guarded[1].split())
    standby = [colour for colour in COLOURS if LIVE[colour] == 0]
    assert standby, "the live weights must leave a colour without weight for this test to mean anything"
    assert any(example().clusters[colour].weight > 0 for colour in standby)
    for colour in standby:
        assert f"clusters.{colour}.nodes: this change would replace" not in flat
        # Its guard did read the live group (it passes on the weight, not on a group that went unread).
        assert f"module.nodes_guard_{colour}[0].data.aws_eks_node_group." in flat
