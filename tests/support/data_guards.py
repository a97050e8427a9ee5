"""common's guards against replacing what holds data (components/sub_zone.py, components/table.py), planned by Terraform
against an AWS emulator of their own (scripts/emulator.py: hosted zones listed by the Tagging API in us-east-1, as AWS
lists them), three times:

- `fresh`: nothing of the project exists (a first deploy): both pass;
- `unchanged`: the sub-zone and the table exist as the configuration names them, tagged as common tags them: both pass;
- `renamed`: they exist under the names of an earlier configuration (another `dns.sub_domain`, another `table.name`):
  both are refused, each with its message.

Each guard as synthesized: its data sources, common's two providers (its region's, and us-east-1's for the zones), and
its precondition on a `terraform_data` (the zone and the table themselves would be planned for creation, which the
precondition stops either way). A server of its own: the background emulator's project (the CLI check's `cdktf diff
common`) must not meet a renamed table of the same project.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scripts.emulator import MotoProcess, client, environment
from tests.support.emulator_plans import REGION
from tests.support.terraform import run

# The earlier configuration's names, which the emulator holds in `renamed`.
EARLIER_SUB_DOMAIN = "shop"
EARLIER_TABLE = "eks-bg-orders"


def guard_root(common: Mapping[str, Any]) -> dict[str, Any]:
    """The zone's and the table's guards of a synthesized common stack, as a root module of their own."""
    (zone,) = common["resource"]["aws_route53_zone"].values()
    (table,) = common["resource"]["aws_dynamodb_table"].values()
    zones = {name: body for name, body in common["data"]["aws_route53_zone"].items() if "running" in name}
    return {
        "terraform": {"required_providers": common["terraform"]["required_providers"]},
        "provider": common["provider"],
        "data": {"aws_resourcegroupstaggingapi_resources": common["data"]["aws_resourcegroupstaggingapi_resources"]}
        | {"aws_route53_zone": zones},
        "resource": {
            "terraform_data": {
                "zone": {"input": zone["name"], "lifecycle": zone["lifecycle"]},
                "table": {"input": table["name"], "lifecycle": table["lifecycle"]},
            }
        },
    }


def plan_guards(directory: Path, common: Mapping[str, Any]) -> dict[str, tuple[int, str]]:
    """(exit status, output) of each plan (fresh, unchanged, renamed), in that order on one emulator (a thread: no jsii here)."""
    (zone,) = common["resource"]["aws_route53_zone"].values()
    (table,) = common["resource"]["aws_dynamodb_table"].values()
    tags = [{"Key": key, "Value": value} for key, value in common["provider"]["aws"][0]["default_tags"][0]["tags"].items()]
    parent = zone["name"].split(".", 1)[1]
    (directory / "main.tf.json").write_text(json.dumps(guard_root(common)))
    server = MotoProcess()
    try:
        env = environment(server.ready(), REGION)
        route53, dynamodb = (client(service, env["AWS_ENDPOINT_URL"], REGION) for service in ("route53", "dynamodb"))

        def terraform(*arguments: str) -> tuple[int, str]:
            done = run(directory, *arguments, "-input=false", "-no-color", env=env)
            return done.returncode, done.stdout + done.stderr

        def exist(zone_name: str, table_name: str) -> None:
            """A sub-zone and a table as common makes them: tagged with its default tags."""
            made = route53.create_hosted_zone(Name=zone_name, CallerReference=zone_name)["HostedZone"]["Id"]
            route53.change_tags_for_resource(ResourceType="hostedzone", ResourceId=made.split("/")[-1], AddTags=tags)
            key = [{"AttributeName": "UserId", "KeyType": "HASH"}]
            attributes = [{"AttributeName": "UserId", "AttributeType": "S"}]
            dynamodb.create_table(
                TableName=table_name, KeySchema=key, AttributeDefinitions=attributes, BillingMode="PAY_PER_REQUEST", Tags=tags
            )

        def gone(zone_name: str, table_name: str) -> None:
            (found,) = [z for z in route53.list_hosted_zones()["HostedZones"] if z["Name"] == f"{zone_name}."]
            route53.delete_hosted_zone(Id=found["Id"])
            dynamodb.delete_table(TableName=table_name)

        initialised = terraform("init")
        assert initialised[0] == 0, initialised[1]
        plans = {"fresh": terraform("plan", "-lock=false")}
        exist(zone["name"], table["name"])
        plans["unchanged"] = terraform("plan", "-lock=false")
        gone(zone["name"], table["name"])
        exist(f"{EARLIER_SUB_DOMAIN}.{parent}", EARLIER_TABLE)
        plans["renamed"] = terraform("plan", "-lock=false")
        return plans
    finally:
        server.stop()
