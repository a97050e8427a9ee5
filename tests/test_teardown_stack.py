"""The teardown hook in the synthesized colour stacks: it goes before everything else on destroy,
carries the right plan, and Terraform really runs it (against the moto server) when destroying."""

from __future__ import annotations

import os
import subprocess
from concurrent.futures import Future
from pathlib import Path

import pytest

from components.destroy_hook import FAILURE_GRACE_SECONDS, HOOK_COMMAND, with_failure_grace
from model.teardown_plan import PLAN_ENV
from tests.support.configs import EXAMPLE_COLOURS
from tests.support.hook_run import HookRun
from tests.support.synth import Synthesized

HOOK = "teardown/hook"


def addresses(app: Synthesized, stack: str) -> set[str]:
    return {f"{kind}.{name}" for kind, items in app.json(stack)["resource"].items() for name in items}


def hook_address(app: Synthesized, stack: str) -> str:
    hooks = app.json(stack)["resource"]["terraform_data"].items()
    (name,) = [n for n, body in hooks if body["//"]["metadata"]["path"] == f"{stack}/{HOOK}"]
    return f"terraform_data.{name}"


@pytest.mark.parametrize("colour", EXAMPLE_COLOURS)
def test_the_hook_depends_on_every_other_resource_so_destroy_runs_it_first(example_app: Synthesized, colour: str) -> None:
    hook = example_app.resource(colour, "terraform_data", HOOK)
    assert set(hook["depends_on"]) == addresses(example_app, colour) - {hook_address(example_app, colour)}
    # Among them the root release, whose own dependencies keep Argo CD, nodes and credentials up.
    root = next(a for a in hook["depends_on"] if a.startswith("helm_release.") and "app-of-apps" in a)
    root_body = example_app.json(colour)["resource"]["helm_release"][root.split(".", 1)[1]]
    assert {d.split(".")[0] for d in root_body["depends_on"]} >= {
        "helm_release",
        "aws_eks_node_group",
        "aws_eks_addon",
        "aws_eks_pod_identity_association",
    }


def test_the_hook_runs_only_on_destroy_with_the_plan_from_its_own_state(example_app: Synthesized) -> None:
    (provisioner,) = example_app.resource("blue", "terraform_data", HOOK)["provisioner"]
    local_exec = provisioner["local-exec"]
    assert local_exec["when"] == "destroy"  # what the command does, Terraform runs below (test_terraform_runs_the_hook...)
    assert local_exec["environment"] == {PLAN_ENV: "${jsonencode(self.input)}"}
    assert "triggers_replace" not in example_app.resource("blue", "terraform_data", HOOK)  # a new weight must not run it


@pytest.mark.parametrize("colour", EXAMPLE_COLOURS)
def test_the_plan_names_no_application_the_cluster_decides(example_app: Synthesized, colour: str) -> None:
    """Which children a colour runs, and their waves, depend on the Git revision it follows: the hook reads them
    from the cluster (tests/test_teardown.py), so the plan carries none from this checkout; nor the config's weight:
    whether the colour serves is read live when the hook runs."""
    assert example_app.resource(colour, "terraform_data", HOOK)["input"] == {
        "colour": colour,
        "cluster": f"eks-bg-{colour}",
        "region": "ap-northeast-1",
        "zone_name": "eks.example.com",
        "argocd_namespace": "argocd",
        "parent_application": "app-of-apps",
        "timeout_seconds": 1200,
        "project": "eks-bg",
    }


# --- Terraform runs the hook (beside the suite: tests/support/hook_run.py) --------------------------------


@pytest.mark.background("hook_run")
def test_terraform_runs_the_hook_on_destroy_and_keeps_everything_while_the_colour_has_weight(
    hook_run: Future[HookRun],
) -> None:
    done = hook_run.result(timeout=600)
    status, output = done.refused
    assert status != 0
    assert f"teardown refused: {done.colour} still has weight 10 in the shared load balancer: shift its traffic" in output
    assert done.state_after_refusal == ["terraform_data.hook"]
    status, output = done.destroyed
    assert status == 0, output
    assert f"teardown: {done.colour}: applications, targets, load balancers and records are gone" in output
    assert done.state_after_destroy == []


@pytest.mark.parametrize(("command", "status"), [("echo refused >&2; exit 3", 3), ("echo fine", 0)])
def test_a_failing_hook_waits_before_it_exits_so_the_cli_shows_what_it_said(
    example_app: Synthesized, tmp_path: Path, command: str, status: int
) -> None:
    """The provisioner runs the hook through with_failure_grace: a failure keeps its status and output and waits
    FAILURE_GRACE_SECONDS first (a stand-in `sleep` on PATH records the wait); success does not wait."""
    (provisioner,) = example_app.resource("blue", "terraform_data", HOOK)["provisioner"]
    assert provisioner["local-exec"]["command"] == with_failure_grace(HOOK_COMMAND)
    waits = tmp_path / "waits"
    stand_in = tmp_path / "bin" / "sleep"
    stand_in.parent.mkdir()
    stand_in.write_text(f'#!/bin/sh\necho "$1" >> {waits}\n')
    stand_in.chmod(0o755)
    env = {**os.environ, "PATH": f"{stand_in.parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["/bin/sh", "-c", with_failure_grace(command)], env=env, capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout + done.stderr) == (status, "refused\n" if status else "fine\n")
    assert (waits.read_text() if waits.exists() else "") == (f"{FAILURE_GRACE_SECONDS}\n" if status else "")
