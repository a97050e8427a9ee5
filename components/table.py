"""DynamoDB table the sample app reads: on-demand, point-in-time recovery, encrypted."""

from __future__ import annotations

from cdktf_cdktf_provider_aws.dynamodb_table import DynamodbTable, DynamodbTableAttribute
from constructs import Construct

from model.workloads import TABLE_KEY


class Table(Construct):
    def __init__(self, scope: Construct, id_: str, *, table_name: str, deletion_protection: bool) -> None:
        """deletion_protection: on by default in config (deletion_protection): DynamoDB refuses to delete the
        table, and common's deletion guard (components/deletion_guard.py) stops `cdktf destroy common` first."""
        super().__init__(scope, id_)
        table = DynamodbTable(
            self,
            "table",
            name=table_name,
            billing_mode="PAY_PER_REQUEST",
            hash_key=TABLE_KEY,
            attribute=[DynamodbTableAttribute(name=TABLE_KEY, type="S")],
            point_in_time_recovery={"enabled": True},
            server_side_encryption={"enabled": True},
            deletion_protection_enabled=deletion_protection,
        )
        self.table_name = table.name
        self.table_arn = table.arn
