"""The `network` section: the VPC common makes, its subnets, NAT gateways and endpoints, and the rule that its
CIDR holds the subnets."""

import ipaddress
import math
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field

from model.config.checks import check
from model.config.fields import LogRetentionDays, Section
from model.problems import Allowed, Problems

if TYPE_CHECKING:
    from model.config.project import Config


# Smallest subnet: with the VPC CNI every pod takes an address from its node's private subnet.
MIN_SUBNET_PREFIX = 24
# Zone IDs where EKS does not place control planes: a cluster subnet there fails with
# UnsupportedAvailabilityZoneException. AWS, Amazon EKS User Guide, "VPC and subnet requirements"
# (use1-az3, usw1-az2, cac1-az3); eksctl's deny-list adds cnn1-az4 (pkg/az). Zone IDs, not names:
# names are shuffled per account, IDs are the same everywhere.
EKS_UNSUPPORTED_ZONE_IDS = ("use1-az3", "usw1-az2", "cac1-az3", "cnn1-az4")
# The AWS services `network.interface_endpoints` may reach through an interface endpoint in the private subnets, by the
# last part of their endpoint service name `com.amazonaws.<region>.<name>` (AWS, Amazon EKS User Guide, "Private cluster
# requirements": the endpoints a cluster without internet access needs): ECR's API and its image layers (`ecr.dkr`; the
# layers themselves come from S3, through the gateway endpoint), STS, and EKS Auth, where the Pod Identity agent turns a
# pod's token into its role's credentials (the EKS Auth API's endpoint prefix is `eks-auth`).
INTERFACE_ENDPOINTS = ("ecr.api", "ecr.dkr", "sts", "eks-auth")
InterfaceEndpoint = Annotated[
    Literal[INTERFACE_ENDPOINTS],  # type: ignore[valid-type]
    Allowed(f"unknown interface endpoint; use one of {', '.join(INTERFACE_ENDPOINTS)}"),
]


class NetworkConfig(Section):
    cidr: Annotated[str, Field(description="IPv4 network, /16 to /28, large enough for 2 subnets per AZ of at least /24")] = (
        "10.0.0.0/16"
    )
    az_count: Annotated[int, Field(ge=2, le=6, description="2-6"), Allowed("use 2-6 availability zones")] = 3
    excluded_zone_ids: Annotated[
        tuple[Annotated[str, Field(pattern=r"^[a-z]+[0-9]+-az[0-9]+$")], ...],
        Field(
            description="availability zone IDs (not names) never used; the default leaves out those where EKS offers "
            "no control plane. Fewer usable zones than `network.az_count` fails the plan, naming the zones found"
        ),
        Allowed("use an availability zone ID such as 'use1-az3' (IDs, not names like 'us-east-1a': names differ per account)"),
    ] = EKS_UNSUPPORTED_ZONE_IDS
    nat: Annotated[
        Literal["single", "per_az"],
        Field(
            description="`per_az` for production: one NAT gateway in each AZ, each zone's private subnet routed through its "
            "own, so losing a zone cuts no other zone's outbound calls (ECR pulls, STS, EKS Auth for Pod Identity, the "
            "applications' AWS calls) in either colour. `single` (the default, cheaper: one NAT gateway and address instead "
            "of one per AZ, docs/costs.md) routes every zone through the first zone's gateway: that zone's outage cuts "
            "every colour's outbound traffic at once. The DynamoDB and S3 gateway endpoints carry those services either way"
        ),
    ] = "single"
    interface_endpoints: Annotated[
        tuple[InterfaceEndpoint, ...],
        Field(
            description="interface VPC endpoints in the private subnets, private DNS on, reachable on 443 from the VPC only: "
            f"any of {', '.join(f'`{name}`' for name in INTERFACE_ENDPOINTS)}. Calls to them stay off the NAT gateways (and "
            "work while a zone's NAT gateway is down); each costs an hourly fee per AZ (docs/costs.md). Default none. The "
            "DynamoDB and S3 gateway endpoints are always there (free)"
        ),
    ] = ()
    flow_log_retention_days: Annotated[
        LogRetentionDays, Field(description="a CloudWatch Logs retention value (1, 3, 5, 7, 14, 30, 60, 90, 120, ...)")
    ] = 365


def subnet_cidrs(network: NetworkConfig) -> tuple[list[str], list[str]]:
    """(public, private) CIDRs, one of each per AZ, carved equally from the VPC CIDR."""
    vpc = ipaddress.IPv4Network(network.cidr)
    blocks = [str(b) for b in vpc.subnets(prefixlen_diff=split_bits(network.az_count))]
    return blocks[: network.az_count], blocks[network.az_count : 2 * network.az_count]


def split_bits(az_count: int) -> int:
    """Prefix bits that carve 2 subnets per AZ out of the VPC CIDR."""
    return math.ceil(math.log2(2 * az_count))


def network_rules(c: "Config", p: Problems) -> None:
    n = c.network
    try:
        vpc = ipaddress.IPv4Network(n.cidr)
    except ValueError as err:
        check(p, "network.cidr", n.cidr, False, f"use an IPv4 network such as '10.0.0.0/16' ({err})")
        return
    check(p, "network.cidr", n.cidr, 16 <= vpc.prefixlen <= 28, "a VPC CIDR must be between /16 and /28")
    if not p.is_bad("network.az_count") and not p.is_bad("network.cidr"):
        holds = vpc.prefixlen + split_bits(n.az_count) <= MIN_SUBNET_PREFIX
        needed = MIN_SUBNET_PREFIX - split_bits(n.az_count)
        why = f"it cannot hold {2 * n.az_count} subnets (2 per AZ) of /{MIN_SUBNET_PREFIX} or larger"
        check(
            p, "network.cidr", n.cidr, holds, f"{why}; use /{needed} or larger (nodes and pods take their IPs from the subnets)"
        )
