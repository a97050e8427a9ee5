"""VPC endpoints: the free DynamoDB and S3 gateway endpoints on the private route tables, always, and optional interface
endpoints (ECR, STS, EKS Auth) in the private subnets, behind a security group admitting 443 from the VPC only."""

from __future__ import annotations

from collections.abc import Sequence

from cdktf_cdktf_provider_aws.security_group import SecurityGroup
from cdktf_cdktf_provider_aws.vpc_endpoint import VpcEndpoint
from cdktf_cdktf_provider_aws.vpc_security_group_ingress_rule import VpcSecurityGroupIngressRule
from constructs import Construct

# Gateway endpoints cost nothing (AWS PrivateLink guide, "Gateway endpoints"): a private subnet reaches these services
# through its route table, not through a NAT gateway, so their traffic neither pays NAT's per-GB fee nor fails with a
# zone's NAT gateway. S3 also serves ECR's image layers.
GATEWAY_ENDPOINTS = ("dynamodb", "s3")
HTTPS = 443


def service_name(region: str, service: str) -> str:
    """An AWS service's endpoint service name (`aws ec2 describe-vpc-endpoint-services`)."""
    return f"com.amazonaws.{region}.{service}"


class VpcEndpoints(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        name: str,
        region: str,
        vpc_id: str,
        vpc_cidr: str,
        private_subnet_ids: Sequence[str],
        private_route_table_ids: Sequence[str],
        interface_services: Sequence[str] = (),
    ) -> None:
        """interface_services: the services that get an interface endpoint (config: network.interface_endpoints);
        default none, and then no security group either."""
        super().__init__(scope, id_)
        for service in GATEWAY_ENDPOINTS:
            VpcEndpoint(
                self,
                service,
                vpc_id=vpc_id,
                service_name=service_name(region, service),
                vpc_endpoint_type="Gateway",
                route_table_ids=list(private_route_table_ids),
                tags={"Name": f"{name}-{service}"},
            )
        services = list(dict.fromkeys(interface_services))  # listed twice is one endpoint
        if not services:
            return
        group = SecurityGroup(
            self,
            "interface-sg",
            name=f"{name}-endpoints",
            description=f"{name}: the interface VPC endpoints, HTTPS from the VPC only",
            vpc_id=vpc_id,
            tags={"Name": f"{name}-endpoints"},
        )
        # Only inbound: an endpoint's interfaces answer the connections made to them, and start none.
        VpcSecurityGroupIngressRule(
            self,
            "interface-https",
            security_group_id=group.id,
            description="HTTPS from the VPC (nodes and pods of every colour)",
            ip_protocol="tcp",
            from_port=HTTPS,
            to_port=HTTPS,
            cidr_ipv4=vpc_cidr,
        )
        for service in services:
            VpcEndpoint(
                self,
                service.replace(".", "-"),
                vpc_id=vpc_id,
                service_name=service_name(region, service),
                vpc_endpoint_type="Interface",
                subnet_ids=list(private_subnet_ids),
                security_group_ids=[group.id],
                # The service's own host name answers with the endpoint's private addresses, so SDKs need no setting.
                private_dns_enabled=True,
                tags={"Name": f"{name}-{service}"},
            )
