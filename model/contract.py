"""What `common` publishes and cluster stacks read: the names are defined here, once.

CommonStack must declare exactly these outputs (it fails at synth otherwise) and cluster stacks
read common's state only through these names, so the two sides cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum


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
    APP_ROLE_ARN = "app_role_arn"
    LOAD_BALANCER_CONTROLLER_ROLE_ARN = "load_balancer_controller_role_arn"
    EXTERNAL_DNS_ROLE_ARN = "external_dns_role_arn"
    VPC_CNI_ROLE_ARN = "vpc_cni_role_arn"


DESCRIPTIONS: Mapping[CommonOutput, str] = {
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
    CommonOutput.APP_ROLE_ARN: "Pod Identity role of the sample app: read-only on the table.",
    CommonOutput.LOAD_BALANCER_CONTROLLER_ROLE_ARN: "Pod Identity role of the AWS Load Balancer Controller.",
    CommonOutput.EXTERNAL_DNS_ROLE_ARN: "Pod Identity role of ExternalDNS: record changes in the sub-zone only.",
    CommonOutput.VPC_CNI_ROLE_ARN: "Pod Identity role of the VPC CNI (kube-system/aws-node), for the vpc-cni add-on.",
}

# Outputs that are lists; cluster stacks read them with get_list, the rest with get_string.
LIST_OUTPUTS = frozenset({CommonOutput.PRIVATE_SUBNET_IDS, CommonOutput.NAT_PUBLIC_IPS})
