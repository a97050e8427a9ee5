"""Readiness, fourth: each application's target group of the colour, in the shared load balancer, has a healthy target:
the colour's load balancer controller registered its pods (the TargetGroupBinding), and they answer its health checks.
One line per application."""

from __future__ import annotations

from typing import Any

from tools.live_routes import RoutesError, read_routes
from tools.readiness.types import Finding, Target


def healthy_targets(elbv2: Any, target: Target) -> list[Finding]:
    try:
        groups = read_routes(elbv2, target.project).of_colour(target.colour)
    except RoutesError as err:
        return [Finding(False, f"target groups of {target.colour}: {err}")]
    found = []
    for app in target.applications:
        label = f"target group of {app.name} in {target.colour}"
        arn = groups.get(app.name)
        if arn is None:
            found.append(Finding(False, f"{label}: the shared load balancer has none (run `cdktf deploy traffic`)"))
            continue
        health = elbv2.describe_target_health(TargetGroupArn=arn)["TargetHealthDescriptions"]
        healthy = sum(1 for t in health if t["TargetHealth"]["State"] == "healthy")
        if healthy:
            found.append(Finding(True, f"{label}: {healthy} of {len(health)} target(s) healthy"))
            continue
        states = ", ".join(sorted({t["TargetHealth"]["State"] for t in health})) or "no targets registered"
        hint = " (is its TargetGroupBinding there, and its Service's pods Ready?)" if not health else ""
        found.append(Finding(False, f"{label}: no healthy target ({states}){hint}"))
    return found
