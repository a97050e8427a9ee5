"""Cluster stacks: one per colour, each with its own state, reading common's and the traffic stack's only through
their contracts, never another colour's."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from model.contract import CommonOutput
from scripts.docs import diagram
from tests.support.configs import EXAMPLE_COLOURS, validated
from tests.support.synth import Synthesized, references, synthesize

# green alone, its state in S3, its API endpoint public only: independent checks on one synthesis (each costs ~1 s).
OPERATORS = "203.0.113.0/24"
GREEN_ON_S3 = {
    "clusters": {"green": {"kubernetes_version": "1.35", "weight": 255}},
    "state": {"backend": "s3", "bucket": "acme-tf-state", "region": "eu-west-1", "key_prefix": "platform/bg"},
    "eks": {"endpoint_private_access": False, "public_access_cidrs": [OPERATORS]},
}
COMMON_OUTPUT_READ = re.compile(r"data\.terraform_remote_state\.common\.outputs\.(\w+)")
TRAFFIC_OUTPUT_READ = re.compile(r"data\.terraform_remote_state\.traffic\.outputs\.(\w+)")


@pytest.fixture(scope="module")
def three(variant_app: Synthesized) -> Synthesized:
    """Three colours: blue 1.33 weight 10, green 1.34 weight 200, purple 1.35 weight 0 (tests/support/configs.VARIANT)."""
    return variant_app


@pytest.fixture(scope="module")
def green_on_s3(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    return synthesize(validated(GREEN_ON_S3), tmp_path_factory.mktemp("green-s3"))


def remote_state(app: Synthesized, stack: str, of: str = "common") -> dict[str, Any]:
    """The stack's read of another stack's state (`of`: common or traffic)."""
    return dict(app.json(stack)["data"]["terraform_remote_state"][of])


def test_one_stack_per_colour(example_app: Synthesized, three: Synthesized) -> None:
    assert example_app.stacks() == sorted(["common", "traffic", *EXAMPLE_COLOURS])
    assert three.stacks() == ["blue", "common", "green", "purple", "traffic"]


def test_a_colour_removed_from_config_disappears(green_on_s3: Synthesized) -> None:
    assert green_on_s3.stacks() == ["common", "green", "traffic"]


@pytest.mark.parametrize("colour", EXAMPLE_COLOURS)
def test_each_colour_has_its_own_local_state_and_reads_commons(example_app: Synthesized, project_dir: Path, colour: str) -> None:
    """Paths are relative to the directory Terraform runs in, and land in the project's state directory."""
    state_dir = (project_dir / "terraform-state").resolve()

    def seen_from(stack: str, path: str) -> Path:
        assert not Path(path).is_absolute(), path
        return (example_app.stack_dir(stack) / path).resolve()

    own = example_app.json(colour)["terraform"]["backend"]["local"]["path"]
    assert seen_from(colour, own) == state_dir / f"{colour}.tfstate"
    remote = remote_state(example_app, colour)
    assert remote["backend"] == "local"
    assert seen_from(colour, remote["config"]["path"]) == state_dir / "common.tfstate"
    traffic = remote_state(example_app, colour, "traffic")
    assert seen_from(colour, traffic["config"]["path"]) == state_dir / "traffic.tfstate"
    assert (
        seen_from("common", example_app.json("common")["terraform"]["backend"]["local"]["path"]) == state_dir / "common.tfstate"
    )


def test_colours_never_read_each_others_state(three: Synthesized) -> None:
    for colour in ("blue", "green", "purple"):
        read = three.json(colour)["data"]["terraform_remote_state"]
        assert sorted(body["config"]["path"].rsplit("/", 1)[1] for body in read.values()) == ["common.tfstate", "traffic.tfstate"]
    read = three.json("traffic")["data"]["terraform_remote_state"]
    assert [body["config"]["path"].rsplit("/", 1)[1] for body in read.values()] == ["common.tfstate"]


def test_s3_backend_with_native_locking(green_on_s3: Synthesized) -> None:
    for stack in ("common", "traffic", "green"):
        assert green_on_s3.json(stack)["terraform"]["backend"] == {
            "s3": {
                "bucket": "acme-tf-state",
                "key": f"platform/bg/{stack}.tfstate",
                "region": "eu-west-1",
                "encrypt": True,
                "use_lockfile": True,
            }
        }
    for of in ("common", "traffic"):
        remote = remote_state(green_on_s3, "green", of)
        assert remote["backend"] == "s3"
        assert remote["config"] == {"bucket": "acme-tf-state", "key": f"platform/bg/{of}.tfstate", "region": "eu-west-1"}


def public_access_cidrs(app: Synthesized, colour: str) -> Any:
    (cluster,) = app.json(colour)["resource"]["aws_eks_cluster"].values()
    return cluster["vpc_config"]["public_access_cidrs"]


def test_nodes_may_reach_a_public_only_endpoint_from_the_nat_addresses(green_on_s3: Synthesized) -> None:
    """Without the private endpoint, nodes come from common's NAT gateways: those addresses are allowed too."""
    nat = "data.terraform_remote_state.common.outputs.nat_public_ips"
    assert public_access_cidrs(green_on_s3, "green") == f'${{concat(["{OPERATORS}"], formatlist("%s/32", {nat}))}}'


@pytest.mark.parametrize("colour", EXAMPLE_COLOURS)
def test_with_the_private_endpoint_only_the_configured_addresses_are_allowed(example_app: Synthesized, colour: str) -> None:
    assert public_access_cidrs(example_app, colour) == ["203.0.113.0/24"]
    assert "nat_public_ips" not in example_app.text(colour)  # a common deployed before that output still serves


@pytest.mark.parametrize("colour", EXAMPLE_COLOURS)
def test_provider_region_and_tags_per_colour(example_app: Synthesized, colour: str) -> None:
    (provider,) = example_app.json(colour)["provider"]["aws"]
    assert provider["region"] == "ap-northeast-1"
    assert provider["default_tags"] == [{"tags": {"Project": "eks-bg", "Stack": colour, "ManagedBy": "cdktf"}}]


@pytest.mark.parametrize("stack", ["common", "traffic"])
def test_every_name_a_cluster_reads_is_an_output_of_common_and_traffic(three: Synthesized, stack: str) -> None:
    published = set(three.json(stack)["output"])
    pattern = COMMON_OUTPUT_READ if stack == "common" else TRAFFIC_OUTPUT_READ
    for colour in ("blue", "green", "purple"):
        read = {m for r in references(three.json(colour)) for m in pattern.findall(r)}
        assert read <= published, read - published
        assert len(read) >= (8 if stack == "common" else 2), f"{colour} reads only {read}"


def test_each_colour_reads_its_own_target_groups_by_attribute_path(three: Synthesized) -> None:
    """`target_groups.<colour>.<application>`: a reference without quotes, which the JSON values of the parent
    Application carry as they are (tests/support/charts.py reads them back); only the colour's own."""
    for colour in ("blue", "green", "purple"):
        text = three.text(colour)
        own = set(re.findall(r"outputs\.target_groups\.(\w+)\.(\w+)", text))
        assert own == {(colour, "sample_app"), (colour, "catalogue"), (colour, "orders")}


def test_contract_accessors_refuse_the_wrong_kind_and_names_outside_the_contract() -> None:
    from cdktf import App

    from stacks.cluster import ClusterStack

    config = validated({"clusters": {"teal": {"kubernetes_version": "1.35", "weight": 1}}})
    stack = ClusterStack(App(), "teal", config=config, cluster=config.clusters["teal"])
    with pytest.raises(TypeError, match="is a list"):
        stack.common(CommonOutput.PRIVATE_SUBNET_IDS)
    with pytest.raises(TypeError, match="is a string"):
        stack.common_list(CommonOutput.VPC_ID)
    with pytest.raises(KeyError, match="app_role_arn is not an output of common"):
        stack.common("app_role_arn")
    with pytest.raises(KeyError, match="image_repository_url is not an output of common"):
        stack.common("image_repository_url")  # an earlier release's; each application has its own now


def test_a_colour_added_to_the_config_appears_in_the_readme_diagram(three: Synthesized) -> None:
    """`make docs` draws what is synthesized: a third colour is a third subgraph, with its own edges."""
    drawn = diagram(three.outdir)
    assert 'purple["purple: Kubernetes 1.35, weight 0"]' in drawn
    assert "common -- remote state --> purple" in drawn
    assert "traffic -- target groups --> purple" in drawn
    assert "traffic_orders -- weight 0 --> purple_app_orders" in drawn
    assert 'purple_app_catalogue["wave 1: catalogue @ catalogue-v1.8.0"]' in drawn
    assert 'green["green: Kubernetes 1.34, weight 200"]' in drawn
