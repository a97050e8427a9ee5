"""A colour runs only what its own entry and its own Git revision name: blue, pinned to a tag and serving,
synthesizes byte for byte the same when `main` moves on under argocd/ (Argo CD's values, the App of Apps'
template, a new child, the sample app's chart) and the project's defaults move with it.

A real Git repository (a copy of the project's tracked files), synthesized out of process before and after
the move; green, following `main`, must change, so the comparison can fail.
"""

from __future__ import annotations

import filecmp
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from model.paths import PROJECT_DIR, tools_first
from model.platform import VERSIONED
from tests.support.configs import example_raw
from tests.test_operator_edits import tracked_copy

pytestmark = [pytest.mark.rehearsal]

TAG = "platform-a"
SYNTH = """
import json, sys
from pathlib import Path
from model.loading import config_from_dict
from stacks.app import synthesize_into
for name in sys.argv[1:]:
    synthesize_into(config_from_dict(json.loads(Path(name + ".json").read_text())), Path("out") / name)
"""


def config(delivery: str) -> dict[str, Any]:
    raw = example_raw()
    raw.pop("$schema", None)
    raw["app"] = {**raw.get("app", {}), "delivery": delivery}
    raw["clusters"]["blue"]["gitops_revision"] = TAG
    # green follows main and inherits the project's defaults: it may, at weight 0.
    raw["clusters"]["green"] = {"kubernetes_version": raw["clusters"]["green"]["kubernetes_version"], "weight": 0}
    return raw


def git(repo: Path, *args: str) -> None:
    identity = ["-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", *identity, *args], cwd=repo, check=True, capture_output=True)


def synth(repo: Path, into: str) -> Path:
    env = {**os.environ, "PATH": tools_first(os.environ["PATH"])}
    done = subprocess.run(
        [sys.executable, "-c", SYNTH, "argocd", "helm"], cwd=repo, capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (repo / "out").rename(repo / into)
    return repo / into


def move_main(repo: Path) -> None:
    """Next release's work lands on main: a file under argocd/ of each kind Terraform once read, and defaults."""
    argo_values = repo / "argocd/apps/platform/argo-cd/values.yaml"
    argo_values.write_text(argo_values.read_text() + "\napplicationSet:\n  replicas: 2\n")
    template = repo / "argocd/apps/templates/applications.yaml"
    template.write_text(template.read_text().replace("  annotations:\n", "  labels:\n    release: next\n  annotations:\n", 1))
    child = repo / "argocd/apps/platform/extra"
    child.mkdir()
    (child / "component.yaml").write_text(
        yaml.safe_dump({"name": "extra", "title": "Extra", "namespace": "extra", "wave": 2, "path": "argocd/extra"})
    )
    (child / "values.yaml").write_text("{}\n")
    (repo / "argocd/extra/templates").mkdir(parents=True)
    (repo / "argocd/extra/Chart.yaml").write_text("apiVersion: v2\nname: extra\nversion: 0.1.0\n")
    (repo / "argocd/extra/templates/config.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n")
    deployment = next((repo / "argocd/sample-app/templates").glob("deployment*.yaml"))
    deployment.write_text(deployment.read_text() + "\n# next release\n")
    # The defaults move: another chart by default (one green's version can run), another image tag.
    green = config("argocd")["clusters"]["green"]["kubernetes_version"]
    component = next(c for c in VERSIONED if len(c.working_versions(green)) > 1)
    registry = repo / f"argocd/apps/platform/{component.name}/component.yaml"
    entry = yaml.safe_load(registry.read_text())
    entry["chart"]["default"] = next(v for v in component.working_versions(green) if v != entry["chart"]["default"])
    registry.write_text(yaml.safe_dump(entry, sort_keys=False))
    for name in ("argocd", "helm"):
        path = repo / f"{name}.json"
        moved = json.loads(path.read_text())
        moved["app"]["image_tag"] = "next1234"
        path.write_text(json.dumps(moved))


def same_tree(left: Path, right: Path) -> bool:
    comparison = filecmp.dircmp(left, right)
    if comparison.left_only or comparison.right_only:
        return False
    _, mismatch, errors = filecmp.cmpfiles(left, right, comparison.common_files, shallow=False)
    return not mismatch and not errors and all(same_tree(left / d, right / d) for d in comparison.common_dirs)


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    repo = tracked_copy(PROJECT_DIR, tmp_path_factory.mktemp("frozen") / "repo")
    for name in ("argocd", "helm"):
        (repo / f"{name}.json").write_text(json.dumps(config(name)))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "platform release a")
    git(repo, "tag", TAG)
    before = synth(repo, "before")
    move_main(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "next platform release")
    return before, synth(repo, "after")


@pytest.mark.parametrize("delivery", ["argocd", "helm"])
def test_a_colour_following_a_tag_is_byte_identical_when_main_moves(synthesized: tuple[Path, Path], delivery: str) -> None:
    before, after = synthesized
    assert same_tree(before / delivery / "stacks" / "blue", after / delivery / "stacks" / "blue")


@pytest.mark.parametrize("delivery", ["argocd", "helm"])
def test_a_colour_following_main_sees_the_move(synthesized: tuple[Path, Path], delivery: str) -> None:
    before, after = synthesized
    assert not same_tree(before / delivery / "stacks" / "green", after / delivery / "stacks" / "green")
