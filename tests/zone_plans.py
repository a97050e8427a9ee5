"""Terraform plans of the network's zone choice against the AWS emulator, for tests/test_availability_zones.py.

The emulator's ap-northeast-1 has three zones (ap-northeast-1a = apne1-az4, 1c = apne1-az1, 1d = apne1-az2).
Each variant is the Network construct alone, as common builds it; the variants that must plan share one
Terraform run as modules of one root, and so do the ones that must fail (Terraform reports every failed
postcondition of a plan), so the aws provider's schema loads twice, not once per variant.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import components  # noqa: F401  -- registers the provider packages lazily, before any is imported
from stacks.config import EKS_UNSUPPORTED_ZONE_IDS
from tests.terraform import run

REGION = "ap-northeast-1"
EMULATED_ZONES = ("ap-northeast-1a", "ap-northeast-1c", "ap-northeast-1d")
# name -> (network.az_count, network.excluded_zone_ids)
MUST_PLAN = {"default": (3, EKS_UNSUPPORTED_ZONE_IDS), "excluded": (2, ("apne1-az4",))}
MUST_FAIL = {"too_many": (4, EKS_UNSUPPORTED_ZONE_IDS), "too_many_left": (3, ("apne1-az4",))}
_CIDRS = [f"10.0.{i}.0/24" for i in range(12)]


@dataclass(frozen=True)
class ZonePlans:
    zones: Mapping[str, list[str]]  # MUST_PLAN variant -> the zone of each planned subnet
    failed: tuple[int, str]  # (exit status, output) of the plan of the MUST_FAIL variants


def network_document(az_count: int, excluded: Sequence[str]) -> dict[str, Any]:
    """The Network construct alone in a stack, synthesized without a backend (jsii: main thread only)."""
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
    document["terraform"].pop("backend", None)
    return document


def documents() -> dict[str, dict[str, Any]]:
    return {name: network_document(*variant) for name, variant in {**MUST_PLAN, **MUST_FAIL}.items()}


def plan_variants(directory: Path, documents: Mapping[str, dict[str, Any]], env: Mapping[str, str]) -> ZonePlans:
    """Init and plan both roots (no jsii here: this runs on a background thread)."""

    def root(name: str, variants: Sequence[str]) -> Path:
        where = directory / name
        for variant in variants:
            (where / variant).mkdir(parents=True)
            (where / variant / "cdk.tf.json").write_text(json.dumps(documents[variant]))
        modules = {variant: {"source": f"./{variant}"} for variant in variants}
        (where / "main.tf.json").write_text(json.dumps({"module": modules}))
        init = run(where, "init", "-input=false", "-no-color", env=env)
        assert init.returncode == 0, init.stdout + init.stderr
        return where

    passing = root("must-plan", list(MUST_PLAN))
    planned = run(passing, "plan", "-input=false", "-no-color", "-out=plan", env=env)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    shown = json.loads(run(passing, "show", "-json", "plan", env=env).stdout)
    zones = {
        module["address"].removeprefix("module."): [
            r["values"]["availability_zone"] for r in module["resources"] if r["type"] == "aws_subnet"
        ]
        for module in shown["planned_values"]["root_module"]["child_modules"]
    }
    failing = run(root("must-fail", list(MUST_FAIL)), "plan", "-input=false", "-no-color", env=env)
    return ZonePlans(zones=zones, failed=(failing.returncode, failing.stdout + failing.stderr))
