"""Each shared role binds only its own pods: for every Pod Identity association of every colour (the
project's and the vpc-cni add-on's), the role behind it trusts exactly that namespace and service
account, and no cluster. Followed through the synthesized stacks: association -> common's output ->
the role -> its trust."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from model.platform import COMPONENTS, Component
from model.workloads import SHARED_ROLES
from tests.support.configs import EXAMPLE_COLOURS
from tests.support.synth import Synthesized

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


@pytest.mark.parametrize("fixture", ["example_app", "everything_on"])
@pytest.mark.parametrize("colour", EXAMPLE_COLOURS)
def test_the_role_behind_every_association_trusts_exactly_that_service_account(
    fixture: str, colour: str, request: pytest.FixtureRequest
) -> None:
    app: Synthesized = request.getfixturevalue(fixture)
    found = associations(app, colour)
    assert len(found) == len(SHARED_ROLES)  # every shared role is bound, once
    for namespace, service_account, role_arn in found:
        assert trusted(app, role_arn) == (namespace, service_account)


def test_no_two_roles_trust_the_same_service_account(example_app: Synthesized) -> None:
    trusts: list[Any] = [
        json.loads(role["assume_role_policy"])["Statement"][0]["Condition"]["StringEquals"]
        for role in example_app.json("common")["resource"]["aws_iam_role"].values()
        if "pods.eks.amazonaws.com" in role["assume_role_policy"]
    ]
    assert len(trusts) == len(SHARED_ROLES)
    assert len({json.dumps(t, sort_keys=True) for t in trusts}) == len(trusts)


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
    role = next(w for w in SHARED_ROLES if w.name == component.name)
    document = json.loads(example_app.resource("common", "aws_iam_policy", f"{role.construct_id}/policy")["policy"])
    granted = {a for s in document["Statement"] for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])}
    missing = {upstream.document: sorted(upstream.action_names() - granted) for upstream in component.identity.upstream}
    assert missing == {upstream.document: [] for upstream in component.identity.upstream}
