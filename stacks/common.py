"""The `common` stack: everything that outlives clusters, shared by every colour."""

from __future__ import annotations

from collections.abc import Mapping

from cdktf import TerraformOutput, TerraformResource, TerraformStack
from cdktf_cdktf_provider_aws.data_aws_caller_identity import DataAwsCallerIdentity
from cdktf_cdktf_provider_aws.data_aws_partition import DataAwsPartition
from cdktf_cdktf_provider_aws.provider import AwsProvider
from constructs import Construct

import policies
from components.certificate import Certificate
from components.deletion_guard import DeletionGuard
from components.egress import Egress
from components.flow_logs import FlowLogs
from components.image_build import ImageBuild
from components.image_repository import ImageRepository
from components.kms_key import AccountKey
from components.network import Network
from components.pod_identity_role import PodIdentityRole
from components.sub_zone import GLOBAL_REGION, SubZone
from components.table import Table
from components.vpc_endpoints import VpcEndpoints
from model.config import (
    COMMON_STACK,
    Config,
    application_workloads,
    applications,
    cluster_names,
    image_repository_name,
    shared_roles,
    subnet_cidrs,
)
from model.contract import CommonOutput, common_outputs
from model.external_secrets import materialised, secret_arns
from model.literal import literal
from model.migrations.state_moves import (  # the common-state-moves migration (model/migrations/)
    FORMER_APPLICATION_ROLE,
    FORMER_IMAGE_BUILD,
    FORMER_IMAGE_REPOSITORY,
    FORMER_PLATFORM_ADDRESSES,
)
from model.routes import TRAFFIC_STACK
from policies.boundary import policy_arn
from stacks.base import configure_stack

# What a colour uses of common, for the deletion guard's refusal.
COMMON_USES = "its subnets, NAT gateways and Pod Identity roles"


class CommonStack(TerraformStack):
    def __init__(self, scope: Construct, *, config: Config) -> None:
        super().__init__(scope, COMMON_STACK)
        # Terraform reads an output's description literally: in the configuration's own words (model/literal.py).
        contract = common_outputs(config)
        # From here on, every string of the configuration is data to Terraform.
        config = configure_stack(self, config, COMMON_STACK)
        name = config.project
        account = DataAwsCallerIdentity(self, "account")
        partition = DataAwsPartition(self, "partition").partition
        # Every role common creates carries it (policies/boundary.py): an administrator creates it before the first deploy.
        boundary = policy_arn(partition=partition, account_id=account.account_id, project=name)
        logs_key = AccountKey(
            self,
            "logs-key",
            description=f"{name}: CloudWatch Logs of the shared resources",
            account_id=account.account_id,
            partition=partition,
            region=config.region,
        )

        public_cidrs, private_cidrs = subnet_cidrs(config.network)
        network = Network(
            self,
            "network",
            name=name,
            cidr=config.network.cidr,
            public_cidrs=public_cidrs,
            private_cidrs=private_cidrs,
            region=config.region,
            excluded_zone_ids=config.network.excluded_zone_ids,
        )
        egress = Egress(
            self,
            "egress",
            name=name,
            vpc_id=network.vpc_id,
            public_subnet_ids=network.public_subnet_ids,
            private_subnet_ids=network.private_subnet_ids,
            nat_per_az=config.network.nat == "per_az",
        )
        VpcEndpoints(
            self,
            "endpoints",
            name=name,
            region=config.region,
            vpc_id=network.vpc_id,
            vpc_cidr=config.network.cidr,
            private_subnet_ids=network.private_subnet_ids,
            private_route_table_ids=egress.private_route_table_ids,
            interface_services=config.network.interface_endpoints,
        )
        FlowLogs(
            self,
            "flow-logs",
            name=name,
            vpc_id=network.vpc_id,
            retention_days=config.network.flow_log_retention_days,
            account_id=account.account_id,
            kms_key_arn=logs_key.key_arn,
            permissions_boundary=boundary,
        )

        zone = SubZone(
            self,
            "dns",
            parent_zone=config.dns.parent_zone,
            zone_name=config.dns.zone_name,
            project=name,
            stack=COMMON_STACK,
            global_provider=AwsProvider(self, "aws-global", alias="global", region=GLOBAL_REGION),
        )
        certificate = Certificate(
            self, "certificate", zone_name=config.dns.zone_name, zone_id=zone.zone_id, delegation=zone.delegation
        )
        table = Table(
            self,
            "table",
            table_name=config.table.name,
            deletion_protection=config.deletion_protection,
            project=name,
            stack=COMMON_STACK,
        )
        with_image = [app for app in applications(config) if app.config.image is not None]
        image_urls = {}
        for number, app in enumerate(with_image):
            assert app.config.image is not None
            image = ImageRepository(
                self,
                f"{app.name}-image",
                repository_name=image_repository_name(config, app),
                protected=config.deletion_protection,
                moved_from=FORMER_IMAGE_REPOSITORY if number == 0 else {},
            )
            image_urls[app.image_output] = image.repository_url
            if app.config.image.buildspec and config.image.build_connection_arn:
                ImageBuild(
                    self,
                    f"{app.name}-image-build",
                    name=f"{name}-{app.name}-image",
                    repository_url=image.repository_url,
                    repository_arn=image.repository_arn,
                    source_url=app.config.source.repo_url or config.gitops.repo_url,
                    source_type=config.image.build_source_type,
                    buildspec=app.config.image.buildspec,
                    connection_arn=config.image.build_connection_arn,
                    account_id=account.account_id,
                    kms_key_arn=logs_key.key_arn,
                    permissions_boundary=boundary,
                    moved_from=FORMER_IMAGE_BUILD if number == 0 else {},
                )

        # Each document takes the values it names from these.
        fills: dict[str, policies.Fill] = {
            "TABLE_ARN": table.table_arn,
            "ZONE_ARN": zone.zone_arn,
            "PARTITION": partition,
            "REGION": config.region,
            "ACCOUNT_ID": account.account_id,
            # Every colour's cluster, present and future (`<project>-*`): a shared role may act on the project's
            # clusters' resources only (the cluster autoscaler's Auto Scaling groups, by their eks:cluster-name tag).
            "CLUSTER_NAMES": cluster_names(config),
            # The shared load balancer's target groups carry these as default tags (stacks/base.py): the load balancer
            # controller registers targets into this project's groups only (its policy.json, upstream/sources.yaml).
            "PROJECT": config.project,
            "TRAFFIC_STACK": TRAFFIC_STACK,
            # External Secrets Operator's role reads exactly the secrets it materialises (none: no policy at all).
            "SECRET_ARNS": secret_arns(
                materialised(config), partition=partition, region=config.region, account_id=account.account_id
            ),
        }
        first_with_policy = next((w.name for w in application_workloads(config)), None)
        former = {**FORMER_PLATFORM_ADDRESSES, **({first_with_policy: FORMER_APPLICATION_ROLE} if first_with_policy else {})}
        role_arns = {
            role.output: PodIdentityRole(
                self,
                role.construct_id,
                role_name=f"{name}-{role.name}",
                description=role.description,
                namespace=role.namespace,
                service_account=role.service_account,
                cluster_names=cluster_names(config),
                permissions_boundary=boundary,
                policy_json=policies.render_from(role.policy, fills, escape=literal) if role.policy else "",
                managed_policy_arns=[f"arn:{partition}:iam::aws:policy/{role.aws_managed_policy}"]
                if role.aws_managed_policy
                else [],
                moved_from=former.get(role.name, {}),
            ).role_arn
            for role in shared_roles(config)
        }

        # Last: it depends on everything above, so `cdktf destroy common` meets it first, and stops there while
        # deletion_protection is on or, whatever deletion_protection says, while a colour's cluster runs in the VPC.
        everything = [node for node in self.node.find_all() if isinstance(node, TerraformResource)]
        DeletionGuard(
            self,
            "deletion-guard",
            stack=COMMON_STACK,
            protected=config.deletion_protection,
            keeps=f"the DynamoDB table {config.table.name} and the image repositories, which no deploy can re-create",
            uses=COMMON_USES,
            vpc_id=network.vpc_id,
            region=config.region,
            project=config.project,
            after=everything,
        )
        self._outputs(
            contract,
            {
                CommonOutput.REGION: config.region,
                CommonOutput.VPC_ID: network.vpc_id,
                CommonOutput.PRIVATE_SUBNET_IDS: network.private_subnet_ids,
                CommonOutput.PUBLIC_SUBNET_IDS: network.public_subnet_ids,
                CommonOutput.NAT_PUBLIC_IPS: egress.nat_public_ips,
                CommonOutput.ZONE_ID: zone.zone_id,
                CommonOutput.ZONE_NAME: zone.zone_name,
                CommonOutput.CERTIFICATE_ARN: certificate.certificate_arn,
                CommonOutput.TABLE_NAME: table.table_name,
                CommonOutput.TABLE_ARN: table.table_arn,
                **image_urls,
                **role_arns,
            },
        )

    def _outputs(self, contract: Mapping[str, str], values: dict[str, object]) -> None:
        """contract: each output's description, by name (model/contract.py)."""
        if set(values) != set(contract):
            raise ValueError(f"common must publish exactly the contract's outputs; it differs in {set(values) ^ set(contract)}")
        for output, value in values.items():
            TerraformOutput(self, output, value=value, description=contract[output])
