"""Readiness, first: the colour's EKS cluster is there, ACTIVE, at the Kubernetes version its config names, and
when it last changed (insights older than that say nothing of what runs now)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tools.readiness.types import Finding, Target


@dataclass(frozen=True)
class ClusterState:
    finding: Finding
    changed_at: datetime | None  # its creation or its last update, whichever is later; None: no cluster


def cluster_state(eks: Any, target: Target) -> ClusterState:
    try:
        cluster = eks.describe_cluster(name=target.cluster)["cluster"]
    except eks.exceptions.ResourceNotFoundException:
        missing = f"EKS cluster {target.cluster} does not exist (cdktf deploy {target.colour})"
        return ClusterState(Finding(False, missing), None)
    status, version = cluster["status"], cluster.get("version", "?")
    if status != "ACTIVE":
        return ClusterState(Finding(False, f"EKS cluster {target.cluster} is {status}, not ACTIVE"), None)
    if version != target.kubernetes_version:
        return ClusterState(
            Finding(
                False,
                f"EKS cluster {target.cluster} runs Kubernetes {version}, but clusters.{target.colour}.kubernetes_version is "
                f"{target.kubernetes_version}: deploy the colour (cdktf deploy {target.colour}) and wait for the update",
            ),
            None,
        )
    changed = last_change(eks, target.cluster, cluster["createdAt"])
    platform = f", platform {cluster['platformVersion']}" if cluster.get("platformVersion") else ""
    return ClusterState(
        Finding(True, f"EKS cluster {target.cluster}: ACTIVE, Kubernetes {version} as configured{platform}"), changed
    )


def last_change(eks: Any, cluster: str, created_at: datetime) -> datetime:
    """When the cluster last changed: its creation, or its latest update (a version upgrade, access, logging...)."""
    latest: datetime = created_at
    more: dict[str, str] = {}
    while True:
        page = eks.list_updates(name=cluster, **more)
        for update_id in page["updateIds"]:
            update = eks.describe_update(name=cluster, updateId=update_id)["update"]
            latest = max(latest, update["createdAt"])
        if not page.get("nextToken"):
            return latest
        more = {"nextToken": page["nextToken"]}
