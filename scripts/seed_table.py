"""Create the sample table (if absent) and put sample items, for trying the app locally.

    AWS_ENDPOINT_URL=http://127.0.0.1:5000 python -m scripts.seed_table users 3

Uses the SDK's standard configuration (AWS_REGION, credentials, AWS_ENDPOINT_URL), like the app.
"""

from __future__ import annotations

import sys
from typing import Any

import boto3

from model.config import TABLE_KEY


def create_table(client: Any, table: str) -> None:
    """The sample table's shape, as common makes it (components/table.py): a string partition key, on demand."""
    client.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": TABLE_KEY, "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": TABLE_KEY, "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )


def seed(client: Any, table: str, count: int) -> None:
    if table not in client.list_tables()["TableNames"]:
        create_table(client, table)
        client.get_waiter("table_exists").wait(TableName=table)
    for i in range(1, count + 1):
        client.put_item(TableName=table, Item={TABLE_KEY: {"S": str(i)}, "Point": {"N": str(60 + 10 * i)}})


if __name__ == "__main__":
    args = sys.argv[1:]
    name = args[0] if args else "users"
    number = int(args[1]) if len(args) > 1 else 3
    seed(boto3.client("dynamodb"), name, number)
    print(f"table {name}: {number} items")
