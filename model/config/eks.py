"""The `eks` section: what every colour's cluster shares (its API endpoint and who may reach it, its admins, the
Service network), its rules and the warnings about its endpoint's networks."""

import ipaddress
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from model.config.checks import LOUD, check, check_each, covers_the_internet, is_network
from model.config.fields import LogRetentionDays, Section, Shown
from model.problems import Allowed, Problems

if TYPE_CHECKING:
    from model.config.project import Config


# The network the shipped configurations let reach the clusters' API: TEST-NET-3 (RFC 5737), for documentation, so
# reachable from nowhere. It only synthesizes: a warning says so at synth until it names the operators' networks.
PLACEHOLDER_API_NETWORK = "203.0.113.0/24"
# An IAM role's ARN, of any partition, its path included.
ROLE_ARN = r"^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]{1,512}$"
_ROLE_ARN_ALLOWED = "use an IAM role ARN: arn:aws:iam::<account>:role/<name>"


class EksConfig(Section):
    """Settings every colour's cluster shares."""

    endpoint_public_access: Annotated[
        bool,
        Field(
            description="Terraform's helm and kubernetes providers reach the API through an endpoint, so keep one you can reach"
        ),
    ] = True
    endpoint_private_access: Annotated[bool, Field(description="not both endpoints off")] = True
    public_access_cidrs: Annotated[
        tuple[str, ...],
        Field(
            description="IPv4 networks allowed to reach the public endpoint: those `cdktf deploy` and your operators come "
            "from (offices, VPN, CI runners' egress). Required while `endpoint_public_access` is true, no default; "
            f"`{PLACEHOLDER_API_NETWORK}` (a documentation range, reachable from nowhere) only synthesizes, with a "
            "warning; a list covering the whole internet (`0.0.0.0/0`) synthesizes with a loud warning at every synth. "
            "With `eks.endpoint_private_access: false` each colour also allows common's NAT addresses "
            "(`nat_public_ips`), which its nodes come from"
        ),
        Shown("(required with the public endpoint)"),
    ] = ()
    admin_role_arns: Annotated[
        tuple[Annotated[str, Field(pattern=ROLE_ARN)], ...],
        Field(
            description="IAM role ARNs given `AmazonEKSClusterAdminPolicy` through access entries; the deploying identity "
            "(`eks.deployer_role_arn`) is admin anyway"
        ),
        Allowed(_ROLE_ARN_ALLOWED),
    ] = ()
    deployer_role_arn: Annotated[
        Annotated[str, Field(pattern=ROLE_ARN)] | None,
        Field(
            description="the IAM role that applies the colour stacks (a pipeline's deployer: `python -m policies.pipeline` "
            "prints it): admin of every cluster, the way Terraform's helm and kubernetes providers reach it. Set it when "
            "anyone else plans a colour (the pipeline's plan role, a colleague), or their plan replaces the deployer's "
            "access entry with their own"
        ),
        Allowed(_ROLE_ARN_ALLOWED),
        Shown("whoever runs the apply (one person's setup)"),
    ] = None
    traffic_operator_role_arn: Annotated[
        Annotated[str, Field(pattern=ROLE_ARN)] | None,
        Field(
            description="the IAM role that moves traffic (a pipeline's traffic operator: `python -m policies.pipeline` "
            "prints it): each colour gives it an access entry whose one Kubernetes group may only read Argo CD's "
            "Applications in Argo CD's namespace, what the gated shift's readiness reads, and nothing else (no access "
            "policy, no cluster-wide binding). Not a role of `eks.admin_role_arns` or `eks.deployer_role_arn`: a "
            "principal has one access entry per cluster"
        ),
        Allowed(_ROLE_ARN_ALLOWED),
        Shown("none: no access entry (the gated shift then runs as an admin)"),
    ] = None
    service_ipv4_cidr: Annotated[
        str,
        Field(description="private IPv4 network, /12 to /24, not overlapping `network.cidr`: the clusters' Service addresses"),
    ] = "172.20.0.0/16"
    log_retention_days: Annotated[
        LogRetentionDays, Field(description="a CloudWatch Logs retention value, for control-plane logs")
    ] = 365


def eks_rules(c: "Config", p: Problems) -> None:
    e = c.eks
    reachable = e.endpoint_public_access or e.endpoint_private_access
    check(p, "eks.endpoint_public_access", e.endpoint_public_access, reachable, "public and private access cannot both be off")
    check_each(p, "eks.public_access_cidrs", e.public_access_cidrs, is_network, "use an IPv4 network such as '198.51.100.0/24'")
    # No default: a public endpoint open to the internet was one (#31). Refused rather than made private silently: a
    # colour deployed open before would lose its API to the Terraform that deploys it in the middle of an apply.
    check(
        p,
        "eks.public_access_cidrs",
        list(e.public_access_cidrs),
        bool(e.public_access_cidrs) or not e.endpoint_public_access,
        "while eks.endpoint_public_access is true (the default), list the IPv4 networks the Kubernetes API may be reached "
        "from: where `cdktf deploy` runs and your operators work (offices, VPN, CI runners' egress addresses), e.g. "
        "['198.51.100.0/24']; or set eks.endpoint_public_access to false and deploy from inside the VPC",
    )
    # EKS keeps one access entry per principal and cluster (User Guide, "Create access entries"): the operator's own
    # entry beside an admin's would fail the apply with ResourceInUseException.
    admins = {*e.admin_role_arns, *([e.deployer_role_arn] if e.deployer_role_arn else [])}
    check(
        p,
        "eks.traffic_operator_role_arn",
        e.traffic_operator_role_arn,
        e.traffic_operator_role_arn not in admins,
        "use the traffic operator's own role, not one of eks.admin_role_arns or eks.deployer_role_arn (a principal has "
        "one access entry per cluster, and an admin reads Argo CD's Applications anyway); or leave it unset",
    )
    _service_cidr_rules(c, p)


def _service_cidr_rules(c: "Config", p: Problems) -> None:
    """EKS takes the Service CIDR from a private range, /12 to /24, apart from the VPC's addresses."""
    key, cidr = "eks.service_ipv4_cidr", c.eks.service_ipv4_cidr
    allowed = "use a private IPv4 network, /12 to /24, that does not overlap network.cidr (e.g. '172.20.0.0/16')"
    if not is_network(cidr):
        check(p, key, cidr, False, allowed)
        return
    network = ipaddress.IPv4Network(cidr)
    private = any(network.subnet_of(ipaddress.IPv4Network(r)) for r in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))
    check(p, key, cidr, private and 12 <= network.prefixlen <= 24, allowed)
    if is_network(c.network.cidr):
        overlaps = network.overlaps(ipaddress.IPv4Network(c.network.cidr))
        check(p, key, cidr, not overlaps, f"it overlaps network.cidr {c.network.cidr}; {allowed}")


def api_warnings(eks: EksConfig) -> list[str]:
    """The public endpoint's networks while it is on: the documentation placeholder, or the whole internet."""
    if not eks.endpoint_public_access:
        return []
    warnings = []
    if PLACEHOLDER_API_NETWORK in eks.public_access_cidrs:
        warnings.append(
            f"eks.public_access_cidrs names {PLACEHOLDER_API_NETWORK}, the documentation placeholder: nobody reaches the "
            "Kubernetes API from there, so `cdktf deploy <colour>` cannot install Argo CD; replace it with the networks "
            "you deploy from (or set eks.endpoint_public_access to false and deploy from inside the VPC)"
        )
    if covers_the_internet(eks.public_access_cidrs):
        warnings.append(
            f"{LOUD}eks.public_access_cidrs {list(eks.public_access_cidrs)} lets the whole internet reach the Kubernetes "
            "API endpoint of every colour (only its authentication stands in the way): list the networks you deploy "
            "from instead, or set eks.endpoint_public_access to false"
        )
    return warnings
