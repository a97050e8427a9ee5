"""Internet gateway, NAT gateway(s) and route tables for a VPC's public and private subnets."""

from __future__ import annotations

from cdktf_cdktf_provider_aws.eip import Eip
from cdktf_cdktf_provider_aws.internet_gateway import InternetGateway
from cdktf_cdktf_provider_aws.nat_gateway import NatGateway
from cdktf_cdktf_provider_aws.route import Route
from cdktf_cdktf_provider_aws.route_table import RouteTable
from cdktf_cdktf_provider_aws.route_table_association import RouteTableAssociation
from constructs import Construct

_ANYWHERE = "0.0.0.0/0"


class Egress(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        name: str,
        vpc_id: str,
        public_subnet_ids: list[str],
        private_subnet_ids: list[str],
        nat_per_az: bool,
    ) -> None:
        """nat_per_az: one NAT gateway per AZ (survives an AZ outage); False: one shared NAT (cheaper)."""
        super().__init__(scope, id_)
        igw = InternetGateway(self, "igw", vpc_id=vpc_id, tags={"Name": name})
        public = RouteTable(self, "public", vpc_id=vpc_id, tags={"Name": f"{name}-public"})
        Route(self, "public-default", route_table_id=public.id, destination_cidr_block=_ANYWHERE, gateway_id=igw.id)
        for i, subnet_id in enumerate(public_subnet_ids):
            RouteTableAssociation(self, f"public-{i}", subnet_id=subnet_id, route_table_id=public.id)

        nat_subnets = public_subnet_ids if nat_per_az else public_subnet_ids[:1]
        nat_ids = []
        self.nat_public_ips: list[str] = []  # the addresses the private subnets reach the internet from
        for i, subnet_id in enumerate(nat_subnets):
            eip = Eip(self, f"nat-eip-{i}", domain="vpc", tags={"Name": f"{name}-nat-{i}"})
            nat = NatGateway(
                self, f"nat-{i}", allocation_id=eip.id, subnet_id=subnet_id, tags={"Name": f"{name}-nat-{i}"}, depends_on=[igw]
            )
            nat_ids.append(nat.id)
            self.nat_public_ips.append(eip.public_ip)
        self.private_route_table_ids: list[str] = []  # one per private subnet (gateway endpoints add their routes)
        for i, subnet_id in enumerate(private_subnet_ids):
            private = RouteTable(self, f"private-{i}", vpc_id=vpc_id, tags={"Name": f"{name}-private-{i}"})
            self.private_route_table_ids.append(private.id)
            nat_id = nat_ids[i % len(nat_ids)]
            Route(
                self, f"private-default-{i}", route_table_id=private.id, destination_cidr_block=_ANYWHERE, nat_gateway_id=nat_id
            )
            RouteTableAssociation(self, f"private-assoc-{i}", subnet_id=subnet_id, route_table_id=private.id)
