"""Application teams are tenants of a colour (#45): what an application's chart may make in its namespace, judged with
Argo CD's own project matching (tests/support/argocd_projects.py), and which namespaces the secrets store serves,
judged as External Secrets Operator decides it (tests/support/eso_conditions.py)."""

from __future__ import annotations

from typing import Any

import pytest

from model.argocd_access import PARENT_PROJECT, PLATFORM_PROJECT
from model.bootstrap import IN_CLUSTER
from model.external_secrets import STORE, manifests, materialised
from model.platform import ARGOCD_NAMESPACE, COMPONENTS
from tests.support.argocd_projects import namespaced_kind_permitted, resource_refusals
from tests.support.charts import Chain, build_chain, by_kind
from tests.support.configs import EXAMPLE_COLOURS, validated
from tests.support.eso_conditions import store_serves
from tests.support.synth import Synthesized

PLATFORM_NAMESPACES = sorted({"kube-system", "kube-public", "default", *(c.namespace for c in COMPONENTS)})

# What a chart could carry to reach past its namespace, each as (apiVersion, kind): projects.yaml argues each line.
REACHING = [
    ("external-secrets.io/v1", "ExternalSecret"),  # names the platform's store
    ("external-secrets.io/v1", "SecretStore"),  # no `auth`: the operator's own role
    ("external-secrets.io/v1", "ClusterSecretStore"),
    ("external-secrets.io/v1alpha1", "PushSecret"),
    ("generators.external-secrets.io/v1alpha1", "ECRAuthorizationToken"),
    ("elbv2.k8s.aws/v1beta1", "TargetGroupBinding"),  # pods into another application's or colour's target group
    ("networking.k8s.io/v1", "Ingress"),  # a load balancer beside the shared one
    ("gateway.networking.k8s.io/v1", "Gateway"),
    ("gateway.networking.k8s.io/v1", "HTTPRoute"),
    ("v1", "Endpoints"),  # any address of the VPC behind the parent's binding
    ("discovery.k8s.io/v1", "EndpointSlice"),
    ("vpcresources.k8s.aws/v1beta1", "SecurityGroupPolicy"),  # any security group of the VPC
    ("networking.k8s.aws/v1alpha1", "PolicyEndpoint"),  # another namespace's pods isolated or opened
    ("s3.services.k8s.aws/v1alpha1", "Bucket"),  # an ACK controller's role, not the application's
    ("argoproj.io/v1alpha1", "Application"),
]


@pytest.fixture(scope="module")
def chains(example_app: Synthesized, variant_app: Synthesized) -> dict[str, Chain]:
    """The App of Apps of each colour of the example (one group, no secrets) and the variant's green (groups
    `applications` and `shop`, repository credentials and SSO: ESO's store and its ExternalSecrets)."""
    return {
        **{f"example-{colour}": build_chain(example_app, colour) for colour in EXAMPLE_COLOURS},
        "variant": build_chain(variant_app, "green"),
    }


def projects(chain: Chain) -> dict[str, dict[str, Any]]:
    return {**by_kind(chain.bootstrap, "AppProject"), **by_kind(chain.apps_manifests, "AppProject")}


def application_namespaces(chain: Chain) -> dict[str, dict[str, str]]:
    """Each application Namespace the parent makes, with its labels."""
    return {
        doc["metadata"]["name"]: doc["metadata"].get("labels") or {} for doc in chain.apps_manifests if doc["kind"] == "Namespace"
    }


def application_children(chain: Chain) -> dict[str, dict[str, Any]]:
    groups = {PARENT_PROJECT, PLATFORM_PROJECT}
    return {name: child for name, child in chain.children.items() if child["spec"]["project"] not in groups}


# --- the secrets store ---------------------------------------------------------------------------


def test_the_secrets_store_serves_argo_cds_namespace_only(chains: dict[str, Chain]) -> None:
    chain = chains["variant"]
    (store,) = [doc for doc in chain.apps_manifests if doc["kind"] == "ClusterSecretStore"]
    assert store["metadata"]["name"] == STORE
    assert store_serves(store, ARGOCD_NAMESPACE, {})
    namespaces = application_namespaces(chain)
    assert namespaces  # the variant's applications: catalogue, shop, sample-app ...
    others = {**namespaces, **{ns: {} for ns in PLATFORM_NAMESPACES if ns != ARGOCD_NAMESPACE}}
    assert [ns for ns, labels in others.items() if store_serves(store, ns, labels)] == []
    # Argo CD's own ExternalSecrets are all in the namespace it serves.
    externals = [doc for doc in chain.apps_manifests if doc["kind"] == "ExternalSecret"]
    assert externals
    assert {doc["metadata"]["namespace"] for doc in externals} == {ARGOCD_NAMESPACE}


def test_the_bootstrap_applies_the_same_narrowed_store() -> None:
    """Terraform's bootstrap release applies model/external_secrets.manifests before Argo CD's first clone: the store it
    makes serves no application namespace either, from the first minute."""
    config = validated({"gitops": {"credentials": {"acme": {"url": "https://github.com/acme/", "secret": "eks-bg/git/acme"}}}})
    (store,) = [doc for doc in manifests(materialised(config), region=config.region) if doc["kind"] == "ClusterSecretStore"]
    assert store_serves(store, ARGOCD_NAMESPACE, {})
    assert not store_serves(store, "sample-app", {"elbv2.k8s.aws/pod-readiness-gate-inject": "enabled"})


@pytest.mark.parametrize(
    ("conditions", "namespace", "labels", "served"),
    [
        ([], "sample-app", {}, True),  # no condition: every namespace (the store before #45)
        ([{"namespaces": ["argocd"]}], "argocd", {}, True),
        ([{"namespaces": ["argocd"]}], "sample-app", {}, False),
        ([{"namespaceSelector": {"matchLabels": {"team": "platform"}}}], "sample-app", {"team": "platform"}, True),
        ([{"namespaceSelector": {"matchLabels": {"team": "platform"}}}], "sample-app", {}, False),
        ([{"namespaceRegexes": ["argo"]}], "not-argocd-really", {}, True),  # unanchored, as Go's MatchString
        ([{"namespaces": ["x"]}, {"namespaceRegexes": ["^sample"]}], "sample-app", {}, True),  # any condition
    ],
)
def test_the_checker_decides_as_eso_does(
    conditions: list[dict[str, Any]], namespace: str, labels: dict[str, str], served: bool
) -> None:
    store = {"kind": "ClusterSecretStore", "metadata": {"name": STORE}, "spec": {"conditions": conditions}}
    assert store_serves(store, namespace, labels) is served


# --- what an application's chart may make ---------------------------------------------------------


@pytest.mark.parametrize(("api_version", "kind"), REACHING, ids=[kind for _, kind in REACHING])
def test_an_application_child_carrying_a_kind_that_reaches_past_its_namespace_is_refused(
    chains: dict[str, Chain], api_version: str, kind: str
) -> None:
    # Every colour's App of Apps; the variant's has two groups, so two application projects.
    assert {child["spec"]["project"] for child in application_children(chains["variant"]).values()} == {"applications", "shop"}
    group = api_version.rpartition("/")[0]
    for colour, chain in chains.items():
        children = application_children(chain)
        assert children, colour
        for name, child in children.items():
            namespace = child["spec"]["destination"]["namespace"]
            manifest = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x", "namespace": namespace}}
            refused = resource_refusals(projects(chain)[child["spec"]["project"]], manifest, server=IN_CLUSTER)
            assert refused, (colour, name)
            assert refused[0].startswith(f"{group}/{kind} "), (colour, name, refused)


@pytest.mark.parametrize("name", [*(f"example-{colour}" for colour in EXAMPLE_COLOURS), "variant"])
def test_every_real_child_is_admitted(chains: dict[str, Chain], name: str) -> None:
    """What each application of this repository renders (the sample application's chart) syncs in its project, as does
    what the parent renders in the parent's project (the Namespaces and TargetGroupBindings the children may not)."""
    chain = chains[name]
    found = projects(chain)
    rendered = {app: docs for app, docs in chain.applications.items() if docs}
    assert rendered  # the sample application's chart
    for app, docs in rendered.items():
        child = chain.children[app]
        project = found[child["spec"]["project"]]
        namespace = child["spec"]["destination"]["namespace"]
        for doc in docs:
            placed = {**doc, "metadata": {"namespace": namespace, **doc["metadata"]}}
            assert resource_refusals(project, placed, server=IN_CLUSTER) == [], (app, doc["kind"])
    parent = found[PARENT_PROJECT]
    for doc in chain.apps_manifests:
        assert resource_refusals(parent, doc, server=IN_CLUSTER) == [], doc["metadata"]["name"]


def test_a_teams_own_kinds_stay_admitted(chains: dict[str, Chain]) -> None:
    """A blacklist, not a whitelist: a chart's monitoring or autoscaling objects need no platform change."""
    chain = chains["variant"]
    for child in application_children(chain).values():
        namespace = child["spec"]["destination"]["namespace"]
        for api_version, kind in [("monitoring.coreos.com/v1", "ServiceMonitor"), ("keda.sh/v1alpha1", "ScaledObject")]:
            manifest = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x", "namespace": namespace}}
            assert resource_refusals(projects(chain)[child["spec"]["project"]], manifest, server=IN_CLUSTER) == []


def test_the_platform_project_keeps_every_namespaced_kind(chains: dict[str, Chain]) -> None:
    """The blacklist is the application projects' alone: the components deploy their own kinds unchanged."""
    platform = projects(chains["variant"])[PLATFORM_PROJECT]
    for api_version, kind in REACHING:
        assert namespaced_kind_permitted(platform, api_version.rpartition("/")[0], kind), kind


@pytest.mark.parametrize(
    ("spec", "group", "kind", "permitted"),
    [
        ({}, "elbv2.k8s.aws", "TargetGroupBinding", True),  # no whitelist: every namespaced kind
        ({"namespaceResourceWhitelist": []}, "", "ConfigMap", False),  # set but empty: none
        ({"namespaceResourceWhitelist": [{"group": "", "kind": "*"}]}, "apps", "Deployment", False),
        ({"namespaceResourceBlacklist": [{"group": "*.services.k8s.aws", "kind": "*"}]}, "s3.services.k8s.aws", "Bucket", False),
        ({"namespaceResourceBlacklist": [{"group": "*.services.k8s.aws", "kind": "*"}]}, "services.k8s.aws", "X", True),
        (
            {"namespaceResourceBlacklist": [{"group": "networking.k8s.io", "kind": "Ingress"}]},
            "networking.k8s.io",
            "NetworkPolicy",
            True,
        ),
    ],
)
def test_the_checker_decides_namespaced_kinds_as_argo_cd_does(
    spec: dict[str, Any], group: str, kind: str, permitted: bool
) -> None:
    """argo-cd v3.5.1 app_project_types.go IsGroupKindNamePermitted: `namespaceWhitelist == nil || len(...) != 0 &&
    isResourceInList(...)`, then not blacklisted; types.go isResourceInList matches kind and group with filepath.Match."""
    assert namespaced_kind_permitted({"spec": spec}, group, kind) is permitted
