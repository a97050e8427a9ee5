"""The step around a colour's control-plane log group `/aws/eks/<cluster>/cluster`: no group of that name outlives the
colour, so that the colour can be destroyed and rebuilt under the same name.

Why: `cdktf destroy <colour>` deletes the cluster, then its log group; but EKS still delivers the cluster's last
logs after that, and CloudWatch Logs creates the group again (no retention, no key), outliving the colour. The next
create of the colour then fails on the log group with ResourceAlreadyExistsException (terraform-aws-modules/
terraform-aws-eks issues 920 and 2486), before any cluster exists.

Terraform runs it from the `terraform_data` the log group depends on (components/control_plane.py), so it is created
before the group and the cluster, and destroyed after both:

- at create (once per incarnation of the colour): deletes a group of that name that an earlier incarnation left
  behind;
- at destroy (LOG_GROUP_WATCH_SECONDS set by the destroy provisioner): the cluster and its group are gone; it watches
  the name for that long, deleting the group each time EKS's last logs make it again, and says how often that was.
  AWS documents no bound for those deliveries: "Amazon EKS control plane logs are delivered to CloudWatch Logs within
  a few minutes. However, log delivery is best effort" (EKS User Guide, "Send control plane logs to CloudWatch
  Logs"). WATCH_SECONDS covers "a few minutes"; a delivery later still leaves a group the next incarnation's create
  step deletes.

Either way it deletes the group only when no cluster of that name exists: then the group can only be an orphan of a
destroyed cluster. Beside a cluster of that name (running, creating or deleting) it deletes nothing: that cluster
writes to it. Running it again does no harm.

Exit 0: nothing left behind, or the orphan deleted, or the group left to its cluster (each says so on stdout);
2: it could not tell (no usable input, no credentials, an API error), with one line on stderr and nothing more
deleted. At create Terraform then stops before the log group, and `cdktf deploy <colour>` runs it again; at destroy the
step stays in the colour's state (the cluster and its group already gone), and `cdktf destroy <colour>` runs it again.
"""

from __future__ import annotations

import enum
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from model.hooks import LOG_GROUP_ENV, WATCH_ENV
from tools.hooks.hook_input import HookInputError, hook_input

# How often the watch looks: DescribeLogGroups is one call (its quota is 5 a second in an account and region).
POLL_SECONDS = 10
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
            return hook_input(cls, text, variable=LOG_GROUP_ENV)
        except HookInputError as err:
            raise StepInputError(str(err)) from None


def watch_seconds(text: str | None) -> float | None:
    """WATCH_ENV's value: None when unset (the create-time check), else a number of seconds, 0 or more."""
    if text is None:
        return None
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1
    if not seconds >= 0:  # also NaN
        raise StepInputError(f"{WATCH_ENV} is {text!r}, not a number of seconds")
    return seconds


class Found(enum.Enum):
    NOTHING = "no group of that name"
    DELETED = "an orphan, deleted"
    OWNED = "the group of an existing cluster"


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


def remove_orphan(logs: Any, eks: Any, step: StepInput) -> tuple[Found, str]:
    """Delete the log group if it is an orphan; what was found, and what was done as one line."""
    if not log_group_exists(logs, step.log_group):
        return Found.NOTHING, f"no log group {step.log_group} left behind; nothing to do"
    status = cluster_status(eks, step.cluster)
    if status is not None:
        return Found.OWNED, f"{step.log_group} belongs to the cluster {step.cluster} ({status}), which writes to it; left alone"
    try:
        logs.delete_log_group(logGroupName=step.log_group)
    except logs.exceptions.ResourceNotFoundException:
        return Found.NOTHING, f"no log group {step.log_group} left behind; nothing to do"  # gone since the listing
    return Found.DELETED, (
        f"deleted {step.log_group}: an orphan of a previous {step.cluster} (no cluster of that name exists), "
        "re-created by EKS's last logs after the colour was destroyed"
    )


def watch_after_destroy(
    logs: Any,
    eks: Any,
    step: StepInput,
    seconds: float,
    *,
    out: TextIO,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> str:
    """Look for the group now and every POLL_SECONDS until `seconds` have passed, deleting it each time it is back (one
    line on `out` each time); what happened in all, as one line. A cluster of that name ends the watch at once: its
    group is not this step's to judge."""
    start = clock()
    returns = 0
    while True:
        found, said = remove_orphan(logs, eks, step)
        if found is Found.OWNED:
            return said
        if found is Found.DELETED:
            returns += 1
            print(
                f"{PREFIX}: {step.log_group} was back {clock() - start:.0f} s into the watch (EKS's last logs of "
                f"{step.cluster}); deleted",
                file=out,
                flush=True,
            )
        left = start + seconds - clock()
        if left <= 0:
            break
        sleep(min(POLL_SECONDS, left))
    if not returns:
        return f"{step.log_group} did not come back within {seconds:.0f} s of the cluster's deletion; nothing to delete"
    return (
        f"{step.log_group} came back {returns} time{'s' if returns > 1 else ''} within {seconds:.0f} s of the cluster's "
        "deletion and was deleted each time; none is left. A delivery later still makes it again: the colour's next "
        "create deletes that one"
    )


def main(
    logs: Any = None,
    eks: Any = None,
    err: TextIO | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """logs, eks: clients; sleep, clock: the watch's (tests hand them in); default: boto3's, in the step's region, and
    the real time."""
    err = err or sys.stderr
    try:
        step = StepInput.from_json(os.environ.get(LOG_GROUP_ENV, ""))
        watch = watch_seconds(os.environ.get(WATCH_ENV))
    except StepInputError as error:
        print(f"{PREFIX}: cannot check for a leftover control-plane log group: {error}; nothing was deleted", file=err)
        return 2
    # botocore's errors, the exceptions it raises: imported here, once the input is known good.
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        if logs is None or eks is None:
            import boto3  # lazy, as botocore above: a refused input answers without loading the SDK

            session = boto3.Session(region_name=step.region)
            logs = logs or session.client("logs")
            eks = eks or session.client("eks")
        if watch is None:
            done = remove_orphan(logs, eks, step)[1]
        else:
            print(
                f"{PREFIX}: {step.cluster} is deleted; watching {step.log_group} for {watch:.0f} s, as EKS may still "
                "deliver its last logs (within a few minutes, AWS says) and CloudWatch Logs would create the group again",
                flush=True,
            )
            done = watch_after_destroy(logs, eks, step, watch, out=sys.stdout, sleep=sleep, clock=clock)
    except (BotoCoreError, ClientError) as error:
        # No traceback: the operator needs what AWS said, on one line.
        said = " ".join(str(error).split())
        if watch is None:
            deleted, again = "nothing was deleted", "deploy the colour again"
        else:
            deleted, again = "nothing more was deleted", "destroy the colour again (the step stays in its state and runs again)"
        print(
            f"{PREFIX}: cannot check {step.log_group} in {step.region} for a leftover of a previous {step.cluster} "
            f"({said}); {deleted}. Fix the credentials (they need logs:DescribeLogGroups, logs:DeleteLogGroup and "
            f"eks:DescribeCluster), then {again}",
            file=err,
        )
        return 2
    print(f"{PREFIX}: {done}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
