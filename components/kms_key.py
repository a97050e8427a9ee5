"""A customer-managed KMS key with rotation, usable by the account's IAM principals and by
CloudWatch Logs for this account's log groups."""

from __future__ import annotations

from cdktf_cdktf_provider_aws.kms_key import KmsKey
from constructs import Construct

import policies


class AccountKey(Construct):
    def __init__(self, scope: Construct, id_: str, *, description: str, account_id: str, partition: str, region: str) -> None:
        super().__init__(scope, id_)
        key = KmsKey(
            self,
            "key",
            description=description,
            enable_key_rotation=True,
            deletion_window_in_days=30,
            policy=policies.render("kms_key", ACCOUNT_ID=account_id, PARTITION=partition, REGION=region),
        )
        self.key_arn = key.arn
