"""Adding an application is an edit of the configuration, never of the code (issue #29, "applications as data"): in a
copy of the project, a fourth application (from a Git repository of its own, without AWS permissions) is added to the
shipped example and to config.json, its revision named where a serving colour must name it; then synth, `make docs`'
commands and the suite's configuration, docs and roles tests run in the copy, and pass, with no Python file edited.

It starts other processes (synth, the docs generators, a pytest of the copy): the out-of-process tier."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from model.bootstrap import facts_in
from model.routes import APPLICATION_TAG, PUBLIC, ROUTE_TAG, TRAFFIC_STACK, output_key, target_group_name
from model.workloads import PARENT_APPLICATION
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
SERVING_REVISION = "v2.2.1"  # what a colour with weight names in its own entry (model/rules.py: its whole release)
# What the copy's suite runs: the configuration's rules and the generated docs, and what reads the example's roles.
SUITE = (
    "tests/test_config.py",
    "tests/test_applications_config.py",
    "tests/test_generated_docs.py",
    "tests/test_policies.py",
    "tests/test_pod_identity_roles.py",
    "tests/test_eks_calendar.py",
)
CONFIGURATIONS = ("examples/blue-green.json", "config.json")


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


def stack(copy: Path, name: str) -> dict[str, Any]:
    return dict(json.loads((copy / "cdktf.out" / "stacks" / name / "cdk.tf.json").read_text()))


@pytest.mark.background
def test_an_application_is_added_by_editing_only_the_configuration(project_dir: Path, tmp_path: Path) -> None:
    copy = runnable_copy(project_dir, tmp_path / "project")
    runs = {name: with_inventory(copy / name) for name in CONFIGURATIONS}
    assert runs["config.json"] == runs["examples/blue-green.json"]  # config.json is the example, as shipped
    revisions = runs["config.json"]
    assert set(revisions.values()) == {SERVING_REVISION, INVENTORY["source"]["revision"]}  # one serves, one does not

    # Synth (cdktf.json names config.json): the shared load balancer routes it in every colour ...
    run(copy, sys.executable, "main.py")
    traffic = stack(copy, TRAFFIC_STACK)
    project = json.loads((copy / "config.json").read_text())["project"]
    groups = {body["name"] for body in traffic["resource"]["aws_lb_target_group"].values()}
    assert {target_group_name(project, NAME, colour) for colour in revisions} <= groups
    rules = [r for r in traffic["resource"]["aws_lb_listener_rule"].values() if r["tags"][APPLICATION_TAG] == NAME]
    public = [r["condition"][0]["host_header"]["values"] for r in rules if r["tags"][ROUTE_TAG] == PUBLIC]
    assert public == [["inventory.eks.example.com"]]
    assert len(rules) == 1 + len(revisions)  # and a preview host per colour
    assert all(NAME in by_app for by_app in traffic["output"]["target_groups"]["value"].values())
    # ... each colour runs it at the revision it names, bound to its own target group ...
    for colour, revision in revisions.items():
        releases = {body["name"]: body for body in stack(copy, colour)["resource"]["helm_release"].values()}
        facts = facts_in(yaml.safe_load(releases[PARENT_APPLICATION]["values"][0]))
        about = facts["applications"][NAME]
        assert about["source"] == {"repoURL": REPO, "path": "deploy/chart", "targetRevision": revision}
        assert about["targetGroupArn"].endswith(f".target_groups.{output_key(colour)}.{output_key(NAME)}}}")
        assert about["service"] == {"name": "inventory-api", "port": 8080}
    # ... and common makes nothing for it: no policy, no image.
    assert [key for key in stack(copy, "common")["output"] if key.startswith(output_key(NAME))] == []

    # `make docs`' commands: README's diagram draws it (from the example).
    run(copy, sys.executable, "-m", "policies.readme")
    run(copy, sys.executable, "-m", "scripts.docs")
    readme = (copy / "README.md").read_text()
    assert f'{TRAFFIC_STACK}_{NAME}["inventory.eks.example.com, and a preview host per colour"]' in readme
    for colour, revision in revisions.items():
        assert f'{colour}_app_{NAME}["wave 1: {NAME} @ {revision}"]' in readme

    # The suite, in the copy: its configurations, the generated docs, the roles.
    summary = run(copy, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SUITE, timeout=900)
    assert " passed" in summary, summary[-2000:]
    assert "failed" not in summary, summary[-2000:]
    assert "error" not in summary, summary[-2000:]

    # Nothing but configuration and what `make docs` writes changed: no Python file.
    status = run(copy, "git", "status", "--porcelain", "--untracked-files=all")
    changed = {line[3:] for line in status.splitlines()}
    assert {*CONFIGURATIONS, "README.md"} <= changed, status
    assert [name for name in changed if not name.endswith((".json", ".md"))] == [], status
