"""A change that would replace a colour's existing cluster (a ForceNew argument of aws_eks_cluster) is refused at
plan, with a message that says so, never a provider error.

- The cluster carries a precondition against the live cluster, read through data sources: a cluster that does not
  exist yet passes, one that runs what the stack wants passes, one that runs another Service network, another
  cluster role or another IP family is refused, naming the colour, each attribute with both values, and the way out
  (a new colour). The role's ARN it wants is built from values known at plan, never the role resource's `arn`.
- Nothing in a colour but its node group is created before the old one is destroyed: the cluster's fixed name
  cannot exist twice. The node group may be, being named by a prefix; what it depends on has fixed names and
  arguments per colour, or (the cluster) is never replaced.
- A change that would replace the node group of a colour with live weight (instance types, AMI or capacity type:
  ForceNew in the aws provider) is refused at plan the same way, against the live group and the live weights (the
  weights parameter, never the config's weights); a colour without live weight passes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from model.routes import weights_parameter
from tests.support.configs import EXAMPLE_COLOURS, example, example_raw, validated
from tests.support.emulator_plans import (
    DRIFTED_GUARDS,
    DRIFTED_INSTANCE_TYPE,
    DRIFTED_IP_FAMILY,
    DRIFTED_ROLE_ARN,
    DRIFTED_SERVICE_CIDR,
    EMULATOR_ACCOUNT,
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
    ((existing_id, existing),) = document["data"]["aws_eks_cluster"].items()
    assert existing["name"] == cluster["name"]
    # The control plane's list of clusters, the only one: the node group's guard reads it too.
    (listed,) = document["data"]["aws_eks_clusters"]
    assert listed.startswith("eks_")
    # Read only when a cluster of that name exists: a new colour's first plan passes.
    assert existing["count"] == f'${{contains(data.aws_eks_clusters.{listed}.names, "{cluster["name"]}") ? 1 : 0}}'
    (precondition,) = cluster["lifecycle"]["precondition"]
    assert precondition["condition"].startswith(f"${{alltrue([for c in data.aws_eks_cluster.{existing_id} : ")


@pytest.mark.parametrize("colour", COLOURS)
def test_the_guard_compares_each_forcenew_attribute_the_stack_sets_with_the_live_one(
    colour: str, example_app: Synthesized
) -> None:
    """service_ipv4_cidr, ip_family and role_arn: ForceNew in hashicorp/aws 5.100.0 (components/control_plane.py,
    _never_replaced), set by the stack and returned by the data source."""
    document = example_app.json(colour)
    (cluster,) = document["resource"]["aws_eks_cluster"].values()
    (condition,) = [p["condition"] for p in cluster["lifecycle"]["precondition"]]
    network = cluster["kubernetes_network_config"]
    assert network["ip_family"] == "ipv4"
    assert f'c.kubernetes_network_config[0].service_ipv4_cidr == "{network["service_ipv4_cidr"]}"' in condition
    assert 'coalesce(c.kubernetes_network_config[0].ip_family, "ipv4") == "ipv4"' in condition
    (partition,) = document["data"]["aws_partition"]
    (account,) = document["data"]["aws_caller_identity"]
    role_name = f"{cluster['name']}-cluster"
    assert (
        f'c.role_arn == format("arn:%s:iam::%s:role/%s", data.aws_partition.{partition}.partition, '
        f'data.aws_caller_identity.{account}.account_id, "{role_name}")'
    ) in condition
    # The role the colour makes has that name and no path, and the cluster is given the same ARN, built the same way:
    # the role's own `arn` is unknown while the role is replaced, and would replace the cluster with it.
    ((role_id, role),) = [(n, r) for n, r in document["resource"]["aws_iam_role"].items() if r["name"] == role_name]
    assert "path" not in role
    assert cluster["role_arn"] == (
        f"arn:${{data.aws_partition.{partition}.partition}}:iam::${{data.aws_caller_identity.{account}.account_id}}"
        f":role/{role_name}"
    )
    assert f"aws_iam_role.{role_id}" in cluster["depends_on"]
    assert "aws_iam_role" not in condition + cluster["role_arn"]


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


def refusals(output: str) -> list[str]:
    """The message of each precondition failure of a plan's output, on one line (Terraform wraps its messages), without
    what Terraform prints before it: the source line (the whole module, message template included) and, each after a
    `│`, the values the condition read."""
    errors = [e for e in re.split(r"(?m)^(?=Error: )", output)[1:] if "precondition failed" in e]
    tails = [" ".join(e.rsplit("│", 1)[-1].split()) for e in errors]
    return [found.group(0) for t in tails if (found := re.search(r"clusters\.[\w-]+: this change would replace.*", t))]


def refused(cluster: dict[str, Any], colour: str, *differences: str) -> str:
    """The refusal of a replacement of that colour's cluster, for these differences."""
    return (
        f"clusters.{colour}: this change would replace the EKS cluster {cluster['name']}: {'; '.join(differences)}; and "
        f"EKS cannot change that in place. Replacing a cluster takes down everything it serves. Keep what {colour} runs "
        f"while it exists; build the change as a new colour, shift to it and retire {colour} (docs/upgrade-runbook.md)."
    )


@pytest.mark.background("emulator_plans")
def test_each_replacing_difference_is_refused_alone_naming_the_colour_the_attribute_and_both_values(
    guarded: tuple[int, str], example_app: Synthesized
) -> None:
    """The last colour's cluster, planned three times: in each region it differs in one attribute only, and the
    refusal names that one alone (each is checked on its own: a guard that missed one would let its plan pass)."""
    status, output = guarded
    drifted = COLOURS[-1]
    (cluster,) = example_app.json(drifted)["resource"]["aws_eks_cluster"].values()
    configured = cluster["kubernetes_network_config"]["service_ipv4_cidr"]
    wanted_role = f"arn:aws:iam::{EMULATOR_ACCOUNT}:role/{cluster['name']}-cluster"
    assert status == 1, output
    assert sorted(refusals(output)) == sorted(
        [
            refused(
                cluster,
                drifted,
                f"it runs with Service network {DRIFTED_SERVICE_CIDR}, eks.service_ipv4_cidr is now {configured}",
            ),
            refused(cluster, drifted, f"it runs with cluster role {DRIFTED_ROLE_ARN}, the stack now names {wanted_role}"),
            refused(cluster, drifted, f"it runs with IP family {DRIFTED_IP_FAMILY}, the stack builds ipv4"),
        ]
    ), output
    assert " ".join(output.split()).count("Error:") == 3, output  # the refusals, and nothing else
    for prefix in DRIFTED_GUARDS:  # each copy read its own region's cluster
        assert f"module.{prefix}{drifted}[0].data.aws_eks_cluster." in output


@pytest.mark.background("emulator_plans")
def test_a_cluster_that_runs_what_its_stack_wants_passes(guarded: tuple[int, str]) -> None:
    """The first colour's cluster runs its Service network, the role its stack makes (the emulator's account) and
    ipv4: its guard passes."""
    flat = " ".join(guarded[1].split())
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
