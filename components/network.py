"""VPC with one public and one private subnet per AZ, tagged for the AWS Load Balancer Controller."""

from __future__ import annotations

from collections.abc import Sequence

from cdktf import Postcondition, TerraformResourceLifecycle
from cdktf_cdktf_provider_aws.data_aws_availability_zones import DataAwsAvailabilityZones, DataAwsAvailabilityZonesFilter
from cdktf_cdktf_provider_aws.default_security_group import DefaultSecurityGroup
from cdktf_cdktf_provider_aws.subnet import Subnet
from cdktf_cdktf_provider_aws.vpc import Vpc
from constructs import Construct

# Subnet discovery tags read by the AWS Load Balancer Controller: internet-facing ALBs go to
# subnets tagged elb, internal ones to internal-elb.
PUBLIC_ROLE_TAG = {"kubernetes.io/role/elb": "1"}
PRIVATE_ROLE_TAG = {"kubernetes.io/role/internal-elb": "1"}


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
        self._vpc = Vpc(self, "vpc", cidr_block=cidr, enable_dns_hostnames=True, enable_dns_support=True, tags={"Name": name})
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
                tags={"Name": f"{self._name}-{kind}-{i}", **role_tag},
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
