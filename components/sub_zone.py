"""A Route53 sub-zone of an existing parent zone, delegated to with an NS record in the parent; and a refusal to replace
it."""

from __future__ import annotations

from cdktf import Precondition, TerraformProvider, TerraformResourceLifecycle, Token
from cdktf_cdktf_provider_aws.data_aws_route53_zone import DataAwsRoute53Zone
from cdktf_cdktf_provider_aws.route53_record import Route53Record
from cdktf_cdktf_provider_aws.route53_zone import Route53Zone
from constructs import Construct

from components.network import WAY_OUT
from components.stack_tagged import stack_tagged

DELEGATION_TTL = 300  # short, so a re-created sub-zone's new name servers take over quickly
ZONE_TYPE = "route53:hostedzone"  # the Tagging API's resource type filter
# Where the Resource Groups Tagging API answers for Route 53's hosted zones: AWS lists a global service's resources in
# us-east-1 only (the common stack gives the zone guard a provider there).
GLOBAL_REGION = "us-east-1"


class SubZone(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        parent_zone: str,
        zone_name: str,
        project: str,
        stack: str,
        global_provider: TerraformProvider,
    ) -> None:
        """project, stack: the default tags the stack gives the zone (stacks/base.py), which the replacement guard finds
        it by; global_provider: an AWS provider in GLOBAL_REGION, for that search."""
        super().__init__(scope, id_)
        parent = DataAwsRoute53Zone(self, "parent", name=parent_zone, private_zone=False)
        guard = _never_replaced(
            self, parent_zone=parent_zone, zone_name=zone_name, project=project, stack=stack, provider=global_provider
        )
        zone = Route53Zone(
            self,
            "zone",
            name=zone_name,
            comment="Records written by ExternalDNS of every colour",
            # The delegation and the certificate depend on the zone: a refusal here stops them too.
            lifecycle=TerraformResourceLifecycle(precondition=[guard]),
        )
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


def _never_replaced(
    scope: Construct, *, parent_zone: str, zone_name: str, project: str, stack: str, provider: TerraformProvider
) -> Precondition:
    """Refuse, at plan, a sub-zone of another name while the project's sub-zone runs: a hosted zone's name is ForceNew,
    and `dns.sub_domain` or `dns.parent_zone` changes it, so the plan destroys the sub-zone, its NS delegation in the
    parent zone and the certificate: every public and preview host stops answering. The running zone is found by the
    stack's tags (one Tagging API call, in GLOBAL_REGION), then read by its id for its name: a fresh account has none,
    and passes."""
    tagged = stack_tagged(scope, "tagged", resource_type=ZONE_TYPE, project=project, stack=stack, provider=provider)
    found = f"{tagged.fqn}.resource_tag_mapping_list"
    running = DataAwsRoute53Zone(
        scope,
        "running",
        count=Token.as_number(f"${{length({found})}}"),
        zone_id=f'${{element(split("/", {found}[count.index].resource_arn), 1)}}',  # arn:...:hostedzone/<id>
    ).fqn
    names = f'[for z in {running} : trimsuffix(z.name, ".")]'
    # The zone's name is `<sub_domain>.<parent_zone>`, sub_domain one label (model/config/).
    parts = f'[for z in {running} : regex("^([^.]+)[.](.+?)[.]?$", z.name)]'
    return Precondition(
        condition=f'${{alltrue([for name in {names} : name == "{zone_name}"])}}',
        error_message=(
            f"dns.sub_domain is {zone_name.removesuffix('.' + parent_zone)} and dns.parent_zone {parent_zone} (the "
            f'sub-zone {zone_name}), but the project\'s sub-zone is ${{join(", ", {names})}}: this change would '
            "replace the hosted zone, its NS delegation in the parent zone and the "
            "certificate, and every public and preview host of every application would stop answering. A hosted zone's "
            f'name cannot change in place: keep dns.sub_domain at ${{join(", ", [for p in {parts} : p[0]])}} and '
            f'dns.parent_zone at ${{join(", ", [for p in {parts} : p[1]])}}. Other host names are a new project beside '
            f"this one ({WAY_OUT})."
        ),
    )
