"""The `traffic` section: how users reach the applications (the shared load balancer, its preview hosts' networks,
its web ACL), how the shift moves weight and how long a retirement waits; the rules and warnings of the preview
networks and the web ACL. (Named so beside stacks/traffic.py: one module name per file in the project.)"""

import ipaddress
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from model.config.analysis import AnalysisConfig
from model.config.checks import LOUD, check, covers_the_internet
from model.config.eks import PLACEHOLDER_API_NETWORK
from model.config.fields import MAX_WEIGHT, LogRetentionDays, Section, Shown
from model.preview_access import FALLBACK_KEY, KEY, networks_key, preview_networks
from model.problems import Allowed, Problems

if TYPE_CHECKING:
    from model.config.project import Config


# ALB metrics arrive in 60 s periods: a shorter shift window can hold no complete period.
MIN_SHIFT_INTERVAL_SECONDS = 60
MAX_SHIFT_INTERVAL_SECONDS = 3600  # an hour per step: longer, and a window is no longer the step's own


class ShiftConfig(Section):
    """`python -m tools.shift`: how far each step moves and what the target must show to go on."""

    step: Annotated[
        int,
        Field(ge=1, le=MAX_WEIGHT, description="1-255; weight `python -m tools.shift` moves to the target per step"),
        Allowed(f"use 1-{MAX_WEIGHT} (weight moved per step)"),
    ] = 20
    interval_seconds: Annotated[
        int,
        Field(
            ge=MIN_SHIFT_INTERVAL_SECONDS,
            le=MAX_SHIFT_INTERVAL_SECONDS,
            description="60-3600; how long each step is watched before its metrics are judged",
        ),
        Allowed(f"use {MIN_SHIFT_INTERVAL_SECONDS}-{MAX_SHIFT_INTERVAL_SECONDS} seconds"),
    ] = 300
    max_5xx_ratio: Annotated[
        float,
        Field(
            ge=0,
            le=1,
            description="0-1; per application, (its pods' 5xx + connections they refused) / requests in the target colour's "
            "target group, above which a step rolls back",
        ),
        Allowed("use a ratio 0-1, e.g. 0.01"),
    ] = 0.01
    max_p99_seconds: Annotated[
        float,
        Field(gt=0, le=60, description="above 0, at most 60; `TargetResponseTime` p99 above which a step rolls back"),
        Allowed("use more than 0 and at most 60 seconds"),
    ] = 1.0
    min_requests: Annotated[
        int,
        Field(
            ge=1,
            description="1 or more; an application with fewer requests in the target colour's target group during a "
            "window is idle, not judged (`applications.<name>.min_requests` overrides it); a window in which every "
            "application is idle fails its step: no traffic is no evidence",
        ),
        Allowed("use 1 or more requests (to let a window without traffic pass, set traffic.shift.allow_idle)"),
    ] = 1
    allow_idle: Annotated[
        bool,
        Field(
            description="`true` lets a window with fewer than `min_requests` requests pass (also `--allow-idle`); the "
            "shift's first line and every step say so"
        ),
    ] = False
    analysis: AnalysisConfig = Field(
        default_factory=AnalysisConfig,
        description="what else every application's step window must show (CloudWatch alarms and metric math, "
        "Prometheus queries, synthetic checks) and the bake time at the final split; `applications.<name>.analysis` "
        "overrides it key by key",
    )


# AWS managed rule groups a web ACL may name: AWS's own names, `AWSManagedRules` and a word (AWS WAF Developer Guide,
# "AWS Managed Rules rule groups list"). Each costs WCUs; a web ACL holds 1,500 before a higher price applies.
_RULE_GROUP = r"^AWSManagedRules[A-Za-z0-9]{2,100}$"
# Two of AWS's baseline rule groups (WAF Developer Guide, "Baseline rule groups": the core rule set; known bad inputs,
# which carries the Log4j rules) and Amazon's IP reputation list ("IP reputation rule groups"): 700 + 200 + 25 WCUs.
DEFAULT_RULE_GROUPS = (
    "AWSManagedRulesCommonRuleSet",
    "AWSManagedRulesKnownBadInputsRuleSet",
    "AWSManagedRulesAmazonIpReputationList",
)


class WafConfig(Section):
    """An AWS WAF web ACL in front of the shared load balancer, the one every application is reached through."""

    enabled: Annotated[
        bool,
        Field(
            description="`true`: the traffic stack makes a web ACL of AWS managed rule groups, attaches it to the shared "
            "load balancer and logs to `aws-waf-logs-<project>`; leave it off when the organisation attaches its own "
            "(AWS Firewall Manager): a load balancer takes one web ACL"
        ),
    ] = False
    managed_rule_groups: Annotated[
        tuple[Annotated[str, Field(pattern=_RULE_GROUP)], ...],
        Field(description="AWS managed rule groups, at least one, in the order they are evaluated (names as AWS lists them)"),
        Allowed("name AWS managed rule groups as AWS lists them, e.g. 'AWSManagedRulesCommonRuleSet'"),
        Shown("the core rule set, known bad inputs and Amazon's IP reputation list"),
    ] = DEFAULT_RULE_GROUPS
    count_only: Annotated[
        bool,
        Field(
            description="`true`: the rule groups count what they would block and block nothing, to see their effect on "
            "real traffic in the logs first"
        ),
    ] = False
    log_retention_days: Annotated[
        LogRetentionDays, Field(description="a CloudWatch Logs retention value, for the web ACL's request logs")
    ] = 365


class TrafficConfig(Section):
    """How users reach the applications (the shared load balancer's records), how to shift, how to retire."""

    record_weight: Annotated[
        int,
        Field(
            ge=0,
            le=MAX_WEIGHT,
            description="0-255; the weight of the shared load balancer's record of each host in its weighted set; the "
            "set has that one member, which answers at any weight",
        ),
        Allowed(f"use 0-{MAX_WEIGHT}"),
    ] = 1
    access_logs_bucket: Annotated[
        str,
        Field(
            pattern=r"^$|^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$",
            description="an S3 bucket of the account's region, encrypted with S3-managed keys, whose policy lets Elastic "
            "Load Balancing deliver logs (often the organisation's log archive): the shared load balancer writes its "
            "access logs there under `<project>-traffic/`; empty: no access logs",
        ),
        Allowed("use an S3 bucket name: 3-63 lowercase letters, digits, '.' or '-'"),
    ] = ""
    sync_interval_seconds: Annotated[
        int,
        Field(ge=10, le=3600, description="10-3600; how often ExternalDNS reconciles Route53"),
        Allowed("use 10-3600 seconds"),
    ] = 60
    stickiness_seconds: Annotated[
        int,
        Field(
            ge=0,
            le=604800,
            description="0-604800; 0: each request is split by the live weights on its own, so one client's requests "
            "reach both colours during a shift; above 0: the weighted forward's target group stickiness (the load "
            "balancer's AWSALBTG cookie) keeps a client on the colour it was first sent to for that long, also after a "
            "step moves weight (a drain moves it at once). Rules take it when made and with every shift or drain",
        ),
        Allowed("use 0 (off) or 1-604800 seconds (7 days)"),
    ] = 0
    preview_cidrs: Annotated[
        tuple[str, ...] | None,
        Field(
            description="IPv4 networks each preview host `<host>-<colour>` answers (a `source-ip` condition on its "
            "listener rules; from elsewhere the load balancer's 404): where readiness runs and the team tests from "
            "(offices, VPN, CI runners' egress). Unset: `eks.public_access_cidrs`, the networks the operators already "
            "named; required when that is empty (a private API endpoint). A list covering the whole internet "
            "(`0.0.0.0/0`) synthesizes with a loud warning. More than 3 networks (after merging adjacent ones) take "
            'a rule per 3 (docs/applications.md, "Preview hosts")'
        ),
        Shown("`eks.public_access_cidrs`"),
    ] = None
    shift: ShiftConfig = Field(default_factory=ShiftConfig)
    waf: WafConfig = Field(default_factory=WafConfig)
    teardown_timeout_seconds: Annotated[
        int,
        Field(
            ge=60,
            le=7200,
            description="60-7200; how long `cdktf destroy <colour>` waits for the colour's apps, load balancer and records to go",
        ),
        Allowed("use 60-7200 seconds"),
    ] = 1200


def preview_rules(c: "Config", p: Problems) -> None:
    """The networks the preview hosts answer (model/preview_access.py): IPv4 (the shared load balancer has no IPv6),
    at least one, and none by default only where the operators named none (a private API endpoint)."""
    own = c.traffic.preview_cidrs
    for i, cidr in enumerate(own or ()):
        try:
            ipaddress.IPv4Network(cidr)
        except ValueError as err:
            check(p, f"{KEY}[{i}]", cidr, False, f"use an IPv4 network such as '198.51.100.0/24' ({err})")
    check(
        p,
        KEY,
        [],
        own != (),
        f"list at least one IPv4 network the preview hosts answer, or leave {KEY} unset for {FALLBACK_KEY}'s",
    )
    if own is None and c.applications:
        check(
            p,
            KEY,
            None,
            bool(c.eks.public_access_cidrs),
            f"{FALLBACK_KEY} is empty (a private API endpoint), so the preview hosts have no networks to default to: list "
            "the IPv4 networks readiness and your team reach them from (CI runners' and offices' egress; from inside "
            "the VPC, common's NAT addresses, `terraform output nat_public_ips` of common, each as /32), e.g. "
            "['198.51.100.0/24']",
        )


def waf_rules(c: "Config", p: Problems) -> None:
    groups = c.traffic.waf.managed_rule_groups
    repeated = sorted({group for group in groups if groups.count(group) > 1})
    key = "traffic.waf.managed_rule_groups"
    check(p, key, [], bool(groups), "name at least one, e.g. 'AWSManagedRulesCommonRuleSet'")
    check(p, key, list(groups), not repeated, f"name each rule group once ({', '.join(repeated)} twice)")


def preview_warnings(config: "Config") -> list[str]:
    """The preview hosts' networks: the documentation placeholder (readiness cannot reach them), or the whole internet."""
    networks, key = preview_networks(config), networks_key(config)
    if not config.applications:
        return []
    warnings = []
    if PLACEHOLDER_API_NETWORK in networks:
        warnings.append(
            f"{key} names {PLACEHOLDER_API_NETWORK}, the documentation placeholder, and the preview hosts answer only "
            f"those networks: readiness (`python -m tools.readiness <colour>`) and the shift's proof cannot reach them "
            f"from anywhere; set {KEY} (or {FALLBACK_KEY}) to where they run"
        )
    if covers_the_internet(networks):
        warnings.append(
            f"{LOUD}{key} {list(networks)} lets the whole internet reach every preview host <host>-<colour>, whose "
            f"colour may follow a branch nobody reviewed: set {KEY} to the networks readiness and your team use"
        )
    return warnings
