"""The `common` stack: everything that outlives clusters, shared by every colour."""

from __future__ import annotations

from cdktf import TerraformOutput, TerraformResource, TerraformStack
from cdktf_cdktf_provider_aws.data_aws_caller_identity import DataAwsCallerIdentity
from cdktf_cdktf_provider_aws.data_aws_partition import DataAwsPartition
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
from components.sub_zone import SubZone
from components.table import Table
from model.config import COMMON_STACK, Config, subnet_cidrs
from model.contract import DESCRIPTIONS, CommonOutput
from model.workloads import SHARED_ROLES
from stacks.base import configure_stack

# Before the component registry named every shared role after its component, two roles had other construct ids.
# Terraform moves their state to the new addresses (moved blocks) instead of replacing roles that running pods
# assume. Remove once every deployment has applied common with them.
FORMER_ADDRESSES = {
    "sample-app": {
        "role": "aws_iam_role.app-role_42B844E6",
        "policy": "aws_iam_policy.app-role_policy_547F7C8A",
        "attachment": "aws_iam_role_policy_attachment.app-role_attachment_B3DECB32",
    },
    "aws-load-balancer-controller": {
        "role": "aws_iam_role.lbc-role_F0F36708",
        "policy": "aws_iam_policy.lbc-role_policy_EA9D2542",
        "attachment": "aws_iam_role_policy_attachment.lbc-role_attachment_39CCB8BD",
    },
}


class CommonStack(TerraformStack):
    def __init__(self, scope: Construct, *, config: Config) -> None:
        super().__init__(scope, COMMON_STACK)
        configure_stack(self, config, COMMON_STACK)
        name = config.project
        account = DataAwsCallerIdentity(self, "account")
        partition = DataAwsPartition(self, "partition").partition
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
        FlowLogs(
            self,
            "flow-logs",
            name=name,
            vpc_id=network.vpc_id,
            retention_days=config.network.flow_log_retention_days,
            account_id=account.account_id,
            kms_key_arn=logs_key.key_arn,
        )

        zone = SubZone(self, "dns", parent_zone=config.dns.parent_zone, zone_name=config.dns.zone_name)
        certificate = Certificate(
            self, "certificate", zone_name=config.dns.zone_name, zone_id=zone.zone_id, delegation=zone.delegation
        )
        table = Table(self, "table", table_name=config.table.name, deletion_protection=config.deletion_protection)
        image = ImageRepository(self, "image", repository_name=config.image.repository, protected=config.deletion_protection)
        if config.image.build_connection_arn:
            ImageBuild(
                self,
                "image-build",
                name=f"{name}-sample-app-image",
                repository_url=image.repository_url,
                repository_arn=image.repository_arn,
                source_url=config.gitops.repo_url,
                source_type=config.image.build_source_type,
                connection_arn=config.image.build_connection_arn,
                account_id=account.account_id,
                kms_key_arn=logs_key.key_arn,
            )

        # Each document takes the values it names from these.
        fills = {"TABLE_ARN": table.table_arn, "ZONE_ARN": zone.zone_arn, "PARTITION": partition}
        role_arns = {
            role.output: PodIdentityRole(
                self,
                role.construct_id,
                role_name=f"{name}-{role.name}",
                description=role.description,
                namespace=role.namespace,
                service_account=role.service_account,
                policy_json=policies.render_from(role.policy, fills) if role.policy else "",
                managed_policy_arns=[f"arn:{partition}:iam::aws:policy/{role.aws_managed_policy}"]
                if role.aws_managed_policy
                else [],
                moved_from=FORMER_ADDRESSES.get(role.name, {}),
            ).role_arn
            for role in SHARED_ROLES
        }

        # Last: it depends on everything above, so `cdktf destroy common` meets it first, and stops there while
        # deletion_protection is on or, whatever deletion_protection says, while a colour's cluster runs in the VPC.
        everything = [node for node in self.node.find_all() if isinstance(node, TerraformResource)]
        DeletionGuard(
            self,
            "deletion-guard",
            protected=config.deletion_protection,
            keeps=f"the DynamoDB table {config.table.name} and the image repository {config.image.repository}",
            vpc_id=network.vpc_id,
            region=config.region,
            project=config.project,
            after=everything,
        )
        self._outputs(
            {
                CommonOutput.REGION: config.region,
                CommonOutput.VPC_ID: network.vpc_id,
                CommonOutput.PRIVATE_SUBNET_IDS: network.private_subnet_ids,
                CommonOutput.NAT_PUBLIC_IPS: egress.nat_public_ips,
                CommonOutput.ZONE_ID: zone.zone_id,
                CommonOutput.ZONE_NAME: zone.zone_name,
                CommonOutput.CERTIFICATE_ARN: certificate.certificate_arn,
                CommonOutput.TABLE_NAME: table.table_name,
                CommonOutput.TABLE_ARN: table.table_arn,
                CommonOutput.IMAGE_REPOSITORY_URL: image.repository_url,
                **role_arns,
            }
        )

    def _outputs(self, values: dict[str, object]) -> None:
        if set(values) != set(DESCRIPTIONS):
            raise ValueError(
                f"common must publish exactly the contract's outputs; it differs in {set(values) ^ set(DESCRIPTIONS)}"
            )
        for output, value in values.items():
            TerraformOutput(self, output, value=value, description=DESCRIPTIONS[output])
