"""Adding an application is an edit of the configuration, never of the code (issue #29, "applications as data"): in a
copy of the project, a fourth application (from a Git repository of its own, without AWS permissions) is added to the
shipped example and to config.json, its revision named where a serving colour must name it; then synth, `make docs`'
commands and the suite's configuration, docs and roles tests run in the copy, and pass, with no Python file edited.

It starts other processes (synth, the docs generators, a pytest of the copy): a background check started with the
session (tests/support/added_application.py), which this module waits on."""

from __future__ import annotations

import json
from concurrent.futures import Future
from typing import Any

import pytest
import yaml

from model.bootstrap import facts_in
from model.platform import PARENT_APPLICATION
from model.routes import APPLICATION_TAG, PUBLIC, ROUTE_TAG, TRAFFIC_STACK, output_key, target_group_name
from tests.support.added_application import CONFIGURATIONS, INVENTORY, NAME, REPO, SERVING_REVISION, AddedApplication

pytestmark = pytest.mark.background("added_application")


@pytest.fixture(scope="module")
def added(added_application: Future[AddedApplication]) -> AddedApplication:
    return added_application.result(timeout=900)


def stack(added: AddedApplication, name: str) -> dict[str, Any]:
    return dict(json.loads((added.copy / "cdktf.out" / "stacks" / name / "cdk.tf.json").read_text()))


def test_an_application_is_added_by_editing_only_the_configuration(added: AddedApplication) -> None:
    runs = added.revisions
    assert runs["config.json"] == runs["examples/blue-green.json"]  # the copy's config.json is the shipped example
    revisions = runs["config.json"]
    assert set(revisions.values()) == {SERVING_REVISION, INVENTORY["source"]["revision"]}  # one serves, one does not

    # Synth (cdktf.json names config.json): the shared load balancer routes it in every colour ...
    traffic = stack(added, TRAFFIC_STACK)
    project = json.loads((added.copy / "config.json").read_text())["project"]
    groups = {body["name"] for body in traffic["resource"]["aws_lb_target_group"].values()}
    assert {target_group_name(project, NAME, colour) for colour in revisions} <= groups
    rules = [r for r in traffic["resource"]["aws_lb_listener_rule"].values() if r["tags"][APPLICATION_TAG] == NAME]
    public = [r["condition"][0]["host_header"]["values"] for r in rules if r["tags"][ROUTE_TAG] == PUBLIC]
    assert public == [["inventory.eks.example.com"]]
    assert len(rules) == 1 + len(revisions)  # and a preview host per colour
    assert all(NAME in by_app for by_app in traffic["output"]["target_groups"]["value"].values())
    # ... each colour runs it at the revision it names, bound to its own target group ...
    for colour, revision in revisions.items():
        releases = {body["name"]: body for body in stack(added, colour)["resource"]["helm_release"].values()}
        facts = facts_in(yaml.safe_load(releases[PARENT_APPLICATION]["values"][0]))
        about = facts["applications"][NAME]
        assert about["source"] == {"repoURL": REPO, "path": "deploy/chart", "targetRevision": revision}
        assert about["targetGroupArn"].endswith(f".target_groups.{output_key(colour)}.{output_key(NAME)}}}")
        assert about["service"] == {"name": "inventory-api", "port": 8080}
    # ... and common makes nothing for it: no policy, no image.
    assert [key for key in stack(added, "common")["output"] if key.startswith(output_key(NAME))] == []

    # `make docs`' commands: README's diagram draws it (from the example).
    assert f'{TRAFFIC_STACK}_{NAME}["inventory.eks.example.com, and a preview host per colour"]' in added.readme
    for colour, revision in revisions.items():
        assert f'{colour}_app_{NAME}["wave 1: {NAME} @ {revision}"]' in added.readme

    # The suite, in the copy: its configurations, the generated docs, the roles.
    assert " passed" in added.suite, added.suite[-2000:]
    assert "failed" not in added.suite, added.suite[-2000:]
    assert "error" not in added.suite, added.suite[-2000:]

    # Nothing but configuration and what `make docs` writes changed: no Python file.
    changed = {line[3:] for line in added.status.splitlines()}
    assert {*CONFIGURATIONS, "README.md"} <= changed, added.status
    assert [name for name in changed if not name.endswith((".json", ".md"))] == [], added.status
