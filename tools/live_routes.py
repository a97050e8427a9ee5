"""The shared load balancer as AWS holds it: its public rules' weights by colour, every application's target group by
colour, and the live weights parameter. Found by name and tags (model/routes.py), never from Terraform state, and
written with the two calls a weight change needs: PutParameter (the intent, versioned) and ModifyRule per application
(the effect). Nothing here calls a colour's cluster: moving traffic needs none of them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from model.routes import (
    APPLICATION_TAG,
    COLOUR_TAG,
    PUBLIC,
    ROUTE_TAG,
    load_balancer_name,
)

_TAG_BATCH = 20  # DescribeTags takes at most 20 ARNs
HTTPS = 443

Weights = dict[str, int]


class RoutesError(LookupError):
    """The shared load balancer is not as the traffic stack makes it; the message says what is missing."""


@dataclass(frozen=True)
class PublicRoute:
    """One application's public host: its weighted rule and the target group of each colour it forwards to."""

    application: str
    rule_arn: str
    weights: Weights  # by colour, as the rule forwards now
    target_groups: dict[str, str]  # colour -> target group ARN, of the colours in the forward
    stickiness: dict[str, Any] = field(default_factory=dict)  # its TargetGroupStickinessConfig, as AWS holds it


@dataclass(frozen=True)
class LiveRoutes:
    load_balancer_arn: str
    listener_arn: str
    public: dict[str, PublicRoute]  # by application
    target_groups: dict[tuple[str, str], str] = field(default_factory=dict)  # (application, colour) -> ARN

    def of_colour(self, colour: str) -> dict[str, str]:
        """The colour's target group of each application, by application."""
        return {app: arn for (app, owner), arn in self.target_groups.items() if owner == colour}

    def weights(self) -> dict[str, Weights]:
        """What each application's public rule forwards now, by application then colour."""
        return {app: dict(route.weights) for app, route in self.public.items()}

    def in_traffic(self, colours: Iterable[str], weights: Mapping[str, int], *, joining: str = "") -> list[str]:
        """Of these colours (the configuration's), the ones a shift or a drain writes: those the live `weights` or a
        public rule name, and the one `joining` (a shift's or a drain's target). A colour named by neither (retired and
        detached, or deployed and never given weight) is left out, so no write brings a detached colour back."""
        named = {*weights, *(colour for route in self.public.values() for colour in route.weights), joining}
        return [colour for colour in colours if colour in named]


def read_routes(elbv2: Any, project: str) -> LiveRoutes:
    name = load_balancer_name(project)
    try:
        (balancer,) = elbv2.describe_load_balancers(Names=[name])["LoadBalancers"]
    except elbv2.exceptions.LoadBalancerNotFoundException:
        raise RoutesError(
            f"no load balancer {name} in {region_of(elbv2)}: deploy the traffic stack first (cdktf deploy traffic), or set "
            "`region` to the region it is in"
        ) from None
    arn = balancer["LoadBalancerArn"]
    listeners = [item for item in elbv2.describe_listeners(LoadBalancerArn=arn)["Listeners"] if item["Port"] == HTTPS]
    if not listeners:
        raise RoutesError(f"load balancer {name} has no HTTPS listener: deploy the traffic stack (cdktf deploy traffic)")
    listener = listeners[0]["ListenerArn"]
    groups = [g["TargetGroupArn"] for page in _pages(elbv2, "describe_target_groups", LoadBalancerArn=arn) for g in page]
    group_tags = _tags(elbv2, groups)
    target_groups = {
        (tags[APPLICATION_TAG], tags[COLOUR_TAG]): group
        for group, tags in group_tags.items()
        if APPLICATION_TAG in tags and COLOUR_TAG in tags
    }
    colour_of = {group: colour for (_, colour), group in target_groups.items()}
    rules = [rule for page in _pages(elbv2, "describe_rules", ListenerArn=listener) for rule in page if not rule["IsDefault"]]
    rule_tags = _tags(elbv2, [rule["RuleArn"] for rule in rules])
    public = {}
    for rule in rules:
        tags = rule_tags.get(rule["RuleArn"], {})
        if tags.get(ROUTE_TAG) != PUBLIC or APPLICATION_TAG not in tags:
            continue
        forward: dict[str, Any] = next((a for a in rule["Actions"] if a["Type"] == "forward"), {})
        tuples = forward.get("ForwardConfig", {}).get("TargetGroups") or (
            [{"TargetGroupArn": forward["TargetGroupArn"], "Weight": 1}] if forward.get("TargetGroupArn") else []
        )
        known = [t for t in tuples if t["TargetGroupArn"] in colour_of]
        public[tags[APPLICATION_TAG]] = PublicRoute(
            application=tags[APPLICATION_TAG],
            rule_arn=rule["RuleArn"],
            weights={colour_of[t["TargetGroupArn"]]: int(t.get("Weight", 1)) for t in known},
            target_groups={colour_of[t["TargetGroupArn"]]: t["TargetGroupArn"] for t in known},
            stickiness=dict(forward.get("ForwardConfig", {}).get("TargetGroupStickinessConfig") or {}),
        )
    return LiveRoutes(arn, listener, public, target_groups)


def forward_of(
    routes: LiveRoutes,
    application: str,
    weights: Mapping[str, int],
    *,
    colours: Collection[str] | None = None,
    without: str = "",
) -> list[dict[str, Any]]:
    """The target groups a public rule forwards to at these weights: the colours it forwards to now, and any colour
    these weights give weight (the shift's target joins the rule when it first gets some), restricted to `colours` (the
    configuration's: a colour retired, detached, or added and removed before it was deployed is never written back,
    so the traffic stack can always delete its target groups; None: no restriction), less `without` (a teardown's
    colour, at weight 0). A colour given weight needs a target group of the application (RoutesError otherwise)."""
    route = routes.public[application]
    candidates = dict.fromkeys([*route.target_groups, *(colour for colour, weight in weights.items() if weight > 0)])
    forward = []
    for colour in candidates:
        if colour == without or (colours is not None and colour not in colours):
            continue
        arn = route.target_groups.get(colour) or routes.target_groups.get((application, colour))
        if arn is None:
            raise RoutesError(
                f"{application} has no target group of {colour}, which these weights give {weights[colour]}: deploy the "
                "traffic stack first (cdktf deploy traffic)"
            )
        forward.append({"TargetGroupArn": arn, "Weight": int(weights.get(colour, 0))})
    return forward


def write_rules(
    elbv2: Any,
    routes: LiveRoutes,
    splits: Mapping[str, Mapping[str, int]],
    *,
    colours: Collection[str] | None = None,
    without: str = "",
    stickiness: Mapping[str, Any] | None = None,
    answers: list[Any] | None = None,
) -> int:
    """Each of these applications' public rule forwarding at its split (application -> colour -> weight; forward_of:
    colours, without): one ModifyRule each. stickiness: the forward's TargetGroupStickinessConfig (the configuration's:
    stickiness_config); None: each rule keeps its own (a ModifyRule's forward without one turns it off). answers: each
    ModifyRule's answer appended (its Date is AWS's clock). Returns how many calls."""
    for application, weights in splits.items():
        route = routes.public.get(application)
        if route is None:
            raise RoutesError(f"{application} has no public rule: deploy the traffic stack first (cdktf deploy traffic)")
        forward: dict[str, Any] = {"TargetGroups": forward_of(routes, application, weights, colours=colours, without=without)}
        kept = route.stickiness if stickiness is None else stickiness
        if kept:
            forward["TargetGroupStickinessConfig"] = dict(kept)
        answer = elbv2.modify_rule(RuleArn=route.rule_arn, Actions=[{"Type": "forward", "ForwardConfig": forward}])
        if answers is not None:
            answers.append(answer)
    return len(splits)


def every(routes: LiveRoutes, weights: Mapping[str, int]) -> dict[str, Weights]:
    """The same split for every application with a public rule."""
    return {app: dict(weights) for app in routes.public}


def off_weights(routes: LiveRoutes, splits: Mapping[str, Mapping[str, int]]) -> list[str]:
    """Each of these applications whose rule forwards another split than its own (a colour without a target group in
    its rule counts as 0), said as what it forwards."""
    return [
        f"{app}: {describe(route.weights)}"
        for app, weights in splits.items()
        if (route := routes.public.get(app)) is not None
        and (
            any(route.weights.get(colour, 0) != weight for colour, weight in weights.items())
            or any(weight and colour not in weights for colour, weight in route.weights.items())
        )
    ]


def describe(weights: Mapping[str, int]) -> str:
    return "  ".join(f"{colour} {weight}" for colour, weight in weights.items())


def stickiness_config(seconds: int) -> dict[str, Any]:
    """The weighted forward's target group stickiness for traffic.stickiness_seconds (0: off)."""
    return {"Enabled": True, "DurationSeconds": seconds} if seconds else {"Enabled": False}


def region_of(client: Any) -> str:
    """The region a client calls (what an operator with the wrong `region` needs to read)."""
    return str(getattr(getattr(client, "meta", None), "region_name", "") or "this region")


def _pages(elbv2: Any, operation: str, **arguments: Any) -> list[list[dict[str, Any]]]:
    key = {"describe_target_groups": "TargetGroups", "describe_rules": "Rules"}[operation]
    if operation == "describe_rules":  # DescribeRules has a marker but no paginator in every botocore
        pages, marker = [], None
        while True:
            page = elbv2.describe_rules(**arguments, **({"Marker": marker} if marker else {}))
            pages.append(page[key])
            marker = page.get("NextMarker")
            if not marker:
                return pages
    return [page[key] for page in elbv2.get_paginator(operation).paginate(**arguments)]


def _tags(elbv2: Any, arns: list[str]) -> dict[str, dict[str, str]]:
    found = {}
    for start in range(0, len(arns), _TAG_BATCH):
        for item in elbv2.describe_tags(ResourceArns=arns[start : start + _TAG_BATCH])["TagDescriptions"]:
            found[item["ResourceArn"]] = {tag["Key"]: tag["Value"] for tag in item.get("Tags", [])}
    return found


def registered(elbv2: Any, groups: Mapping[str, str]) -> list[str]:
    """Targets still registered (any state) in these target groups, by application: a colour's pods not yet out."""
    found = []
    for app, arn in groups.items():
        health = elbv2.describe_target_health(TargetGroupArn=arn)["TargetHealthDescriptions"]
        if health:
            found.append(f"{len(health)} target(s) of {app} in target group {arn.rsplit(':', 1)[-1]}")
    return found


def deregister_all(elbv2: Any, groups: Mapping[str, str]) -> dict[str, int]:
    """Every target registered in these target groups (by application) deregistered; how many, by application (none:
    not named). What a colour's load balancer controller does for its pods, when no such controller is left."""
    done = {}
    for app, arn in groups.items():
        health = elbv2.describe_target_health(TargetGroupArn=arn)["TargetHealthDescriptions"]
        targets = [{k: v for k, v in item["Target"].items() if k in ("Id", "Port", "AvailabilityZone")} for item in health]
        if targets:
            elbv2.deregister_targets(TargetGroupArn=arn, Targets=targets)
            done[app] = len(targets)
    return done
