"""Readiness, fourth: the colour's load balancers (those its load balancer controller tagged with its cluster) each
have a healthy target in every target group: the app answers the ALB's health checks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tools.aws import cluster_load_balancers, load_balancer_name

if TYPE_CHECKING:
    from tools.readiness import Finding


def healthy_targets(elbv2: Any, cluster: str) -> Finding:
    from tools.readiness import Finding

    load_balancers = cluster_load_balancers(elbv2, cluster)
    if not load_balancers:
        return Finding(
            False, f"no load balancer of {cluster} (its load balancer controller makes one for the sample app's Ingress)"
        )
    gaps, groups_seen = [], 0
    for arn in load_balancers:
        groups = elbv2.describe_target_groups(LoadBalancerArn=arn)["TargetGroups"]
        if not groups:
            gaps.append(f"{load_balancer_name(arn)} has no target group")
        for group in groups:
            groups_seen += 1
            health = elbv2.describe_target_health(TargetGroupArn=group["TargetGroupArn"])["TargetHealthDescriptions"]
            if not any(target["TargetHealth"]["State"] == "healthy" for target in health):
                states = sorted({target["TargetHealth"]["State"] for target in health}) or ["no targets"]
                gaps.append(f"{group['TargetGroupName']} ({', '.join(states)})")
    names = ", ".join(load_balancer_name(arn) for arn in load_balancers)
    if gaps:
        return Finding(False, f"load balancer {names}: without a healthy target: {', '.join(gaps)}")
    return Finding(True, f"load balancer {names}: every target group ({groups_seen}) has healthy targets")
