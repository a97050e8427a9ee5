"""The shift's record: a CloudWatch Logs group holding every shift's and drain's events, one log stream per run named by
its shift id (tools/shift/record.py writes them, `python -m tools.shift --history` and `--report` read them back;
docs/shift-record.md says why CloudWatch Logs and not S3).

Encrypted with a key of its own (components/kms_key.py, whose policy lets CloudWatch Logs use it for this account's log
groups), as the project's other log groups are: the traffic stack's other key exists only with traffic.waf on.
"""

from __future__ import annotations

from cdktf_cdktf_provider_aws.cloudwatch_log_group import CloudwatchLogGroup
from cdktf_cdktf_provider_aws.data_aws_caller_identity import DataAwsCallerIdentity
from cdktf_cdktf_provider_aws.data_aws_partition import DataAwsPartition
from constructs import Construct

from components.kms_key import AccountKey


class ShiftRecord(Construct):
    def __init__(self, scope: Construct, id_: str, *, log_group_name: str, retention_days: int, region: str) -> None:
        """log_group_name: the name the shift writes and reads by (model/routes.py shift_record_log_group)."""
        super().__init__(scope, id_)
        key = AccountKey(
            self,
            "key",
            description=f"{log_group_name}: the shift record",
            account_id=DataAwsCallerIdentity(self, "account").account_id,
            partition=DataAwsPartition(self, "partition").partition,
            region=region,
        )
        group = CloudwatchLogGroup(self, "group", name=log_group_name, retention_in_days=retention_days, kms_key_id=key.key_arn)
        self.log_group_name = group.name
