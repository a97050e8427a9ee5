"""DynamoDB table the sample app reads: on-demand, point-in-time recovery, encrypted; and a refusal to replace it."""

from __future__ import annotations

from cdktf import Precondition, TerraformResourceLifecycle
from cdktf_cdktf_provider_aws.dynamodb_table import DynamodbTable, DynamodbTableAttribute
from constructs import Construct

from components.network import WAY_OUT
from components.stack_tagged import stack_tagged
from model.config import TABLE_KEY

TABLE_TYPE = "dynamodb:table"  # the Tagging API's resource type filter


class Table(Construct):
    def __init__(
        self, scope: Construct, id_: str, *, table_name: str, deletion_protection: bool, project: str, stack: str
    ) -> None:
        """deletion_protection: on by default in config (deletion_protection): DynamoDB refuses to delete the
        table, and common's deletion guard (components/deletion_guard.py) stops `cdktf destroy common` first.
        project, stack: the default tags the stack gives the table (stacks/base.py): the replacement guard finds the
        table running by them."""
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
            lifecycle=TerraformResourceLifecycle(precondition=[self._never_replaced(table_name, project, stack)]),
        )
        self.table_name = table.name
        self.table_arn = table.arn

    def _never_replaced(self, table_name: str, project: str, stack: str) -> Precondition:
        """Refuse, at plan, a new table name while the project's table runs under another: a table's name is ForceNew
        (DynamoDB renames none), so the plan destroys the table and every item in it, whatever deletion_protection
        says (with it on, the apply fails half-way instead). The running table is found by the stack's tags in one call
        to the Resource Groups Tagging API, its name read from its ARN (`...:table/<name>`): a fresh account has none,
        and passes."""
        tagged = stack_tagged(self, "tagged", resource_type=TABLE_TYPE, project=project, stack=stack)
        running = f'[for m in {tagged.fqn}.resource_tag_mapping_list : element(split("/", m.resource_arn), 1)]'
        was = f'${{join(", ", {running})}}'
        return Precondition(
            condition=f'${{alltrue([for name in {running} : name == "{table_name}"])}}',
            error_message=(
                f"table.name is {table_name}, but the project's table is {was}: this change would replace the "
                f"DynamoDB table, deleting {was} and every item in it (whatever deletion_protection says: with it on, "
                f"the apply fails half-way instead). DynamoDB renames no table: keep table.name at {was}. A table of "
                f"another name is a new project beside this one, its items moved by the team ({WAY_OUT})."
            ),
        )
