"""The one Application Load Balancer every colour's applications are reached through, outside every cluster.

HTTPS on 443 with the sub-zone's wildcard certificate (a host nobody configured, or a preview host asked from outside
its networks, gets a 404), HTTP on 80 redirected to HTTPS. Each application and colour is a target group the colour's
load balancer controller fills with its pods (components/application_routes.py); the weights between the colours are
the listener rules' weighted forwards, which only `python -m tools.shift` changes. Because the load balancer belongs
to no colour, traffic leaves a colour whose Kubernetes API, Argo CD or controllers are broken with one call to it
(docs/architecture.md: Traffic).
"""

from __future__ import annotations

from collections.abc import Sequence

from cdktf_cdktf_provider_aws.lb import Lb, LbAccessLogs
from cdktf_cdktf_provider_aws.lb_listener import (
    LbListener,
    LbListenerDefaultAction,
    LbListenerDefaultActionFixedResponse,
    LbListenerDefaultActionRedirect,
)
from cdktf_cdktf_provider_aws.security_group import SecurityGroup
from cdktf_cdktf_provider_aws.vpc_security_group_egress_rule import VpcSecurityGroupEgressRule
from cdktf_cdktf_provider_aws.vpc_security_group_ingress_rule import VpcSecurityGroupIngressRule
from constructs import Construct

from model.routes import NOT_FOUND

# TLS 1.3 with 1.2 for older clients, the policy AWS recommends for internet-facing load balancers.
SSL_POLICY = "ELBSecurityPolicy-TLS13-1-2-2021-06"


class SharedLoadBalancer(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        name: str,
        vpc_id: str,
        vpc_cidr: str,
        subnet_ids: Sequence[str],
        certificate_arn: str,
        deletion_protection: bool,
        access_logs_bucket: str,
    ) -> None:
        """subnet_ids: common's public subnets, one per zone. deletion_protection: AWS refuses to delete it while on.
        access_logs_bucket: where it writes access logs, under `name/` (empty: nowhere); AWS checks, when the
        load balancer is made or changed, that it may write there, so a bucket that refuses fails the deploy."""
        super().__init__(scope, id_)
        group = SecurityGroup(
            self,
            "security-group",
            name=f"{name}-alb",
            description=f"{name}: the shared load balancer, open to the internet on 80 and 443",
            vpc_id=vpc_id,
        )
        for port in (80, 443):
            VpcSecurityGroupIngressRule(
                self,
                f"from-internet-{port}",
                security_group_id=group.id,
                description=f"clients, port {port}",
                cidr_ipv4="0.0.0.0/0",
                ip_protocol="tcp",
                from_port=port,
                to_port=port,
            )
        # Only into the VPC: the pods behind the target groups. Each colour admits this group on its nodes
        # (components/load_balancer_access.py); nothing else may be reached from here.
        VpcSecurityGroupEgressRule(
            self,
            "to-pods",
            security_group_id=group.id,
            description="the pods of every colour, in the VPC",
            cidr_ipv4=vpc_cidr,
            ip_protocol="tcp",
            from_port=1,
            to_port=65535,
        )
        balancer = Lb(
            self,
            "alb",
            name=name,
            load_balancer_type="application",
            internal=False,
            subnets=list(subnet_ids),
            security_groups=[group.id],
            drop_invalid_header_fields=True,
            enable_deletion_protection=deletion_protection,
            access_logs=LbAccessLogs(bucket=access_logs_bucket, prefix=name, enabled=True) if access_logs_bucket else None,
        )
        self.https_listener = LbListener(
            self,
            "https",
            load_balancer_arn=balancer.arn,
            port=443,
            protocol="HTTPS",
            ssl_policy=SSL_POLICY,
            certificate_arn=certificate_arn,
            default_action=[
                LbListenerDefaultAction(
                    type="fixed-response",
                    fixed_response=LbListenerDefaultActionFixedResponse(
                        content_type="text/plain", message_body=NOT_FOUND, status_code="404"
                    ),
                )
            ],
        )
        LbListener(
            self,
            "http",
            load_balancer_arn=balancer.arn,
            port=80,
            protocol="HTTP",
            default_action=[
                LbListenerDefaultAction(
                    type="redirect",
                    redirect=LbListenerDefaultActionRedirect(port="443", protocol="HTTPS", status_code="HTTP_301"),
                )
            ],
        )
        self.load_balancer_arn = balancer.arn
        self.dns_name = balancer.dns_name
        self.zone_id = balancer.zone_id
        self.security_group_id = group.id
