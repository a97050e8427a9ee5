"""Create-time step before a colour's control-plane log group: deletes `/aws/eks/<cluster>/cluster` when a previous
incarnation of the colour left it behind, so that the colour can be destroyed and rebuilt under the same name.

Why: `cdktf destroy <colour>` deletes the cluster, then its log group; but EKS still delivers the cluster's last
logs after that, and CloudWatch Logs creates the group again (no retention, no key). The next create of the
colour then fails on the log group with ResourceAlreadyExistsException (terraform-aws-modules/terraform-aws-eks
issues 920 and 2486), before any cluster exists.

Terraform runs it from the `terraform_data` the log group depends on (components/control_plane.py), once per
incarnation of the colour: when the colour is first created, and again after each destroy. It deletes the group
only when no cluster of that name exists: then the group can only be an orphan of a destroyed cluster (a
colour's group is created before its cluster and destroyed after it). Beside a cluster of that name (running,
creating or deleting) it deletes nothing: that cluster writes to it.

Exit 0: nothing left behind, or the orphan deleted, or the group left to its cluster (each says so on stdout);
2: it could not tell (no usable input, no credentials, an API error), with one line on stderr and nothing
deleted. Terraform then stops before the log group, and `cdktf deploy <colour>` runs it again.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, fields
from typing import Any, TextIO

# The step's provisioner hands its own input (jsonencode(self.input)) to this tool in this variable.
LOG_GROUP_ENV = "ORPHANED_LOG_GROUP"
PREFIX = "log_group"


class StepInputError(Exception):
    """The step's input lacks what the check needs."""


@dataclass(frozen=True)
class StepInput:
    log_group: str  # /aws/eks/<cluster>/cluster
    cluster: str
    region: str

    @classmethod
    def from_json(cls, text: str) -> StepInput:
        try:
            raw = json.loads(text)
        except ValueError as err:
            raise StepInputError(f"{LOG_GROUP_ENV} is not JSON ({err})") from None
        missing = [f.name for f in fields(cls) if not isinstance(raw, dict) or not raw.get(f.name)]
        if missing:
            raise StepInputError(f"{LOG_GROUP_ENV} has no {', '.join(missing)}")
        return cls(**{f.name: str(raw[f.name]) for f in fields(cls)})


def log_group_exists(logs: Any, name: str) -> bool:
    """Exactly that name: the prefix also matches `<name>-something`."""
    pages = logs.get_paginator("describe_log_groups").paginate(logGroupNamePrefix=name)
    return any(group["logGroupName"] == name for page in pages for group in page["logGroups"])


def cluster_status(eks: Any, name: str) -> str | None:
    """The cluster's status (ACTIVE, CREATING, DELETING, ...), None when no cluster has that name."""
    try:
        return str(eks.describe_cluster(name=name)["cluster"].get("status", "UNKNOWN"))
    except eks.exceptions.ResourceNotFoundException:
        return None


def remove_orphan(logs: Any, eks: Any, step: StepInput) -> str:
    """Delete the log group if it is an orphan; what was found and done, as one line."""
    if not log_group_exists(logs, step.log_group):
        return f"no log group {step.log_group} left behind; nothing to do"
    status = cluster_status(eks, step.cluster)
    if status is not None:
        return f"{step.log_group} belongs to the cluster {step.cluster} ({status}), which writes to it; left alone"
    try:
        logs.delete_log_group(logGroupName=step.log_group)
    except logs.exceptions.ResourceNotFoundException:
        return f"no log group {step.log_group} left behind; nothing to do"  # gone since the listing
    return (
        f"deleted {step.log_group}: an orphan of a previous {step.cluster} (no cluster of that name exists), "
        "re-created by EKS's last logs after the colour was destroyed"
    )


def main(logs: Any = None, eks: Any = None, err: TextIO | None = None) -> int:
    """logs, eks: clients (tests hand them in); default: boto3's, in the step's region."""
    err = err or sys.stderr
    try:
        step = StepInput.from_json(os.environ.get(LOG_GROUP_ENV, ""))
    except StepInputError as error:
        print(f"{PREFIX}: cannot check for a leftover control-plane log group: {error}; nothing was deleted", file=err)
        return 2
    # botocore's errors, the exceptions it raises: imported here, once the input is known good.
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        if logs is None or eks is None:
            import boto3

            session = boto3.Session(region_name=step.region)
            logs = logs or session.client("logs")
            eks = eks or session.client("eks")
        done = remove_orphan(logs, eks, step)
    except (BotoCoreError, ClientError) as error:
        # No traceback: the operator needs what AWS said, on one line.
        said = " ".join(str(error).split())
        print(
            f"{PREFIX}: cannot check {step.log_group} in {step.region} for a leftover of a previous {step.cluster} "
            f"({said}); nothing was deleted. Fix the credentials (they need logs:DescribeLogGroups, "
            "logs:DeleteLogGroup and eks:DescribeCluster), then deploy the colour again",
            file=err,
        )
        return 2
    print(f"{PREFIX}: {done}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
