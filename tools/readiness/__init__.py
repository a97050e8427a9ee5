"""Has a colour proven itself? What `python -m tools.shift --to <colour>` checks before it moves any weight.

1. Its EKS cluster is ACTIVE, and EKS reports no upgrade insight in ERROR (ListInsights): a
   deprecated API still in use, an add-on or node version the Kubernetes version does not support.
2. Every Argo CD Application of the colour (the App of Apps and its children) is Synced and Healthy:
   its controllers and the sample app run the colour's platform release as configured.
3. The target groups of its load balancer each have healthy targets: the app answers health checks.

Every check runs, so one report names everything that is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tools.aws import load_balancer_name
from tools.kube import APPLICATIONS, KubeApi, KubeError


@dataclass(frozen=True)
class Finding:
    ready: bool
    detail: str

    def line(self) -> str:
        return f"  {'ok     ' if self.ready else 'MISSING'}  {self.detail}"


def check(
    *,
    eks: Any,
    elbv2: Any,
    kube: Callable[[], KubeApi],
    cluster: str,
    load_balancer_arn: str,
    argocd_namespace: str,
    parent_application: str,
) -> list[Finding]:
    """kube: called only once the cluster is known to be ACTIVE."""
    active = cluster_active(eks, cluster)
    if not active.ready:
        return [active, Finding(False, "Argo CD applications: not checked (the cluster is not ACTIVE)")]
    return [
        active,
        upgrade_insights(eks, cluster),
        applications(kube, argocd_namespace, parent_application),
        healthy_targets(elbv2, load_balancer_arn),
    ]


def cluster_active(eks: Any, cluster: str) -> Finding:
    try:
        status = eks.describe_cluster(name=cluster)["cluster"]["status"]
    except eks.exceptions.ResourceNotFoundException:
        return Finding(False, f"EKS cluster {cluster} does not exist")
    return Finding(status == "ACTIVE", f"EKS cluster {cluster} is {status}")


def upgrade_insights(eks: Any, cluster: str) -> Finding:
    """EKS upgrade insights (AWS: "Prepare for Kubernetes version upgrades with cluster insights")."""
    failing: list[str] = []
    more: dict[str, str] = {}
    while True:
        page = eks.list_insights(clusterName=cluster, filter={"statuses": ["ERROR"]}, **more)
        failing += [f"{insight['name']} ({insight.get('category', 'insight')})" for insight in page["insights"]]
        if not page.get("nextToken"):
            break
        more = {"nextToken": page["nextToken"]}
    if failing:
        return Finding(False, f"EKS insights in ERROR for {cluster}: {', '.join(failing)}")
    return Finding(True, f"no EKS insight in ERROR for {cluster}")


def applications(kube: Callable[[], KubeApi], namespace: str, parent: str) -> Finding:
    try:
        listed = kube().get(APPLICATIONS.format(namespace=namespace)) or {}
    except KubeError as err:
        return Finding(False, f"Argo CD applications: the Kubernetes API did not answer ({err})")
    states = {
        item["metadata"]["name"]: (
            item.get("status", {}).get("sync", {}).get("status", "Unknown"),
            item.get("status", {}).get("health", {}).get("status", "Unknown"),
        )
        for item in listed.get("items", [])
    }
    if parent not in states:
        return Finding(False, f"Argo CD applications: no {parent} in namespace {namespace} (is the colour deployed?)")
    behind = [f"{name} ({sync}/{health})" for name, (sync, health) in sorted(states.items()) if (sync, health) != _PROVEN]
    if behind:
        return Finding(False, f"Argo CD applications not Synced/Healthy: {', '.join(behind)} ({len(states)} in all)")
    return Finding(True, f"Argo CD applications Synced/Healthy: all {len(states)} ({', '.join(sorted(states))})")


_PROVEN = ("Synced", "Healthy")


def healthy_targets(elbv2: Any, load_balancer_arn: str) -> Finding:
    name = load_balancer_name(load_balancer_arn)
    groups = elbv2.describe_target_groups(LoadBalancerArn=load_balancer_arn)["TargetGroups"]
    if not groups:
        return Finding(False, f"load balancer {name} has no target group")
    empty = []
    for group in groups:
        health = elbv2.describe_target_health(TargetGroupArn=group["TargetGroupArn"])["TargetHealthDescriptions"]
        healthy = sum(1 for target in health if target["TargetHealth"]["State"] == "healthy")
        if not healthy:
            states = sorted({target["TargetHealth"]["State"] for target in health}) or ["no targets"]
            empty.append(f"{group['TargetGroupName']} ({', '.join(states)})")
    if empty:
        return Finding(False, f"load balancer {name}: target groups without a healthy target: {', '.join(empty)}")
    return Finding(True, f"load balancer {name}: every target group ({len(groups)}) has healthy targets")
