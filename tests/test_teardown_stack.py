"""The teardown hook in the synthesized colour stacks: it goes before everything else on destroy,
carries the right plan, and Terraform really runs it (against the moto server) when destroying."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from components.destroy_hook import HOOK_COMMAND
from model.loading import load_config
from model.teardown_plan import FORCE_ENV, PLAN_ENV, applications_by_wave, teardown_plan
from model.workloads import PARENT_APPLICATION
from scripts.emulator import aws_settings
from tests.support.synth import Synthesized
from tests.support.terraform import run

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


# --- Terraform runs the hook -----------------------------------------------------------------

ZONE = "hook-test.example.org"


@pytest.fixture
def hook_dir(default_app: Synthesized, project_dir: Path, moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The synthesized hook alone, in a Terraform directory inside the project (as cdktf.out/stacks/<colour>
    is), aimed at a zone of its own on the moto server; no cluster exists there."""
    body = json.loads(json.dumps(default_app.resource("blue", "terraform_data", HOOK)))
    body.pop("depends_on")
    body.pop("lifecycle")  # replaced with the cluster, which is not here (tests/test_cluster_replacement.py)
    # blue as last deployed by the shift: weight 0 in its config.
    body["input"].update(zone_name=ZONE, hostname=f"app.{ZONE}", cluster="hook-test-blue", timeout_seconds=60, weight=0)
    directory = project_dir / ".cache" / "tests" / f"hook-{uuid.uuid4().hex[:8]}" / "stacks" / "blue"
    directory.mkdir(parents=True)
    (directory / "main.tf.json").write_text(json.dumps({"resource": {"terraform_data": {"hook": body}}}))
    for name in [name for name in os.environ if name.startswith("AWS_")]:
        monkeypatch.delenv(name)
    for name, value in aws_settings(moto_endpoint, "ap-northeast-1").items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv(FORCE_ENV, raising=False)
    yield directory
    shutil.rmtree(directory.parent.parent)


@pytest.mark.slow
def test_terraform_runs_the_hook_on_destroy_and_keeps_everything_while_the_colour_has_weight(hook_dir: Path) -> None:
    route53 = boto3.client("route53", region_name="ap-northeast-1")
    zone = route53.create_hosted_zone(Name=ZONE, CallerReference=hook_dir.parent.parent.name)["HostedZone"]["Id"]
    record: dict[str, Any] = {
        "Name": f"app.{ZONE}",
        "Type": "A",
        "SetIdentifier": "blue",
        "Weight": 10,
        "TTL": 60,
        "ResourceRecords": [{"Value": "192.0.2.10"}],
    }
    route53.change_resource_record_sets(
        HostedZoneId=zone, ChangeBatch={"Changes": [{"Action": "CREATE", "ResourceRecordSet": record}]}
    )
    try:
        for step in (("init", "-input=false", "-no-color"), ("apply", "-auto-approve", "-input=false", "-no-color")):
            done = run(hook_dir, *step)
            assert done.returncode == 0, done.stdout + done.stderr

        refused = run(hook_dir, "destroy", "-auto-approve", "-input=false", "-no-color")
        assert refused.returncode != 0
        assert (
            "teardown refused: blue still has weight 10 in Route53 for app.hook-test.example.org"
            in refused.stdout + refused.stderr
        )
        assert run(hook_dir, "state", "list").stdout.split() == ["terraform_data.hook"]

        route53.change_resource_record_sets(
            HostedZoneId=zone, ChangeBatch={"Changes": [{"Action": "DELETE", "ResourceRecordSet": record}]}
        )
        destroyed = run(hook_dir, "destroy", "-auto-approve", "-input=false", "-no-color")
        assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
        assert "teardown: blue: applications, load balancers and records are gone" in destroyed.stdout
        assert run(hook_dir, "state", "list").stdout.split() == []
    finally:
        route53.delete_hosted_zone(Id=zone)
