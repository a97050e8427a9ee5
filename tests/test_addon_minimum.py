"""An add-on with a minimum version (model/eks_addons.py: the EBS CSI driver, v1.58.0) never runs older: a pin below it
is refused at synth (tests/test_config.py), and left unpinned, EKS's default for the colour's Kubernetes version is
read at plan and refused when older, naming the key to set.

moto has no EKS add-on API, so the plan-time check is tested in two parts: the synthesized JSON (what is read, and
where the precondition sits), and the precondition's own expressions planned by Terraform, with a variable standing
for the data source's version.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from model.eks_addons import EBS_CSI_DRIVER, MINIMUM_VERSIONS
from tests.support.terraform import run

COLOUR, KUBERNETES = "green", "1.36"
KEY = f"clusters.{COLOUR}.addon_versions.{EBS_CSI_DRIVER}"


def synthesized(versions: dict[str, str], *, judged: bool = True) -> dict[str, Any]:
    """The Addons construct alone in a stack: coredns (no minimum) and the EBS CSI driver."""
    from cdktf import TerraformStack, Testing

    from components.addons import Addons, UnpinnedDefaults

    stack = TerraformStack(Testing.app(), "addons")
    Addons(
        stack,
        "addons",
        cluster_name="eks-bg-green",
        names=("coredns", EBS_CSI_DRIVER),
        versions=versions,
        unpinned=UnpinnedDefaults(colour=COLOUR, kubernetes_version=KUBERNETES) if judged else None,
    )
    document: dict[str, Any] = json.loads(Testing.synth(stack))
    return document


def addon(document: dict[str, Any], name: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [b for b in document["resource"]["aws_eks_addon"].values() if b["addon_name"] == name]
    (body,) = found
    return body


@pytest.fixture(scope="module")
def unpinned() -> dict[str, Any]:
    return synthesized({})


def test_an_unpinned_addon_with_a_minimum_reads_ekss_default_for_the_colours_version(unpinned: dict[str, Any]) -> None:
    """most_recent false: the version EKS installs when none is given (its `defaultVersion`), not the newest."""
    ((default_id, default),) = unpinned["data"]["aws_eks_addon_version"].items()
    assert default == {"addon_name": EBS_CSI_DRIVER, "kubernetes_version": KUBERNETES, "most_recent": False}
    driver = addon(unpinned, EBS_CSI_DRIVER)
    assert "addon_version" not in driver  # still EKS's default: the check judges it, never moves it
    (precondition,) = driver["lifecycle"]["precondition"]
    reference = f"data.aws_eks_addon_version.{default_id}.version"
    assert reference in precondition["condition"]
    assert precondition["error_message"].startswith(
        f"{KEY} is not set, so EKS would install its default for Kubernetes {KUBERNETES}, ${{{reference}}}, older than "
        "v1.58.0: its shared role acts only on volumes tagged with the cluster, which the driver writes from v1.58.0. "
        f"Set {KEY} to a version of v1.58.0 or newer"
    )
    assert "lifecycle" not in addon(unpinned, "coredns")  # no minimum, nothing to judge


def test_a_pinned_addon_is_judged_at_synth_not_at_plan() -> None:
    document = synthesized({EBS_CSI_DRIVER: "v1.60.0-eksbuild.1"})
    assert "data" not in document
    driver = addon(document, EBS_CSI_DRIVER)
    assert (driver["addon_version"], "lifecycle" in driver) == ("v1.60.0-eksbuild.1", False)


def test_without_the_colours_facts_nothing_is_read() -> None:
    document = synthesized({}, judged=False)
    assert ("data" in document, "lifecycle" in addon(document, EBS_CSI_DRIVER)) == (False, False)


# --- the precondition's expressions, planned by Terraform --------------------------------------------------------

# EKS add-on versions, and whether each is at least v1.58.0 (by hand: major, minor, patch compared as numbers).
VERSIONS = {
    "v1.58.0-eksbuild.1": True,
    "v1.58.1-eksbuild.1": True,
    "v1.59.0-eksbuild.2": True,
    "v1.100.0-eksbuild.1": True,  # as text, "1.100" sorts before "1.58"
    "v2.0.0-eksbuild.1": True,
    "v1.57.9-eksbuild.1": False,
    "v1.9.0-eksbuild.1": False,  # as text, "1.9" sorts after "1.58"
    "v0.99.0-eksbuild.1": False,
    "1.60.0": False,  # not how EKS writes a version: refused, not an error of the expression
    "v1.60": False,
}


@pytest.mark.background
def test_terraform_refuses_exactly_the_defaults_older_than_the_minimum(unpinned: dict[str, Any], tmp_path: Path) -> None:
    """The synthesized condition and message, the data source's version replaced by each of VERSIONS, on
    `terraform_data` resources of one root (no provider needed); each refusal names its version."""
    assert MINIMUM_VERSIONS[EBS_CSI_DRIVER] == (1, 58, 0)  # what VERSIONS was worked out for
    (default_id,) = unpinned["data"]["aws_eks_addon_version"]
    (precondition,) = addon(unpinned, EBS_CSI_DRIVER)["lifecycle"]["precondition"]
    standing_in = {k: v.replace(f"data.aws_eks_addon_version.{default_id}.version", "each.key") for k, v in precondition.items()}
    judged = {
        "for_each": f"${{toset({json.dumps(sorted(VERSIONS))})}}",
        "input": "${each.key}",
        "lifecycle": {"precondition": [standing_in]},
    }
    root = {"resource": {"terraform_data": {"judged": judged}}}
    (tmp_path / "main.tf.json").write_text(json.dumps(root))
    assert run(tmp_path, "init", "-input=false", "-no-color").returncode == 0
    done = run(tmp_path, "plan", "-input=false", "-no-color")
    output = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 1, output
    # Each error also prints the source line, the message's template among it (`${each.key}`): versions only.
    said = rf"{re.escape(KEY)} is not set, so EKS would install its default for Kubernetes {re.escape(KUBERNETES)}, "
    refused = re.findall(said + r"(v?[0-9][^\s,]*), older than v1\.58\.0", output)
    assert sorted(refused) == sorted(v for v, enough in VERSIONS.items() if not enough), output
    assert output.count("Error: Resource precondition failed") == len(refused)  # and no error of another kind
