"""The commands README gives, through the pinned cdktf CLI, as a user runs them: `cdktf synth` in a scratch copy of
the project (a background check: tests/support/background_checks.py)."""

from __future__ import annotations

import json
from concurrent.futures import Future

import pytest

from model.loading import load_config
from model.paths import PROJECT_DIR
from scripts.scratch_project import Project
from tests.support.synth import synthesize

pytestmark = pytest.mark.background("cli_synth")


@pytest.fixture(scope="module")
def project(cli_synth: Future[Project]) -> Project:
    return cli_synth.result(timeout=600)


def test_cli_synth_writes_every_stack_and_prints_each_warning_once_and_no_error(project: Project) -> None:
    synth, node = project.runs
    assert synth.returncode == 0, synth.output[-3000:]
    assert "Generated Terraform code for the stacks: blue, common, green" in synth.output
    # Warnings (the placeholder Git URL, the default image tag) print once each, as warnings, not as "[ERROR]".
    assert "[ERROR]" not in synth.output, synth.output
    assert synth.output.count("warning: gitops.repo_url is the placeholder") == 1, synth.output
    # The pinned Node runs the CLI and the jsii runtime: no end-of-life banner.
    assert "end-of-life" not in synth.output
    assert node.output.startswith(("v22.", "v24.")), node.output


def test_cli_synth_equals_the_in_process_synth(project: Project) -> None:
    """What `cdktf synth` wrote through cdktf.json's app command is what the tests examine (synthesized beside it,
    at the same depth: state paths are relative to each stack's directory), and what the rehearsal deploys."""
    in_process = synthesize(load_config(project.root / "cdktf.json"), project.root / "in-process")
    for stack in ("common", "blue", "green"):
        assert json.loads((project.stack_dir(stack) / "cdk.tf.json").read_text()) == in_process.json(stack), stack


def test_cli_output_holds_no_absolute_path_of_the_project(project: Project) -> None:
    """cdktf.out made here applies from another checkout: no chart or state path of this one in it."""
    out = project.root / "cdktf.out"
    texts = {p: p.read_text(errors="ignore") for p in out.rglob("*") if p.is_file() and "assets" not in p.parts}
    assert len(texts) >= 4
    for place in (str(project.root), str(PROJECT_DIR)):
        assert [str(p.relative_to(out)) for p, text in texts.items() if place in text] == [], place
