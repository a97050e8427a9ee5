"""An AWS WAF web ACL of AWS managed rule groups on one load balancer, its requests logged to CloudWatch Logs.

Imported only when `traffic.waf.enabled` is on: the provider's wafv2 bindings are a module of their own that takes
seconds to load (every statement type of WAF), which a project without a web ACL should not pay at every synth.
"""

from __future__ import annotations

from collections.abc import Sequence

from cdktf_cdktf_provider_aws.cloudwatch_log_group import CloudwatchLogGroup
from cdktf_cdktf_provider_aws.wafv2_web_acl import (
    Wafv2WebAcl,
    Wafv2WebAclDefaultAction,
    Wafv2WebAclDefaultActionAllow,
    Wafv2WebAclRule,
    Wafv2WebAclRuleOverrideAction,
    Wafv2WebAclRuleOverrideActionCount,
    Wafv2WebAclRuleOverrideActionNone,
    Wafv2WebAclRuleVisibilityConfig,
    Wafv2WebAclVisibilityConfig,
)
from cdktf_cdktf_provider_aws.wafv2_web_acl_association import Wafv2WebAclAssociation
from cdktf_cdktf_provider_aws.wafv2_web_acl_logging_configuration import Wafv2WebAclLoggingConfiguration
from constructs import Construct

# WAF writes only to a destination whose name starts so (WAF API reference, PutLoggingConfiguration).
LOG_GROUP_PREFIX = "aws-waf-logs-"


class WebAcl(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        name: str,
        rule_groups: Sequence[str],
        count_only: bool,
        resource_arn: str,
        log_retention_days: int,
        kms_key_arn: str,
    ) -> None:
        """rule_groups: AWS managed rule groups, evaluated in this order. count_only: each group counts what it would
        block and blocks nothing. resource_arn: the load balancer it guards (a load balancer takes one web ACL)."""
        super().__init__(scope, id_)
        # Each group keeps its own rules' actions (block) unless counting; a request no rule blocks is let through.
        override = (
            Wafv2WebAclRuleOverrideAction(count=Wafv2WebAclRuleOverrideActionCount())
            if count_only
            else Wafv2WebAclRuleOverrideAction(none=Wafv2WebAclRuleOverrideActionNone())
        )
        acl = Wafv2WebAcl(
            self,
            "acl",
            name=name,
            description=f"{name}: AWS managed rule groups in front of every application",
            scope="REGIONAL",
            default_action=Wafv2WebAclDefaultAction(allow=Wafv2WebAclDefaultActionAllow()),
            rule=[
                Wafv2WebAclRule(
                    name=group,
                    priority=priority,
                    override_action=override,
                    # The provider's schema types a statement as JSON-shaped (its nesting is recursive).
                    statement={"managed_rule_group_statement": {"name": group, "vendor_name": "AWS"}},
                    visibility_config=Wafv2WebAclRuleVisibilityConfig(
                        cloudwatch_metrics_enabled=True, metric_name=f"{name}-{group}", sampled_requests_enabled=True
                    ),
                )
                for priority, group in enumerate(rule_groups)
            ],
            visibility_config=Wafv2WebAclVisibilityConfig(
                cloudwatch_metrics_enabled=True, metric_name=name, sampled_requests_enabled=True
            ),
        )
        Wafv2WebAclAssociation(self, "association", resource_arn=resource_arn, web_acl_arn=acl.arn)
        # CloudWatch Logs, encrypted with the stack's key; WAF adds the log group's resource policy for its delivery.
        group = CloudwatchLogGroup(
            self, "logs", name=f"{LOG_GROUP_PREFIX}{name}", retention_in_days=log_retention_days, kms_key_id=kms_key_arn
        )
        Wafv2WebAclLoggingConfiguration(self, "logging", resource_arn=acl.arn, log_destination_configs=[group.arn])
