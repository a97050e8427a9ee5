"""The one typed, validated configuration, read from `cdktf.json` -> `context.config`.

Blue and green differ only in the data below. Every field has a default that synthesizes
without an AWS account; `load_config` reports every problem at once, before any stack is
built, each naming the key, the bad value and what is allowed.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import math
import re
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from model.addons import ADDONS
from model.problems import Problems, parse, reject_duplicate_keys

# EKS versions this project has been checked against (standard or extended support, late 2026).
# A new minor version is one entry here; a typo such as "1.3" or "1.340" fails at synth.
SUPPORTED_KUBERNETES_VERSIONS = ("1.32", "1.33", "1.34", "1.35")
# Values CloudWatch Logs accepts for retention_in_days.
LOG_RETENTION_DAYS = (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653)
# The common stack's id; a colour may not take it.
COMMON_STACK = "common"
# Smallest subnet: with the VPC CNI every pod takes an address from its node's private subnet.
MIN_SUBNET_PREFIX = 24
MAX_WEIGHT = 255  # Route53 weighted records accept 0-255.
# ALB metrics arrive in 60 s periods: a shorter shift window can hold no complete period.
MIN_SHIFT_INTERVAL_SECONDS = 60

_LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
_COLOUR = re.compile(r"^[a-z]([a-z0-9-]{0,18}[a-z0-9])?$")
_PROJECT = re.compile(r"^[a-z]([a-z0-9-]{1,18}[a-z0-9])$")
_REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d{1,2}$")
_VERSION = re.compile(r"^1\.\d{2}$")
_TABLE = re.compile(r"^[A-Za-z0-9_.-]{3,255}$")
_REPOSITORY = re.compile(r"^(?=.{2,256}$)[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*$")
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_COLOUR_RULE = (
    f"a colour is a stack name and DNS label: 1-20 lowercase letters, digits or '-', starting with a letter, not '{COMMON_STACK}'"
)
_INSTANCE_TYPE = re.compile(r"^[a-z0-9-]+\.[a-z0-9-]+$")
_ROLE_ARN = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]{1,512}$")
_ADDON_VERSION = re.compile(r"^v\d+\.\d+\.\d+-eksbuild\.\d+$")
_CONNECTION_ARN = re.compile(
    r"^arn:aws[a-z-]*:(codeconnections|codestar-connections):[a-z0-9-]+:\d{12}:connection/[0-9a-f-]{36}$"
)
_ZONE_ID = re.compile(r"^[a-z]+[0-9]+-az[0-9]+$")
_IMAGE_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")
_REPO_URL = re.compile(r"^(https://|ssh://|git@)\S+$")

# Zone IDs where EKS does not place control planes: a cluster subnet there fails with
# UnsupportedAvailabilityZoneException. AWS, Amazon EKS User Guide, "VPC and subnet requirements"
# (use1-az3, usw1-az2, cac1-az3); eksctl's deny-list adds cnn1-az4 (pkg/az). Zone IDs, not names:
# names are shuffled per account, IDs are the same everywhere.
EKS_UNSUPPORTED_ZONE_IDS = ("use1-az3", "usw1-az2", "cac1-az3", "cnn1-az4")
# The default Git URL only synthesizes; Argo CD cannot sync it (a warning says so at synth).
PLACEHOLDER_REPO_URL = "https://git.example.com/your-org/eks-blue-green.git"
# Until an image is built and its tag configured, pods cannot pull (a warning says so at synth).
DEFAULT_IMAGE_TAG = "0.1.0"


@dataclass(frozen=True)
class NodeGroupConfig:
    """The cluster's managed node group."""

    instance_types: tuple[str, ...] = ("m7i.large",)
    min_size: int = 2
    max_size: int = 4
    desired_size: int = 2
    capacity_type: Literal["ON_DEMAND", "SPOT"] = "ON_DEMAND"
    ami_type: Literal["AL2023_x86_64_STANDARD", "AL2023_ARM_64_STANDARD"] = "AL2023_x86_64_STANDARD"
    disk_size_gib: int = 50
    max_unavailable: int = 1  # nodes replaced at a time during a node group update


@dataclass(frozen=True)
class ClusterConfig:
    """One colour: its own EKS cluster and its share of the traffic."""

    kubernetes_version: str = ""  # required: no version is a sensible default for a new colour
    weight: int = 0  # default: a new colour receives no traffic until its weight is raised
    nodes: NodeGroupConfig = field(default_factory=NodeGroupConfig)
    # default: none pinned, EKS installs its default version for the cluster's Kubernetes version
    addon_versions: Mapping[str, str] = field(default_factory=lambda: types.MappingProxyType({}))


@dataclass(frozen=True)
class NetworkConfig:
    cidr: str = "10.0.0.0/16"
    az_count: int = 3
    # Zones never used, by zone ID; default: those where EKS offers no control plane.
    excluded_zone_ids: tuple[str, ...] = EKS_UNSUPPORTED_ZONE_IDS
    nat: Literal["single", "per_az"] = "single"  # default: one NAT gateway shared by all AZs
    flow_log_retention_days: int = 365


@dataclass(frozen=True)
class DnsConfig:
    parent_zone: str = "example.com"  # an existing public hosted zone in the account
    sub_domain: str = "eks"  # the sub-zone common creates and delegates: <sub_domain>.<parent_zone>
    app_host: str = "app"  # the sample app answers at <app_host>.<sub_domain>.<parent_zone>

    @property
    def zone_name(self) -> str:
        return f"{self.sub_domain}.{self.parent_zone}"

    @property
    def app_hostname(self) -> str:
        return f"{self.app_host}.{self.zone_name}"


@dataclass(frozen=True)
class EksConfig:
    """Settings every colour's cluster shares."""

    endpoint_public_access: bool = True  # Terraform's helm/kubernetes providers reach the API here
    endpoint_private_access: bool = True
    public_access_cidrs: tuple[str, ...] = ("0.0.0.0/0",)  # narrow this to your operators' addresses
    admin_role_arns: tuple[str, ...] = ()  # cluster admins besides the identity that deploys
    service_ipv4_cidr: str = "172.20.0.0/16"  # Kubernetes Service addresses; must not overlap the VPC
    log_retention_days: int = 365  # control-plane logs


@dataclass(frozen=True)
class GitOpsConfig:
    """The Git repository (this project) that Argo CD renders argocd/apps and argocd/sample-app from."""

    repo_url: str = PLACEHOLDER_REPO_URL
    revision: str = "main"


@dataclass(frozen=True)
class ShiftConfig:
    """`python -m tools.shift`: how far each step moves and what the target must show to go on."""

    step: int = 20  # weight moved to the target per step
    interval_seconds: int = 300  # each step's observation window for the metric gate
    max_5xx_ratio: float = 0.01  # (target + load balancer 5xx) / requests on the target's ALB
    max_p99_seconds: float = 1.0  # TargetResponseTime p99 on the target's ALB
    min_requests: int = 1  # fewer requests in a window fail the gate: no traffic is no evidence
    allow_idle: bool = False  # a window with fewer than min_requests passes (say so: `--allow-idle`)
    dns_timeout_seconds: int = 600  # how long Route53 may take to serve a step's weights


@dataclass(frozen=True)
class TrafficConfig:
    """How fast a weight change reaches clients (ExternalDNS interval + record TTL), how to shift, how to retire."""

    record_ttl: int = 60
    sync_interval_seconds: int = 60
    shift: ShiftConfig = field(default_factory=ShiftConfig)
    # `cdktf destroy <colour>` waits this long for the colour's load balancer and records to go.
    teardown_timeout_seconds: int = 1200


@dataclass(frozen=True)
class TableConfig:
    name: str = ""  # default: <project>-users
    deletion_protection: bool = True  # the former name of the top-level deletion_protection, still read


@dataclass(frozen=True)
class ImageConfig:
    repository: str = ""  # default: <project>/sample-app
    # A CodeStar/CodeConnections connection to the Git host; set, common builds app/ with CodeBuild.
    build_connection_arn: str = ""  # default: no build project
    build_source_type: Literal["GITHUB", "GITLAB", "BITBUCKET"] = "GITHUB"


@dataclass(frozen=True)
class AppConfig:
    """The sample app every colour runs."""

    image_tag: str = DEFAULT_IMAGE_TAG  # the build prints the tag to use (the commit id)
    # argocd: a wave-1 child of the App of Apps, from Git; helm: a Terraform helm_release, no Git needed.
    delivery: Literal["argocd", "helm"] = "argocd"


@dataclass(frozen=True)
class StateConfig:
    backend: Literal["local", "s3"] = "local"
    directory: str = "terraform-state"  # local: one <stack>.tfstate per stack, relative to cdktf.json
    bucket: str = ""  # s3: required
    region: str = ""  # s3: default: the project's region
    key_prefix: str = ""  # s3: default: <project>; state keys are <key_prefix>/<stack>.tfstate
    encrypt: bool = True


def _default_clusters() -> Mapping[str, ClusterConfig]:
    return types.MappingProxyType(
        {
            "blue": ClusterConfig(kubernetes_version="1.34", weight=100),
            "green": ClusterConfig(kubernetes_version="1.35", weight=0),
        }
    )


@dataclass(frozen=True)
class Config:
    project: str = "eks-bg"  # prefix of every name this project creates
    region: str = "ap-northeast-1"
    # The data common keeps that no deploy can re-create: the table and the image repository.
    deletion_protection: bool = True
    tags: Mapping[str, str] = field(default_factory=lambda: types.MappingProxyType({}))
    network: NetworkConfig = field(default_factory=NetworkConfig)
    dns: DnsConfig = field(default_factory=DnsConfig)
    eks: EksConfig = field(default_factory=EksConfig)
    gitops: GitOpsConfig = field(default_factory=GitOpsConfig)
    traffic: TrafficConfig = field(default_factory=TrafficConfig)
    table: TableConfig = field(default_factory=TableConfig)
    image: ImageConfig = field(default_factory=ImageConfig)
    app: AppConfig = field(default_factory=AppConfig)
    state: StateConfig = field(default_factory=StateConfig)
    clusters: Mapping[str, ClusterConfig] = field(default_factory=_default_clusters)

    @property
    def weights(self) -> dict[str, int]:
        """Each colour's Route53 weight, in config order."""
        return {colour: cluster.weight for colour, cluster in self.clusters.items()}


class ConfigError(Exception):
    """The configuration has problems; `problems` lists every one."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.problems = tuple(problems)
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"invalid configuration in {source} ({len(problems)} problem(s)):\n{lines}")


def load_config(path: Path = Path("cdktf.json")) -> Config:
    """Read `context.config` of a cdktf.json; a string there names a JSON file beside it."""
    raw = _read_json(path, path.name)
    context = raw.get("context", {}) if isinstance(raw, dict) else raw
    if not isinstance(context, dict):
        raise ConfigError(path.name, [f"context: {json.dumps(context)} is not allowed; use a JSON object"])
    section = context.get("config", {})
    source = f"{path.name} (context.config)"
    if isinstance(section, str):
        source = section
        section = _read_json(path.parent / section, section)
    config = config_from_dict(section, source=source)
    # Local state lives beside cdktf.json, wherever Terraform itself runs.
    state_dir = path.parent.absolute() / config.state.directory
    return dataclasses.replace(config, state=dataclasses.replace(config.state, directory=str(state_dir)))


def write_weights(path: Path, weights: Mapping[str, int]) -> None:
    """Set `clusters.<colour>.weight` where the config lives (cdktf.json or the file it names), keeping
    everything else. The result is validated first and replaces the file atomically: a refused
    or interrupted write leaves the previous config intact."""
    raw = _read_json(path, path.name)
    section, target = raw.setdefault("context", {}).setdefault("config", {}), path
    if isinstance(section, str):
        target = path.parent / section
        raw = section = _read_json(target, section)
    if "clusters" not in section:  # the defaults become explicit, so the weights have somewhere to go
        section["clusters"] = {
            c: {"kubernetes_version": k.kubernetes_version, "weight": k.weight} for c, k in Config().clusters.items()
        }
    problems = [
        f"clusters.{colour}: no such colour; configured: {', '.join(section['clusters'])}"
        for colour in weights
        if colour not in section["clusters"]
    ]
    if problems:
        raise ConfigError(str(target), problems)
    for colour, weight in weights.items():
        section["clusters"][colour]["weight"] = weight
    config_from_dict(section, source=str(target))
    scratch = target.with_name(f".{target.name}.tmp")
    scratch.write_text(json.dumps(raw, indent=2, ensure_ascii=False) + "\n")
    scratch.replace(target)


def config_from_dict(raw: Any, *, source: str = "config") -> Config:
    """Parse and validate; raise ConfigError listing every problem."""
    problems = Problems()
    config = _one_protection_switch(parse(Config, raw, "", problems), raw, problems)
    _project_rules(config, problems)
    # A bad project name is reported once, not again through every name derived from it.
    config = _fill_derived(config, config.project if not problems.is_bad("project") else Config.project)
    for rule in RULES:
        rule(config, problems)
    if problems.lines:
        raise ConfigError(source, problems.lines)
    return config


def _read_json(path: Path, source: str) -> Any:
    try:
        return json.loads(path.read_text(), object_pairs_hook=reject_duplicate_keys)
    except FileNotFoundError:
        raise ConfigError(source, [f"{path}: file not found"]) from None
    except ValueError as err:  # JSONDecodeError is a ValueError, and so is a duplicate key
        raise ConfigError(source, [f"{path}: not valid JSON: {err}"]) from None


def _one_protection_switch(config: Config, raw: Any, problems: Problems) -> Config:
    """`deletion_protection` and its former spelling `table.deletion_protection` are one switch: set in either
    place it holds for both the table and the image repository; set in both, they must agree."""
    top = isinstance(raw, Mapping) and "deletion_protection" in raw
    table = raw.get("table") if isinstance(raw, Mapping) else None
    old = isinstance(table, Mapping) and "deletion_protection" in table
    if top and old and config.deletion_protection != config.table.deletion_protection:
        problems.add(
            "table.deletion_protection",
            config.table.deletion_protection,
            f"it is the former name of deletion_protection, which is {json.dumps(config.deletion_protection)}: "
            "keep one of the two",
        )
    value = config.table.deletion_protection if old and not top else config.deletion_protection
    table_config = dataclasses.replace(config.table, deletion_protection=value)
    return dataclasses.replace(config, deletion_protection=value, table=table_config)


def _fill_derived(config: Config, project: str) -> Config:
    """Defaults that depend on the project name, so two projects in one account do not collide."""
    return dataclasses.replace(
        config,
        table=dataclasses.replace(config.table, name=config.table.name or f"{project}-users"),
        image=dataclasses.replace(config.image, repository=config.image.repository or f"{project}/sample-app"),
        state=dataclasses.replace(
            config.state,
            region=config.state.region or config.region,
            key_prefix=config.state.key_prefix or project,
        ),
    )


def cluster_name(config: Config, colour: str) -> str:
    """The EKS cluster of a colour; also its ExternalDNS owner id and its load balancers' cluster tag."""
    return f"{config.project}-{colour}"


def subnet_cidrs(network: NetworkConfig) -> tuple[list[str], list[str]]:
    """(public, private) CIDRs, one of each per AZ, carved equally from the VPC CIDR."""
    vpc = ipaddress.IPv4Network(network.cidr)
    blocks = [str(b) for b in vpc.subnets(prefixlen_diff=_split_bits(network.az_count))]
    return blocks[: network.az_count], blocks[network.az_count : 2 * network.az_count]


def _split_bits(az_count: int) -> int:
    return math.ceil(math.log2(2 * az_count))


# --- rules: each adds a problem naming the key, the bad value and what is allowed -------------


def _check(problems: Problems, key: str, value: Any, ok: bool, allowed: str) -> None:
    if not ok and not problems.is_bad(key):
        problems.add(key, value, allowed)


def _check_each(problems: Problems, key: str, items: tuple[str, ...], ok: Callable[[str], bool], allowed: str) -> None:
    """One problem per bad item of a list, each named by its index: `key[i]`."""
    for i, item in enumerate(items):
        _check(problems, f"{key}[{i}]", item, ok(item), allowed)


def _project_rules(c: Config, p: Problems) -> None:
    _check(
        p,
        "project",
        c.project,
        bool(_PROJECT.match(c.project)),
        "use 3-20 lowercase letters, digits or '-', starting with a letter",
    )
    _check(p, "region", c.region, bool(_REGION.match(c.region)), "use an AWS region code such as 'ap-northeast-1'")
    for key, value in c.tags.items():
        ok = 0 < len(key) <= 128 and len(value) <= 256 and not key.lower().startswith("aws:")
        _check(p, f"tags.{key}", value, ok, "tag keys are 1-128 characters and may not start with 'aws:'; values at most 256")


def _network_rules(c: Config, p: Problems) -> None:
    n = c.network
    az_ok = 2 <= n.az_count <= 6
    _check(p, "network.az_count", n.az_count, az_ok, "use 2-6 availability zones")
    _check_each(
        p,
        "network.excluded_zone_ids",
        n.excluded_zone_ids,
        lambda zone_id: bool(_ZONE_ID.match(zone_id)),
        "use an availability zone ID such as 'use1-az3' (IDs, not names like 'us-east-1a': names differ per account)",
    )
    days_ok = n.flow_log_retention_days in LOG_RETENTION_DAYS
    _check(p, "network.flow_log_retention_days", n.flow_log_retention_days, days_ok, f"use one of {LOG_RETENTION_DAYS}")
    try:
        vpc = ipaddress.IPv4Network(n.cidr)
    except ValueError as err:
        _check(p, "network.cidr", n.cidr, False, f"use an IPv4 network such as '10.0.0.0/16' ({err})")
        return
    _check(p, "network.cidr", n.cidr, 16 <= vpc.prefixlen <= 28, "a VPC CIDR must be between /16 and /28")
    if az_ok and not p.is_bad("network.cidr"):
        holds = vpc.prefixlen + _split_bits(n.az_count) <= MIN_SUBNET_PREFIX
        needed = MIN_SUBNET_PREFIX - _split_bits(n.az_count)
        why = f"it cannot hold {2 * n.az_count} subnets (2 per AZ) of /{MIN_SUBNET_PREFIX} or larger"
        _check(
            p, "network.cidr", n.cidr, holds, f"{why}; use /{needed} or larger (nodes and pods take their IPs from the subnets)"
        )


def _dns_rules(c: Config, p: Problems) -> None:
    d = c.dns
    zone_ok = bool(d.parent_zone) and all(_LABEL.match(label) for label in d.parent_zone.split("."))
    _check(
        p,
        "dns.parent_zone",
        d.parent_zone,
        zone_ok,
        "name an existing public hosted zone such as 'example.com' (lowercase, no trailing dot)",
    )
    _check(
        p, "dns.sub_domain", d.sub_domain, bool(_LABEL.match(d.sub_domain)), "use one DNS label: lowercase letters, digits, '-'"
    )
    _check(p, "dns.app_host", d.app_host, bool(_LABEL.match(d.app_host)), "use one DNS label: lowercase letters, digits, '-'")
    _check(p, "dns.app_host", d.app_hostname, len(d.app_hostname) <= 253, "the full host name must be at most 253 characters")


def _eks_rules(c: Config, p: Problems) -> None:
    e = c.eks
    reachable = e.endpoint_public_access or e.endpoint_private_access
    _check(p, "eks.endpoint_public_access", e.endpoint_public_access, reachable, "public and private access cannot both be off")
    _check_each(p, "eks.public_access_cidrs", e.public_access_cidrs, _is_network, "use an IPv4 network such as '203.0.113.0/24'")
    _check_each(
        p,
        "eks.admin_role_arns",
        e.admin_role_arns,
        lambda arn: bool(_ROLE_ARN.match(arn)),
        "use an IAM role ARN: arn:aws:iam::<account>:role/<name>",
    )
    days_ok = e.log_retention_days in LOG_RETENTION_DAYS
    _check(p, "eks.log_retention_days", e.log_retention_days, days_ok, f"use one of {LOG_RETENTION_DAYS}")
    _service_cidr_rules(c, p)


def _service_cidr_rules(c: Config, p: Problems) -> None:
    """EKS takes the Service CIDR from a private range, /12 to /24, apart from the VPC's addresses."""
    key, cidr = "eks.service_ipv4_cidr", c.eks.service_ipv4_cidr
    allowed = "use a private IPv4 network, /12 to /24, that does not overlap network.cidr (e.g. '172.20.0.0/16')"
    if not _is_network(cidr):
        _check(p, key, cidr, False, allowed)
        return
    network = ipaddress.IPv4Network(cidr)
    private = any(network.subnet_of(ipaddress.IPv4Network(r)) for r in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))
    _check(p, key, cidr, private and 12 <= network.prefixlen <= 24, allowed)
    if _is_network(c.network.cidr):
        overlaps = network.overlaps(ipaddress.IPv4Network(c.network.cidr))
        _check(p, key, cidr, not overlaps, f"it overlaps network.cidr {c.network.cidr}; {allowed}")


def _gitops_rules(c: Config, p: Problems) -> None:
    g = c.gitops
    _check(
        p,
        "gitops.repo_url",
        g.repo_url,
        bool(_REPO_URL.match(g.repo_url)),
        "use a Git URL Argo CD can clone (https://, ssh:// or git@)",
    )
    _check(p, "gitops.revision", g.revision, bool(g.revision.strip()), "name a branch, tag or commit")
    t = c.traffic
    _check(
        p,
        "traffic.record_ttl",
        t.record_ttl,
        1 <= t.record_ttl <= 86400,
        "use 1-86400 seconds (small: shifts take effect sooner)",
    )
    interval_ok = 10 <= t.sync_interval_seconds <= 3600
    _check(p, "traffic.sync_interval_seconds", t.sync_interval_seconds, interval_ok, "use 10-3600 seconds")
    teardown_ok = 60 <= t.teardown_timeout_seconds <= 7200
    _check(p, "traffic.teardown_timeout_seconds", t.teardown_timeout_seconds, teardown_ok, "use 60-7200 seconds")
    s = t.shift
    _check(p, "traffic.shift.step", s.step, 1 <= s.step <= MAX_WEIGHT, f"use 1-{MAX_WEIGHT} (weight moved per step)")
    interval_ok = MIN_SHIFT_INTERVAL_SECONDS <= s.interval_seconds <= 3600
    _check(p, "traffic.shift.interval_seconds", s.interval_seconds, interval_ok, f"use {MIN_SHIFT_INTERVAL_SECONDS}-3600 seconds")
    _check(p, "traffic.shift.max_5xx_ratio", s.max_5xx_ratio, 0 <= s.max_5xx_ratio <= 1, "use a ratio 0-1, e.g. 0.01")
    p99_ok = 0 < s.max_p99_seconds <= 60
    _check(p, "traffic.shift.max_p99_seconds", s.max_p99_seconds, p99_ok, "use more than 0 and at most 60 seconds")
    _check(
        p,
        "traffic.shift.min_requests",
        s.min_requests,
        s.min_requests >= 1,
        "use 1 or more requests (to let a window without traffic pass, set traffic.shift.allow_idle)",
    )
    dns_ok = 60 <= s.dns_timeout_seconds <= 3600
    _check(p, "traffic.shift.dns_timeout_seconds", s.dns_timeout_seconds, dns_ok, "use 60-3600 seconds")


def _is_network(cidr: str) -> bool:
    try:
        ipaddress.IPv4Network(cidr)
    except ValueError:
        return False
    return True


def _image_rules(c: Config, p: Problems) -> None:
    _check(
        p, "app.image_tag", c.app.image_tag, bool(_IMAGE_TAG.match(c.app.image_tag)), "use an image tag (letters, digits, '._-')"
    )
    arn = c.image.build_connection_arn
    if arn:
        ok = bool(_CONNECTION_ARN.match(arn))
        _check(p, "image.build_connection_arn", arn, ok, "use a CodeConnections connection ARN (arn:aws:codeconnections:...)")
        usable = c.gitops.repo_url != PLACEHOLDER_REPO_URL and c.gitops.repo_url.startswith("https://")
        why = "the image build clones gitops.repo_url: set it to this project's https:// URL"
        _check(p, "gitops.repo_url", c.gitops.repo_url, usable, why)


def _resource_name_rules(c: Config, p: Problems) -> None:
    _check(p, "table.name", c.table.name, bool(_TABLE.match(c.table.name)), "use 3-255 of A-Z a-z 0-9 _ . -")
    repo_ok = bool(_REPOSITORY.match(c.image.repository))
    _check(
        p,
        "image.repository",
        c.image.repository,
        repo_ok,
        "use an ECR repository name: lowercase, digits, '._-' and '/' between parts",
    )


def _state_rules(c: Config, p: Problems) -> None:
    s = c.state
    if s.backend == "local":
        _check(p, "state.directory", s.directory, bool(s.directory.strip()), "name a directory for the local state files")
        return
    _check(p, "state.bucket", s.bucket, bool(_BUCKET.match(s.bucket)), "the s3 backend needs an existing S3 bucket name")
    _check(p, "state.region", s.region, bool(_REGION.match(s.region)), "use an AWS region code such as 'ap-northeast-1'")
    prefix_ok = not s.key_prefix.startswith("/") and not s.key_prefix.endswith("/")
    _check(p, "state.key_prefix", s.key_prefix, prefix_ok, "use a key prefix without a leading or trailing '/'")


def _cluster_rules(c: Config, p: Problems) -> None:
    _check(
        p,
        "clusters",
        dict(c.clusters),
        bool(c.clusters),
        'name at least one colour, e.g. {"blue": {"kubernetes_version": "1.34", "weight": 100}}',
    )
    seen_versions: dict[str, str] = {}
    for colour, cluster in c.clusters.items():
        key = f"clusters.{colour}"
        name_ok = bool(_COLOUR.match(colour)) and colour != COMMON_STACK
        _check(p, key, colour, name_ok, _COLOUR_RULE)
        _version_rules(p, key, cluster.kubernetes_version, seen_versions, colour)
        weight_ok = 0 <= cluster.weight <= MAX_WEIGHT
        _check(p, f"{key}.weight", cluster.weight, weight_ok, f"use an integer 0-{MAX_WEIGHT} (Route53 weighted records)")
        _node_rules(p, f"{key}.nodes", cluster.nodes)
        for addon, version in cluster.addon_versions.items():
            _check(
                p, f"{key}.addon_versions.{addon}", version, addon in ADDONS, f"unknown add-on; use one of {', '.join(ADDONS)}"
            )
            ok = bool(_ADDON_VERSION.match(version))
            _check(p, f"{key}.addon_versions.{addon}", version, ok, "use an EKS add-on version such as 'v1.19.2-eksbuild.1'")
    weights_known = not any(p.is_bad(f"clusters.{colour}.weight") for colour in c.clusters)
    all_zero = bool(c.clusters) and all(cluster.weight == 0 for cluster in c.clusters.values())
    if weights_known:
        _check(
            p,
            "clusters.*.weight",
            c.weights,
            not all_zero,
            "at least one colour needs a weight above 0 (with all weights 0, Route53 splits traffic evenly)",
        )


def _version_rules(p: Problems, key: str, version: str, seen: dict[str, str], colour: str) -> None:
    key = f"{key}.kubernetes_version"
    allowed = f"use one of {', '.join(SUPPORTED_KUBERNETES_VERSIONS)}"
    _check(p, key, version, bool(version), f"required for every colour; {allowed}")
    _check(p, key, version, bool(_VERSION.match(version)), f"use the form '1.NN'; {allowed}")
    _check(p, key, version, version in SUPPORTED_KUBERNETES_VERSIONS, f"unsupported version; {allowed}")
    other = seen.setdefault(version, colour)
    _check(
        p,
        key,
        version,
        other == colour,
        f"'{other}' already runs {version}; each colour runs its own version (that is the upgrade)",
    )


def _node_rules(p: Problems, key: str, nodes: NodeGroupConfig) -> None:
    types_ok = bool(nodes.instance_types) and all(_INSTANCE_TYPE.match(t) for t in nodes.instance_types)
    _check(
        p,
        f"{key}.instance_types",
        list(nodes.instance_types),
        types_ok,
        "list at least one EC2 instance type such as 'm7i.large'",
    )
    _check(p, f"{key}.max_size", nodes.max_size, nodes.max_size >= 1, "use at least 1")
    _check(p, f"{key}.min_size", nodes.min_size, 0 <= nodes.min_size <= nodes.max_size, f"use 0-{nodes.max_size} (max_size)")
    if not (p.is_bad(f"{key}.min_size") or p.is_bad(f"{key}.max_size")):
        desired_ok = nodes.min_size <= nodes.desired_size <= nodes.max_size
        _check(
            p, f"{key}.desired_size", nodes.desired_size, desired_ok, f"use {nodes.min_size}-{nodes.max_size} (min_size-max_size)"
        )
        unavailable_ok = 1 <= nodes.max_unavailable <= nodes.max_size
        _check(p, f"{key}.max_unavailable", nodes.max_unavailable, unavailable_ok, f"use 1-{nodes.max_size} (max_size)")
    _check(p, f"{key}.disk_size_gib", nodes.disk_size_gib, 20 <= nodes.disk_size_gib <= 16384, "use 20-16384 GiB")


RULES: tuple[Callable[[Config, Problems], None], ...] = (
    _network_rules,
    _dns_rules,
    _eks_rules,
    _gitops_rules,
    _image_rules,
    _resource_name_rules,
    _state_rules,
    _cluster_rules,
)


def config_warnings(config: Config) -> list[str]:
    """Things that synthesize but would not work once deployed."""
    warnings = []
    if config.gitops.repo_url == PLACEHOLDER_REPO_URL:
        warnings.append(
            f"gitops.repo_url is the placeholder {PLACEHOLDER_REPO_URL!r}: set it to a Git URL of this project "
            "that Argo CD can read before `cdktf deploy <colour>`, or Argo CD cannot sync the App of Apps"
        )
    if config.app.image_tag == DEFAULT_IMAGE_TAG:
        warnings.append(
            f"app.image_tag is the default {DEFAULT_IMAGE_TAG!r}: build and push the sample app image (README: "
            "'Build and push the image') and set app.image_tag to the tag the build prints"
        )
    if "0.0.0.0/0" in config.eks.public_access_cidrs and config.eks.endpoint_public_access:
        warnings.append("eks.public_access_cidrs allows the whole internet to reach the Kubernetes API endpoint; narrow it")
    return warnings
