"""A Deployer (tools/shift/deploy.py) without cdktf or Terraform: its plans are `terraform show -json` documents
built from the config on disk (the weights the shift wrote) against the weights each colour last applied, plus
whatever a test leaves pending for a colour."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.shift.deploy import Plan

from model.loading import load_config
from tools.shift import ShiftError

# Addresses as the colour stacks name them (stacks/cluster.py, components/destroy_hook.py).
APP_OF_APPS = "helm_release.app-of-apps_release_74AC4CF2"
TEARDOWN_HOOK = "terraform_data.teardown_hook_71DFC2B4"


def facts(colour: str, weight: int, *, image_tag: str = "0.1.0") -> str:
    """A shortened App of Apps values document, as the stack writes it (JSON, which is YAML)."""
    return json.dumps(
        {
            "cluster": {"colour": colour, "name": f"eks-bg-{colour}"},
            "ingress": {"setIdentifier": colour, "ttl": 60, "weight": weight},
            "sampleApp": {"image": {"tag": image_tag}},
        },
        indent=2,
    )


def update(address: str, before: dict[str, Any], after: dict[str, Any], unknown: dict[str, Any]) -> dict[str, Any]:
    kind, name = address.split(".", 1)
    change = {"actions": ["update"], "before": before, "after": after, "after_unknown": unknown}
    return {"address": address, "mode": "managed", "type": kind, "name": name, "change": change}


def weight_changes(colour: str, before: int, after: int) -> list[dict[str, Any]]:
    """What a colour's plan holds when only its weight moves: the App of Apps' values and the teardown hook's input."""
    if before == after:
        return []
    release = {"name": "app-of-apps", "namespace": "argocd", "version": "0.1.0"}
    hook = {"colour": colour, "cluster": f"eks-bg-{colour}"}
    return [
        update(
            APP_OF_APPS,
            {**release, "values": [facts(colour, before)]},
            {**release, "values": [facts(colour, after)]},
            {"metadata": True},  # the helm provider recomputes it whenever values change
        ),
        update(TEARDOWN_HOOK, {"input": {**hook, "weight": before}}, {"input": {**hook, "weight": after}}, {"output": True}),
    ]


def image_tag_change(colour: str, weight: int) -> dict[str, Any]:
    """A release bump waiting for a colour: its sample app's image tag, beside the weight it holds."""
    release = {"name": "app-of-apps", "namespace": "argocd", "version": "0.1.0"}
    return update(
        APP_OF_APPS,
        {**release, "values": [facts(colour, weight)]},
        {**release, "values": [facts(colour, weight, image_tag="0.2.0")]},
        {"metadata": True},
    )


@dataclass
class FakeDeployer:
    config_path: Path
    deployed: dict[str, int]  # each colour's weight as last applied
    # Changes beside the weight in every plan of a colour (a release bump, an edit, drift), as resource_changes.
    pending: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    failure: str | None = None  # apply raises ShiftError(failure)
    partial: bool = False  # a failed apply has changed the weight all the same (Terraform stopped part-way)
    on_apply: list[Callable[[str, int], None]] = field(default_factory=list)  # (colour, weight) once applied
    on_synth: list[Callable[[int], None]] = field(default_factory=list)  # the synth's number, from 1
    synths: int = 0
    planned: list[Plan] = field(default_factory=list)
    applied: list[Plan] = field(default_factory=list)
    tried: list[str] = field(default_factory=list)  # colours whose apply was attempted, failed or not
    synthesized: dict[str, int] = field(default_factory=dict)
    weight_of: dict[Plan, int] = field(default_factory=dict)

    def synth(self) -> None:
        self.synths += 1
        for hook in self.on_synth:
            hook(self.synths)
        self.synthesized = load_config(self.config_path).weights

    def plan(self, colour: str) -> Plan:
        weight = self.synthesized[colour]
        resource_changes = weight_changes(colour, self.deployed[colour], weight) + self.pending.get(colour, [])
        plan = Plan(colour, {"format_version": "1.2", "resource_changes": resource_changes})
        self.planned.append(plan)
        self.weight_of[plan] = weight
        return plan

    def apply(self, plan: Plan) -> None:
        assert plan in self.weight_of, "applied a plan this deployer did not make"
        self.tried.append(plan.colour)
        if self.failure is None or self.partial:
            self.deployed[plan.colour] = self.weight_of[plan]
        if self.failure is not None:
            raise ShiftError(self.failure)
        self.applied.append(plan)
        for hook in self.on_apply:
            hook(plan.colour, self.weight_of[plan])

    def applied_colours(self) -> list[str]:
        return [plan.colour for plan in self.applied]
