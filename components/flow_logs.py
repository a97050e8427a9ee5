"""VPC flow logs (all traffic) to a CloudWatch Logs group with a retention."""

from __future__ import annotations

from cdktf_cdktf_provider_aws.cloudwatch_log_group import CloudwatchLogGroup
from cdktf_cdktf_provider_aws.flow_log import FlowLog
from cdktf_cdktf_provider_aws.iam_role import IamRole
from cdktf_cdktf_provider_aws.iam_role_policy import IamRolePolicy
from constructs import Construct

import policies


class FlowLogs(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        name: str,
        vpc_id: str,
        retention_days: int,
        account_id: str,
        kms_key_arn: str,
        permissions_boundary: str,
    ) -> None:
        """permissions_boundary: the project's boundary's ARN (policies/boundary.py), carried by the flow-log role."""
        super().__init__(scope, id_)
        group = CloudwatchLogGroup(
            self, "group", name=f"/vpc/{name}/flow-logs", retention_in_days=retention_days, kms_key_id=kms_key_arn
        )
        role = IamRole(
            self,
            "role",
            name=f"{name}-vpc-flow-logs",
            assume_role_policy=policies.render("flow_logs_trust", ACCOUNT_ID=account_id),
            permissions_boundary=permissions_boundary,
        )
        # Only this group: the role cannot write into any other log group of the account.
        IamRolePolicy(self, "publish", role=role.id, policy=policies.render("flow_logs_publish", LOG_GROUP_ARN=group.arn))
        FlowLog(
            self,
            "flow-log",
            vpc_id=vpc_id,
            traffic_type="ALL",
            log_destination_type="cloud-watch-logs",
            log_destination=group.arn,
            iam_role_arn=role.arn,
            max_aggregation_interval=60,
        )
