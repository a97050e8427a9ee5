"""The serving colour is frozen (tests/test_frozen_colour.py): a real Git repository (a copy of the project's tracked
files) in which blue follows a tag, synthesized out of process before and after `main` moves on. Two syntheses, each
a process of its own: a background check (tests/support/background_checks.py), started with the session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from model.paths import PROJECT_DIR, tools_first
from model.platform import VERSIONED
from tests.support.configs import SAMPLE_APP, example_raw
from tests.support.git import git
from tests.support.project_copy import tracked_copy

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


def synthesized_before_and_after(into: Path) -> tuple[Path, Path]:
    """The repository at release a (blue's tag), synthesized; then main moved on, synthesized again."""
    repo = tracked_copy(PROJECT_DIR, into)
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
