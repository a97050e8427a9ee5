"""A team adds an application to a copy of the project by editing its configuration only, then runs what it runs after
such an edit: synth, `make docs`' commands and the suite's configuration, docs and roles tests (tests/
test_adding_an_application.py asserts on what this leaves). Every step is another program: a background check
(tests/support/background_checks.py), started with the session and run on a thread beside the rest."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.project_copy import runnable_copy

NAME = "inventory"
REPO = "https://github.com/acme/inventory.git"
# What a team writes for it: no policy (no role), no image of the project's; its Service on a port of its own.
INVENTORY: dict[str, Any] = {
    "host": "inventory",
    "source": {"repo_url": REPO, "path": "deploy/chart", "revision": "v2.3.0"},
    "service": {"name": "inventory-api", "port": 8080},
    "health_check_path": "/health",
    "probe": {"path": "/health"},
}
SERVING_REVISION = "v2.2.1"  # what a colour with weight names in its own entry (model/config/: its whole release)
# What the copy's suite runs: the configuration's rules and the generated docs, and what reads the example's roles.
SUITE = (
    "tests/test_config.py",
    "tests/test_applications_config.py",
    "tests/test_generated_docs.py",
    "tests/test_policies.py",
    "tests/test_pod_identity_roles.py",
    "tests/test_eks_calendar.py",
)
EXAMPLE = "examples/blue-green.json"
CONFIGURATIONS = (EXAMPLE, "config.json")


@dataclass(frozen=True)
class AddedApplication:
    copy: Path  # the project's copy, synthesized (cdktf.out) after the edit
    revisions: dict[str, dict[str, str]]  # by configuration file: each colour's revision of the application
    readme: str  # README.md after `make docs`' commands
    suite: str  # the output of the copy's own pytest
    status: str  # `git status --porcelain --untracked-files=all` of the copy at the end


def with_inventory(path: Path) -> dict[str, str]:
    """Add the application to a configuration file as a team would (its other keys untouched); each colour's revision."""
    raw = json.loads(path.read_text())
    raw["applications"][NAME] = INVENTORY
    runs = {}
    for colour, cluster in raw["clusters"].items():
        runs[colour] = INVENTORY["source"]["revision"]
        if cluster.get("weight", 0) > 0:
            cluster.setdefault("applications", {})[NAME] = {"revision": SERVING_REVISION}
            runs[colour] = SERVING_REVISION
    path.write_text(json.dumps(raw, indent=2) + "\n")
    return runs


def run(copy: Path, *command: str, timeout: int = 600) -> str:
    done = subprocess.run(command, cwd=copy, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, f"{' '.join(command)} in the copy:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done.stdout


def side_by_side(copy: Path, *commands: tuple[str, ...], timeout: int = 600) -> None:
    """Commands that write files of their own, started together; each must succeed."""
    started = [
        (command, subprocess.Popen(command, cwd=copy, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        for command in commands
    ]
    for command, process in started:
        stdout, stderr = process.communicate(timeout=timeout)
        assert process.returncode == 0, f"{' '.join(command)} in the copy:\n{stdout[-4000:]}\n{stderr[-4000:]}"


def shipped(copy: Path) -> None:
    """The copy starts from the shipped example, whatever the checkout's own config.json and cdktf.json say (a team
    edits those: the suite owns its inputs): config.json is the example, and cdktf.json names it."""
    (copy / "config.json").write_text((copy / EXAMPLE).read_text())
    cdktf = json.loads((copy / "cdktf.json").read_text())
    (copy / "cdktf.json").write_text(json.dumps({**cdktf, "context": {"config": "config.json"}}, indent=2) + "\n")


def add_an_application(project_dir: Path, into: Path) -> AddedApplication:
    """The edit in a runnable copy, then synth (cdktf.json names config.json) and `make docs`' two commands, each
    writing its own files (cdktf.out; policies/README.md; the schema, the docs and README's diagram), then the suite."""
    copy = runnable_copy(project_dir, into)
    shipped(copy)
    revisions = {name: with_inventory(copy / name) for name in CONFIGURATIONS}
    side_by_side(
        copy,
        (sys.executable, "main.py"),
        (sys.executable, "-m", "scripts.policies_readme"),
        (sys.executable, "-m", "scripts.docs"),
    )
    suite = run(copy, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SUITE, timeout=900)
    return AddedApplication(
        copy=copy,
        revisions=revisions,
        readme=(copy / "README.md").read_text(),
        suite=suite,
        status=run(copy, "git", "status", "--porcelain", "--untracked-files=all"),
    )
