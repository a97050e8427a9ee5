"""A change that would replace what holds common's data is refused at plan, with the key, both values and the way out:

- the sub-zone (a new `dns.sub_domain` or `dns.parent_zone` destroys it, its delegation in the parent zone and the
  certificate: every public and preview host), found live by common's tags through the Tagging API in us-east-1 (where
  AWS lists hosted zones), then read by its id;
- the DynamoDB table (a new `table.name` destroys it and its items, whatever deletion_protection says), found live by
  common's tags through the Tagging API of the project's region, its name in its ARN.

A fresh account passes (nothing carries the tags), and so does the configuration they were made with; planned for real
against an emulator (tests/support/data_guards.py).
"""

from __future__ import annotations

import re
from concurrent.futures import Future
from typing import Any

import pytest

from tests.support.data_guards import EARLIER_SUB_DOMAIN, EARLIER_TABLE
from tests.support.synth import Synthesized

COMMON = "common"
WAY_OUT = '(docs/upgrade-runbook.md, "What cannot change under running colours").'
TAGS = [{"key": "Project", "values": ["eks-bg"]}, {"key": "Stack", "values": ["common"]}]


def precondition(app: Synthesized, resource_type: str) -> dict[str, Any]:
    (resource,) = app.json(COMMON)["resource"][resource_type].values()
    (found,) = resource["lifecycle"]["precondition"]
    return dict(found)


def tagged(app: Synthesized, path: str) -> tuple[str, dict[str, Any]]:
    """The Tagging API data source at that construct path, and its address."""
    found = app.json(COMMON)["data"]["aws_resourcegroupstaggingapi_resources"]
    ((name, body),) = [(n, b) for n, b in found.items() if b["//"]["metadata"]["path"] == f"{COMMON}/{path}"]
    return f"data.aws_resourcegroupstaggingapi_resources.{name}", body


def test_the_zone_guard_finds_the_projects_zones_by_commons_tags_in_us_east_1(example_app: Synthesized) -> None:
    document = example_app.json(COMMON)
    address, search = tagged(example_app, "dns/tagged")
    assert (search["resource_type_filters"], search["tag_filter"]) == (["route53:hostedzone"], TAGS)
    # Route 53 is global: the Tagging API lists its zones in us-east-1 only, through a provider of its own.
    assert search["provider"] == "aws.global"
    assert {"alias": "global", "region": "us-east-1"} in document["provider"]["aws"]
    # Each found zone read by its id, the last part of its ARN (arn:aws:route53:::hostedzone/<id>).
    ((running_id, running),) = [(n, b) for n, b in document["data"]["aws_route53_zone"].items() if "running" in n]
    assert running["count"] == f"${{length({address}.resource_tag_mapping_list)}}"
    assert running["zone_id"] == f'${{element(split("/", {address}.resource_tag_mapping_list[count.index].resource_arn), 1)}}'
    (zone,) = document["resource"]["aws_route53_zone"].values()
    names = f'[for z in data.aws_route53_zone.{running_id} : trimsuffix(z.name, ".")]'
    assert precondition(example_app, "aws_route53_zone")["condition"] == (
        f'${{alltrue([for name in {names} : name == "{zone["name"]}"])}}'
    )
    # The delegation and the certificate depend on the zone: its refusal stops them too.
    (delegation,) = [r for r in document["resource"]["aws_route53_record"].values() if r["type"] == "NS"]
    assert "aws_route53_zone." in delegation["records"]


@pytest.mark.parametrize("fixture", ["example_app", "everything_on"])
def test_the_table_guard_finds_the_projects_tables_by_commons_tags_whatever_deletion_protection_says(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    """The example keeps deletion protection on, everything_on turns it off: the same refusal."""
    app: Synthesized = request.getfixturevalue(fixture)
    address, search = tagged(app, "table/tagged")
    assert (search["resource_type_filters"], search["tag_filter"]) == (["dynamodb:table"], TAGS)
    assert "provider" not in search  # the table's region: the stack's own provider
    (table,) = app.json(COMMON)["resource"]["aws_dynamodb_table"].values()
    running = f'[for m in {address}.resource_tag_mapping_list : element(split("/", m.resource_arn), 1)]'  # ...:table/<name>
    assert precondition(app, "aws_dynamodb_table")["condition"] == (
        f'${{alltrue([for name in {running} : name == "{table["name"]}"])}}'
    )
    assert table["deletion_protection_enabled"] is (fixture == "example_app")


# --- planned for real against the emulator (tests/support/data_guards.py) -------------------------------------------


@pytest.fixture(scope="module")
def plans(data_guard_plans: Future[dict[str, tuple[int, str]]]) -> dict[str, tuple[int, str]]:
    return data_guard_plans.result()


def refusals(output: str) -> list[str]:
    """Each precondition failure's message on one line (Terraform wraps it), without what Terraform prints before it:
    the source line and, each after a `│`, the values the condition read (the last of them ends in a blank line)."""
    errors = [e for e in re.split(r"(?m)^(?=Error: )", output)[1:] if "precondition failed" in e]
    return [" ".join(e.rsplit("│", 1)[-1].split("\n\n", 1)[-1].split()) for e in errors]


@pytest.mark.background("data_guard_plans")
@pytest.mark.parametrize("plan", ["fresh", "unchanged"])
def test_a_fresh_account_and_the_configuration_they_were_made_with_pass(plans: dict[str, tuple[int, str]], plan: str) -> None:
    status, output = plans[plan]
    assert status == 0, output[-6000:]
    assert "Plan: 2 to add" in output  # the two stand-ins: nothing refused


@pytest.mark.background("data_guard_plans")
def test_a_sub_zone_and_a_table_under_an_earlier_configurations_names_are_refused_with_both_values_and_the_way_out(
    plans: dict[str, tuple[int, str]],
) -> None:
    """The example configures the sub-zone eks.example.com and the table eks-bg-users; the emulator holds the project's
    shop.example.com and eks-bg-orders: the messages, worked out by hand."""
    status, output = plans["renamed"]
    assert (EARLIER_SUB_DOMAIN, EARLIER_TABLE) == ("shop", "eks-bg-orders")
    assert status == 1, output[-6000:]
    assert sorted(refusals(output)) == [
        "dns.sub_domain is eks and dns.parent_zone example.com (the sub-zone eks.example.com), but the project's sub-zone "
        "is shop.example.com: this change would replace the hosted zone, its NS delegation in the parent zone and the "
        "certificate, and every public and preview host of every application would stop answering. A hosted zone's "
        "name cannot change in place: keep dns.sub_domain at shop and dns.parent_zone at example.com. Other host names "
        f"are a new project beside this one {WAY_OUT}",
        "table.name is eks-bg-users, but the project's table is eks-bg-orders: this change would replace the DynamoDB "
        "table, deleting eks-bg-orders and every item in it (whatever deletion_protection says: with it on, the apply "
        "fails half-way instead). DynamoDB renames no table: keep table.name at eks-bg-orders. A table of another name "
        f"is a new project beside this one, its items moved by the team {WAY_OUT}",
    ]
