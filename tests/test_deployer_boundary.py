"""Issue 31: the deployer cannot make itself an administrator. Every role the project creates carries the project's
permissions boundary (policies/boundary.json); the deployer (policies/deployer.json) may create a role, put a policy on
it or attach one only with that boundary, and never change or remove it.

Proof with the evaluator (tests/support/iam_evaluation.py, which decides as IAM does, boundaries included), on a table of
escalation attempts filled for a realistic project: each is DENIED by the bounded deployer, alone and with a broad IAM
grant beside it (the explicit Denies hold whatever else the identity holds), and the policy before the boundary
(tests/fixtures/unbounded-deployer) let through those it had a hole for: so each test fails if one comes back.
The legitimate calls are still allowed: tests/test_deployer_calls.py evaluates every row of the call table, and this
module every action the project's own roles hold, under the boundary.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import policies
from policies import boundary
from policies.deployer import Deployer, values
from tests.support.deployer_calls import calls
from tests.support.iam_evaluation import Request, decide
from tests.support.synth import Synthesized
from tests.test_deployer_calls import Resolver, authorization_reference, statements
from tests.test_deployer_documents import ACCOUNT, realistic

Statements = list[dict[str, Any]]
BEFORE = Path(__file__).parent / "fixtures" / "unbounded-deployer" / "deployer.json"
PROJECT = "payments-platform-ap"
IAM = f"arn:aws:iam::{ACCOUNT}"
BOUNDARY = f"{IAM}:policy/boundary-{PROJECT}"
ADMINISTRATOR = "arn:aws:iam::aws:policy/AdministratorAccess"
NEW_ROLE = f"{IAM}:role/{PROJECT}-escalate"  # a role the deployer makes up, inside the prefix it manages
EXISTING_ROLE = f"{IAM}:role/{PROJECT}-external-dns"  # one the stacks made, carrying the boundary
# The deployer's calls allowed only on a role carrying the boundary (its iam:PermissionsBoundary condition).
CARRY_IT = ("iam:AttachRolePolicy", "iam:CreateRole", "iam:PutRolePermissionsBoundary", "iam:PutRolePolicy")
EVERYTHING: Statements = [{"Sid": "Everything", "Effect": "Allow", "Action": "*", "Resource": "*"}]
# Beside the deployer's policies, what an organisation might attach to the same identity (AWS's IAMFullAccess grants
# iam:* on *): the Denies must hold anyway.
BROAD_IAM: Statements = [{"Sid": "IAMFullAccessBeside", "Effect": "Allow", "Action": "iam:*", "Resource": "*"}]
# What a principal holding `*:*` would do to become an administrator of the account.
ESCALATIONS = (
    Request("iam:CreateUser", f"{IAM}:user/backdoor"),
    Request("iam:AttachUserPolicy", f"{IAM}:user/backdoor", {"iam:PolicyARN": ADMINISTRATOR}),
    Request("iam:CreateRole", f"{IAM}:role/{PROJECT}-second"),
    Request("iam:PutRolePolicy", EXISTING_ROLE, {"iam:PermissionsBoundary": BOUNDARY}),
    Request("iam:AttachRolePolicy", EXISTING_ROLE, {"iam:PolicyARN": ADMINISTRATOR, "iam:PermissionsBoundary": BOUNDARY}),
    Request("iam:CreatePolicyVersion", BOUNDARY),
    Request("iam:DeleteRolePermissionsBoundary", EXISTING_ROLE, {"iam:PermissionsBoundary": BOUNDARY}),
    Request("iam:UpdateAssumeRolePolicy", f"{IAM}:role/OrganizationAccountAccessRole"),
    Request("iam:PassRole", f"{IAM}:role/OrganizationAccountAccessRole", {"iam:PassedToService": "ec2.amazonaws.com"}),
    Request("sts:AssumeRole", f"{IAM}:role/OrganizationAccountAccessRole"),
    Request("organizations:LeaveOrganization", "*"),
    Request("cloudtrail:StopLogging", f"arn:aws:cloudtrail:ap-northeast-1:{ACCOUNT}:trail/organization"),
)


@cache
def deployer() -> Deployer:
    return realistic()


def bounded() -> Statements:
    return statements(deployer())


def unbounded() -> Statements:
    """The policy before the boundary, filled for the same project as the current one is."""
    filled: dict[str, Any] = json.loads(policies.render_from(BEFORE, values(deployer())))
    return list(filled["Statement"])


def the_boundary() -> Statements:
    return list(boundary.document(partition="aws", account_id=ACCOUNT, project=PROJECT)["Statement"])


def allowed(policy: Statements, *requests: Request) -> bool:
    return all(decide(policy, request).allowed for request in requests)


# --- the attempts: each returns whether the escalation succeeds with the deployer holding `policy` -------------------


def a_role_without_the_boundary(policy: Statements) -> bool:
    return allowed(policy, Request("iam:CreateRole", NEW_ROLE))


def a_role_with_a_boundary_of_its_choice(policy: Statements) -> bool:
    return allowed(policy, Request("iam:CreateRole", NEW_ROLE, {"iam:PermissionsBoundary": ADMINISTRATOR}))


def a_role_trusting_the_deployer_with_everything(policy: Statements) -> bool:
    """The deployer makes `<project>-escalate` trusting itself (CreateRole takes any trust), puts `*:*` on it, and acts
    as it: with whichever boundary the deployer may create it (none, or the project's), can the role do any of
    ESCALATIONS?"""
    for carried, limit in ((None, None), (BOUNDARY, the_boundary())):
        context = {"iam:PermissionsBoundary": carried} if carried else {}
        made = allowed(policy, Request("iam:CreateRole", NEW_ROLE, context), Request("iam:PutRolePolicy", NEW_ROLE, context))
        if made and any(decide(EVERYTHING, request, boundary=limit).allowed for request in ESCALATIONS):
            return True
    return False


def attaching_administrator_access(policy: Statements) -> bool:
    return allowed(
        policy,
        Request("iam:AttachRolePolicy", EXISTING_ROLE, {"iam:PolicyARN": ADMINISTRATOR, "iam:PermissionsBoundary": BOUNDARY}),
    )


def attaching_a_project_policy_of_everything_to_a_role_without_the_boundary(policy: Statements) -> bool:
    """What the deployer could do instead of attaching AdministratorAccess: a `<project>-` policy holds any document."""
    admin = f"{IAM}:policy/{PROJECT}-admin"
    return allowed(
        policy,
        Request("iam:CreatePolicy", admin),
        Request("iam:CreateRole", NEW_ROLE),
        Request("iam:AttachRolePolicy", NEW_ROLE, {"iam:PolicyARN": admin}),
    )


def editing_the_boundary_policy(policy: Statements) -> bool:
    changes = ("iam:CreatePolicy", "iam:CreatePolicyVersion", "iam:SetDefaultPolicyVersion", "iam:DeletePolicyVersion")
    return any(allowed(policy, Request(action, BOUNDARY)) for action in (*changes, "iam:DeletePolicy"))


def deleting_a_roles_boundary(policy: Statements) -> bool:
    return allowed(policy, Request("iam:DeleteRolePermissionsBoundary", EXISTING_ROLE, {"iam:PermissionsBoundary": BOUNDARY}))


def replacing_a_roles_boundary(policy: Statements) -> bool:
    return allowed(policy, Request("iam:PutRolePermissionsBoundary", EXISTING_ROLE, {"iam:PermissionsBoundary": ADMINISTRATOR}))


def passing_a_role_to_a_service_outside_the_list(policy: Statements) -> bool:
    services = ("lambda.amazonaws.com", "ecs-tasks.amazonaws.com", "cloudformation.amazonaws.com")
    return any(allowed(policy, Request("iam:PassRole", EXISTING_ROLE, {"iam:PassedToService": s})) for s in services)


@dataclass(frozen=True)
class Attempt:
    succeeds: Callable[[Statements], bool]
    before: str  # "allowed", or why the policy before the boundary already refused that very call


ATTEMPTS = {
    "a role without the boundary": Attempt(a_role_without_the_boundary, "allowed"),
    "a role with a boundary of its own choice": Attempt(a_role_with_a_boundary_of_its_choice, "allowed"),
    "a role trusting the deployer with *:*": Attempt(a_role_trusting_the_deployer_with_everything, "allowed"),
    "a project policy of *:* on a role without the boundary": Attempt(
        attaching_a_project_policy_of_everything_to_a_role_without_the_boundary, "allowed"
    ),
    "attaching AdministratorAccess": Attempt(
        attaching_administrator_access, "refused: only the project's and four EKS policies (the row above got round it)"
    ),
    "editing the boundary policy": Attempt(editing_the_boundary_policy, "refused: named outside <project>-*"),
    "deleting a role's boundary": Attempt(deleting_a_roles_boundary, "refused: not in it"),
    "replacing a role's boundary": Attempt(replacing_a_roles_boundary, "refused: not in it"),
    "passing a role to a service outside the list": Attempt(
        passing_a_role_to_a_service_outside_the_list, "refused: each PassRole names its service"
    ),
}


@pytest.mark.parametrize("name", ATTEMPTS)
def test_each_escalation_attempt_is_denied_even_beside_a_broad_iam_grant(name: str) -> None:
    attempt = ATTEMPTS[name]
    assert not attempt.succeeds(bounded())
    assert not attempt.succeeds(bounded() + BROAD_IAM)  # the explicit Denies: whatever else the identity holds
    assert attempt.succeeds(unbounded() + BROAD_IAM)  # the same grant let the policy before through


@pytest.mark.parametrize("name", ATTEMPTS)
def test_the_policy_before_the_boundary_let_through_what_it_had_a_hole_for(name: str) -> None:
    attempt = ATTEMPTS[name]
    assert attempt.succeeds(unbounded()) == (attempt.before == "allowed")


# The Denies issue 31 added (the one before it keeps the deployer's own policies: tests/test_deployer_documents.py).
OWN_POLICIES = "NeverChangeTheDeployersOrTheTrafficOperatorsPolicies"
DENIES = [s["Sid"] for s in bounded() if s["Effect"] == "Deny" and s["Sid"] != OWN_POLICIES]


@pytest.mark.parametrize("sid", DENIES)
def test_every_deny_of_the_boundary_is_needed(sid: str) -> None:
    """Without it, beside a broad IAM grant, some attempt of the table succeeds."""
    without = [s for s in bounded() if s["Sid"] != sid] + BROAD_IAM
    assert [name for name, attempt in ATTEMPTS.items() if attempt.succeeds(without)] != []


def test_a_role_trusting_the_deployer_with_everything_holds_only_what_the_boundary_allows() -> None:
    """The deployer may make it (with the boundary): its effective permissions, `*:*` intersected with the boundary,
    hold no IAM write, no other role of the account, no Organizations or CloudTrail change; the rest of `*:*` stays
    (a deny-list boundary: policies/README.md says why)."""
    assert allowed(bounded(), Request("iam:CreateRole", NEW_ROLE, {"iam:PermissionsBoundary": BOUNDARY}))
    assert allowed(bounded(), Request("iam:PutRolePolicy", NEW_ROLE, {"iam:PermissionsBoundary": BOUNDARY}))
    effective = {request.action: decide(EVERYTHING, request, boundary=the_boundary()).why for request in ESCALATIONS}
    assert all(why.startswith("outside the permissions boundary: denied by ") for why in effective.values()), effective
    assert effective["sts:AssumeRole"] == "outside the permissions boundary: denied by NoOtherRoleOfThisAccount"
    assert decide(EVERYTHING, Request("s3:GetObject", "arn:aws:s3:::bucket/key"), boundary=the_boundary()).allowed
    assert decide(EVERYTHING, Request("sts:AssumeRole", f"{IAM}:role/{PROJECT}-orders"), boundary=the_boundary()).allowed


# --- the boundary denies every IAM write parliament knows, and allows what the project's roles hold ------------------


def iam_writes() -> list[str]:
    """Every IAM action of access level Write, Permissions management or Tagging (parliament's copy of the Service
    Authorization Reference)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import parliament
    definition = json.loads((Path(parliament.__file__).parent / "iam_definition.json").read_text())
    levels = ("Write", "Permissions management", "Tagging")
    return sorted(
        {
            f"iam:{p['privilege']}"
            for service in definition
            if service["prefix"] == "iam"
            for p in service["privileges"]
            if p["access_level"] in levels
        }
    )


def test_the_boundary_denies_every_iam_write_but_the_load_balancers_service_linked_role() -> None:
    writes = iam_writes()
    assert len(writes) > 100
    let_through = [a for a in writes if decide(EVERYTHING, Request(a, "*"), boundary=the_boundary()).allowed]
    assert let_through == []  # CreateServiceLinkedRole too, without the service it is for
    linked = Request("iam:CreateServiceLinkedRole", "*", {"iam:AWSServiceName": "elasticloadbalancing.amazonaws.com"})
    assert decide(EVERYTHING, linked, boundary=the_boundary()).allowed
    other = Request("iam:CreateServiceLinkedRole", "*", {"iam:AWSServiceName": "autoscaling.amazonaws.com"})
    assert not decide(EVERYTHING, other, boundary=the_boundary()).allowed


def held_actions(document: dict[str, Any]) -> Iterator[Request]:
    """Each action an Allow statement of a role's document names (wildcards expanded over parliament's reference), as a
    request carrying the statement's StringEquals values (iam:AWSServiceName of a service-linked role)."""
    for statement in document["Statement"]:
        if statement["Effect"] != "Allow":
            continue
        equals = statement.get("Condition", {}).get("StringEquals", {})
        context = {key: value if isinstance(value, str) else value[0] for key, value in equals.items()}
        actions = [statement["Action"]] if isinstance(statement["Action"], str) else statement["Action"]
        for pattern in actions:
            for action in expanded(pattern.lower()) or (pattern,):
                yield Request(action, "*", context)


@cache
def expanded(pattern: str) -> tuple[str, ...]:
    """The actions parliament knows that an Action pattern names (the same patterns recur across the roles' documents).
    As arn_like matches an action: `*` and `?` never cross the colon between service and action."""
    regex = re.compile("".join("[^:]*" if c == "*" else "[^:]" if c == "?" else re.escape(c) for c in pattern))
    return tuple(action for action in authorization_reference() if regex.fullmatch(action))


def managed_policy(arn: str) -> dict[str, Any]:
    """An AWS managed policy's document, from the emulator's copy of AWS's (moto)."""
    document: dict[str, Any] = aws_managed_policies()[arn.rsplit("/", 1)[1]]["Document"]
    return document


@cache
def aws_managed_policies() -> dict[str, Any]:
    from moto.iam.aws_managed_policies import aws_managed_policies_data

    policies: dict[str, Any] = json.loads(aws_managed_policies_data)
    return policies


def role_documents(app: Synthesized) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, document) of every policy the stacks give a role: their own, inline, and the AWS managed ones."""
    resolver = Resolver(app)
    for stack in app.stacks():
        resources = app.json(stack).get("resource", {})
        for kind in ("aws_iam_policy", "aws_iam_role_policy"):
            for name, body in resources.get(kind, {}).items():
                yield f"{stack}: {kind}.{name}", json.loads(body["policy"])
        for body in resources.get("aws_iam_role_policy_attachment", {}).values():
            arn = resolver.value(stack, body["policy_arn"])
            if ":aws:policy/" in arn:
                yield f"{stack}: {arn}", managed_policy(arn)


def test_the_boundary_allows_every_action_the_projects_roles_hold(everything_on: Synthesized, example_app: Synthesized) -> None:
    """The components' (load balancer controller, ExternalDNS, vpc-cni and any other), the applications', the flow
    log's, the image builds', the cluster's and the nodes' (with their AWS managed policies): nothing they hold is cut."""
    documents = [*role_documents(everything_on), *role_documents(example_app)]
    assert len(documents) >= 10
    # Each distinct request judged once: the AWS managed policies' wildcards expand to the same actions many times.
    held: dict[tuple[str, str], tuple[str, Request]] = {}
    for where, document in documents:
        for request in held_actions(document):
            held.setdefault((request.action, json.dumps(dict(request.context), sort_keys=True)), (where, request))
    cut = [
        (where, request.action)
        for where, request in held.values()
        if not decide(EVERYTHING, request, boundary=the_boundary()).allowed
    ]
    assert cut == []


# --- the stacks: every role carries it ------------------------------------------------------------------------------


@pytest.mark.parametrize("app_name", ["example_app", "variant_app", "everything_on"])
def test_every_role_the_stacks_create_carries_the_boundary(app_name: str, request: pytest.FixtureRequest) -> None:
    app: Synthesized = request.getfixturevalue(app_name)
    resolver = Resolver(app)
    roles = {
        f"{stack}: {name}": resolver.value(stack, body.get("permissions_boundary", ""))
        for stack in app.stacks()
        for name, body in app.json(stack).get("resource", {}).get("aws_iam_role", {}).items()
    }
    assert len(roles) >= 6  # the shared roles, the flow log's, each colour's cluster and nodes
    project = app.json("common")["provider"]["aws"][0]["default_tags"][0]["tags"]["Project"]
    wanted = f"arn:aws:iam::{ACCOUNT}:policy/{boundary.policy_name(project)}"
    assert {role: arn for role, arn in roles.items() if arn != wanted} == {}


def test_the_call_table_sends_the_boundary_with_every_call_that_needs_it() -> None:
    """CreateRole, PutRolePermissionsBoundary, PutRolePolicy and AttachRolePolicy carry iam:PermissionsBoundary in the
    table, so tests/test_deployer_calls.py proves them allowed with it (and the Deny proves them refused without)."""
    rows = [c for c in calls(deployer()) if c.action in CARRY_IT]
    assert {c.action for c in rows} == set(CARRY_IT)
    assert all(c.context.get("iam:PermissionsBoundary") == BOUNDARY for c in rows), [c.name() for c in rows]
