"""Each shared role binds only its own pods: for every Pod Identity association of every colour (the platform's, the
applications' with a policy, and the vpc-cni add-on's), the role behind it trusts exactly that namespace and service
account, and no cluster. Followed through the synthesized stacks: association -> common's output -> the role -> its
trust."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

import policies
from model.config import Config
from model.loading import config_from_dict
from model.platform import COMPONENTS, Component
from model.workloads import WORKLOADS, Workload, application_workloads, shared_roles
from tests.support.configs import EVERYTHING_ON, example
from tests.support.synth import Synthesized

# The configuration each synthesized fixture holds.
CONFIGS: dict[str, Config] = {"example_app": example(), "everything_on": config_from_dict(EVERYTHING_ON)}

COMMON_OUTPUT = re.compile(r"^\$\{data\.terraform_remote_state\.common\.outputs\.(\w+)\}$")
ROLE_ARN = re.compile(r"^\$\{aws_iam_role\.([\w-]+)\.arn\}$")


def trusted(app: Synthesized, role_arn: str) -> tuple[str, str]:
    """(namespace, service account) the role behind a colour's `role_arn` reference trusts."""
    (output,) = COMMON_OUTPUT.findall(role_arn)
    (role,) = ROLE_ARN.findall(app.json("common")["output"][output]["value"])
    (statement,) = json.loads(app.json("common")["resource"]["aws_iam_role"][role]["assume_role_policy"])["Statement"]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    tags = statement["Condition"]["StringEquals"]
    assert set(tags) == {"aws:RequestTag/kubernetes-namespace", "aws:RequestTag/kubernetes-service-account"}  # no cluster
    return tags["aws:RequestTag/kubernetes-namespace"], tags["aws:RequestTag/kubernetes-service-account"]


def associations(app: Synthesized, colour: str) -> list[tuple[str, str, str]]:
    """(namespace, service account, role ARN reference) of every association the colour makes."""
    found = [
        (a["namespace"], a["service_account"], a["role_arn"])
        for a in app.resources(colour, "aws_eks_pod_identity_association").values()
    ]
    for addon in app.resources(colour, "aws_eks_addon").values():
        # An add-on's association lives in its own namespace: kube-system for every managed add-on here.
        found += [("kube-system", a["service_account"], a["role_arn"]) for a in addon.get("pod_identity_association", [])]
    return found


@pytest.mark.parametrize("fixture", list(CONFIGS))
def test_the_role_behind_every_association_trusts_exactly_that_service_account(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    app: Synthesized = request.getfixturevalue(fixture)
    roles = shared_roles(CONFIGS[fixture])
    for colour in CONFIGS[fixture].clusters:
        found = associations(app, colour)
        # every shared role is bound, once, to its own service account
        assert sorted((n, s) for n, s, _ in found) == sorted((r.namespace, r.service_account) for r in roles), colour
        for namespace, service_account, role_arn in found:
            assert trusted(app, role_arn) == (namespace, service_account)


@pytest.mark.parametrize("fixture", list(CONFIGS))
def test_no_two_roles_trust_the_same_service_account(fixture: str, request: pytest.FixtureRequest) -> None:
    app: Synthesized = request.getfixturevalue(fixture)
    trusts: list[Any] = [
        json.loads(role["assume_role_policy"])["Statement"][0]["Condition"]["StringEquals"]
        for role in app.json("common")["resource"]["aws_iam_role"].values()
        if "pods.eks.amazonaws.com" in role["assume_role_policy"]
    ]
    assert len(trusts) == len(shared_roles(CONFIGS[fixture]))
    assert len({json.dumps(t, sort_keys=True) for t in trusts}) == len(trusts)


def test_only_the_applications_with_a_policy_have_a_role(everything_on: Synthesized) -> None:
    """The variant's sample app and orders name a policy; catalogue, in the namespace it shares with orders, has none:
    no role, no association, and orders' role trusts orders' own service account only."""
    config = CONFIGS["everything_on"]
    assert [(w.name, w.namespace, w.service_account) for w in application_workloads(config)] == [
        ("sample-app", "sample-app", "sample-app"),
        ("orders", "shop", "orders-api"),
    ]
    for colour in config.clusters:
        bound = {(namespace, account) for namespace, account, _ in associations(everything_on, colour)}
        assert ("shop", "orders-api") in bound
        assert ("shop", "catalogue") not in bound


@pytest.mark.parametrize("fixture", list(CONFIGS))
def test_each_applications_role_holds_its_own_document_filled(fixture: str, request: pytest.FixtureRequest) -> None:
    """`<project>-<name>`, its policy the application's document with the values synth fills (no placeholder left)."""
    app: Synthesized = request.getfixturevalue(fixture)
    workloads = application_workloads(CONFIGS[fixture])
    assert workloads, fixture
    for workload in workloads:
        assert workload.policy is not None
        role = app.resource("common", "aws_iam_role", f"{workload.construct_id}/role")
        assert role["name"] == f"{CONFIGS[fixture].project}-{workload.name}"
        written = app.resource("common", "aws_iam_policy", f"{workload.construct_id}/policy")["policy"]
        assert "{{" not in written
        expected = json.loads(policies.render(workload.policy, **{k: "x" for k in policies.placeholders(workload.policy)}))
        actions = [s["Action"] for s in json.loads(written)["Statement"]]
        assert actions == [s["Action"] for s in expected["Statement"]]


@pytest.mark.parametrize("component", [c for c in COMPONENTS if c.identity and c.chart], ids=lambda c: c.name)
def test_each_shared_role_grants_what_upstreams_policy_grants_for_every_chart_version_of_the_table(
    example_app: Synthesized, component: Component
) -> None:
    """One role serves every colour, whichever chart version of the table it runs: the role's policy must grant each
    action upstream's own policy grants for each of those versions (facts kept in the component's entry)."""
    assert component.identity
    assert component.chart
    covered = [v for upstream in component.identity.upstream for v in upstream.releases]
    assert sorted(covered) == sorted(component.versions()), "every chart version of the table needs its upstream policy"
    role: Workload = next(w for w in WORKLOADS if w.name == component.name)
    document = json.loads(example_app.resource("common", "aws_iam_policy", f"{role.construct_id}/policy")["policy"])
    granted = {a for s in document["Statement"] for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])}
    missing = {upstream.document: sorted(upstream.action_names() - granted) for upstream in component.identity.upstream}
    assert missing == {upstream.document: [] for upstream in component.identity.upstream}
