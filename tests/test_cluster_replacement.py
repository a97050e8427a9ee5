"""A change that would replace a colour's existing cluster (a ForceNew argument such as
eks.service_ipv4_cidr) is refused at plan, with a message that says so, never a provider error.

- The cluster carries a precondition against the live cluster, read through data sources: a cluster
  that does not exist yet passes, one that runs what the config names passes, one that runs another
  Service network is refused, naming the colour, both values and the way out (a new colour).
- Nothing in a colour is created before the old one is destroyed: the cluster's fixed name cannot exist
  twice.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import pytest

from tests.support.configs import EXAMPLE_COLOURS
from tests.support.emulator_plans import DRIFTED_SERVICE_CIDR, EmulatorPlans
from tests.support.synth import Synthesized

COLOURS = EXAMPLE_COLOURS


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
    (listed,) = document["data"]["aws_eks_clusters"]
    # Read only when a cluster of that name exists: a new colour's first plan passes.
    assert existing["count"] == f'${{contains(data.aws_eks_clusters.{listed}.names, "{cluster["name"]}") ? 1 : 0}}'
    (precondition,) = cluster["lifecycle"]["precondition"]
    assert cluster["kubernetes_network_config"]["service_ipv4_cidr"] in precondition["condition"]


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
