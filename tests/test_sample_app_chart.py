"""argocd/sample-app rendered with the values that reach it, in both delivery modes: as the
App of Apps' wave-1 child (from Git) and as a Terraform helm_release (app.delivery "helm").
Every manifest is validated against the Kubernetes schema of the cluster's version."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest

from model.paths import CHARTS_DIR
from model.platform import CHILDREN, SAMPLE_APP
from tests.support.charts import build_chain, render, sample_for, values_of_release
from tests.support.configs import VARIANT
from tests.support.synth import Synthesized

CLUSTERS: dict[str, dict[str, Any]] = VARIANT["clusters"]  # three colours, three Kubernetes versions
CHART = CHARTS_DIR / "sample-app"


@pytest.fixture(scope="module")
def via_argocd(variant_app: Synthesized) -> Synthesized:
    return variant_app


@pytest.fixture(scope="module")
def via_helm(everything_on: Synthesized) -> Synthesized:
    """The same configuration, but the app delivered by Terraform (and the image build on, in common only)."""
    return everything_on


def releases(app: Synthesized, colour: str) -> dict[str, dict[str, Any]]:
    return {body["name"]: body for body in app.resources(colour, "helm_release").values()}


def argocd_values(app: Synthesized, colour: str) -> tuple[dict[str, Any], str]:
    """The sample-app child's values and namespace, through root and apps."""
    child = build_chain(app, colour).children["sample-app"]
    return child["spec"]["source"]["helm"]["valuesObject"], child["spec"]["destination"]["namespace"]


def manifests(values: dict[str, Any], namespace: str) -> dict[str, dict[str, Any]]:
    docs = render("sample-app", values, release="sample-app", namespace=namespace)
    return {doc["kind"]: doc for doc in docs}


@pytest.mark.parametrize("colour", CLUSTERS)
def test_both_delivery_modes_pass_the_same_values(via_argocd: Synthesized, via_helm: Synthesized, colour: str) -> None:
    from_git, namespace = argocd_values(via_argocd, colour)
    release = releases(via_helm, colour)["sample-app"]
    assert values_of_release(release) == from_git
    # Terraform makes the namespace first, labelled as Argo CD labels it (the readiness gate's injection label).
    created = via_helm.resource(colour, "kubernetes_namespace_v1", f"{SAMPLE_APP.name}/namespace")
    assert created["metadata"] == {"name": namespace, "labels": SAMPLE_APP.namespace_labels}
    (address,) = [
        a
        for a, body in via_helm.json(colour)["resource"]["kubernetes_namespace_v1"].items()
        if body is created or body == created
    ]
    assert release["namespace"] == f"${{kubernetes_namespace_v1.{address}.metadata[0].name}}"
    # The same chart Argo CD renders from Git, carried inside cdktf.out (tests/test_portable_output.py).
    copy = via_helm.stack_dir(colour) / release["chart"]
    assert sorted(p.relative_to(copy) for p in copy.rglob("*")) == sorted(p.relative_to(CHART) for p in CHART.rglob("*"))


@pytest.mark.parametrize("colour", CLUSTERS)
def test_helm_mode_installs_after_the_root_and_argocd_leaves_it_out(via_helm: Synthesized, colour: str) -> None:
    sample = releases(via_helm, colour)["sample-app"]
    (root,) = [n for n, r in via_helm.json(colour)["resource"]["helm_release"].items() if r["name"] == "app-of-apps"]
    assert sample["depends_on"] == [f"helm_release.{root}"]
    assert "create_namespace" not in sample  # Helm's cannot label it: Terraform's namespace (above) is used
    children = build_chain(via_helm, colour).children
    assert sorted(children) == sorted(c.name for c in CHILDREN if c != SAMPLE_APP)
    assert "aws-load-balancer-controller" in children


def test_argocd_mode_has_no_sample_app_release(via_argocd: Synthesized) -> None:
    assert sorted(releases(via_argocd, "blue")) == ["app-of-apps", "argo-cd"]


@pytest.mark.parametrize("colour", CLUSTERS)
def test_the_apps_namespace_gets_the_readiness_gate_label(via_argocd: Synthesized, colour: str) -> None:
    """The load balancer controller injects its pod readiness gate into pods of a namespace labelled so; Argo CD
    creates the namespace with it (managedNamespaceMetadata) and keeps it there."""
    assert SAMPLE_APP.namespace_labels == {"elbv2.k8s.aws/pod-readiness-gate-inject": "enabled"}
    child = build_chain(via_argocd, colour).children[SAMPLE_APP.name]
    policy = child["spec"]["syncPolicy"]
    assert "CreateNamespace=true" in policy["syncOptions"]
    assert policy["managedNamespaceMetadata"] == {"labels": SAMPLE_APP.namespace_labels}
    others = [c for name, c in build_chain(via_argocd, colour).children.items() if name != SAMPLE_APP.name]
    assert [c["metadata"]["name"] for c in others if "managedNamespaceMetadata" in c["spec"]["syncPolicy"]] == []


@pytest.mark.parametrize("mode", ["argocd", "helm"])
@pytest.mark.parametrize("colour", CLUSTERS)
def test_every_manifest_is_valid_for_the_clusters_kubernetes_version(
    via_argocd: Synthesized, via_helm: Synthesized, mode: str, colour: str
) -> None:
    if mode == "argocd":
        values, namespace = argocd_values(via_argocd, colour)
    else:
        values, namespace = values_of_release(releases(via_helm, colour)["sample-app"]), "sample-app"
    docs = render("sample-app", values, release="sample-app", namespace=namespace)
    kinds = ["Deployment", "Ingress", "NetworkPolicy", "PodDisruptionBudget", "Service", "ServiceAccount"]
    assert sorted(d["kind"] for d in docs) == kinds
    for doc in docs:
        kubernetes_validate.validate(doc, CLUSTERS[colour]["kubernetes_version"], strict=True)
        assert doc["metadata"]["namespace"] == namespace  # never the default namespace


@pytest.mark.parametrize("colour", CLUSTERS)
def test_the_app_gets_no_kubernetes_api_token_and_only_the_traffic_it_needs(via_argocd: Synthesized, colour: str) -> None:
    docs = manifests(*argocd_values(via_argocd, colour))
    assert docs["Deployment"]["spec"]["template"]["spec"]["automountServiceAccountToken"] is False
    assert docs["ServiceAccount"]["automountServiceAccountToken"] is False
    policy = docs["NetworkPolicy"]["spec"]
    assert policy["podSelector"]["matchLabels"] == docs["Deployment"]["spec"]["selector"]["matchLabels"]
    assert policy["policyTypes"] == ["Ingress", "Egress"]
    (ingress,) = policy["ingress"]
    vpc = {"ipBlock": {"cidr": VARIANT["network"]["cidr"]}}
    assert (ingress["from"], ingress["ports"]) == ([vpc], [{"port": "http", "protocol": "TCP"}])
    allowed = [(rule["to"], [(p["port"], p["protocol"]) for p in rule["ports"]]) for rule in policy["egress"]]
    assert [ports for _, ports in allowed] == [[(53, "UDP"), (53, "TCP")], [(80, "TCP")], [(443, "TCP")]]
    assert allowed[1][0] == [{"ipBlock": {"cidr": "169.254.170.23/32"}}]  # the Pod Identity agent


@pytest.mark.parametrize("colour", CLUSTERS)
def test_ingress_annotations(via_argocd: Synthesized, colour: str) -> None:
    ingress = manifests(*argocd_values(via_argocd, colour))["Ingress"]
    annotations = ingress["metadata"]["annotations"]
    assert annotations["external-dns.alpha.kubernetes.io/aws-weight"] == str(CLUSTERS[colour]["weight"])
    assert annotations["external-dns.alpha.kubernetes.io/set-identifier"] == colour
    # The shared, weighted host and the colour's own preview host: both records, both served by this Ingress.
    preview = f"app-{colour}.eks.example.com"
    assert annotations["external-dns.alpha.kubernetes.io/hostname"] == f"app.eks.example.com,{preview}"
    assert annotations["external-dns.alpha.kubernetes.io/ttl"] == "60"
    assert annotations["alb.ingress.kubernetes.io/certificate-arn"] == sample_for("certificate_arn")
    assert annotations["alb.ingress.kubernetes.io/ssl-redirect"] == "443"
    assert annotations["alb.ingress.kubernetes.io/listen-ports"] == '[{"HTTP": 80}, {"HTTPS": 443}]'
    assert annotations["alb.ingress.kubernetes.io/scheme"] == "internet-facing"
    assert annotations["alb.ingress.kubernetes.io/target-type"] == "ip"
    assert annotations["alb.ingress.kubernetes.io/healthcheck-path"] == "/healthz"
    assert annotations["alb.ingress.kubernetes.io/target-group-attributes"] == "deregistration_delay.timeout_seconds=30"
    assert ingress["spec"]["ingressClassName"] == "alb"
    assert [rule["host"] for rule in ingress["spec"]["rules"]] == ["app.eks.example.com", preview]
    assert ingress["spec"]["rules"][0]["http"] == ingress["spec"]["rules"][1]["http"]  # the same backend


@pytest.mark.parametrize("colour", CLUSTERS)
def test_the_ingress_and_service_come_before_the_pods(via_argocd: Synthesized, colour: str) -> None:
    """The readiness gate is injected only when a target group binding exists for the pod's Service: the Ingress
    (whose load balancer makes it) and the Service sync a wave before the Deployment."""
    rendered = manifests(*argocd_values(via_argocd, colour))
    waves = {
        kind: int(rendered[kind]["metadata"].get("annotations", {}).get("argocd.argoproj.io/sync-wave", 0)) for kind in rendered
    }
    assert waves["Ingress"] == waves["Service"] < waves["Deployment"]


@pytest.mark.parametrize("colour", CLUSTERS)
def test_deployment(via_argocd: Synthesized, colour: str) -> None:
    rendered = manifests(*argocd_values(via_argocd, colour))
    deployment = rendered["Deployment"]
    spec = deployment["spec"]["template"]["spec"]
    associations = {
        (a["namespace"], a["service_account"]) for a in via_argocd.resources(colour, "aws_eks_pod_identity_association").values()
    }
    assert ("sample-app", spec["serviceAccountName"]) in associations
    assert rendered["ServiceAccount"]["metadata"]["name"] == spec["serviceAccountName"]
    assert deployment["spec"]["replicas"] == 2
    (container,) = spec["containers"]
    assert container["image"] == f"{sample_for('image_repository_url')}:{VARIANT['app']['image_tag']}"
    assert {e["name"]: e["value"] for e in container["env"]} == {
        "TABLE_NAME": sample_for("table_name"),
        "AWS_REGION": "ap-northeast-1",
        "CLUSTER_COLOR": colour,
        "IMAGE_TAG": VARIANT["app"]["image_tag"],  # what /probe reports to readiness
    }
    # Rollouts with the readiness gate: a new pod first, an old one out only once its replacement is healthy in the
    # target group; a terminating pod keeps serving while it is deregistered, within its grace period.
    assert deployment["spec"]["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    pause = container["lifecycle"]["preStop"]["sleep"]["seconds"]
    assert 0 < pause < spec["terminationGracePeriodSeconds"]
    assert (container["livenessProbe"]["httpGet"]["path"], container["readinessProbe"]["httpGet"]["path"]) == (
        "/healthz",
        "/readyz",
    )
    assert container["ports"] == [{"name": "http", "containerPort": 8080}]
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["resources"]["requests"]
    assert container["resources"]["limits"]["memory"]


def test_disruption_budget_keeps_one_pod(via_argocd: Synthesized) -> None:
    rendered = manifests(*argocd_values(via_argocd, "blue"))
    assert rendered["PodDisruptionBudget"]["spec"]["minAvailable"] == 1
    selector = rendered["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"]
    assert selector == rendered["Deployment"]["spec"]["selector"]["matchLabels"] == rendered["Service"]["spec"]["selector"]


def test_a_broken_manifest_would_be_caught() -> None:
    """The schema check is real: a Deployment with a string replica count fails it."""
    broken = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}, "spec": {"replicas": "two"}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, "1.35", strict=True)
