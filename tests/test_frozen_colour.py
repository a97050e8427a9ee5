"""A colour runs only what its own entry and its own Git revision name: blue, pinned to a tag and serving,
synthesizes byte for byte the same when `main` moves on under argocd/ (Argo CD's values, the App of Apps'
template, the sample app's chart, a new application's chart) and the project's defaults move with it (a platform
chart's default version, the sample app's default image tag).

A real Git repository (a copy of the project's tracked files), synthesized out of process before and after
the move; green, following `main` and inheriting the defaults, must change, so the comparison can fail. (Terraform
reads no chart of the checkout but bootstrap/manifests, which reaches every colour by design and is not moved here:
a change there makes blue differ too. What argocd/ holds reaches a colour from Git, at its revision, through Argo CD.)
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

from model.bootstrap import facts_in
from model.paths import PROJECT_DIR, tools_first
from model.platform import VERSIONED
from tests.support.configs import SAMPLE_APP, example_raw
from tests.support.project_copy import tracked_copy

pytestmark = [pytest.mark.background]  # two syntheses, each a process of its own

TAG = "platform-a"
CONFIG = "project.json"
SYNTH = """
import json, sys
from pathlib import Path
from tests.support.configs import validated
from stacks.app import synthesize_into
synthesize_into(validated(json.loads(Path(sys.argv[1]).read_text())), Path("out"))
"""


def config() -> dict[str, Any]:
    raw = example_raw()
    raw.pop("$schema", None)
    raw["clusters"]["blue"]["gitops_revision"] = TAG
    # green follows main and inherits the project's defaults (its charts, the sample app's image): it may, at weight 0.
    raw["clusters"]["green"] = {"kubernetes_version": raw["clusters"]["green"]["kubernetes_version"], "weight": 0}
    return raw


def git(repo: Path, *args: str) -> None:
    identity = ["-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", *identity, *args], cwd=repo, check=True, capture_output=True)


def synth(repo: Path, into: str) -> Path:
    env = {**os.environ, "PATH": tools_first(os.environ["PATH"])}
    done = subprocess.run([sys.executable, "-c", SYNTH, CONFIG], cwd=repo, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    (repo / "out").rename(repo / into)
    return repo / into


def move_main(repo: Path) -> None:
    """Next release's work lands on main: a file under argocd/ of each kind a colour's Git revision holds, and defaults."""
    argo_values = repo / "argocd/apps/platform/argo-cd/values.yaml"
    argo_values.write_text(argo_values.read_text() + "\napplicationSet:\n  replicas: 2\n")
    template = repo / "argocd/apps/templates/applications.yaml"
    template.write_text(template.read_text().replace("  annotations:\n", "  labels:\n    release: next\n  annotations:\n", 1))
    deployment = repo / "argocd/applications/sample-app/chart/templates/deployment.yaml"
    deployment.write_text(deployment.read_text() + "\n# next release\n")
    # A new application's chart, which no configuration names yet.
    extra = repo / "argocd/applications/extra/chart"
    (extra / "templates").mkdir(parents=True)
    (extra / "Chart.yaml").write_text("apiVersion: v2\nname: extra\nversion: 0.1.0\n")
    (extra / "templates/config.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n")
    # The defaults move: another chart by default (one green's version can run), another image tag of the sample app.
    green = config()["clusters"]["green"]["kubernetes_version"]
    component = next(c for c in VERSIONED if len(c.working_versions(green)) > 1)
    registry = repo / f"argocd/apps/platform/{component.name}/component.yaml"
    entry = yaml.safe_load(registry.read_text())
    entry["chart"]["default"] = next(v for v in component.working_versions(green) if v != entry["chart"]["default"])
    registry.write_text(yaml.safe_dump(entry, sort_keys=False))
    path = repo / CONFIG
    moved = json.loads(path.read_text())
    moved["applications"][SAMPLE_APP]["image"]["tag"] = "next1234"
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
    (repo / CONFIG).write_text(json.dumps(config()))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "platform release a")
    git(repo, "tag", TAG)
    before = synth(repo, "before")
    move_main(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "next platform release")
    return before, synth(repo, "after")


def test_a_colour_following_a_tag_is_byte_identical_when_main_moves(synthesized: tuple[Path, Path]) -> None:
    before, after = synthesized
    assert same_tree(before / "stacks" / "blue", after / "stacks" / "blue")


def test_a_colour_following_main_sees_the_move(synthesized: tuple[Path, Path]) -> None:
    before, after = synthesized
    assert not same_tree(before / "stacks" / "green", after / "stacks" / "green")


def test_what_green_sees_is_its_defaults_not_the_charts(synthesized: tuple[Path, Path]) -> None:
    """Terraform reads no chart of the checkout but bootstrap/manifests: green changes by the facts it is handed (the
    new default chart version and image tag), while argocd/ reaches it from Git."""
    before, after = synthesized

    def facts(out: Path) -> dict[str, Any]:
        stack = json.loads((out / "stacks" / "green" / "cdk.tf.json").read_text())
        (root,) = [r for r in stack["resource"]["helm_release"].values() if r["name"] == "app-of-apps"]
        found: dict[str, Any] = facts_in(json.loads(root["values"][0]))
        return found

    old, new = facts(before), facts(after)
    assert old["applications"][SAMPLE_APP]["values"]["blueGreen"]["image"]["tag"] == "0.1.0"
    assert new["applications"][SAMPLE_APP]["values"]["blueGreen"]["image"]["tag"] == "next1234"
    assert [name for name in old["platform"] if old["platform"][name] != new["platform"][name]] != []
