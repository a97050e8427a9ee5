"""The teardown hook in the synthesized colour stacks: it goes before everything else on destroy,
carries the right plan, and Terraform really runs it (against the moto server) when destroying."""

from __future__ import annotations

import json
from concurrent.futures import Future
from pathlib import Path

import pytest

from components.destroy_hook import HOOK_COMMAND
from model.loading import load_config
from model.teardown_plan import PLAN_ENV, applications_by_wave, teardown_plan
from model.workloads import PARENT_APPLICATION
from tests.support.hook_run import HookRun
from tests.support.synth import Synthesized

HOOK = "teardown/hook"


def addresses(app: Synthesized, stack: str) -> set[str]:
    return {f"{kind}.{name}" for kind, items in app.json(stack)["resource"].items() for name in items}


def hook_address(app: Synthesized, stack: str) -> str:
    (name,) = app.json(stack)["resource"]["terraform_data"]
    return f"terraform_data.{name}"


@pytest.mark.parametrize("colour", ["blue", "green"])
def test_the_hook_depends_on_every_other_resource_so_destroy_runs_it_first(default_app: Synthesized, colour: str) -> None:
    hook = default_app.resource(colour, "terraform_data", HOOK)
    assert set(hook["depends_on"]) == addresses(default_app, colour) - {hook_address(default_app, colour)}
    # Among them the root release, whose own dependencies keep Argo CD, nodes and credentials up.
    root = next(a for a in hook["depends_on"] if a.startswith("helm_release.") and "app-of-apps" in a)
    root_body = default_app.json(colour)["resource"]["helm_release"][root.split(".", 1)[1]]
    assert {d.split(".")[0] for d in root_body["depends_on"]} >= {
        "helm_release",
        "aws_eks_node_group",
        "aws_eks_addon",
        "aws_eks_pod_identity_association",
    }


def test_the_hook_runs_only_on_destroy_with_the_plan_from_its_own_state(default_app: Synthesized) -> None:
    (provisioner,) = default_app.resource("blue", "terraform_data", HOOK)["provisioner"]
    local_exec = provisioner["local-exec"]
    assert local_exec["when"] == "destroy"
    assert local_exec["command"] == HOOK_COMMAND
    assert local_exec["environment"] == {PLAN_ENV: "${jsonencode(self.input)}"}
    assert "triggers_replace" not in default_app.resource("blue", "terraform_data", HOOK)  # a new weight must not run it


@pytest.mark.parametrize("colour", ["blue", "green"])
def test_the_plan_takes_apps_down_last_up_first(default_app: Synthesized, project_dir: Path, colour: str) -> None:
    config = load_config(project_dir / "cdktf.json")
    carried = default_app.resource(colour, "terraform_data", HOOK)["input"]
    assert carried == json.loads(json.dumps(teardown_plan(config, colour, config.clusters[colour]).to_json()))
    assert carried["workload_applications"] == ["sample-app"]
    assert carried["controller_applications"] == ["external-dns", "aws-load-balancer-controller"]
    assert carried["parent_application"] == PARENT_APPLICATION
    assert carried["weight"] == config.clusters[colour].weight
    waves = dict(applications_by_wave())
    order = carried["workload_applications"] + carried["controller_applications"]
    assert [waves[a] for a in order] == sorted(waves.values(), reverse=True)


def test_with_helm_delivery_the_hook_removes_the_apps_ingresses_itself(everything_on: Synthesized) -> None:
    hook = everything_on.resource("blue", "terraform_data", HOOK)
    assert hook["input"]["workload_applications"] == []
    assert hook["input"]["ingress_namespaces"] == ["sample-app"]
    assert any(a.startswith("helm_release.") and "sample-app" in a for a in hook["depends_on"])


# --- Terraform runs the hook (beside the suite: tests/support/hook_run.py) --------------------------------


@pytest.mark.slow
@pytest.mark.background("hook_run")
def test_terraform_runs_the_hook_on_destroy_and_keeps_everything_while_the_colour_has_weight(
    hook_run: Future[HookRun],
) -> None:
    done = hook_run.result(timeout=600)
    status, output = done.refused
    assert status != 0
    assert "teardown refused: blue still has weight 10 in Route53 for app.hook-test.example.org" in output
    assert done.state_after_refusal == ["terraform_data.hook"]
    status, output = done.destroyed
    assert status == 0, output
    assert "teardown: blue: applications, load balancers and records are gone" in output
    assert done.state_after_destroy == []
