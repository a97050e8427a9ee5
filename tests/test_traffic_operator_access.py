"""The traffic operator's read-only access to each colour (issue 43, item 2): `eks.traffic_operator_role_arn` gives
that role an EKS access entry whose one Kubernetes group is bound, in Argo CD's namespace, to a Role that reads Argo CD
Applications and nothing else; no access policy, no cluster-wide binding. Read from the synthesized stacks of the
variant (which sets it) and the shipped example (which does not). tests/test_readiness.py holds every request the
readiness check makes against the Role as synthesized here.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.configs import TRAFFIC_OPERATOR_ROLE, VARIANT, validated
from tests.support.kube_rbac import Attributes, attributes, role_allows
from tests.support.synth import Synthesized

VARIANT_COLOURS = list(VARIANT["clusters"])
# Hand-written, not read from the code: what the operator may see, and the one group that sees it.
GROUP = "argocd-application-readers"
READ_APPLICATIONS = [{"api_groups": ["argoproj.io"], "resources": ["applications"], "verbs": ["get", "list", "watch"]}]


def without_metadata(body: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if key not in ("//", "depends_on")}


def operator_role(app: Synthesized, colour: str) -> dict[str, Any]:
    (role,) = app.resources(colour, "kubernetes_role_v1").values()
    return role


@pytest.mark.parametrize("colour", VARIANT_COLOURS)
def test_the_operator_has_one_standard_entry_with_one_group_and_no_access_policy(variant_app: Synthesized, colour: str) -> None:
    entry = variant_app.resource(colour, "aws_eks_access_entry", "traffic-operator/entry")
    assert without_metadata(entry) == {
        "cluster_name": "${aws_eks_cluster.eks_cluster_55B0C966.name}",
        "principal_arn": TRAFFIC_OPERATOR_ROLE,
        "type": "STANDARD",
        "kubernetes_groups": [GROUP],
    }
    assert not GROUP.startswith("system:")  # Kubernetes reserves the prefix for its own groups
    # No access policy names the operator: the admins' association is over the admins' principals only.
    associations = variant_app.resources(colour, "aws_eks_access_policy_association")
    assert list(associations) == ["admins/admin"]
    assert TRAFFIC_OPERATOR_ROLE not in json.dumps(associations)
    assert validated(VARIANT).eks.traffic_operator_role_arn == TRAFFIC_OPERATOR_ROLE


@pytest.mark.parametrize("colour", VARIANT_COLOURS)
def test_the_role_reads_applications_in_argo_cds_namespace_only(variant_app: Synthesized, colour: str) -> None:
    role = operator_role(variant_app, colour)
    assert role["metadata"] == {"name": GROUP, "namespace": "argocd"}
    assert role["rule"] == READ_APPLICATIONS


@pytest.mark.parametrize("colour", VARIANT_COLOURS)
def test_the_role_is_bound_to_the_group_alone_and_nothing_is_bound_cluster_wide(variant_app: Synthesized, colour: str) -> None:
    (binding,) = variant_app.resources(colour, "kubernetes_role_binding_v1").values()
    assert without_metadata(binding) == {
        "metadata": {"name": GROUP, "namespace": "argocd"},
        "role_ref": {"api_group": "rbac.authorization.k8s.io", "kind": "Role", "name": GROUP},
        "subject": [{"api_group": "rbac.authorization.k8s.io", "kind": "Group", "name": GROUP}],
    }
    kinds = variant_app.json(colour)["resource"]
    assert sorted(kind for kind in kinds if "cluster_role" in kind) == []


@pytest.mark.parametrize("colour", VARIANT_COLOURS)
def test_the_cluster_objects_wait_for_argo_cds_namespace_and_terraforms_admin_access(
    variant_app: Synthesized, colour: str
) -> None:
    """Created after (and on destroy deleted before) Argo CD's release, which makes the namespace, and the admin
    association Terraform reaches the cluster with; the binding after its Role."""
    role = operator_role(variant_app, colour)
    assert any(d.startswith("helm_release.argocd_release_") for d in role["depends_on"])
    assert any(d.startswith("aws_eks_access_policy_association.admins_admin_") for d in role["depends_on"])
    (binding,) = variant_app.resources(colour, "kubernetes_role_binding_v1").values()
    assert [d.split(".")[0] for d in binding["depends_on"]] == ["kubernetes_role_v1"]


@pytest.mark.parametrize("colour", ["blue", "green"])
def test_without_the_key_there_is_no_entry_and_nothing_in_the_cluster(example_app: Synthesized, colour: str) -> None:
    assert list(example_app.resources(colour, "aws_eks_access_entry")) == ["admins/entry"]
    assert example_app.resources(colour, "kubernetes_role_v1") == {}
    assert example_app.resources(colour, "kubernetes_role_binding_v1") == {}


# --- the request check tests/test_readiness.py relies on: it can fail ------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        (
            "GET",
            "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications",
            Attributes("list", "argoproj.io", "argocd", "applications", ""),
        ),
        (
            "GET",
            "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/app-of-apps",
            Attributes("get", "argoproj.io", "argocd", "applications", "app-of-apps"),
        ),
        (
            "GET",
            "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications?watch=true",
            Attributes("watch", "argoproj.io", "argocd", "applications", ""),
        ),
        (
            "PATCH",
            "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/a",
            Attributes("patch", "argoproj.io", "argocd", "applications", "a"),
        ),
        (
            "DELETE",
            "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications",
            Attributes("deletecollection", "argoproj.io", "argocd", "applications", ""),
        ),
        (
            "GET",
            "/apis/elbv2.k8s.aws/v1beta1/targetgroupbindings",
            Attributes("list", "elbv2.k8s.aws", "", "targetgroupbindings", ""),
        ),
        ("GET", "/api/v1/namespaces/argocd/secrets/argocd-secret", Attributes("get", "", "argocd", "secrets", "argocd-secret")),
        ("GET", "/api/v1/namespaces/argocd", Attributes("get", "", "argocd", "namespaces", "argocd")),
        ("GET", "/api/v1/namespaces/argocd/pods/p/log", Attributes("get", "", "argocd", "pods/log", "p")),
    ],
)
def test_requests_are_read_as_the_api_server_reads_them(method: str, path: str, expected: Attributes) -> None:
    assert attributes(method, path) == expected


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PATCH", "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/app-of-apps"),
        ("DELETE", "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/app-of-apps"),
        ("GET", "/apis/argoproj.io/v1alpha1/applications"),  # every namespace's: cluster-wide
        ("GET", "/apis/argoproj.io/v1alpha1/namespaces/sample-app/applications"),
        ("GET", "/apis/argoproj.io/v1alpha1/namespaces/argocd/appprojects"),
        ("GET", "/api/v1/namespaces/argocd/secrets"),
        ("GET", "/apis/elbv2.k8s.aws/v1beta1/namespaces/argocd/targetgroupbindings"),
    ],
)
def test_the_role_allows_no_write_no_other_resource_and_no_other_namespace(
    variant_app: Synthesized, method: str, path: str
) -> None:
    request = attributes(method, path)
    assert request is not None
    assert not role_allows(operator_role(variant_app, "blue"), request)
