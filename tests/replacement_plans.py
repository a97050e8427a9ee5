"""What Terraform plans for a colour's cluster-bound resources when the cluster changes, against the AWS
emulator, for tests/test_cluster_replacement.py.

moto runs EKS clusters but not access entries, add-ons or Pod Identity, and it does not report a
cluster's access_config back (every plan of the synthesized cluster would replace it). So a small
cluster of the same kind stands in for the colour's, and a `terraform_data` carries the trigger the
synthesized stack gives every cluster-bound resource, pointed at the stand-in.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.terraform import run

REGION = "ap-northeast-1"
CLUSTER = "aws_eks_cluster.cluster"
BOUND = "terraform_data.bound"


@dataclass(frozen=True)
class ReplacementPlans:
    """Each plan's actions by resource address, and why (Terraform's action_reason)."""

    upgrade: Mapping[str, tuple[list[str], str | None]]  # the Kubernetes version changes: in place
    new_service_cidr: Mapping[str, tuple[list[str], str | None]]  # a ForceNew argument changes


def stand_in(trigger: str) -> dict[str, Any]:
    """A cluster and a resource bound to it with `trigger` (the synthesized cluster's address swapped for
    the stand-in's: `aws_eks_cluster.<id>.created_at` -> `aws_eks_cluster.cluster.created_at`)."""
    kind, _, attribute = trigger.split(".")
    assert f"{kind}.cluster" == CLUSTER, trigger
    trust = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": "eks.amazonaws.com"}, "Action": "sts:AssumeRole"}],
    }
    subnets = {
        f"s{i}": {"vpc_id": "${aws_vpc.vpc.id}", "cidr_block": f"10.0.{i}.0/24", "availability_zone": zone}
        for i, zone in enumerate(("ap-northeast-1a", "ap-northeast-1c"))
    }
    return {
        "variable": {"kubernetes_version": {"default": "1.34"}, "service_cidr": {"default": "172.20.0.0/16"}},
        "provider": {"aws": {"region": REGION}},
        "resource": {
            "aws_vpc": {"vpc": {"cidr_block": "10.0.0.0/16"}},
            "aws_subnet": subnets,
            "aws_iam_role": {"cluster": {"name": "stand-in-cluster", "assume_role_policy": json.dumps(trust)}},
            "aws_eks_cluster": {
                "cluster": {
                    "name": "stand-in",
                    "version": "${var.kubernetes_version}",
                    "role_arn": "${aws_iam_role.cluster.arn}",
                    "vpc_config": {"subnet_ids": [f"${{aws_subnet.{s}.id}}" for s in subnets]},
                    "kubernetes_network_config": {"service_ipv4_cidr": "${var.service_cidr}"},
                }
            },
            "terraform_data": {
                "bound": {
                    "input": "bound",
                    "depends_on": [CLUSTER],
                    "lifecycle": {"replace_triggered_by": [f"{CLUSTER}.{attribute}"]},
                }
            },
        },
    }


def plan_changes(directory: Path, trigger: str, env: Mapping[str, str]) -> ReplacementPlans:
    """Apply the stand-in, then plan an in-place upgrade and a replacement (a background thread: no jsii)."""
    (directory / "main.tf.json").write_text(json.dumps(stand_in(trigger)))
    for step in (("init", "-input=false", "-no-color"), ("apply", "-auto-approve", "-input=false", "-no-color")):
        done = run(directory, *step, env=env)
        assert done.returncode == 0, done.stdout + done.stderr

    def changes(variable: str) -> dict[str, tuple[list[str], str | None]]:
        done = run(directory, "plan", "-input=false", "-no-color", "-out=plan", "-var", variable, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        shown = json.loads(run(directory, "show", "-json", "plan", env=env).stdout)
        return {c["address"]: (c["change"]["actions"], c.get("action_reason")) for c in shown["resource_changes"]}

    # Left in the emulator: destroying an EKS cluster waits ~40 s on the provider's polling, and nothing
    # else in the session looks for untagged resources.
    return ReplacementPlans(upgrade=changes("kubernetes_version=1.35"), new_service_cidr=changes("service_cidr=172.21.0.0/16"))
