"""tests/support/iam_evaluation.py decides as the IAM policy evaluation logic documents it: each case below is one sentence of
"Policy evaluation logic" or of the condition operators' reference, with the verdict IAM gives."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.iam_evaluation import Request, arn_like, decide

BUCKET_OBJECT = "arn:aws:s3:::state-bucket/platform/common.tfstate"


def allow(action: Any, resource: Any, condition: dict[str, Any] | None = None, sid: str = "A") -> dict[str, Any]:
    statement = {"Sid": sid, "Effect": "Allow", "Action": action, "Resource": resource}
    return statement | ({"Condition": condition} if condition else {})


def test_nothing_allows_what_no_statement_names() -> None:
    assert decide([], Request("s3:GetObject", BUCKET_OBJECT)).why == "no statement allows it"


def test_an_explicit_deny_wins_over_any_allow() -> None:
    policy = [allow("s3:*", "*"), {"Sid": "D", "Effect": "Deny", "Action": "s3:GetObject", "Resource": BUCKET_OBJECT}]
    assert decide(policy, Request("s3:GetObject", BUCKET_OBJECT)).why == "denied by D"
    assert decide(policy, Request("s3:PutObject", BUCKET_OBJECT)).allowed


def test_actions_match_case_insensitively_with_wildcards() -> None:
    assert decide([allow("EKS:describe*", "*")], Request("eks:DescribeUpdate", "*")).allowed
    assert not decide([allow("eks:Describe?", "*")], Request("eks:DescribeUpdate", "*")).allowed


def test_a_resource_wildcard_stays_within_its_arn_part() -> None:
    assert arn_like("arn:aws:eks:*:123456789012:cluster/eks-bg-*", "arn:aws:eks:eu-west-1:123456789012:cluster/eks-bg-blue")
    assert not arn_like("arn:aws:eks:*:123456789012:cluster/eks-bg-*", "arn:aws:eks:eu-west-1:999999999999:cluster/eks-bg-blue")
    assert arn_like(
        "arn:aws:logs:*:*:log-group:/vpc/eks-bg/*", "arn:aws:logs:eu-west-1:1:log-group:/vpc/eks-bg/flow:*"
    )  # the last may
    assert arn_like("*", "anything at all")


def test_an_action_without_resource_types_needs_resource_star() -> None:
    assert decide([allow("eks:ListClusters", "*")], Request("eks:ListClusters", "*")).allowed
    assert not decide([allow("eks:ListClusters", "arn:aws:eks:*:*:cluster/*")], Request("eks:ListClusters", "*")).allowed


def test_string_equals_needs_the_key_and_one_of_the_values() -> None:
    statement = allow("iam:PassRole", "*", {"StringEquals": {"iam:PassedToService": ["eks.amazonaws.com", "ec2.amazonaws.com"]}})
    assert decide([statement], Request("iam:PassRole", "*", {"iam:PassedToService": "eks.amazonaws.com"})).allowed
    assert not decide([statement], Request("iam:PassRole", "*", {"iam:PassedToService": "pods.eks.amazonaws.com"})).allowed
    assert not decide([statement], Request("iam:PassRole", "*")).allowed


def test_condition_keys_are_case_insensitive_and_values_are_not() -> None:
    statement = allow("eks:CreateCluster", "*", {"StringEquals": {"aws:requesttag/Project": "shop"}})
    assert decide([statement], Request("eks:CreateCluster", "*", {"aws:RequestTag/Project": "shop"})).allowed
    assert not decide([statement], Request("eks:CreateCluster", "*", {"aws:RequestTag/Project": "Shop"})).allowed


def test_for_all_values_holds_for_every_value_and_for_a_missing_key() -> None:
    statement = allow(
        "route53:ChangeResourceRecordSets", "*", {"ForAllValues:StringLike": {"route53:Names": ["a.com", "*.a.com"]}}
    )
    assert decide([statement], Request("route53:ChangeResourceRecordSets", "*", {"route53:Names": ["a.com", "_x.a.com"]})).allowed
    assert not decide(
        [statement], Request("route53:ChangeResourceRecordSets", "*", {"route53:Names": ["a.com", "b.com"]})
    ).allowed
    assert decide([statement], Request("route53:ChangeResourceRecordSets", "*")).allowed  # why policies pair it with Null


def test_null_false_requires_the_key() -> None:
    statement = allow("route53:ChangeResourceRecordSets", "*", {"Null": {"route53:Names": "false"}})
    assert not decide([statement], Request("route53:ChangeResourceRecordSets", "*")).allowed
    assert decide([statement], Request("route53:ChangeResourceRecordSets", "*", {"route53:Names": ["a.com"]})).allowed


def test_aws_resource_account_comes_from_the_arn() -> None:
    statement = allow("kms:DescribeKey", "*", {"StringEquals": {"aws:ResourceAccount": "123456789012"}})
    assert decide([statement], Request("kms:DescribeKey", "arn:aws:kms:eu-west-1:123456789012:key/k")).allowed
    assert not decide([statement], Request("kms:DescribeKey", "arn:aws:kms:eu-west-1:999999999999:key/k")).allowed


def test_bool_and_arn_like_and_if_exists() -> None:
    grant = allow("kms:CreateGrant", "*", {"Bool": {"kms:GrantIsForAWSResource": "true"}})
    assert decide([grant], Request("kms:CreateGrant", "*", {"kms:GrantIsForAWSResource": "True"})).allowed
    launch = allow("ec2:RunInstances", "*", {"ArnLike": {"ec2:LaunchTemplate": "arn:aws:ec2:*:*:launch-template/*"}})
    template = "arn:aws:ec2:eu-west-1:123456789012:launch-template/lt-1"
    assert decide([launch], Request("ec2:RunInstances", "*", {"ec2:LaunchTemplate": template})).allowed
    assert not decide([launch], Request("ec2:RunInstances", "*")).allowed
    optional = allow("s3:GetObject", "*", {"StringEqualsIfExists": {"s3:prefix": "platform/"}})
    assert decide([optional], Request("s3:GetObject", "*")).allowed


@pytest.mark.parametrize(
    "statement",
    [
        {"Effect": "Allow", "NotPrincipal": {"AWS": "*"}, "Action": "s3:*", "Resource": "*"},
        allow("s3:GetObject", "arn:aws:s3:::${aws:username}/*"),
        allow("s3:GetObject", "*", {"NumericLessThan": {"s3:max-keys": "10"}}),
        allow("s3:GetObject", "*", {"ForAnyValue:StringNotEquals": {"aws:TagKeys": "x"}}),
    ],
    ids=["NotPrincipal", "policy variable", "operator", "negated operator over a set"],
)
def test_what_it_cannot_evaluate_it_refuses_rather_than_guesses(statement: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="not evaluated here"):
        decide([statement], Request("s3:GetObject", BUCKET_OBJECT))


def test_not_action_and_not_resource_name_everything_but_what_they_list() -> None:
    deny = {"Sid": "D", "Effect": "Deny", "Action": "sts:AssumeRole", "NotResource": "arn:aws:iam::1:role/shop-*"}
    policy = [{"Sid": "A", "Effect": "Allow", "NotAction": "iam:*", "Resource": "*"}, deny]
    assert decide(policy, Request("sts:AssumeRole", "arn:aws:iam::1:role/shop-orders")).allowed
    assert decide(policy, Request("sts:AssumeRole", "arn:aws:iam::1:role/Admin")).why == "denied by D"
    assert not decide(policy, Request("iam:CreateRole", "arn:aws:iam::1:role/shop-orders")).allowed


def test_a_negated_operator_holds_for_a_missing_key() -> None:
    """ "If the policy condition requires that the key is not matched, such as StringNotLike or ArnNotLike, and the right
    key is not present, the condition is true" (IAM's condition operators reference)."""
    deny = {
        "Sid": "D",
        "Effect": "Deny",
        "Action": "iam:Create*",
        "Resource": "*",
        "Condition": {"StringNotEquals": {"iam:AWSServiceName": "elasticloadbalancing.amazonaws.com"}},
    }
    policy = [allow("iam:*", "*"), deny]
    linked = Request("iam:CreateServiceLinkedRole", "*", {"iam:AWSServiceName": "elasticloadbalancing.amazonaws.com"})
    assert decide(policy, linked).allowed
    assert not decide(policy, Request("iam:CreateServiceLinkedRole", "*", {"iam:AWSServiceName": "ec2.amazonaws.com"})).allowed
    assert decide(policy, Request("iam:CreateRole", "*")).why == "denied by D"  # the key is missing: the Deny holds
    arn_not = allow("iam:AttachRolePolicy", "*", {"ArnNotLike": {"iam:PolicyARN": "arn:aws:iam::1:policy/shop-*"}})
    assert decide([arn_not], Request("iam:AttachRolePolicy", "*", {"iam:PolicyARN": "arn:aws:iam::aws:policy/Admin"})).allowed
    assert not decide([arn_not], Request("iam:AttachRolePolicy", "*", {"iam:PolicyARN": "arn:aws:iam::1:policy/shop-a"})).allowed


def test_a_permissions_boundary_allows_only_what_both_allow() -> None:
    """ "An entity's permissions boundary allows it to perform only the actions that are allowed by both its
    identity-based policies and its permissions boundaries" (IAM User Guide, access_policies_boundaries.html)."""
    boundary = [allow("s3:*", "*"), {"Sid": "NoDelete", "Effect": "Deny", "Action": "s3:DeleteObject", "Resource": "*"}]
    identity = [allow(["s3:GetObject", "s3:DeleteObject", "ec2:RunInstances"], "*")]
    assert decide(identity, Request("s3:GetObject", BUCKET_OBJECT), boundary=boundary).allowed
    assert decide(identity, Request("s3:DeleteObject", BUCKET_OBJECT), boundary=boundary).why == (
        "outside the permissions boundary: denied by NoDelete"
    )
    assert decide(identity, Request("ec2:RunInstances", "*"), boundary=boundary).why == (
        "outside the permissions boundary: no statement allows it"
    )
    assert decide(identity, Request("s3:PutObject", BUCKET_OBJECT), boundary=boundary).why == "no statement allows it"
