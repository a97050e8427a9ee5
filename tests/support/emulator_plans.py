"""Terraform plans against the AWS emulator that run beside the suite (tests/support/background_checks.py):

- the network's choice of zones (tests/test_availability_zones.py): the emulator's ap-northeast-1 has three
  (ap-northeast-1a = apne1-az4, 1c = apne1-az1, 1d = apne1-az2); each variant is the Network construct
  alone, as common builds it, as a module;
- the refusal to replace a colour's cluster (tests/test_cluster_replacement.py): each example colour's
  cluster exists in the emulator, the first as its stack wants it, the last with another Service network than
  its config names; the last also exists in two more regions of the emulator (moto keeps regions apart, so
  one name runs a different way in each), once under another cluster role, once with the IPv6 family, each
  planned by a copy of its guard on a provider of that region. The colour's data sources and its cluster's
  precondition are planned as the stack synthesizes them, on a `terraform_data` (moto does not report a
  cluster's access_config back, so the synthesized cluster itself would always plan a replacement here);
- the refusal to replace a serving colour's node group (tests/test_cluster_replacement.py): each example colour's
  cluster runs a node group of another instance type than its config names; the colour's node group data sources
  and its group's precondition, as synthesized, on a `terraform_data`: only a colour with live weight is refused. The
  live weights (the weights parameter) are those of a shift the config never heard of: the colour the config gives
  weight holds none, and the standby holds it all (`shifted`).

One root holds them all, so the aws provider loads a few times in all (the costly part), not once per
check; nothing is applied. Two plans: the zones (which must pass), then every failing variant and guard at once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import components  # noqa: F401  -- registers the provider packages lazily, before any is imported
from model.config import EKS_UNSUPPORTED_ZONE_IDS
from scripts.emulator import client
from tests.support.terraform import run

REGION = "ap-northeast-1"
EMULATED_ZONES = ("ap-northeast-1a", "ap-northeast-1c", "ap-northeast-1d")
# module name -> (network.az_count, network.excluded_zone_ids)
MUST_PLAN = {"default": (3, EKS_UNSUPPORTED_ZONE_IDS), "excluded": (2, ("apne1-az4",))}
MUST_FAIL = {"too_many": (4, EKS_UNSUPPORTED_ZONE_IDS), "too_many_left": (3, ("apne1-az4",))}
# The Service network the last colour's existing cluster runs, not the one its config names.
DRIFTED_SERVICE_CIDR = "172.21.0.0/16"
EMULATOR_ACCOUNT = "123456789012"  # moto's default: what aws_caller_identity reads
# The role another copy of the last colour's cluster runs under (not `<cluster>-cluster`, the role its stack makes),
# and the region it runs in; the region of a copy running the IPv6 family.
DRIFTED_ROLE_ARN = f"arn:aws:iam::{EMULATOR_ACCOUNT}:role/another-cluster-role"
ROLE_REGION = "us-west-2"
DRIFTED_IP_FAMILY = "ipv6"
FAMILY_REGION = "eu-west-1"
# A guard module planned against the copy in another region: its name's prefix, and the region (its provider alias).
DRIFTED_GUARDS = {"guard_role_": ROLE_REGION, "guard_family_": FAMILY_REGION}
# The instance type every example colour's existing node group runs, not the one its config names.
DRIFTED_INSTANCE_TYPE = "m5.large"
NODE_GROUP_SUFFIX = "20261124"  # as node_group_name_prefix would name it: `<cluster>-<suffix>`
_NODE_GUARD_DATA = ("aws_eks_clusters", "aws_eks_node_groups", "aws_eks_node_group", "aws_ssm_parameter")
_CIDRS = [f"10.0.{i}.0/24" for i in range(12)]
# The root's switches: each brings in modules whose plan must fail (root).
FAILING = ("must_fail", "guarded", "nodes_guarded")


@dataclass(frozen=True)
class EmulatorPlans:
    zones: Mapping[str, list[str]]  # MUST_PLAN variant -> the zone of each of its subnets
    # (exit status, output) of the failing plan, its output as each part alone would print it (errors_by_part):
    failed: tuple[int, str]  # the MUST_FAIL variants
    guarded: tuple[int, str]  # every colour's replacement guard, and the last colour's in the other regions
    nodes_guarded: tuple[int, str]  # every colour's node group guard


def network_module(az_count: int, excluded: Sequence[str]) -> dict[str, Any]:
    """The Network construct alone, as a module (jsii: main thread only): its provider comes from the
    root (a module with a provider of its own cannot take `count`)."""
    from cdktf import App, TerraformStack, Testing
    from cdktf_cdktf_provider_aws.provider import AwsProvider

    from components.network import Network

    stack = TerraformStack(App(skip_validation=True), "zones")
    AwsProvider(stack, "aws", region=REGION)
    Network(
        stack,
        "network",
        name="zones",
        cidr="10.0.0.0/16",
        public_cidrs=_CIDRS[:az_count],
        private_cidrs=_CIDRS[az_count : 2 * az_count],
        region=REGION,
        excluded_zone_ids=excluded,
    )
    document: dict[str, Any] = json.loads(Testing.synth(stack))
    del document["provider"]
    document["terraform"].pop("backend", None)
    return document


def networks() -> dict[str, dict[str, Any]]:
    return {name: network_module(*variant) for name, variant in {**MUST_PLAN, **MUST_FAIL}.items()}


def guard_module(colour_stack: Mapping[str, Any]) -> dict[str, Any]:
    """A colour's replacement guard as a module: its EKS data sources, partition and account as synthesized (the role's
    ARN it expects is built from them), and its cluster's precondition on a `terraform_data`. It names its provider
    (hashicorp/aws), so a provider of another region can be passed in."""
    (cluster,) = colour_stack["resource"]["aws_eks_cluster"].values()
    kinds = ("aws_eks_clusters", "aws_eks_cluster", "aws_partition", "aws_caller_identity")
    return {
        "terraform": {"required_providers": {"aws": colour_stack["terraform"]["required_providers"]["aws"]}},
        "data": {kind: colour_stack["data"][kind] for kind in kinds},
        "resource": {"terraform_data": {"guard": {"input": "guard", "lifecycle": cluster["lifecycle"]}}},
    }


def guard_modules(colour_stacks: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each colour's guard (`guard_<colour>`), and the last colour's again for each of DRIFTED_GUARDS' regions."""
    modules = {f"guard_{colour}": guard_module(stack) for colour, stack in colour_stacks.items()}
    last = list(colour_stacks)[-1]
    return modules | {f"{prefix}{last}": modules[f"guard_{last}"] for prefix in DRIFTED_GUARDS}


def node_guard_module(colour_stack: Mapping[str, Any]) -> dict[str, Any]:
    """A colour's node group guard as a module: its data sources of the live groups as synthesized, and its group's
    precondition on a `terraform_data` (moto's node groups lack what the provider reads back of a launch template)."""
    (group,) = colour_stack["resource"]["aws_eks_node_group"].values()
    precondition = group["lifecycle"]["precondition"]
    return {
        "data": {kind: colour_stack["data"][kind] for kind in _NODE_GUARD_DATA},
        "resource": {"terraform_data": {"guard": {"input": "guard", "lifecycle": {"precondition": precondition}}}},
    }


def shifted(configured: Mapping[str, int]) -> dict[str, int]:
    """The live weights after a shift away from what the config says (which no shift writes): each colour the config
    gives weight holds none, and the colours it gives none share the total."""
    standby = [colour for colour, weight in configured.items() if weight == 0]
    total = sum(configured.values())
    return {colour: total // len(standby) if colour in standby else 0 for colour in configured}


@dataclass(frozen=True)
class LiveCluster:
    """A cluster as it exists in the emulator before the guards are planned."""

    name: str
    region: str
    service_cidr: str
    role_arn: str
    ip_family: str = "ipv4"


def existing_clusters(colour_stacks: Mapping[str, Mapping[str, Any]]) -> list[LiveCluster]:
    """Every colour's cluster in REGION as its stack wants it (its Service network, the role its stack makes), but
    the last colour's Service network, which has drifted; and the last colour's in ROLE_REGION under another role and
    in FAMILY_REGION with the IPv6 family, each with nothing else changed."""
    running = []
    for stack in colour_stacks.values():
        (cluster,) = stack["resource"]["aws_eks_cluster"].values()
        name, cidr = cluster["name"], cluster["kubernetes_network_config"]["service_ipv4_cidr"]
        running.append(LiveCluster(name, REGION, cidr, f"arn:aws:iam::{EMULATOR_ACCOUNT}:role/{name}-cluster"))
    last = running[-1]
    return [
        *running[:-1],
        replace(last, service_cidr=DRIFTED_SERVICE_CIDR),
        replace(last, region=ROLE_REGION, role_arn=DRIFTED_ROLE_ARN),
        replace(last, region=FAMILY_REGION, ip_family=DRIFTED_IP_FAMILY),
    ]


def root(modules: Sequence[str]) -> dict[str, Any]:
    """The modules; the MUST_FAIL ones only with var.must_fail, the guards only with var.guarded, the node group
    guards only with var.nodes_guarded; a guard of DRIFTED_GUARDS with the provider of its region."""

    def arguments(name: str) -> dict[str, Any]:
        part = part_of(name)
        count = {"count": f"${{var.{part} ? 1 : 0}}"} if part else {}
        aliases = [alias(prefix) for prefix in DRIFTED_GUARDS if name.startswith(prefix)]
        return count | ({"providers": {"aws": f"aws.{aliases[0]}"}} if aliases else {})

    regions = [{"alias": alias(prefix), "region": region} for prefix, region in DRIFTED_GUARDS.items()]
    return {
        "variable": {variable: {"default": False} for variable in FAILING},
        "provider": {"aws": [{"region": REGION}, *regions]},
        "module": {name: {"source": f"./{name}", **arguments(name)} for name in modules},
    }


def alias(prefix: str) -> str:
    """The root's provider alias for the region of a DRIFTED_GUARDS prefix."""
    return prefix.strip("_")


def create_clusters(clusters: Sequence[LiveCluster], endpoint: str) -> None:
    """Each cluster, with one node group named as the stack names it, running DRIFTED_INSTANCE_TYPE."""
    node_role = f"arn:aws:iam::{EMULATOR_ACCOUNT}:role/stand-in"
    for cluster in clusters:
        eks = client("eks", endpoint, cluster.region)
        eks.create_cluster(
            name=cluster.name,
            roleArn=cluster.role_arn,
            resourcesVpcConfig={"subnetIds": ["subnet-1", "subnet-2"]},
            kubernetesNetworkConfig={"serviceIpv4Cidr": cluster.service_cidr, "ipFamily": cluster.ip_family},
        )
        eks.create_nodegroup(
            clusterName=cluster.name,
            nodegroupName=f"{cluster.name}-{NODE_GROUP_SUFFIX}",
            nodeRole=node_role,
            subnets=["subnet-1", "subnet-2"],
            instanceTypes=[DRIFTED_INSTANCE_TYPE],
            amiType="AL2023_x86_64_STANDARD",
            capacityType="ON_DEMAND",
        )


def plan_all(
    directory: Path,
    modules: Mapping[str, dict[str, Any]],
    clusters: Sequence[LiveCluster],
    env: Mapping[str, str],
    *,
    live_weights: tuple[str, Mapping[str, int]],
) -> EmulatorPlans:
    """Plan the zones, the failing variants and the guards (a background thread: no jsii here). live_weights: the
    weights parameter's name and what it holds (as the shift wrote it)."""
    for name, document in modules.items():
        (directory / name).mkdir()
        (directory / name / "cdk.tf.json").write_text(json.dumps(document))
    (directory / "main.tf.json").write_text(json.dumps(root(list(modules))))
    create_clusters(clusters, env["AWS_ENDPOINT_URL"])
    parameter, weights = live_weights
    client("ssm", env["AWS_ENDPOINT_URL"], REGION).put_parameter(
        Name=parameter, Value=json.dumps(dict(weights)), Type="String", Overwrite=True
    )

    def terraform(*arguments: str) -> str:
        done = run(directory, *arguments, "-input=false", "-no-color", env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    terraform("init")
    # The saved plan also holds the planned subnets of the network modules.
    terraform("plan", "-lock=false", "-out=zones.plan")
    shown = json.loads(run(directory, "show", "-json", "zones.plan", env=env).stdout)
    modules_planned = shown["planned_values"]["root_module"]["child_modules"]
    zones = {
        module["address"].removeprefix("module."): [
            r["values"]["availability_zone"] for r in module["resources"] if r["type"] == "aws_subnet"
        ]
        for module in modules_planned
    }

    # The failing variants and both guards in one plan (the provider loads once): Terraform reports every module's
    # error, each naming its module; the checks read each part's own.
    switches = [argument for variable in FAILING for argument in ("-var", f"{variable}=true")]
    done = run(directory, "plan", "-input=false", "-lock=false", "-no-color", *switches, env=env)
    parts = errors_by_part(done.stdout + done.stderr)
    return EmulatorPlans(
        zones=zones,
        failed=(done.returncode, parts["must_fail"]),
        guarded=(done.returncode, parts["guarded"]),
        nodes_guarded=(done.returncode, parts["nodes_guarded"]),
    )


def part_of(module: str) -> str | None:
    """The switch a module comes in with (root's counts), None for the modules always planned."""
    if module in MUST_FAIL:
        return "must_fail"
    if module.startswith("guard_"):
        return "guarded"
    if module.startswith("nodes_guard_"):
        return "nodes_guarded"
    return None


def errors_by_part(output: str) -> dict[str, str]:
    """A plan's output as each switch's part would have printed it alone: everything before the first error (the reads),
    then the errors of that part's modules. An error that names no module of a part (a provider's, say) is in every
    part: each check then sees it."""
    head, *errors = re.split(r"(?m)^(?=Error: )", output)  # -no-color: no box before it
    parts = dict.fromkeys(FAILING, head)
    for error in errors:
        named = re.search(r"^\s*on (\w+)/cdk\.tf\.json line", error, flags=re.M)  # the module's directory: its name
        part = part_of(named.group(1)) if named else None
        for name in [part] if part else FAILING:
            parts[name] += error
    return parts
