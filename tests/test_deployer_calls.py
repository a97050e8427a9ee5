"""Proof by table, for what the emulator cannot apply (access entries, Pod Identity, add-ons, node groups with launch
templates, the operator commands, and every condition): each AWS call of tests/support/deployer_calls.yaml, with the
resource it acts on and the condition keys it carries, is evaluated against the deployer policy filled for a
project (tests/support/iam_evaluation.py decides as IAM does). A synthesized stack that uses a resource type the table does
not list fails here, and so does a role or a managed policy the stacks pass or attach that the policy would refuse.
The table's rows name real actions on resource types those actions are authorized on (AWS's Service Authorization
Reference, as parliament ships it)."""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest

from model.config import Config
from policies.deployer import Deployer, documents
from tests.support.configs import EVERYTHING_ON, VARIANT, example, validated
from tests.support.deployer_calls import Call, calls, default_tags, owners
from tests.support.iam_evaluation import Request, arn_like, decide
from tests.support.synth import Synthesized
from tests.test_deployer_documents import ACCOUNT, minimal, realistic

DEPLOYERS = {"realistic": realistic, "defaults": minimal}
# Actions newer than parliament's copy of the Service Authorization Reference, and where AWS documents them.
NEWER_THAN_PARLIAMENT = {
    "eks:StartInsightsRefresh": "docs.aws.amazon.com/eks/latest/APIReference/API_StartInsightsRefresh.html",
    "eks:DescribeInsightsRefresh": "docs.aws.amazon.com/eks/latest/APIReference/API_DescribeInsightsRefresh.html",
}
# Actions the Service Authorization Reference authorizes on a resource type (`alarm`) whose results for composite
# alarms AWS returns only to a permission scoped to `*` ("To use this operation and return information about composite
# alarms, you must be signed on with the cloudwatch:DescribeAlarms permission that is scoped to *"): their rows name `*`.
SCOPED_TO_EVERYTHING = {
    "cloudwatch:DescribeAlarms": "docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_DescribeAlarms.html",
    "cloudwatch:DescribeAlarmHistory": "docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_DescribeAlarmHistory.html",
}


def statements(deployer: Deployer) -> list[dict[str, Any]]:
    """Every statement of every document: the identity holds all of them."""
    return [s for document in documents(deployer).values() for s in document["Statement"]]


def denied_rows(deployer: Deployer, policy: list[dict[str, Any]]) -> list[str]:
    """Each request of the table the policy does not allow, naming its row, resource, why and source."""
    tags = default_tags(deployer)
    return [
        f"{call.name()} on {request.resource}: {decision.why} (source: {call.source})"
        for call in calls(deployer)
        for request in call.requests(tags)
        if not (decision := decide(policy, request)).allowed
    ]


@pytest.mark.parametrize("name", DEPLOYERS)
def test_every_call_of_the_table_is_allowed_by_the_filled_policy(name: str) -> None:
    deployer = DEPLOYERS[name]()
    assert denied_rows(deployer, statements(deployer)) == []


def test_a_call_the_policy_does_not_allow_fails_naming_its_row() -> None:
    """The policy before issue 24 had no eks:DescribeUpdate: every update of a cluster failed after AWS accepted it."""
    deployer = realistic()
    without = [
        {**s, "Action": [a for a in s["Action"] if a != "eks:DescribeUpdate"]} if isinstance(s["Action"], list) else s
        for s in statements(deployer)
    ]
    cluster = f"arn:aws:eks:ap-northeast-1:{ACCOUNT}:cluster/payments-platform-ap-blue"
    assert (
        f"resources.aws_eks_cluster (update): eks:DescribeUpdate on {cluster}: no statement allows it "
        "(source: internal/service/eks/cluster.go)"
    ) in denied_rows(deployer, without)


def test_a_shared_role_passed_to_pod_identity_needs_its_own_statement() -> None:
    """Issue 24's first finding: roles could be passed to eks, ec2, vpc-flow-logs and codebuild, not to pods."""
    deployer = realistic()
    without = [s for s in statements(deployer) if s["Sid"] != "PassSharedRolesToPodIdentityAssociations"]
    denied = denied_rows(deployer, without)
    assert any(row.startswith("resources.aws_eks_addon (create): iam:PassRole on ") for row in denied), denied
    assert any(row.startswith("resources.aws_eks_pod_identity_association (create): iam:PassRole") for row in denied)


@cache
def synthesized_configs() -> dict[str, Config]:
    return {"example": example(), "variant": validated(VARIANT), "everything_on": validated(EVERYTHING_ON)}


@pytest.fixture
def apps(example_app: Synthesized, variant_app: Synthesized, everything_on: Synthesized) -> dict[str, Synthesized]:
    """The configurations the suite synthesizes (tests/support/configs.py), once per session."""
    return {"example": example_app, "variant": variant_app, "everything_on": everything_on}


def used_types(app: Synthesized) -> Iterator[tuple[str, str]]:
    for stack in app.stacks():
        document = app.json(stack)
        yield from (("resource", kind) for kind in document.get("resource", {}))
        yield from (("data", kind) for kind in document.get("data", {}))


def test_every_resource_type_and_data_source_the_stacks_use_is_in_the_table(apps: dict[str, Synthesized]) -> None:
    used = {kind for app in apps.values() for kind in used_types(app)}
    listed = {("resource", kind) for kind in owners("resources")} | {("data", kind) for kind in owners("data_sources")}
    assert sorted(used - listed) == [], "add the calls of each to tests/support/deployer_calls.yaml"
    assert sorted(listed - used) == [], "no stack uses these any more: remove their rows"


def test_the_tables_default_tags_are_the_stacks(apps: dict[str, Synthesized]) -> None:
    """The rows' aws:RequestTag and aws:ResourceTag values are the tags every resource gets from its stack."""
    # The stack's provider (common's other one, in us-east-1, only reads: components/sub_zone.py).
    (provider,) = [p for p in apps["example"].json("common")["provider"]["aws"] if "alias" not in p]
    stack_tags = provider["default_tags"][0]["tags"]
    table_tags = default_tags(Deployer(synthesized_configs()["example"], ACCOUNT))
    assert table_tags == {key: value for key, value in stack_tags.items() if key in table_tags}
    assert "Project" in table_tags


# --- what the stacks pass and attach, read from the synthesized JSON ----------------------------------------------

# The argument that passes a role, and the service EKS, EC2 flow logs and CodeBuild pass it to (iam:PassedToService).
PASSED = {
    "aws_eks_cluster": ("role_arn", "eks.amazonaws.com"),
    "aws_eks_node_group": ("node_role_arn", "eks.amazonaws.com"),
    "aws_flow_log": ("iam_role_arn", "vpc-flow-logs.amazonaws.com"),
    "aws_codebuild_project": ("service_role", "codebuild.amazonaws.com"),
    "aws_eks_pod_identity_association": ("role_arn", "pods.eks.amazonaws.com"),
    "aws_eks_addon": ("pod_identity_association", "pods.eks.amazonaws.com"),
}
_REFERENCE = re.compile(r"\$\{([^}]+)\}")


class Resolver:
    """Literal values for the references the stacks make to names, ARNs and common's outputs."""

    def __init__(self, app: Synthesized) -> None:
        self.stacks = {stack: app.json(stack) for stack in app.stacks()}

    def value(self, stack: str, text: str) -> str:
        return _REFERENCE.sub(lambda m: self._reference(stack, m.group(1)), text)

    def _reference(self, stack: str, expression: str) -> str:
        parts = expression.split(".")
        if parts[:2] == ["data", "aws_partition"]:
            return "aws"
        if parts[:2] == ["data", "aws_caller_identity"]:
            return ACCOUNT
        if parts[:3] == ["data", "terraform_remote_state", "common"]:
            return self.value("common", self.stacks["common"]["output"][parts[4]]["value"])
        kind, name, attribute = parts
        body = self.stacks[stack]["resource"][kind][name]
        named = self.value(stack, body["name"])
        if attribute == "name":
            return named
        service = {"aws_iam_role": "role", "aws_iam_policy": "policy"}[kind]
        return f"arn:aws:iam::{ACCOUNT}:{service}/{named}"

    def passed(self) -> Iterator[tuple[str, str, str]]:
        """(resource address, role ARN, service) of every role the stacks pass."""
        for stack, document in self.stacks.items():
            for kind, (argument, service) in PASSED.items():
                for name, body in document.get("resource", {}).get(kind, {}).items():
                    value = body.get(argument)
                    arns = [v["role_arn"] for v in value] if isinstance(value, list) else [value] if value else []
                    yield from ((f"{stack}: {kind}.{name}", self.value(stack, arn), service) for arn in arns)

    def attached(self) -> Iterator[tuple[str, str, str, dict[str, str]]]:
        """(resource address, role ARN, policy ARN, the boundary the role carries) of every managed policy the stacks
        attach: the boundary read from the role's own `permissions_boundary` (none when it has none)."""
        for stack, document in self.stacks.items():
            for name, body in document.get("resource", {}).get("aws_iam_role_policy_attachment", {}).items():
                role = f"arn:aws:iam::{ACCOUNT}:role/{self.value(stack, body['role'])}"
                kind, role_name, _ = _REFERENCE.fullmatch(body["role"]).group(1).split(".")  # type: ignore[union-attr]
                boundary = document["resource"][kind][role_name].get("permissions_boundary")
                carried = {"iam:PermissionsBoundary": self.value(stack, boundary)} if boundary else {}
                yield f"{stack}: aws_iam_role_policy_attachment.{name}", role, self.value(stack, body["policy_arn"]), carried


@pytest.mark.parametrize("name", ["example", "variant", "everything_on"])
def test_every_role_the_stacks_pass_may_be_passed_to_its_service(apps: dict[str, Synthesized], name: str) -> None:
    policy = statements(Deployer(synthesized_configs()[name], ACCOUNT))
    passed = list(Resolver(apps[name]).passed())
    assert {service for _, _, service in passed} >= {"eks.amazonaws.com", "pods.eks.amazonaws.com", "vpc-flow-logs.amazonaws.com"}
    refused = [
        (address, role, service)
        for address, role, service in passed
        if not decide(policy, Request("iam:PassRole", role, {"iam:PassedToService": service})).allowed
    ]
    assert refused == []


@pytest.mark.parametrize("name", ["example", "variant", "everything_on"])
def test_every_policy_the_stacks_attach_may_be_attached_and_no_other(apps: dict[str, Synthesized], name: str) -> None:
    policy = statements(Deployer(synthesized_configs()[name], ACCOUNT))
    attached = list(Resolver(apps[name]).attached())
    assert len(attached) >= 6
    refused = [
        (address, role, arn)
        for address, role, arn, carried in attached
        if not decide(policy, Request("iam:AttachRolePolicy", role, {"iam:PolicyARN": arn, **carried})).allowed
    ]
    assert refused == []
    _, role, _, carried = attached[0]
    admin = Request("iam:AttachRolePolicy", role, {"iam:PolicyARN": "arn:aws:iam::aws:policy/AdministratorAccess", **carried})
    assert not decide(policy, admin).allowed  # a project role can never be made an administrator by the deployer


# --- the rows name real actions, on resources those actions are authorized on ---------------------------------


@cache
def authorization_reference() -> dict[str, list[str]]:
    """service:Action -> the ARN formats of the resource types AWS authorizes it on ([] for none), from parliament."""
    with warnings.catch_warnings():  # parliament imports the deprecated pkg_resources
        warnings.simplefilter("ignore")
        import parliament
    with open(os.path.join(os.path.dirname(parliament.__file__), "iam_definition.json")) as definition:
        services = json.load(definition)
    reference: dict[str, list[str]] = {}
    for service in services:
        formats = {r["resource"]: r["arn"] for r in service["resources"]}
        for privilege in service["privileges"]:
            types = [r["resource_type"].rstrip("*") for r in privilege["resource_types"] if r["resource_type"]]
            key = f"{service['prefix']}:{privilege['privilege']}".lower()
            reference[key] = [re.sub(r"\$\{[^}]+\}", "*", formats[t]) for t in types if t in formats]
    return reference


def misplaced(call: Call) -> list[str]:
    if call.action in NEWER_THAN_PARLIAMENT or (call.action in SCOPED_TO_EVERYTHING and call.on == ("*",)):
        return []
    formats = authorization_reference().get(call.action.lower())
    if formats is None:
        return [f"{call.name()}: no such action"]
    if not formats:
        return [] if call.on == ("*",) else [f"{call.name()}: AWS authorizes it on no resource type; use `*`"]
    return [
        f"{call.name()}: {arn} is no resource it is authorized on"
        for arn in call.on
        if not any(arn_like(f, arn) for f in formats)
    ]


def test_every_row_names_a_real_action_on_a_resource_it_is_authorized_on() -> None:
    rows = calls(realistic())
    assert [problem for call in rows for problem in misplaced(call)] == []


def test_a_row_on_the_wrong_resource_is_named() -> None:
    wrong = Call("resources.aws_route53_zone", "create", "route53:GetChange", ("*",), (), False, {}, None, "x")
    assert misplaced(wrong) == ["resources.aws_route53_zone (create): route53:GetChange: * is no resource it is authorized on"]
