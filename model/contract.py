"""What `common` publishes and cluster stacks read: the names are defined here, once.

CommonStack must declare exactly these outputs (it fails at synth otherwise) and cluster stacks
read common's state only through these names, so the two sides cannot drift apart. Each shared
role's output is named after its workload (model/workloads.py): a new component brings its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from model.workloads import SHARED_ROLES


class CommonOutput(StrEnum):
    REGION = "region"
    VPC_ID = "vpc_id"
    PRIVATE_SUBNET_IDS = "private_subnet_ids"
    NAT_PUBLIC_IPS = "nat_public_ips"
    ZONE_ID = "zone_id"
    ZONE_NAME = "zone_name"
    CERTIFICATE_ARN = "certificate_arn"
    TABLE_NAME = "table_name"
    TABLE_ARN = "table_arn"
    IMAGE_REPOSITORY_URL = "image_repository_url"


_FIXED: Mapping[str, str] = {
    CommonOutput.REGION: "AWS region of the shared resources; every colour's cluster runs here.",
    CommonOutput.VPC_ID: "ID of the shared VPC; the AWS Load Balancer Controller is given it explicitly.",
    CommonOutput.PRIVATE_SUBNET_IDS: "Private subnet IDs (one per AZ) for EKS control-plane ENIs and nodes.",
    CommonOutput.NAT_PUBLIC_IPS: "Public IPs of the NAT gateways: nodes reach a public-only cluster endpoint from these.",
    CommonOutput.ZONE_ID: "Route53 sub-zone ID where ExternalDNS writes the weighted records.",
    CommonOutput.ZONE_NAME: "Route53 sub-zone name (ExternalDNS domain filter; app host names end in it).",
    CommonOutput.CERTIFICATE_ARN: "ARN of the issued ACM certificate for the sub-zone apex and wildcard (ALB HTTPS).",
    CommonOutput.TABLE_NAME: "DynamoDB table the sample app reads (TABLE_NAME).",
    CommonOutput.TABLE_ARN: "ARN of the sample app's DynamoDB table.",
    CommonOutput.IMAGE_REPOSITORY_URL: "ECR repository URL of the sample app image.",
}
# Every output of common, by name, with its description.
DESCRIPTIONS: Mapping[str, str] = {
    **{str(name): text for name, text in _FIXED.items()},
    **{
        role.output: f"Pod Identity role of {role.namespace}/{role.service_account}: {role.description}." for role in SHARED_ROLES
    },
}

# Outputs that are lists; cluster stacks read them with get_list, the rest with get_string.
LIST_OUTPUTS = frozenset({CommonOutput.PRIVATE_SUBNET_IDS.value, CommonOutput.NAT_PUBLIC_IPS.value})
