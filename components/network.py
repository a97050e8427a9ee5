"""VPC with one public and one private subnet per AZ, tagged for the AWS Load Balancer Controller, and a refusal to
replace the VPC or a subnet that exists."""

from __future__ import annotations

from collections.abc import Sequence

from cdktf import Postcondition, Precondition, TerraformResourceLifecycle, Token
from cdktf_cdktf_provider_aws.data_aws_availability_zones import DataAwsAvailabilityZones, DataAwsAvailabilityZonesFilter
from cdktf_cdktf_provider_aws.data_aws_subnet import DataAwsSubnet
from cdktf_cdktf_provider_aws.data_aws_subnets import DataAwsSubnets, DataAwsSubnetsFilter
from cdktf_cdktf_provider_aws.data_aws_vpc import DataAwsVpc
from cdktf_cdktf_provider_aws.data_aws_vpcs import DataAwsVpcs, DataAwsVpcsFilter
from cdktf_cdktf_provider_aws.default_security_group import DefaultSecurityGroup
from cdktf_cdktf_provider_aws.subnet import Subnet
from cdktf_cdktf_provider_aws.vpc import Vpc
from constructs import Construct

# Subnet discovery tags read by the AWS Load Balancer Controller: internet-facing ALBs go to
# subnets tagged elb, internal ones to internal-elb.
PUBLIC_ROLE_TAG = {"kubernetes.io/role/elb": "1"}
PRIVATE_ROLE_TAG = {"kubernetes.io/role/internal-elb": "1"}
KINDS = ("public", "private")
# Where a refused change points the operator.
WAY_OUT = 'docs/upgrade-runbook.md, "What cannot change under running colours"'


def subnet_name(name: str, kind: str, index: int | str) -> str:
    """A subnet's Name tag: what the replacement guard finds it by."""
    return f"{name}-{kind}-{index}"


class Network(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        name: str,
        cidr: str,
        public_cidrs: list[str],
        private_cidrs: list[str],
        region: str,
        excluded_zone_ids: Sequence[str],
    ) -> None:
        """One public and one private subnet per AZ, each pair in a zone of its own.

        excluded_zone_ids: zone IDs never used (config default: those where EKS offers no control plane).
        """
        super().__init__(scope, id_)
        self._name = name
        self._zones = DataAwsAvailabilityZones(
            self,
            "zones",
            state="available",
            exclude_zone_ids=list(excluded_zone_ids),
            # Opt-in zones (Local Zones, Wavelength) lack EKS and ALB; take regular AZs only.
            filter=[DataAwsAvailabilityZonesFilter(name="opt-in-status", values=["opt-in-not-required"])],
            # Fewer usable zones than subnet pairs fails the plan, naming the key: no two pairs share a zone.
            lifecycle=TerraformResourceLifecycle(postcondition=[_enough_zones(len(public_cidrs), region, excluded_zone_ids)]),
        )
        by_kind = dict(zip(KINDS, (public_cidrs, private_cidrs), strict=True))
        wanted = {subnet_name(name, kind, i): block for kind, blocks in by_kind.items() for i, block in enumerate(blocks)}
        self._vpc = Vpc(
            self,
            "vpc",
            cidr_block=cidr,
            enable_dns_hostnames=True,
            enable_dns_support=True,
            tags={"Name": name},
            # Everything of the network depends on the VPC: a refusal here stops the plan before anything is touched.
            lifecycle=TerraformResourceLifecycle(
                precondition=_never_replaced(self, name=name, cidr=cidr, subnets=wanted, az_count=len(public_cidrs))
            ),
        )
        # Nothing should use the default security group; without rules it cannot pass traffic.
        DefaultSecurityGroup(self, "default-sg", vpc_id=self._vpc.id, tags={"Name": f"{name}-default-unused"})
        self.vpc_id = self._vpc.id
        self.public_subnet_ids = self._subnets("public", public_cidrs, PUBLIC_ROLE_TAG)
        self.private_subnet_ids = self._subnets("private", private_cidrs, PRIVATE_ROLE_TAG)

    def _subnets(self, kind: str, cidrs: list[str], role_tag: dict[str, str]) -> list[str]:
        return [
            Subnet(
                self,
                f"{kind}-{i}",
                vpc_id=self._vpc.id,
                cidr_block=cidr,
                # An index, not element(): element() wraps around and would put two subnets in one zone.
                availability_zone=f"${{{self._zones.fqn}.names[{i}]}}",
                # Public subnets hold only ALBs and NAT gateways, which get addresses of their own.
                map_public_ip_on_launch=False,
                tags={"Name": subnet_name(self._name, kind, i), **role_tag},
                # When AWS adds a zone the list can reorder; a subnet never moves (that would
                # replace it and everything in it), it keeps the zone it was created in.
                lifecycle={"ignore_changes": ["availability_zone"]},
            ).id
            for i, cidr in enumerate(cidrs)
        ]


def _enough_zones(count: int, region: str, excluded_zone_ids: Sequence[str]) -> Postcondition:
    found = "${length(self.names)}"
    names = '${join(", ", self.names)}'
    ids = '${join(", ", self.zone_ids)}'
    return Postcondition(
        condition=f"${{length(self.names) >= {count}}}",
        error_message=(
            f"network.az_count is {count}, but {region} offers {found} usable availability zone(s): {names} "
            f"(zone IDs {ids}; network.excluded_zone_ids leaves out {', '.join(excluded_zone_ids) or 'none'}). "
            f"Set network.az_count to at most {found}, or change network.excluded_zone_ids."
        ),
    )


def _never_replaced(scope: Construct, *, name: str, cidr: str, subnets: dict[str, str], az_count: int) -> list[Precondition]:
    """Refuse, at plan, a change that would replace the VPC or an existing subnet, or remove one.

    A VPC's and a subnet's CIDR are ForceNew, and network.az_count re-carves every subnet (model/config/
    subnet_cidrs: 3 -> 4 moves private-0 from 10.0.96.0/19 to 10.0.128.0/19). Under running colours and the traffic
    stack's load balancer that is a destroy of subnets full of their interfaces: it fails half-way (DependencyViolation)
    or takes the network from under every colour. The network outlives the colours, so nothing lifts the refusal
    (docs/upgrade-runbook.md says why, and what to do instead).

    The live objects are found by their Name tags, never through the resources (whose ids are unknown while they are
    replaced), so a fresh account passes: nothing of that name exists. The VPC's CIDR is checked by two listings
    (DescribeVpcs by name, then by name and CIDR); only a VPC that runs another CIDR is read whole, for the message
    (aws_vpc makes five calls). Each existing subnet is read for its CIDR, one DescribeSubnets each: no listing pairs
    a name with its CIDR.
    """
    named = DataAwsVpcs(scope, "existing-vpcs", filter=[DataAwsVpcsFilter(name="tag:Name", values=[name])])
    as_configured = DataAwsVpcs(
        scope,
        "existing-vpcs-as-configured",
        filter=[DataAwsVpcsFilter(name="tag:Name", values=[name]), DataAwsVpcsFilter(name="cidr", values=[cidr])],
    )
    other = f"tolist(setsubtract({named.fqn}.ids, {as_configured.fqn}.ids))"
    running = DataAwsVpc(scope, "running-vpc", count=Token.as_number(f"${{length({other})}}"), id=f"${{{other}[count.index]}}")
    listed = DataAwsSubnets(
        scope,
        "existing-subnets",
        # A wildcard, so that a subnet beyond today's az_count is found too; _moved matches the exact names.
        filter=[DataAwsSubnetsFilter(name="tag:Name", values=[subnet_name(name, kind, "*") for kind in KINDS])],
    )
    count = Token.as_number(f"${{length({listed.fqn}.ids)}}")
    existing = DataAwsSubnet(scope, "existing-subnet", count=count, id=f"${{{listed.fqn}.ids[count.index]}}").fqn
    was = f'${{join(", ", {running.fqn}[*].cidr_block)}}'
    moved = _moved(existing, name=name, subnets=subnets)
    pairs = f'${{length([for s in {existing} : s if can(regex("^{name}-public-[0-9]+$", s.tags["Name"]))])}}'
    vpc_kept = f"length({other}) == 0"
    return [
        Precondition(
            condition=f"${{{vpc_kept}}}",
            error_message=(
                f"network.cidr is {cidr}, but the VPC {name} runs {was}: this change would replace the VPC and every "
                "subnet in it under every colour and the shared load balancer. A VPC's CIDR cannot change in place, "
                f"and the network outlives the colours: keep network.cidr at {was}. A network of another shape is a "
                f"new project beside this one ({WAY_OUT})."
            ),
        ),
        # Only while the VPC is kept: a new VPC CIDR moves every subnet, and the refusal above says so.
        Precondition(
            condition=f"${{!({vpc_kept}) || length({moved}) == 0}}",
            error_message=(
                f"network.az_count is {az_count}, but the VPC {name} was built with {pairs} subnet pair(s): this "
                "change would replace its subnets under every colour and the shared load balancer: "
                f'${{join("; ", sort({moved}))}}. A subnet\'s CIDR cannot change in place, and the network outlives '
                f"the colours: keep network.az_count at {pairs}. A network of another shape is a new project beside "
                f"this one ({WAY_OUT})."
            ),
        ),
    ]


def _moved(existing: str, *, name: str, subnets: dict[str, str]) -> str:
    """Terraform's list of each existing subnet of the network whose CIDR is not the one its name gets now, or whose
    name is no longer wanted: "<name> from <CIDR> to <CIDR>", "<name> (<CIDR>) removed"."""
    wanted = "tomap({" + ", ".join(f'"{subnet}" = "{block}"' for subnet, block in subnets.items()) + "})"
    ours = f'can(regex("^{name}-({"|".join(KINDS)})-[0-9]+$", s.tags["Name"]))'
    return (
        f'[for s in {existing} : contains(keys({wanted}), s.tags["Name"]) '
        f'? format("%s from %s to %s", s.tags["Name"], s.cidr_block, {wanted}[s.tags["Name"]]) '
        f': format("%s (%s) removed", s.tags["Name"], s.cidr_block) '
        f'if {ours} && lookup({wanted}, s.tags["Name"], "") != s.cidr_block]'
    )
