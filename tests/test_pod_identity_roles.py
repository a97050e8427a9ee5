"""Each shared role binds only its own pods: for every Pod Identity association of every colour (the platform's, the
applications' with a policy, and the vpc-cni add-on's), the role behind it trusts exactly that namespace and service
account, in this account and this project's clusters, and no one cluster. Followed through the synthesized stacks:
association -> common's output -> the role -> its trust. And the trust decided as IAM decides it, for the requests EKS
Pod Identity makes (its session tags), from this project's clusters and from others."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

import policies
from model.config import Config, application_workloads, cluster_names, shared_roles
from model.platform import COMPONENTS, Component
from model.workloads import WORKLOADS, Workload
from tests.support.configs import EVERYTHING_ON, example, validated
from tests.support.synth import Synthesized

# The configuration each synthesized fixture holds.
CONFIGS: dict[str, Config] = {"example_app": example(), "everything_on": validated(EVERYTHING_ON)}

COMMON_OUTPUT = re.compile(r"^\$\{data\.terraform_remote_state\.common\.outputs\.(\w+)\}$")
ROLE_ARN = re.compile(r"^\$\{aws_iam_role\.([\w-]+)\.arn\}$")


def trusted(app: Synthesized, role_arn: str) -> tuple[str, str]:
    """(namespace, service account) the role behind a colour's `role_arn` reference trusts."""
    (output,) = COMMON_OUTPUT.findall(role_arn)
    (role,) = ROLE_ARN.findall(app.json("common")["output"][output]["value"])
    (statement,) = json.loads(app.json("common")["resource"]["aws_iam_role"][role]["assume_role_policy"])["Statement"]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    conditions = dict(statement["Condition"])
    # Any colour of this project, present or future: no one cluster, so a new colour never edits a trust.
    assert conditions.pop("StringLike") == {"aws:RequestTag/eks-cluster-name": "eks-bg-*"}
    tags = dict(conditions.pop("StringEquals"))
    assert conditions == {}
    assert set(tags) == {"aws:RequestTag/kubernetes-namespace", "aws:RequestTag/kubernetes-service-account"}
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
        json.loads(role["assume_role_policy"])["Statement"][0]["Condition"]
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


# What EKS Pod Identity puts in its AssumeRole and TagSession requests (Amazon EKS User Guide, "Grant Pods access to AWS
# resources based on tags": the session tags it adds), for a pod of this project's blue cluster in this account. No
# aws:SourceAccount: no AWS source says EKS Auth sends it (components/pod_identity_role.py).
ACCOUNT = "123456789012"
REQUEST = {
    "aws:RequestTag/eks-cluster-arn": f"arn:aws:eks:ap-northeast-1:{ACCOUNT}:cluster/eks-bg-blue",
    "aws:RequestTag/eks-cluster-name": "eks-bg-blue",
    "aws:RequestTag/kubernetes-namespace": "external-dns",
    "aws:RequestTag/kubernetes-service-account": "external-dns",
    "aws:RequestTag/kubernetes-pod-name": "external-dns-7d9f8b6c5-x2k4q",
}


def trust_allows(changes: dict[str, str | None]) -> bool:
    """Whether ExternalDNS's role (as common fills it) lets Pod Identity assume it and tag the session
    for a request that differs from REQUEST by `changes` (None: the key is absent)."""
    from tests.support.iam_evaluation import Request, decide

    document = json.loads(
        policies.render(
            "pod_identity_trust",
            NAMESPACE="external-dns",
            SERVICE_ACCOUNT="external-dns",
            CLUSTER_NAMES=cluster_names(CONFIGS["example_app"]),
        )
    )
    (statement,) = document["Statement"]
    assert statement.pop("Principal") == {"Service": "pods.eks.amazonaws.com"}  # the evaluator judges the rest
    context = {k: v for k, v in {**REQUEST, **changes}.items() if v is not None}
    role = f"arn:aws:iam::{ACCOUNT}:role/eks-bg-external-dns"
    decisions = [decide([{**statement, "Resource": "*"}], Request(action, role, context)) for action in statement["Action"]]
    return all(d.allowed for d in decisions)


@pytest.mark.parametrize(
    ("changes", "allowed"),
    [
        ({}, True),
        ({"aws:RequestTag/eks-cluster-name": "eks-bg-green"}, True),  # any colour
        ({"aws:RequestTag/eks-cluster-name": "eks-bg-a-colour-of-next-year"}, True),  # a colour not yet made
        ({"aws:RequestTag/eks-cluster-name": "payments-blue"}, False),  # another project's cluster
        ({"aws:RequestTag/eks-cluster-name": "eks-bgx-blue"}, False),  # a project that only begins the same
        ({"aws:RequestTag/eks-cluster-name": None}, False),  # session tags disabled on the association
        # Whether or not EKS Auth sends the account, the trust does not hang on it (the role's account binds it:
        # an association needs iam:PassRole on the role, in the cluster's account).
        ({"aws:SourceAccount": ACCOUNT}, True),
        ({"aws:RequestTag/kubernetes-service-account": "default"}, False),  # another pod of the namespace
        ({"aws:RequestTag/kubernetes-namespace": "kube-system"}, False),
    ],
)
def test_the_trust_admits_this_projects_clusters_only_with_or_without_a_source_account(
    changes: dict[str, str | None], allowed: bool
) -> None:
    assert trust_allows(changes) is allowed
