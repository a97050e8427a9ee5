"""Upgrading to applications as data replaces nothing the sample app runs on: this release's common, planned against
common's state as the release before deployed it (written by that release's own code: tests/fixtures/previous-release),
keeps its role, policy and attachment, the table and the image repository (with its images): moved or updated in
place, never deleted and created again (issue #29); the role takes the permissions boundary in place (issue #31), and
loses the trust's aws:SourceAccount in place (issue #45)."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import pytest

from policies import boundary
from tests.support.release_upgrade import ROLE
from tests.support.synth import Synthesized

pytestmark = pytest.mark.background("release_upgrade")
KEPT = {
    # construct path now -> the address the release before gave it (read from the fixture, which that code wrote)
    "sample-app-role/role": "aws_iam_role.sample-app-role_C58410AD",
    "sample-app-role/policy": "aws_iam_policy.sample-app-role_policy_2470A3A9",
    "sample-app-role/attachment": "aws_iam_role_policy_attachment.sample-app-role_attachment_C302BE39",
    "table/table": "aws_dynamodb_table.table_43360BC0",
    "sample-app-image/repo": "aws_ecr_repository.image_repo_5A10A6C5",
    "sample-app-image/lifecycle": "aws_ecr_lifecycle_policy.image_lifecycle_FE8AA4C1",
}


def address(app: Synthesized, path: str) -> str:
    for kind, bodies in app.json("common")["resource"].items():
        for name, body in bodies.items():
            if body["//"]["metadata"]["path"] == f"common/{path}":
                return f"{kind}.{name}"
    raise KeyError(path)


def test_the_sample_apps_role_table_and_repository_are_kept_not_replaced(
    release_upgrade: Future[dict[str, Any]], example_app: Synthesized
) -> None:
    plan = release_upgrade.result(timeout=900)
    changes = {change["address"]: change for change in plan["resource_changes"]}
    for path, before in KEPT.items():
        change = changes[address(example_app, path)]
        assert change["change"]["actions"] in (["no-op"], ["update"]), (path, change["change"]["actions"])
        assert change.get("previous_address", change["address"]) == before
    # The role the release before made without a boundary gets it in place (PutRolePermissionsBoundary), not replaced.
    role = changes[address(example_app, "sample-app-role/role")]["change"]
    assert role["actions"] == ["update"]
    assert role["before"].get("permissions_boundary") in (None, "")
    project = example_app.json("common")["provider"]["aws"][0]["default_tags"][0]["tags"]["Project"]
    assert role["after"]["permissions_boundary"].endswith(f":policy/{boundary.policy_name(project)}")
    # Its trust as #31 to #44 deployed it pins aws:SourceAccount, which EKS Auth is not documented to send: this release
    # drops it from the same role (UpdateAssumeRolePolicy), which keeps its name, ARN and associations.
    assert role["before"]["name"] == role["after"]["name"] == ROLE
    assert "aws:SourceAccount" in role["before"]["assume_role_policy"]
    assert "aws:SourceAccount" not in role["after"]["assume_role_policy"]
    assert "replace_paths" not in changes[address(example_app, "sample-app-role/role")]
    # Nothing of it is deleted under another address either.
    assert not [c["address"] for c in changes.values() if "delete" in c["change"]["actions"]]
