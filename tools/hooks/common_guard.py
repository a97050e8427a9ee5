"""Destroy-time check of common and of the traffic stack: `cdktf destroy <stack>` refuses while any EKS cluster runs
in common's VPC (the traffic stack's load balancer serves the colours' applications: the same check guards it).

Terraform runs it from common's deletion guard (components/deletion_guard.py), which depends on every other
resource of common: on destroy it goes first, and if it fails nothing else goes. Without it, a destroy of
common with `deletion_protection` off takes the NAT gateways, routes and Pod Identity roles away from a
running colour before it fails on the subnets the cluster still uses: an outage, not a refusal. So it runs
whatever `deletion_protection` says.

It asks EKS, not the config or the colours' state: a colour dropped from the config, or deployed from
another checkout, still runs in the VPC. Exit 0: no cluster in the VPC; 1: refused (as the guard's
deletion_protection refusal), the message names each cluster; 2: it could not tell (no usable input, no
credentials, an API error), which refuses too: the safe side.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from dataclasses import MISSING, dataclass, fields
from typing import Any, TextIO

from model.hooks import GUARD_ENV

PREFIX = "common_guard"


class CommonInUseError(Exception):
    """A cluster still runs in common's VPC; nothing was destroyed."""


class GuardInputError(Exception):
    """The guard's input lacks what the check needs."""


@dataclass(frozen=True)
class GuardInput:
    """What the check needs of the guard's input (which holds its deletion_protection switch and message too)."""

    vpc_id: str
    region: str
    project: str  # clusters are named `<project>-<colour>` (model/config.cluster_name)
    stack: str  # the stack guarded (common or traffic)
    uses: str  # what a colour uses of it, for the refusal

    @classmethod
    def from_json(cls, text: str) -> GuardInput:
        try:
            raw = json.loads(text)
        except ValueError as err:
            raise GuardInputError(f"{GUARD_ENV} is not JSON ({err})") from None
        required = [f.name for f in fields(cls) if f.default is MISSING]
        missing = [name for name in required if not isinstance(raw, dict) or not raw.get(name)]
        if missing:
            # A state written before the guard checked clusters: its input lacks the VPC.
            raise GuardInputError(
                f"the guard's input has no {', '.join(missing)}: run `cdktf deploy common` (it only updates the guard), "
                "then `cdktf destroy common` again"
            )
        return cls(**{f.name: str(raw[f.name]) for f in fields(cls) if f.name in raw})


@dataclass(frozen=True)
class RunningCluster:
    name: str
    status: str
    colour: str | None  # None: not named like one of this project's colours

    def describe(self) -> str:
        what = (
            f"colour {self.colour} (cluster {self.name}" if self.colour else f"cluster {self.name} (not a colour of this project"
        )
        return what + ("" if self.status == "ACTIVE" else f", {self.status}") + ")"


def clusters_in_vpc(eks: Any, guard: GuardInput) -> list[RunningCluster]:
    """Every EKS cluster of the region whose VPC is common's, in name order."""
    names = [name for page in eks.get_paginator("list_clusters").paginate() for name in page["clusters"]]
    found = []
    for name in sorted(names):
        try:
            cluster = eks.describe_cluster(name=name)["cluster"]
        except eks.exceptions.ResourceNotFoundException:
            continue  # deleted since the listing: it holds nothing of common's any more
        if cluster.get("resourcesVpcConfig", {}).get("vpcId") != guard.vpc_id:
            continue
        prefix = f"{guard.project}-"
        colour = name.removeprefix(prefix) if name.startswith(prefix) else None
        found.append(RunningCluster(name=name, status=str(cluster.get("status", "")), colour=colour))
    return found


def refusal(running: Sequence[RunningCluster], guard: GuardInput) -> str:
    colours = [c.colour for c in running if c.colour]
    how = "; ".join(
        [f"python -m tools.retire {colour} (or cdktf destroy {colour})" for colour in colours]
        + [f"delete {c.name} yourself" for c in running if not c.colour]
    )
    return (
        f"{'; '.join(c.describe() for c in running)} still in common's VPC {guard.vpc_id}: they use {guard.uses}, "
        f"so nothing was destroyed. Retire those colours first: {how}; then `cdktf destroy "
        f"{guard.stack}` again"
    )


def check(eks: Any, guard: GuardInput) -> None:
    running = clusters_in_vpc(eks, guard)
    if running:
        raise CommonInUseError(refusal(running, guard))


def main(eks: Any = None, err: TextIO | None = None) -> int:
    """eks: an EKS client (tests hand one in); default: boto3's, in the guard's region."""
    err = err or sys.stderr
    try:
        guard = GuardInput.from_json(os.environ.get(GUARD_ENV, ""))
    except GuardInputError as error:
        print(f"{PREFIX}: cannot check common's VPC for clusters: {error}; nothing was destroyed", file=err)
        return 2
    # botocore's errors, the exceptions it raises: imported here, once the input is known good.
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        if eks is None:
            import boto3  # lazy, as botocore above: a refused input answers without loading the SDK

            eks = boto3.Session(region_name=guard.region).client("eks")
        check(eks, guard)
    except CommonInUseError as error:
        print(f"{PREFIX} refused: {error}", file=err)
        return 1
    except (BotoCoreError, ClientError) as error:
        # No traceback: the operator needs what AWS said, on one line, and that nothing went.
        said = " ".join(str(error).split())
        print(
            f"{PREFIX}: cannot list the EKS clusters in {guard.region} to check common's VPC {guard.vpc_id} is unused "
            f"({said}); nothing was destroyed. Fix the credentials (they need eks:ListClusters and "
            f"eks:DescribeCluster), then `cdktf destroy {guard.stack}` again",
            file=err,
        )
        return 2
    print(f"{PREFIX}: no EKS cluster in common's VPC {guard.vpc_id}", file=sys.stdout, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
