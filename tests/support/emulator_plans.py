"""Terraform plans against the AWS emulator that run beside the suite (tests/support/background_checks.py):

- the network's choice of zones (tests/test_availability_zones.py): the emulator's ap-northeast-1 has three
  (ap-northeast-1a = apne1-az4, 1c = apne1-az1, 1d = apne1-az2); each variant is the Network construct
  alone, as common builds it, as a module;
- what a cluster change does to what is bound to it (tests/test_cluster_replacement.py). moto runs EKS
  clusters, not access entries, add-ons or Pod Identity, and does not report a cluster's access_config
  back (every plan of the synthesized cluster would replace it): a small cluster stands in for the
  colour's, and a `terraform_data` carries the trigger the synthesized stack gives every bound resource.

One root holds them all, so the aws provider loads six times in all (the costly part), not once per check,
and only the stand-in is applied (a VPC with DNS hostnames takes the provider ~10 s to create).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import components  # noqa: F401  -- registers the provider packages lazily, before any is imported
from model.config import EKS_UNSUPPORTED_ZONE_IDS
from tests.support.terraform import run

REGION = "ap-northeast-1"
EMULATED_ZONES = ("ap-northeast-1a", "ap-northeast-1c", "ap-northeast-1d")
# module name -> (network.az_count, network.excluded_zone_ids)
MUST_PLAN = {"default": (3, EKS_UNSUPPORTED_ZONE_IDS), "excluded": (2, ("apne1-az4",))}
MUST_FAIL = {"too_many": (4, EKS_UNSUPPORTED_ZONE_IDS), "too_many_left": (3, ("apne1-az4",))}
CLUSTER = "aws_eks_cluster.cluster"
BOUND = "terraform_data.bound"
_CIDRS = [f"10.0.{i}.0/24" for i in range(12)]

Actions = Mapping[str, tuple[str, str | None]]  # address -> (planned action, reason)


@dataclass(frozen=True)
class EmulatorPlans:
    zones: Mapping[str, list[str]]  # MUST_PLAN variant -> the zone of each of its subnets
    failed: tuple[int, str]  # (exit status, output) of the plan with the MUST_FAIL variants in
    upgrade: Actions  # the stand-in cluster's Kubernetes version changes: in place ("no-op" when unchanged)
    new_service_cidr: Actions  # a ForceNew argument changes: the cluster is replaced (absent when unchanged)


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


def root(trigger: str, modules: Sequence[str]) -> dict[str, Any]:
    """The stand-in cluster, a resource bound to it with `trigger` (the synthesized cluster's address
    swapped for the stand-in's), and the network modules; the MUST_FAIL ones only with var.must_fail."""
    kind, _, attribute = trigger.split(".")
    assert f"{kind}.cluster" == CLUSTER, trigger
    trust = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": "eks.amazonaws.com"}, "Action": "sts:AssumeRole"}],
    }
    subnets = {
        f"s{i}": {"vpc_id": "${aws_vpc.vpc.id}", "cidr_block": f"10.9.{i}.0/24", "availability_zone": zone}
        for i, zone in enumerate(EMULATED_ZONES[:2])
    }
    cluster = {
        "name": "stand-in",
        "version": "${var.kubernetes_version}",
        "role_arn": "${aws_iam_role.cluster.arn}",
        "vpc_config": {"subnet_ids": [f"${{aws_subnet.{s}.id}}" for s in subnets]},
        "kubernetes_network_config": {"service_ipv4_cidr": "${var.service_cidr}"},
    }
    bound = {"input": "bound", "depends_on": [CLUSTER], "lifecycle": {"replace_triggered_by": [f"{CLUSTER}.{attribute}"]}}
    return {
        "variable": {
            "kubernetes_version": {"default": "1.34"},
            "service_cidr": {"default": "172.20.0.0/16"},
            "must_fail": {"default": False},
        },
        "provider": {"aws": {"region": REGION}},
        "resource": {
            "aws_vpc": {"vpc": {"cidr_block": "10.9.0.0/16"}},
            "aws_subnet": subnets,
            "aws_iam_role": {"cluster": {"name": "stand-in-cluster", "assume_role_policy": json.dumps(trust)}},
            "aws_eks_cluster": {"cluster": cluster},
            "terraform_data": {"bound": bound},
        },
        "module": {
            name: {"source": f"./{name}", **({"count": "${var.must_fail ? 1 : 0}"} if name in MUST_FAIL else {})}
            for name in modules
        },
    }


def plan_all(directory: Path, trigger: str, modules: Mapping[str, dict[str, Any]], env: Mapping[str, str]) -> EmulatorPlans:
    """Apply the stand-in, then plan each change (a background thread: no jsii here)."""
    for name, document in modules.items():
        (directory / name).mkdir()
        (directory / name / "cdk.tf.json").write_text(json.dumps(document))
    (directory / "main.tf.json").write_text(json.dumps(root(trigger, list(modules))))

    def terraform(*arguments: str) -> str:
        done = run(directory, *arguments, "-input=false", "-no-color", env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    terraform("init")
    terraform("apply", "-auto-approve", f"-target={BOUND}")
    # The plans judge changes of configuration against the state just applied: no refresh (it would only
    # read back from the emulator what the apply wrote, at a provider start's worth of CPU each).
    fresh = "-refresh=false"
    # The upgrade's plan, saved and shown, also holds the planned subnets of the network modules.
    terraform("plan", "-lock=false", fresh, "-var", "kubernetes_version=1.35", "-out=upgrade.plan")
    shown = json.loads(run(directory, "show", "-json", "upgrade.plan", env=env).stdout)
    modules_planned = shown["planned_values"]["root_module"]["child_modules"]
    zones = {
        module["address"].removeprefix("module."): [
            r["values"]["availability_zone"] for r in module["resources"] if r["type"] == "aws_subnet"
        ]
        for module in modules_planned
    }
    upgrade = {c["address"]: ("-".join(c["change"]["actions"]), c.get("action_reason")) for c in shown["resource_changes"]}
    new_cidr = terraform("plan", "-json", "-lock=false", fresh, "-var", "service_cidr=172.21.0.0/16")
    replaced = [json.loads(line) for line in new_cidr.splitlines()]
    changes = [m["change"] for m in replaced if m.get("type") == "planned_change"]
    failing = run(directory, "plan", "-input=false", "-lock=false", fresh, "-no-color", "-var", "must_fail=true", env=env)
    # Left in the emulator (a process of its own, gone with the session): destroying an EKS cluster
    # waits ~40 s on the provider's polling.
    return EmulatorPlans(
        zones=zones,
        failed=(failing.returncode, failing.stdout + failing.stderr),
        upgrade=upgrade,
        new_service_cidr={c["resource"]["addr"]: (c["action"], c.get("reason")) for c in changes},
    )
