"""The pipeline's identities (issue #33 item 2), `python -m policies.pipeline`: the plan role's policy proven against the
call table (tests/support/deployer_calls.yaml) for a plan of every stack, with no write allowed; each role's GitHub OIDC
trust decided as IAM decides it (tests/support/iam_evaluation.py `trusts`) for the tokens GitHub issues."""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from model.config import Config
from policies.deployer import Deployer
from policies.pipeline import (
    AUDIENCE,
    PROVIDER_HOST,
    VARIABLES,
    Pipeline,
    main,
    plan_document,
    provider_arn,
    written_documents,
)
from tests.support.configs import EVERYTHING_ON, VARIANT, example, validated, write_project
from tests.support.deployer_calls import PLAN_SECTIONS, calls, default_tags, owners, plan_calls
from tests.support.iam_evaluation import Request, decide, trusts
from tests.support.synth import Synthesized
from tests.test_deployer_calls import statements as deployer_statements
from tests.test_deployer_documents import ACCOUNT, REALISTIC, minimal, realistic

DEPLOYERS = {"realistic": realistic, "defaults": minimal}
REPOSITORY = "example-corporation/payments-platform"
# Access levels of AWS's Service Authorization Reference (as parliament ships it) that change nothing.
READ_LEVELS = {"Read", "List"}


def plan_statements(deployer: Deployer) -> list[dict[str, Any]]:
    return list(plan_document(deployer)["Statement"])


@cache
def access_levels() -> dict[str, str]:
    """service:action (lowercase) -> its access level (Read, List, Write, Tagging, Permissions management)."""
    with warnings.catch_warnings():  # parliament imports the deprecated pkg_resources
        warnings.simplefilter("ignore")
        import parliament
    with open(os.path.join(os.path.dirname(parliament.__file__), "iam_definition.json")) as definition:
        services = json.load(definition)
    return {
        f"{service['prefix']}:{privilege['privilege']}".lower(): privilege["access_level"]
        for service in services
        for privilege in service["privileges"]
    }


def writes_allowed(policy: list[dict[str, Any]]) -> list[str]:
    """Every action the policy names that AWS does not class as Read or List (or does not know)."""
    allowing = [s for s in policy if s["Effect"] == "Allow"]
    named = [a for s in allowing for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])]
    return [a for a in named if "*" in a or access_levels().get(a.lower()) not in READ_LEVELS]


# --- the plan role's policy -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", DEPLOYERS)
def test_every_plan_call_of_the_table_is_allowed(name: str) -> None:
    deployer = DEPLOYERS[name]()
    tags = default_tags(deployer)
    refused = [
        f"{call.name()} on {request.resource}: {decision.why}"
        for call in plan_calls(deployer)
        for request in call.requests(tags)
        if not (decision := decide(plan_statements(deployer), request)).allowed
    ]
    assert refused == []
    assert len(plan_calls(deployer)) > 50


def named_actions(deployer: Deployer) -> set[str]:
    return {a for s in plan_statements(deployer) for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])}


def test_the_plan_policy_names_only_what_the_plan_calls_make() -> None:
    """Nothing beyond: with every option on (S3 state, image builds, WAF), the policy's actions are exactly those of the
    table's plan rows; a project with fewer options gets the same reads (no state statements with local state)."""
    every = realistic()
    assert every.state_in_s3
    assert every.builds_images
    assert every.guards_with_waf
    assert named_actions(every) == {call.action for call in plan_calls(every)}
    assert named_actions(minimal()) == named_actions(every) - {"s3:GetObject", "s3:ListBucket"}


@pytest.mark.parametrize("name", DEPLOYERS)
def test_the_plan_policy_allows_no_write(name: str) -> None:
    """Every action it names is Read or List in AWS's Service Authorization Reference: no wildcard, no write."""
    assert writes_allowed(plan_statements(DEPLOYERS[name]())) == []


def test_a_write_in_the_plan_policy_fails() -> None:
    policy = plan_statements(realistic())
    policy[0] = {**policy[0], "Action": [*policy[0]["Action"], "ec2:CreateTags"]}
    assert writes_allowed(policy) == ["ec2:CreateTags"]
    policy[0] = {**policy[0], "Action": [*policy[0]["Action"], "ec2:Describe*"]}
    assert "ec2:Describe*" in writes_allowed(policy)  # a wildcard may grow into a write: refused too


@pytest.mark.parametrize("name", DEPLOYERS)
def test_every_write_of_the_table_is_denied(name: str) -> None:
    """Each row of every section whose action changes something (create, update, delete, tag, the commands' writes, the
    state and its lock) is refused, on every resource it acts on."""
    deployer = DEPLOYERS[name]()
    tags = default_tags(deployer)
    writes = [call for call in calls(deployer) if access_levels().get(call.action.lower(), "Write") not in READ_LEVELS]
    assert {call.action for call in writes} >= {"s3:PutObject", "s3:DeleteObject", "ec2:CreateVpc", "iam:PassRole"} or (
        name == "defaults"
    )
    allowed = [
        f"{call.name()} on {request.resource}"
        for call in writes
        for request in call.requests(tags)
        if decide(plan_statements(deployer), request).allowed
    ]
    assert allowed == []


def test_the_plan_takes_no_lock_and_reads_only_state() -> None:
    """`terraform plan -lock=false`: the lock file is neither written, read nor deleted; another bucket's object and
    another parameter of the project are refused."""
    deployer = realistic()
    policy = plan_statements(deployer)
    (state,) = [c for c in plan_calls(deployer) if c.owner == "backend" and c.action == "s3:GetObject"]
    lock = f"{state.on[0]}.tflock"
    for action in ("s3:PutObject", "s3:GetObject", "s3:DeleteObject"):
        assert not decide(policy, Request(action, lock)).allowed, action
    assert not decide(policy, Request("s3:GetObject", "arn:aws:s3:::another-bucket/platform/payments/common.tfstate")).allowed
    parameter = f"arn:aws:ssm:ap-northeast-1:{ACCOUNT}:parameter/{deployer.config.project}/database/password"
    assert not decide(policy, Request("ssm:GetParameter", parameter)).allowed


def test_without_the_s3_backend_the_plan_policy_names_no_bucket() -> None:
    text = json.dumps(plan_document(minimal()))
    assert ":s3:" not in text
    assert "UNUSED" not in text


@pytest.fixture
def apps(example_app: Synthesized, variant_app: Synthesized, everything_on: Synthesized) -> dict[str, Synthesized]:
    return {"example": example_app, "variant": variant_app, "everything_on": everything_on}


CONFIGS: dict[str, Callable[[], Config]] = {
    "example": example,
    "variant": lambda: validated(VARIANT),
    "everything_on": lambda: validated(EVERYTHING_ON),
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_a_plan_of_every_stack_is_allowed(apps: dict[str, Synthesized], name: str) -> None:
    """Stack by stack (common, traffic, each colour): the provider, the backend's reads, the read rows of every resource
    type and data source the stack uses, and, with an S3 backend, that stack's own state object."""
    app = apps[name]
    deployer = Deployer(CONFIGS[name](), ACCOUNT)
    tags = default_tags(deployer)
    s3 = realistic()  # its state is in S3: each stack's object, by the stack's name
    by_owner: dict[str, list[Any]] = {}
    for call in plan_calls(deployer):
        by_owner.setdefault(call.owner, []).append(call)
    refused = []
    for stack in app.stacks():
        document = app.json(stack)
        used = [f"resources.{kind}" for kind in document.get("resource", {})]
        used += [f"data_sources.{kind}" for kind in document.get("data", {})]
        assert set(used) <= {f"{section}.{owner}" for section in PLAN_SECTIONS[2:] for owner in owners(section)}
        rows = [call for owner in ("provider", "backend", *used) for call in by_owner.get(owner, [])]
        refused += [
            f"{stack}: {call.name()} on {request.resource}"
            for call in rows
            for request in call.requests(tags)
            if not decide(plan_statements(deployer), request).allowed
        ]
        state = f"arn:aws:s3:::{s3.config.state.bucket}/{s3.config.state.key(stack)}"
        if not decide(plan_statements(s3), Request("s3:GetObject", state)).allowed:
            refused.append(f"{stack}: s3:GetObject on {state}")
    assert {"common", "traffic"} <= set(app.stacks())
    assert refused == []


# --- the trusts --------------------------------------------------------------------------------------------------


def pipeline() -> Pipeline:
    return Pipeline(realistic(), REPOSITORY)


def token(subject: str, audience: str = AUDIENCE) -> Request:
    return Request(
        "sts:AssumeRoleWithWebIdentity",
        "*",
        {f"{PROVIDER_HOST}:sub": subject, f"{PROVIDER_HOST}:aud": audience},
    )


def assumable(request: Request, federated: str | None = None) -> set[str]:
    """The roles (plan, deployer, traffic) whose trust lets this token in."""
    built = pipeline()
    principal = {"Federated": federated or provider_arn(built.deployer)}
    documents = written_documents(built)
    return {
        role
        for role, name in built.role_names().items()
        if trusts(documents[f"trust-{name}"], principal=principal, request=request).allowed
    }


REPO = f"repo:{REPOSITORY}"
TOKENS = {
    "a pull request's job": (token(f"{REPO}:pull_request"), {"plan"}),
    "a job in the deploy environment": (token(f"{REPO}:environment:deploy"), {"deployer"}),
    "a job in the traffic environment": (token(f"{REPO}:environment:traffic"), {"traffic"}),
    "a job on main naming no environment": (token(f"{REPO}:ref:refs/heads/main"), set()),
    "a job on another branch": (token(f"{REPO}:ref:refs/heads/feature"), set()),
    "a job in another environment": (token(f"{REPO}:environment:staging"), set()),
    "an environment whose name starts with deploy": (token(f"{REPO}:environment:deploy-sandbox"), set()),
    "another repository's pull request": (token("repo:example-corporation/other:pull_request"), set()),
    "another repository's deploy environment": (token("repo:someone-else/payments-platform:environment:deploy"), set()),
    "a fork's name with a suffix": (token(f"{REPO}-fork:environment:deploy"), set()),
    "a token for another audience": (token(f"{REPO}:environment:deploy", "https://github.com/example-corporation"), set()),
}


@pytest.mark.parametrize("what", list(TOKENS))
def test_each_token_assumes_only_its_role(what: str) -> None:
    request, expected = TOKENS[what]
    assert assumable(request) == expected


def test_another_providers_token_assumes_nothing() -> None:
    other = f"arn:aws:iam::{ACCOUNT}:oidc-provider/gitlab.com"
    assert assumable(token(f"{REPO}:environment:deploy"), federated=other) == set()


def test_each_trust_pins_repository_and_context_exactly() -> None:
    built = pipeline()
    documents = written_documents(built)
    for role, name in built.role_names().items():
        (statement,) = documents[f"trust-{name}"]["Statement"]
        assert statement["Principal"] == {"Federated": provider_arn(built.deployer)}
        assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
        assert statement["Condition"] == {
            "StringEquals": {f"{PROVIDER_HOST}:aud": AUDIENCE, f"{PROVIDER_HOST}:sub": built.subjects()[role]}
        }
        assert "*" not in json.dumps(statement["Condition"])
        assert "?" not in json.dumps(statement["Condition"])


def test_the_role_names_are_the_workflows_interface() -> None:
    built = Pipeline(realistic(), REPOSITORY, deployer_role="ci-deployer")
    project = built.deployer.config.project
    assert built.role_names() == {"plan": f"plan-{project}", "deployer": "ci-deployer", "traffic": f"traffic-operator-{project}"}
    assert VARIABLES == {"plan": "PLAN_ROLE_ARN", "deployer": "DEPLOY_ROLE_ARN", "traffic": "TRAFFIC_ROLE_ARN"}


def test_the_deployer_can_change_none_of_the_pipelines_roles() -> None:
    """They carry no boundary because the deployer cannot reach them: named outside `<project>-*`."""
    deployer = realistic()
    policy = deployer_statements(deployer)
    built = Pipeline(deployer, REPOSITORY)
    admin = "arn:aws:iam::aws:policy/AdministratorAccess"
    for role in VARIABLES:
        arn = built.role_arn(role)
        for action, context in (
            ("iam:UpdateAssumeRolePolicy", {}),
            ("iam:PutRolePolicy", {}),
            ("iam:AttachRolePolicy", {"iam:PolicyARN": admin}),
            ("iam:DeleteRole", {}),
            ("iam:CreateRole", {}),
        ):
            assert not decide(policy, Request(action, arn, context)).allowed, (action, arn)
    plan_policy = f"arn:aws:iam::{ACCOUNT}:policy/plan-{deployer.config.project}"
    assert not decide(policy, Request("iam:CreatePolicyVersion", plan_policy)).allowed


# --- the command ---------------------------------------------------------------------------------------------------


def test_the_command_writes_the_documents_and_prints_the_one_time_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = write_project(tmp_path, REALISTIC)
    out = tmp_path / "out"
    assert main(["--account", ACCOUNT, "--config", str(project), "--github-repository", REPOSITORY, "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    written = written_documents(pipeline())
    assert {p.stem: json.loads(p.read_text()) for p in out.iterdir()} == written
    provider = f"aws iam create-open-id-connect-provider --url https://{PROVIDER_HOST} --client-id-list {AUDIENCE}"
    assert printed[0].startswith(provider)
    created = [line.split()[4] for line in printed if line.startswith("aws iam create-role ")]
    assert created == list(pipeline().role_names().values())
    # The deployer and the operator allow the four hours their longest jobs ask for (retire, the gated shift); the
    # plan role keeps IAM's default hour. A role created before is told how to catch up.
    names = pipeline().role_names()
    longest = {
        line.split()[4]: line.split("--max-session-duration ")[1] if "--max-session-duration" in line else None
        for line in printed
        if line.startswith("aws iam create-role ")
    }
    assert longest == {names["plan"]: None, names["deployer"]: "14400", names["traffic"]: "14400"}
    assert [line for line in printed if "update-role" in line] == [
        f"# a role created before: aws iam update-role --role-name {names[role]} --max-session-duration 14400"
        for role in ("deployer", "traffic")
    ]
    assert [line.split()[3] for line in printed if line.startswith("gh variable set")] == list(VARIABLES.values())
    # The project file is not the default: the deployer's policies are made for the same one.
    (deployer_line,) = [line for line in printed if line.startswith("python -m policies.deployer ")]
    assert f" --config {project} " in deployer_line
    # It names neither role yet: the last lines say what to set, so the plan role's plans keep the deployer admin, and
    # the gated shift's readiness can read Argo CD as the operator.
    arn, operator = pipeline().role_arn("deployer"), pipeline().role_arn("traffic")
    assert printed[-2:] == [
        f'# and in {project}\'s configuration: "eks": {{"deployer_role_arn": "{arn}"}} (now unset): the deployer stays '
        "every cluster's admin whoever plans",
        f'# and in {project}\'s configuration: "eks": {{"traffic_operator_role_arn": "{operator}"}} (now unset): the '
        "gated shift's readiness reads each colour's Argo CD Applications as the traffic operator, and nothing else in "
        "the cluster",
    ]


def test_a_project_file_that_names_the_deployer_role_is_told_nothing_more(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    arn = pipeline().role_arn("deployer")
    project = write_project(tmp_path, {**REALISTIC, "eks": {**REALISTIC.get("eks", {}), "deployer_role_arn": arn}})
    argv = ["--account", ACCOUNT, "--config", str(project), "--github-repository", REPOSITORY, "--out", str(tmp_path / "o")]
    assert main(argv) == 0
    assert not [line for line in capsys.readouterr().out.splitlines() if "deployer_role_arn" in line]


def test_a_project_file_that_names_both_roles_is_told_neither(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    roles = {"deployer_role_arn": pipeline().role_arn("deployer"), "traffic_operator_role_arn": pipeline().role_arn("traffic")}
    project = write_project(tmp_path, {**REALISTIC, "eks": {**REALISTIC.get("eks", {}), **roles}})
    argv = ["--account", ACCOUNT, "--config", str(project), "--github-repository", REPOSITORY, "--out", str(tmp_path / "o")]
    assert main(argv) == 0
    assert not [line for line in capsys.readouterr().out.splitlines() if "configuration:" in line]


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--github-repository", "example-corporation/*", "--github-repository: 'example-corporation/*' is not allowed"),
        ("--deploy-environment", "prod:main", "--deploy-environment: 'prod:main' is not allowed"),
        ("--traffic-environment", "deploy", "--traffic-environment: 'deploy' is the deploy environment too"),
    ],
)
def test_fails_on_a_bad_argument_naming_it(flag: str, value: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--account", ACCOUNT, "--github-repository", REPOSITORY, flag, value]
    assert main(argv) == 2
    assert message in capsys.readouterr().err
