"""The user's own commands: `cdktf synth` through the pinned CLI, then `terraform validate`
against the real hashicorp/aws 5.100.0 schema (from the filesystem mirror when there is one)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.synth import Synthesized
from tests.terraform import aws_part, init_and_validate, provider_versions

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cli_synth(project_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("cli") / "cdktf.out"
    done = subprocess.run(
        ["cdktf", "synth", "--output", str(out)],
        cwd=project_dir,
        capture_output=True,
        text=True,
        env={**os.environ, "CI": "true"},
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out, done.stdout + done.stderr


def test_cdktf_synth_writes_common_and_every_colour(cli_synth: tuple[Path, str]) -> None:
    out, _ = cli_synth
    assert sorted(p.name for p in (out / "stacks").iterdir()) == ["blue", "common", "green"]


def test_cli_runs_on_a_supported_node_without_end_of_life_banner(cli_synth: tuple[Path, str]) -> None:
    _, printed = cli_synth
    assert "end-of-life" not in printed
    assert "Generated Terraform code" in printed
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True).stdout
    assert node.startswith(("v22.", "v24.")), node


def test_cli_output_matches_the_in_process_synth(cli_synth: tuple[Path, str], default_app: Synthesized) -> None:
    out, _ = cli_synth
    for stack in ("common", "blue", "green"):
        assert json.loads((out / "stacks" / stack / "cdk.tf.json").read_text()) == default_app.json(stack), stack


def test_common_is_valid_terraform_for_aws_5_100(cli_synth: tuple[Path, str]) -> None:
    stack_dir = cli_synth[0] / "stacks" / "common"
    result = init_and_validate(stack_dir)
    assert result["valid"] is True, result["diagnostics"]
    assert result["warning_count"] == 0, result["diagnostics"]
    (source, version), *others = provider_versions(stack_dir).items()
    assert (source.endswith("/hashicorp/aws"), version, others) == (True, "5.100.0", [])


@pytest.mark.parametrize("colour", ["blue", "green"])
def test_cluster_aws_part_is_valid_terraform_for_aws_5_100(cli_synth: tuple[Path, str], tmp_path: Path, colour: str) -> None:
    document = json.loads((cli_synth[0] / "stacks" / colour / "cdk.tf.json").read_text())
    aws_only, removed = aws_part(document)
    # Only the in-cluster part goes: Argo CD, the App of Apps and the argocd namespace.
    assert sorted(r.split(".")[0] for r in removed) == ["helm_release", "helm_release", "kubernetes_namespace_v1"]
    # Validation needs no state: keep the copy away from the real backend.
    del aws_only["terraform"]["backend"]
    (tmp_path / "cdk.tf.json").write_text(json.dumps(aws_only))
    result = init_and_validate(tmp_path)
    assert result["valid"] is True, result["diagnostics"]
    assert result["warning_count"] == 0, result["diagnostics"]


def test_common_with_image_build_is_valid_terraform(tmp_path_factory: pytest.TempPathFactory) -> None:
    from stacks.config import config_from_dict
    from tests.samples import WITH_IMAGE_BUILD
    from tests.synth import synthesize

    app = synthesize(config_from_dict(WITH_IMAGE_BUILD), tmp_path_factory.mktemp("build"))
    assert "aws_codebuild_project" in app.json("common")["resource"]
    result = init_and_validate(app.stack_dir("common"))
    assert result["valid"] is True, result["diagnostics"]
    assert result["warning_count"] == 0, result["diagnostics"]
