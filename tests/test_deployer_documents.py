"""`python -m policies.deployer`: the deploying identity's policy, filled for a project and split into managed
policies that IAM accepts (each under 6,144 characters without whitespace), with the commands that create and
attach them. What the policy allows, call by call, is tests/test_deployer_calls.py's."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

import policies
from policies.deployer import (
    DOCUMENTS,
    MANAGED_POLICY_LIMIT,
    NAME_PREFIX,
    OPTIONAL,
    TEMPLATE,
    Deployer,
    Holders,
    commands,
    documents,
    main,
    operator_policy_name,
    size,
    write,
)
from tests.support.configs import CONNECTION_ARN, ORDERS_POLICY, named_release, release_of, validated, write_project
from tests.support.iam_evaluation import Request, decide

ACCOUNT = "123456789012"
# Roles as they come: an SSO permission set's role (with its path) and a CI job's.
SSO_ROLE = (
    f"arn:aws:iam::{ACCOUNT}:role/aws-reserved/sso.amazonaws.com/ap-northeast-1/AWSReservedSSO_PlatformDeployer_0123456789abcdef"
)
CI_ROLE = f"arn:aws:iam::{ACCOUNT}:role/ci/platform-deployer"
# Two applications as a team has them: one of this repository with a role of its own, an image in a repository named
# deeper under the project's prefix and a build; one from its own repository with an image and a build, no role.
APPLICATIONS: dict[str, Any] = {
    "payments-api": {
        "host": "pay",
        "source": {"path": "deploy/payments-api"},
        "policy": ORDERS_POLICY,
        "image": {"repository": "payments-platform-ap/payments/api", "tag": "2.4.0", "buildspec": "deploy/buildspec.yml"},
    },
    "ledger": {
        "host": "ledger",
        "source": {"repo_url": "https://github.com/example-corporation/ledger.git", "path": "chart", "revision": "v1.2.0"},
        "image": {"tag": "1.2.0", "buildspec": "buildspec.yml"},
    },
}
# A realistic project that uses every option the policy depends on, with names outside `<project>-` where the
# config allows them: the longest project name allowed (its target groups' names are shortened), the S3 backend, the
# image builds, its own table, two applications.
REALISTIC: dict[str, Any] = {
    "project": "payments-platform-ap",
    "region": "ap-northeast-1",
    "dns": {"parent_zone": "platform.example-corporation.com", "sub_domain": "payments-blue-green"},
    "state": {"backend": "s3", "bucket": "example-corporation-terraform-state-ap-northeast-1", "key_prefix": "platform/payments"},
    "image": {"build_connection_arn": CONNECTION_ARN},
    "table": {"name": "example-corporation-payments-platform-users"},
    "gitops": {"repo_url": "https://github.com/example-corporation/payments-platform.git"},
    "traffic": {"waf": {"enabled": True}},
    "applications": APPLICATIONS,
    "clusters": {
        "blue": {"kubernetes_version": "1.35", "weight": 100, **named_release(applications=release_of(APPLICATIONS))},
        "green": {"kubernetes_version": "1.36", "weight": 0},
    },
}


def realistic(*roles: str) -> Deployer:
    return Deployer(validated(REALISTIC), ACCOUNT, roles or (SSO_ROLE, CI_ROLE))


def minimal() -> Deployer:
    """The defaults: local state, no image build, names derived from the project, an IAM user deploys."""
    return Deployer(validated({}), ACCOUNT)


@pytest.mark.parametrize("deployer", [realistic(), minimal()], ids=["realistic", "defaults"])
def test_every_document_fits_one_managed_policy(deployer: Deployer, tmp_path: Path) -> None:
    written = write(deployer, tmp_path)
    sizes = {name: size(json.loads(path.read_text())) for name, path in written.items()}
    assert len(sizes) == len(DOCUMENTS) + 2  # and the boundary, and the traffic operator's
    assert all(0 < characters < MANAGED_POLICY_LIMIT for characters in sizes.values()), sizes


def test_size_counts_what_iam_counts() -> None:
    """IAM counts the document without whitespace; pretty-printing must not push a document over the limit."""
    document = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]}
    assert size(document) == len(
        '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"*"}]}'
    )


def test_a_document_above_the_limit_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr("policies.deployer.MANAGED_POLICY_LIMIT", 500)
    with pytest.raises(
        ValueError, match=r"(boundary|deployer)-payments-platform-ap(-\w+)? is \d+ characters without whitespace; IAM allows 500"
    ):
        write(realistic(), tmp_path)


def test_every_statement_of_the_template_is_in_exactly_one_document() -> None:
    template = json.loads((Path(policies.__file__).parent / f"{TEMPLATE}.json").read_text())
    sids = [statement["Sid"] for statement in template["Statement"]]
    placed = [sid for members in DOCUMENTS.values() for sid in members]
    assert sorted(placed) == sorted(sids)
    assert set(OPTIONAL) <= set(sids)


def test_statements_a_project_does_not_use_are_left_out() -> None:
    used = {s["Sid"] for document in documents(realistic()).values() for s in document["Statement"]}
    unused = {s["Sid"] for document in documents(minimal()).values() for s in document["Statement"]}
    assert set(OPTIONAL) <= used
    assert not set(OPTIONAL) & unused
    assert "UNUSED" not in json.dumps(documents(minimal()))


def test_the_policy_names_the_projects_own_names_and_every_deploying_role() -> None:
    text = json.dumps(documents(realistic()))
    assert "table/example-corporation-payments-platform-users" in text
    assert "repository/payments-platform-ap/*" in text  # every application's repository is under the project's name
    assert "loadbalancer/app/payments-platform-ap-traffic/*" in text
    assert "parameter/payments-platform-ap/traffic/*" in text
    assert "s3:::example-corporation-terraform-state-ap-northeast-1/platform/payments/*" in text
    assert "payments-blue-green.platform.example-corporation.com" in text
    (lookup,) = [
        s for d in documents(realistic()).values() for s in d["Statement"] if s["Sid"] == "SessionContextReadsTheDeployingRole"
    ]
    assert lookup["Resource"] == [SSO_ROLE, CI_ROLE]


def test_the_deployer_cannot_rewrite_its_own_policies_nor_the_traffic_operators() -> None:
    """The policies are named outside `<project>-` (which the deployer manages), and a Deny names them besides: also
    for a project whose name makes `<project>-*` cover them (`traffic`: the operator's is `traffic-operator-traffic`)."""
    for deployer in (realistic(), Deployer(validated({"project": "traffic"}), ACCOUNT)):
        statements = [s for document in documents(deployer).values() for s in document["Statement"]]
        for name in [*documents(deployer), operator_policy_name(deployer.config.project)]:
            arn = f"arn:aws:iam::{ACCOUNT}:policy/{name}"
            denied = decide(statements, Request("iam:CreatePolicyVersion", arn)).why
            assert denied == "denied by NeverChangeTheDeployersOrTheTrafficOperatorsPolicies", name
    deployer = realistic()
    statements = [s for document in documents(deployer).values() for s in document["Statement"]]
    for name in documents(deployer):
        assert name.startswith(NAME_PREFIX)
        assert not name.startswith(f"{deployer.config.project}-")
    project_policy = f"arn:aws:iam::{ACCOUNT}:policy/{deployer.config.project}-external-dns"
    assert decide(statements, Request("iam:CreatePolicyVersion", project_policy)).allowed


def test_the_commands_create_each_policy_and_attach_it_to_each_role(tmp_path: Path) -> None:
    """The deployer's to the deploying roles, the traffic operator's to the operators' (a placeholder when none is
    named), never one to the other's."""
    deployer = realistic()
    written = write(deployer, tmp_path / "out dir")
    operator = operator_policy_name("payments-platform-ap")
    assert set(written) == {"boundary-payments-platform-ap", *documents(deployer), operator}
    lines = commands(deployer, written)
    created = [shlex.split(line) for line in lines if line.startswith("aws iam create-policy")]
    assert sorted(c[4] for c in created) == sorted(written)
    assert created[0][4] == "boundary-payments-platform-ap"  # before any deploy: the deployer cannot create a role without it
    assert all(Path(c[6].removeprefix("file://")).is_file() for c in created)  # the quoted path survives the space
    attached = [shlex.split(line) for line in lines if line.startswith("aws iam attach-role-policy")]
    roles = {"AWSReservedSSO_PlatformDeployer_0123456789abcdef", "platform-deployer"}
    assert {(a[4], a[6].rsplit("/", 1)[1]) for a in attached} == {
        *((role, name) for role in roles for name in documents(deployer)),
        ("<the-traffic-operator-role-name>", operator),
    }
    on_call = Holders((f"arn:aws:iam::{ACCOUNT}:role/on-call/traffic-operator",))
    for_user = commands(deployer, written, user="deployer", operators=on_call)
    assert sum(line.startswith("aws iam attach-user-policy --user-name deployer --policy-arn") for line in for_user) == len(
        documents(deployer)
    )
    assert f"aws iam attach-role-policy --role-name traffic-operator --policy-arn arn:aws:iam::{ACCOUNT}:policy/{operator}" in (
        for_user
    )


def test_the_command_writes_the_documents_and_prints_the_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project_file = write_project(tmp_path, REALISTIC)
    argv = ["--account", ACCOUNT, "--config", str(project_file), "--deployer-role-arn", CI_ROLE, "--out", str(tmp_path / "p")]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    names = sorted(p.stem for p in (tmp_path / "p").glob("*.json"))
    deployers = [f"deployer-payments-platform-ap-{concern}" for concern in DOCUMENTS]
    boundary, operator = "boundary-payments-platform-ap", "traffic-operator-payments-platform-ap"
    assert names == sorted([boundary, *deployers, operator])
    assert re.findall(r"--policy-name (\S+)", out) == [boundary, *deployers, operator]
    assert f"policy/{boundary}" not in out.split("--policy-document", 1)[1].split("\n", 1)[1]  # created, attached to none
    assert out.count("attach-role-policy --role-name platform-deployer") == len(DOCUMENTS)
    assert out.count("attach-role-policy --role-name <the-traffic-operator-role-name>") == 1
    assert f"of {MANAGED_POLICY_LIMIT} characters" in err
    assert main(["--account", ACCOUNT, "--config", str(project_file)]) == 0  # without --out: the documents as JSON
    assert sorted(json.loads(capsys.readouterr().out)) == names


def test_the_command_refuses_a_malformed_account_or_role(capsys: pytest.CaptureFixture[str]) -> None:
    user = "arn:aws:iam::123456789012:user/alice"
    assert main(["--account", "1234", "--deployer-role-arn", user, "--traffic-operator-role-arn", "on-call"]) == 2
    err = capsys.readouterr().err
    assert "--account: '1234' is not allowed; use the 12-digit account ID" in err
    assert f"--deployer-role-arn: '{user}' is not allowed; use a role ARN" in err
    assert "--traffic-operator-role-arn: 'on-call' is not allowed; use a role ARN" in err


def test_every_arn_takes_the_partition_of_the_region() -> None:
    state = {"backend": "s3", "bucket": "tf-state-cn", "key_prefix": "platform/shop"}
    china = Deployer(validated({"project": "shop", "region": "cn-north-1", "state": state}), ACCOUNT)
    text = json.dumps(documents(china))
    assert "arn:aws-cn:s3:::tf-state-cn/platform/shop/*" in text
    assert re.findall(r"arn:aws:", text) == []
