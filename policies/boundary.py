"""The permissions boundary of the project: what any role it creates may ever do, whatever policy that role holds.

policies/boundary.json, filled for the project and created once by an administrator (`python -m policies.deployer`
writes it and prints its command), never by the deployer: every role the stacks create carries it
(`permissions_boundary`), the deployer may create a role, put a boundary on it, or attach or put a policy on it only
with this boundary, and may never edit or delete the boundary policy (policies/deployer.json). policies/README.md says
why it allows broadly and denies the escalation paths.

Its name starts with `boundary-`, not `<project>-`: the deployer manages `<project>-*` policies (and an application
named `boundary` would own the policy `<project>-boundary`), so the boundary lies outside them, and a Deny names it
besides, as the deployer's own policies.
"""

from __future__ import annotations

import json
from typing import Any

import policies

TEMPLATE = "boundary"
NAME_PREFIX = "boundary-"


def policy_name(project: str) -> str:
    return f"{NAME_PREFIX}{project}"


def policy_arn(*, partition: str, account_id: str, project: str) -> str:
    """The boundary's ARN; at synth, partition and account_id are the stacks' references to their data sources."""
    return f"arn:{partition}:iam::{account_id}:policy/{policy_name(project)}"


def document(*, partition: str, account_id: str, project: str) -> dict[str, Any]:
    """policies/boundary.json filled for the project."""
    filled: dict[str, Any] = json.loads(policies.render(TEMPLATE, PARTITION=partition, ACCOUNT_ID=account_id, PROJECT=project))
    return filled
