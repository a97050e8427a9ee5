"""What `common` and `traffic` publish and the other stacks read: the names are defined here, once.

CommonStack must declare exactly these outputs (it fails at synth otherwise) and the other stacks read common's state
only through these names, so the two sides cannot drift apart. Each shared role's output is named after its workload
(model/workloads.py) and each application's image repository after the application: a new component or application
brings its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from model.config import Config, applications, shared_roles


class CommonOutput(StrEnum):
    REGION = "region"
    VPC_ID = "vpc_id"
    PRIVATE_SUBNET_IDS = "private_subnet_ids"
    PUBLIC_SUBNET_IDS = "public_subnet_ids"
    NAT_PUBLIC_IPS = "nat_public_ips"
    ZONE_ID = "zone_id"
    ZONE_NAME = "zone_name"
    CERTIFICATE_ARN = "certificate_arn"
    TABLE_NAME = "table_name"
    TABLE_ARN = "table_arn"


_FIXED: Mapping[str, str] = {
    CommonOutput.REGION: "AWS region of the shared resources; every colour's cluster runs here.",
    CommonOutput.VPC_ID: "ID of the shared VPC; the AWS Load Balancer Controller is given it explicitly.",
    CommonOutput.PRIVATE_SUBNET_IDS: "Private subnet IDs (one per AZ) for EKS control-plane ENIs and nodes.",
    CommonOutput.PUBLIC_SUBNET_IDS: "Public subnet IDs (one per AZ) for the shared load balancer (the traffic stack).",
    CommonOutput.NAT_PUBLIC_IPS: "Public IPs of the NAT gateways: nodes reach a public-only cluster endpoint from these.",
    CommonOutput.ZONE_ID: "Route53 sub-zone ID: the traffic stack writes every host's record there.",
    CommonOutput.ZONE_NAME: "Route53 sub-zone name: every application's host names end in it.",
    CommonOutput.CERTIFICATE_ARN: "ARN of the issued ACM certificate for the sub-zone apex and wildcard (ALB HTTPS).",
    CommonOutput.TABLE_NAME: "DynamoDB table common keeps (`blueGreen.table.name` of every application).",
    CommonOutput.TABLE_ARN: "ARN of common's DynamoDB table (`{{TABLE_ARN}}` in an application's policy).",
}


def common_outputs(config: Config) -> Mapping[str, str]:
    """Every output of common, by name, with its description."""
    return {
        **{str(name): text for name, text in _FIXED.items()},
        **{
            role.output: f"Pod Identity role of {role.namespace}/{role.service_account}: {role.description}."
            for role in shared_roles(config)
        },
        **{
            app.image_output: f"ECR repository URL of the application {app.name}'s image."
            for app in applications(config)
            if app.config.image is not None
        },
    }


# Outputs that are lists; cluster stacks read them with get_list, the rest with get_string.
LIST_OUTPUTS = frozenset(
    {CommonOutput.PRIVATE_SUBNET_IDS.value, CommonOutput.PUBLIC_SUBNET_IDS.value, CommonOutput.NAT_PUBLIC_IPS.value}
)


class TrafficOutput(StrEnum):
    """What the traffic stack publishes and each colour reads (its target groups and the load balancer's group)."""

    TARGET_GROUPS = "target_groups"
    SECURITY_GROUP_ID = "load_balancer_security_group_id"
    LOAD_BALANCER_ARN = "load_balancer_arn"
    DNS_NAME = "load_balancer_dns_name"
    EVENTS_TOPIC_ARN = "shift_events_topic_arn"
    SHIFT_RECORD_LOG_GROUP = "shift_record_log_group"


TRAFFIC_DESCRIPTIONS: Mapping[str, str] = {
    TrafficOutput.TARGET_GROUPS: "Target group ARNs by colour, then application: each colour registers its pods in its own.",
    TrafficOutput.SECURITY_GROUP_ID: "Security group of the shared load balancer: each colour admits it to its pods.",
    TrafficOutput.LOAD_BALANCER_ARN: "ARN of the shared load balancer every application is reached through.",
    TrafficOutput.DNS_NAME: "DNS name of the shared load balancer (every public and preview host is an alias of it).",
    TrafficOutput.EVENTS_TOPIC_ARN: "ARN of the SNS topic the shift publishes its events to (docs/shift-events.md).",
    TrafficOutput.SHIFT_RECORD_LOG_GROUP: "CloudWatch Logs group of every shift's and drain's events, a stream per run "
    "(docs/shift-record.md).",
}
