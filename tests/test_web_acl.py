"""The optional web ACL (`traffic.waf`): AWS managed rule groups in front of the shared load balancer, the one load
balancer every application is reached through, its requests logged encrypted; nothing of it when it is off."""

from __future__ import annotations

import json

import pytest

from model.config import DEFAULT_RULE_GROUPS
from tests.support.configs import VARIANT
from tests.support.refusals import one_problem
from tests.support.synth import Synthesized

TRAFFIC = "traffic"


@pytest.fixture(scope="module")
def app(variant_app: Synthesized) -> Synthesized:
    """The variant turns the web ACL on, blocking (tests/support/configs.VARIANT)."""
    return variant_app


def test_the_web_acl_runs_each_managed_rule_group_in_order_and_lets_the_rest_through(app: Synthesized) -> None:
    (acl,) = app.resources(TRAFFIC, "aws_wafv2_web_acl").values()
    assert (acl["name"], acl["scope"], acl["default_action"]) == ("eks-bg-traffic", "REGIONAL", {"allow": {}})
    rules = sorted(acl["rule"], key=lambda rule: rule["priority"])
    assert [rule["statement"]["managed_rule_group_statement"] for rule in rules] == [
        {"name": group, "vendor_name": "AWS"} for group in DEFAULT_RULE_GROUPS
    ]
    # Each group's own actions (block) apply: no override.
    assert all(rule["override_action"] == {"none": {}} for rule in rules)
    assert all(rule["visibility_config"]["sampled_requests_enabled"] for rule in rules)
    assert acl["visibility_config"]["cloudwatch_metrics_enabled"] is True


def test_counting_only_overrides_every_groups_actions_with_count() -> None:
    from cdktf import TerraformStack, Testing

    from components.web_acl import WebAcl

    stack = TerraformStack(Testing.app(), "waf")
    groups = ["AWSManagedRulesCommonRuleSet", "AWSManagedRulesSQLiRuleSet"]
    WebAcl(stack, "acl", name="n", rule_groups=groups, count_only=True, resource_arn="lb", log_retention_days=30, kms_key_arn="k")
    (acl,) = json.loads(Testing.synth(stack))["resource"]["aws_wafv2_web_acl"].values()
    assert [rule["override_action"] for rule in acl["rule"]] == [{"count": {}}] * len(groups)


def test_it_guards_the_shared_load_balancer(app: Synthesized) -> None:
    resources = app.json(TRAFFIC)["resource"]
    (association,) = resources["aws_wafv2_web_acl_association"].values()
    (balancer_name,) = resources["aws_lb"]
    (acl_name,) = resources["aws_wafv2_web_acl"]
    assert association["resource_arn"] == f"${{aws_lb.{balancer_name}.arn}}"
    assert association["web_acl_arn"] == f"${{aws_wafv2_web_acl.{acl_name}.arn}}"


def test_its_requests_are_logged_to_a_group_waf_accepts_encrypted_with_a_key_of_its_own(app: Synthesized) -> None:
    resources = app.json(TRAFFIC)["resource"]
    (logging,) = resources["aws_wafv2_web_acl_logging_configuration"].values()
    (group_name, group), *others = [
        (name, body)
        for name, body in resources["aws_cloudwatch_log_group"].items()
        if body["name"].startswith("aws-waf-logs-")  # WAF refuses any other destination name
    ]
    assert not others
    assert logging["log_destination_configs"] == [f"${{aws_cloudwatch_log_group.{group_name}.arn}}"]
    assert group["retention_in_days"] == 365
    # Its own: no other log group of the stack (the shift record's) is encrypted with it.
    key_name = group["kms_key_id"].removeprefix("${aws_kms_key.").removesuffix(".arn}")
    assert key_name in resources["aws_kms_key"]
    assert [name for name, body in resources["aws_cloudwatch_log_group"].items() if key_name in body["kms_key_id"]] == [
        group_name
    ]


def test_without_it_the_traffic_stack_has_no_web_acl_and_loads_no_waf_bindings(example_app: Synthesized) -> None:
    resources = example_app.json(TRAFFIC)["resource"]
    assert not {kind for kind in resources if kind.startswith("aws_wafv2")}
    # No key for WAF's logs: the one key is the shift record's (components/shift_record.py).
    (record,) = resources["aws_cloudwatch_log_group"].values()
    assert [f"${{aws_kms_key.{name}.arn}}" for name in resources["aws_kms_key"]] == [record["kms_key_id"]]


@pytest.mark.parametrize(
    ("waf", "problem"),
    [
        (
            {"managed_rule_groups": ["AWSManagedRulesCommonRuleSet", "AWSManagedRulesCommonRuleSet"]},
            'traffic.waf.managed_rule_groups: ["AWSManagedRulesCommonRuleSet", "AWSManagedRulesCommonRuleSet"] is not '
            "allowed; name each rule group once (AWSManagedRulesCommonRuleSet twice)",
        ),
        (
            {"managed_rule_groups": []},
            "traffic.waf.managed_rule_groups: [] is not allowed; name at least one, e.g. 'AWSManagedRulesCommonRuleSet'",
        ),
        (
            {"managed_rule_groups": ["CommonRuleSet"]},
            'traffic.waf.managed_rule_groups[0]: "CommonRuleSet" is not allowed; name AWS managed rule groups as AWS '
            "lists them, e.g. 'AWSManagedRulesCommonRuleSet'",
        ),
        ({"enabled": "yes"}, 'traffic.waf.enabled: "yes" is not allowed; use true or false'),
    ],
)
def test_fails_a_rule_group_list_waf_would_refuse(waf: dict[str, object], problem: str) -> None:
    assert one_problem({**VARIANT, "traffic": {**VARIANT["traffic"], "waf": waf}}) == problem
