"""Configuration strings are data (model/literal.py): a value of the configuration, or a string of an application's
policy file, reaches Terraform as written, never as an interpolation or a directive; the stacks' own expressions stay
expressions.

In process: the escaping, the configuration's strings as each stack writes them, and the one place Terraform reads
them literally (the backend, an output's description). Beside the suite (tests/support/literal_values.py): Terraform
itself validates every stack, and a plan against the AWS emulator holds each value as the configuration wrote it.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

import policies
from model.literal import UNSEEN_BY_CDKTF, literal, literals
from model.paths import PROJECT_DIR
from tests.support.configs import example, validated
from tests.support.literal_values import (
    ADMIN_GROUP,
    CDKTF_MARKER,
    CREDENTIAL_URL,
    DESCRIPTION,
    DIRECTIVE,
    GITOPS_REVISION,
    HOST_FILE,
    IAM_VARIABLE,
    POLICY,
    RELEASE,
    REPO_URL,
    REVISION,
    SAMPLES,
    SAMPLES_MODULE,
    SSO_ISSUER,
    SSO_NAME,
    STATE_DIRECTORY,
    TAG_KEY,
    UNCLOSED,
    VALUES,
    LiteralValues,
    literal_config,
    parent_release,
)

Plans = Future[tuple[dict[str, Any], dict[str, Any]]]

# Hand-written: what each value must look like in cdk.tf.json.
ESCAPED_TAGS = {
    "Host": '$${file("/etc/hostname")}',
    "Note": "%%{ if true }x%%{ endif }",
    "$${path.cwd}": "k",
}
# An interpolation or a directive Terraform evaluates: a `${` or `%{` that no `$` or `%` escapes.
EXPRESSION = re.compile(r"(?<!\$)\$\{([^}]*)\}|(?<!%)%\{([^}]*)\}")


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("${aws:username}", "$${aws:username}"),
        ("%{ if true }x%{ endif }", "%%{ if true }x%%{ endif }"),
        ("a ${b} and ${c}", "a $${b} and $${c}"),
        ("$${x}", "$$${x}"),  # Terraform reads `$${x}` back
        ("%%{x}", "%%%{x}"),
        ("costs 5$ or 10%", "costs 5$ or 10%"),
        # cdktf would read these `$${` as the start of an expression (model/literal.py)
        ("costs 5$ or ${", "costs 5$ or $%{ if true }%{ endif }{"),
        ("}${a", "}$%{ if true }%{ endif }{a"),
        ("${TfToken[TOKEN.1]}", "$%{ if true }%{ endif }{TfToken[TOKEN.1]}"),
    ],
)
def test_literal_escapes_interpolations_and_directives(text: str, written: str) -> None:
    assert literal(text) == written


def test_a_string_without_template_sequences_is_returned_as_it_is() -> None:
    text = "arn:aws:s3:::bucket/$HOME/{x}/100%"
    assert literal(text) is text


def test_literals_reaches_every_string_of_a_configuration() -> None:
    raw = literal_config(Path("/state"), Path("/secret"))
    config = validated(raw)
    written = literals(config)
    assert {key: written.tags[key] for key in ESCAPED_TAGS} == ESCAPED_TAGS
    assert isinstance(written.tags, MappingProxyType)  # still read-only
    values = written.applications["reports"].values
    assert values["env"] == [{"name": "POD", "value": "$${POD_NAME}"}]
    assert values["$${key}"] == "a key"
    assert written.applications["reports"].source.repo_url == "https://git.example.com/$${ORG}/reports.git"
    assert written.argocd.sso is not None
    assert written.argocd.sso.name == "Okta $${SSO}"
    assert written.state.directory == "/state/state-$${terraform.workspace}"
    assert written.clusters["blue"].weight == config.clusters["blue"].weight
    # The configuration itself is left as it was: the operator commands read it as written.
    assert config.tags["Host"] == HOST_FILE
    assert config == validated(raw)


def test_a_configuration_without_template_sequences_is_written_as_it_is() -> None:
    """So what the stacks synthesize of such a configuration is what they synthesized before."""
    assert literals(example()) == example()


def test_a_policy_document_escapes_its_own_text_not_its_values() -> None:
    fills = {"PARTITION": "${TfToken[TOKEN.7]}"}  # what cdktf hands Python for a reference
    (escaped,) = json.loads(policies.render_from(PROJECT_DIR / POLICY, fills, escape=literal))["Statement"]
    assert escaped["Resource"] == "arn:${TfToken[TOKEN.7]}:s3:::reports/home/$${aws:username}/*"
    assert escaped["Condition"] == {"StringEquals": {"aws:PrincipalTag/team": "$${aws:PrincipalTag/team}"}}
    # As AWS reads it (the operator commands that print or create a policy): unescaped.
    (plain,) = json.loads(policies.render_from(PROJECT_DIR / POLICY, fills))["Statement"]
    assert plain["Resource"] == f"arn:${{TfToken[TOKEN.7]}}:s3:::reports/home/{IAM_VARIABLE}/*"


def test_every_stack_writes_the_tags_escaped(literal_values: LiteralValues) -> None:
    app = literal_values.app
    for stack in app.stacks():
        # common has two providers: its region's, and us-east-1's, which only reads (the Tagging API) and tags nothing
        (provider,) = [p for p in app.json(stack)["provider"]["aws"] if "alias" not in p]
        tags = provider["default_tags"][0]["tags"]
        assert {key: tags[key] for key in ESCAPED_TAGS} == ESCAPED_TAGS, stack
        assert tags["Secret"].startswith('$${file("'), stack


def test_the_application_policy_is_escaped_around_its_references(literal_values: LiteralValues) -> None:
    app = literal_values.app
    policy = app.resource("common", "aws_iam_policy", "reports-role/policy")
    (statement,) = json.loads(policy["policy"])["Statement"]
    assert statement["Resource"] == "arn:${data.aws_partition.partition.partition}:s3:::reports/home/$${aws:username}/*"
    assert statement["Condition"] == {"StringEquals": {"aws:PrincipalTag/team": "$${aws:PrincipalTag/team}"}}
    assert policy["description"] == "reports, %%{ if true }x%%{ endif }"
    assert app.resource("common", "aws_iam_role", "reports-role/role")["description"] == policy["description"]


def test_helm_values_are_escaped_and_the_references_after_them_stay(literal_values: LiteralValues) -> None:
    values = parent_release(literal_values.app.json(literal_values.standby))["values"][0]
    for written in (
        '"value": "$${POD_NAME}"',
        '"greeting": "%%{ if true }x%%{ endif }"',
        '"price": "costs 5$ or $%{ if true }%{ endif }{"',
        '"marker": "$%{ if true }%{ endif }{TfToken[TOKEN.1]}"',
        '"$${key}": "a key"',
        '"repoURL": "https://git.example.com/$${ORG}/reports.git"',
        '"targetRevision": "reports-$${BUILD}"',
        '"targetRevision": "release-$${GIT_TAG}"',
        '"name": "Okta $${SSO}"',
    ):
        assert written in values
    # After the `${` that never closes, in the same string: cdktf still writes the references as references.
    assert values.index("costs 5$") < values.index('"vpcId": "${data.terraform_remote_state.common.outputs.vpc_id}"')


def test_the_backend_takes_the_state_directory_as_written_the_remote_state_escaped(literal_values: LiteralValues) -> None:
    """Terraform reads a backend's settings literally, a remote state's `config` as an expression: both name the same
    directory."""
    app = literal_values.app
    for stack in app.stacks():
        assert app.json(stack)["terraform"]["backend"]["local"]["path"] == f"../../../{STATE_DIRECTORY}/{stack}.tfstate"
    remote = app.json(literal_values.standby)["data"]["terraform_remote_state"]
    assert remote["common"]["config"]["path"] == "../../../state-$${terraform.workspace}/common.tfstate"


def test_an_output_description_is_in_the_configurations_own_words(literal_values: LiteralValues) -> None:
    """Terraform reads it literally: escaped, it would show the escape."""
    output = literal_values.app.json("common")["output"]["reports_role_arn"]
    assert output["description"] == f"Pod Identity role of reports/reports: {DESCRIPTION}."


def test_no_configuration_string_became_an_expression(literal_values: LiteralValues) -> None:
    """Whatever path a value takes into any stack: no expression there is one of the configuration's. Only where
    Terraform evaluates nothing (the backend, the outputs' descriptions) is a value as written."""
    hostile = {body for text in _configured_strings(literal_values) for body in _expressions(text)}
    assert hostile >= {"aws:username", "POD_NAME", 'file("/etc/hostname")', " if true ", "TfToken[TOKEN.1]"}
    app = literal_values.app
    for stack in app.stacks():
        document = app.json(stack)
        del document["terraform"]["backend"]
        for output in document.get("output", {}).values():
            output.pop("description", None)
        found = {body for text in _strings(document) for body in _expressions(text.replace(UNSEEN_BY_CDKTF, ""))}
        assert found, stack  # the stack's own
        assert found & hostile == set(), stack


def test_the_stacks_own_expressions_are_not_escaped(literal_values: LiteralValues) -> None:
    """The components' expressions (here a colour's node group guard) are written as they were."""
    text = literal_values.app.text(literal_values.standby)
    assert '"node_group_name": "${each.value}"' in text
    assert "$${each" not in text


@pytest.mark.background("literal_values_plan")
def test_every_stack_is_valid_terraform(literal_values_plan: Plans) -> None:
    validated_result, _ = literal_values_plan.result()
    assert validated_result["valid"] is True, validated_result["diagnostics"]


@pytest.mark.background("literal_values_plan")
def test_the_plan_holds_common_s_values_as_written(literal_values_plan: Plans, literal_values: LiteralValues) -> None:
    _, plan = literal_values_plan.result()
    common = _resources(plan, "module.common")
    (policy,) = [r["values"] for r in common if r["type"] == "aws_iam_policy" and "reports" in r["values"]["name"]]
    (statement,) = json.loads(policy["policy"])["Statement"]
    assert statement["Resource"] == f"arn:aws:s3:::reports/home/{IAM_VARIABLE}/*"
    assert statement["Condition"] == {"StringEquals": {"aws:PrincipalTag/team": "${aws:PrincipalTag/team}"}}
    assert policy["description"] == DESCRIPTION
    (table,) = [r["values"] for r in common if r["type"] == "aws_dynamodb_table"]
    secret_file = literal_values.app.outdir.parent / "secret"
    expected = {"Host": HOST_FILE, "Note": DIRECTIVE, TAG_KEY: "k", "Secret": f'${{file("{secret_file}")}}'}
    assert {key: table["tags_all"][key] for key in expected} == expected


@pytest.mark.background("literal_values_plan")
def test_the_plan_holds_the_helm_values_as_written(literal_values_plan: Plans, literal_values: LiteralValues) -> None:
    _, plan = literal_values_plan.result()
    (release,) = _resources(plan, f"module.{RELEASE}")
    parent = json.loads(release["values"]["input"]["values"][0])["manifests"][-1]
    facts = parent["spec"]["source"]["helm"]["valuesObject"]
    reports = facts["applications"]["reports"]
    assert {key: reports["values"][key] for key in VALUES} == VALUES
    assert reports["source"]["repoURL"] == REPO_URL
    assert reports["source"]["targetRevision"] == REVISION
    assert parent["spec"]["source"]["targetRevision"] == GITOPS_REVISION
    assert facts["argocd"]["sso"]["name"] == SSO_NAME
    assert facts["argocd"]["sso"]["issuer"] == SSO_ISSUER
    assert facts["argocd"]["rbac"]["adminGroups"] == [ADMIN_GROUP]
    urls = [s["spec"]["target"]["template"].get("data", {}).get("url") for s in facts["externalSecrets"][1:]]
    assert CREDENTIAL_URL in urls
    assert reports["values"]["marker"] == CDKTF_MARKER
    assert reports["values"]["price"] == UNCLOSED
    # References after the `${` that never closes were evaluated, from the state directory named as written.
    assert facts["cluster"]["vpcId"] == "vpc_id-value"
    assert reports["values"]["blueGreen"]["table"]["name"] == "table_name-value"


@pytest.mark.background("literal_values_plan")
def test_terraform_reads_each_escaped_sample_as_written(literal_values_plan: Plans) -> None:
    _, plan = literal_values_plan.result()
    (samples,) = _resources(plan, f"module.{SAMPLES_MODULE}")
    assert samples["values"]["input"] == list(SAMPLES)


@pytest.mark.background("literal_values_plan")
def test_no_file_of_the_planning_machine_is_in_the_plan(literal_values_plan: Plans, literal_values: LiteralValues) -> None:
    """The tags name /etc/hostname and a file of the test's own: the latter's content (random) is nowhere in the plan.
    /etc/hostname's may be a word any plan holds (`vm` here): no planned tag holds it."""
    _, plan = literal_values_plan.result()
    assert literal_values.secret not in json.dumps(plan)
    hostname = Path("/etc/hostname").read_text().strip() if Path("/etc/hostname").is_file() else ""
    tags = [r.get("values", {}).get("tags_all") or {} for r in _resources(plan, "module.common")]
    assert [t for t in tags if hostname and hostname in t.values()] == []
    assert all(t["Host"] == HOST_FILE for t in tags if t)


def _configured_strings(values: LiteralValues) -> Iterator[str]:
    """Every string of the configuration, and of the application's policy file."""
    yield from _strings(values.config.model_dump(mode="json"))
    yield from _strings(json.loads((PROJECT_DIR / POLICY).read_text()))


def _strings(node: Any) -> Iterator[str]:
    """Every string of a JSON document, keys included, and those of a string that is a JSON document itself."""
    if isinstance(node, str):
        yield node
        if node.startswith(("{", "[")):
            with contextlib.suppress(json.JSONDecodeError):
                yield from _strings(json.loads(node))
    elif isinstance(node, dict):
        for key, item in node.items():
            yield key
            yield from _strings(item)
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)


def _expressions(text: str) -> set[str]:
    return {interpolation or directive for interpolation, directive in EXPRESSION.findall(text)}


def _resources(plan: dict[str, Any], module: str) -> list[dict[str, Any]]:
    (found,) = [m for m in plan["planned_values"]["root_module"]["child_modules"] if m["address"] == module]
    return list(found["resources"])
