"""A Route53 sub-zone of an existing parent zone, delegated to with an NS record in the parent."""

from __future__ import annotations

from cdktf_cdktf_provider_aws.data_aws_route53_zone import DataAwsRoute53Zone
from cdktf_cdktf_provider_aws.route53_record import Route53Record
from cdktf_cdktf_provider_aws.route53_zone import Route53Zone
from constructs import Construct

DELEGATION_TTL = 300  # short, so a re-created sub-zone's new name servers take over quickly


class SubZone(Construct):
    def __init__(self, scope: Construct, id_: str, *, parent_zone: str, zone_name: str) -> None:
        super().__init__(scope, id_)
        parent = DataAwsRoute53Zone(self, "parent", name=parent_zone, private_zone=False)
        zone = Route53Zone(self, "zone", name=zone_name, comment="Records written by ExternalDNS of every colour")
        self.delegation = Route53Record(
            self,
            "delegation",
            zone_id=parent.zone_id,
            name=zone_name,
            type="NS",
            ttl=DELEGATION_TTL,
            records=zone.name_servers,
        )
        self.zone_id = zone.zone_id
        self.zone_arn = zone.arn
        self.zone_name = zone.name
