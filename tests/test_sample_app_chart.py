"""The sample app's chart (argocd/applications/sample-app/chart) rendered with the values that reach it: from the
synthesized stacks, through bootstrap/manifests and argocd/apps, as its child Application's values (`blueGreen`, the
colour's facts about it). Every colour of the shipped example and of the variant (three colours, three Kubernetes
versions); every manifest is validated against the Kubernetes schema of the colour's version.

Argo CD installs it from Git like any application: there is no Ingress (the traffic stack's shared load balancer sends
to its Service through the colour's TargetGroupBinding) and no Terraform delivery."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest

from model.config import Config
from tests.support.charts import Chain, build_chain, by_kind, sample_for
from tests.support.configs import SAMPLE_APP, VARIANT, example, example_raw, validated
from tests.support.synth import Synthesized

RAW: dict[str, dict[str, Any]] = {"example": example_raw(), "variant": VARIANT}
CONFIGS: dict[str, Config] = {"example": example(), "variant": validated(VARIANT)}
CASES = [pytest.param(name, colour, id=f"{name}-{colour}") for name, config in CONFIGS.items() for colour in config.clusters]
KINDS = ["Deployment", "NetworkPolicy", "PodDisruptionBudget", "Service", "ServiceAccount"]
WAVE = "argocd.argoproj.io/sync-wave"


@pytest.fixture(scope="module")
def syntheses(example_app: Synthesized, variant_app: Synthesized) -> dict[str, Synthesized]:
    return {"example": example_app, "variant": variant_app}


@pytest.fixture(scope="module")
def chains(syntheses: dict[str, Synthesized]) -> dict[tuple[str, str], Chain]:
    return {
        (name, colour): build_chain(syntheses[name], colour) for name, config in CONFIGS.items() for colour in config.clusters
    }


def rendered(chains: dict[tuple[str, str], Chain], name: str, colour: str) -> dict[str, dict[str, Any]]:
    """The chart's manifests by kind (one of each)."""
    docs = chains[name, colour].applications[SAMPLE_APP]
    assert sorted(doc["kind"] for doc in docs) == KINDS
    return {doc["kind"]: doc for doc in docs}


def image_tag(name: str, colour: str) -> str:
    """The colour's tag of the sample app's image: its entry's, else the application's."""
    raw = RAW[name]
    default = raw["applications"][SAMPLE_APP]["image"]["tag"]
    return str(raw["clusters"][colour].get("applications", {}).get(SAMPLE_APP, {}).get("image_tag", default))


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_every_manifest_is_valid_for_the_clusters_kubernetes_version(
    chains: dict[tuple[str, str], Chain], name: str, colour: str
) -> None:
    """The five kinds, no Ingress; each valid for the colour's Kubernetes version, in the child's namespace."""
    chain = chains[name, colour]
    namespace = chain.children[SAMPLE_APP]["spec"]["destination"]["namespace"]
    for doc in rendered(chains, name, colour).values():
        kubernetes_validate.validate(doc, RAW[name]["clusters"][colour]["kubernetes_version"], strict=True)
        assert doc["metadata"]["namespace"] == namespace  # never the default namespace


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_the_pods_namespace_gets_the_readiness_gate_label(chains: dict[tuple[str, str], Chain], name: str, colour: str) -> None:
    """The load balancer controller injects its pod readiness gate into pods of a namespace labelled so: argocd/apps
    makes the app's namespace with the label (wave 0), and the Deployment waits for the gate (maxUnavailable 0)."""
    chain = chains[name, colour]
    namespace = chain.children[SAMPLE_APP]["spec"]["destination"]["namespace"]
    labelled = by_kind(chain.apps_manifests, "Namespace")[namespace]
    assert labelled["metadata"]["labels"] == {"elbv2.k8s.aws/pod-readiness-gate-inject": "enabled"}


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_the_binding_and_the_service_come_before_the_pods(chains: dict[tuple[str, str], Chain], name: str, colour: str) -> None:
    """The controller injects the readiness gate only into pods created once a TargetGroupBinding names their Service:
    the binding syncs in the parent (wave 0) before the app's child (wave 1 or more), the Service a wave before the
    Deployment inside it."""
    chain, docs = chains[name, colour], rendered(chains, name, colour)
    waves = {kind: int(doc["metadata"].get("annotations", {}).get(WAVE, 0)) for kind, doc in docs.items()}
    assert waves["Service"] < waves["Deployment"]
    binding = by_kind(chain.apps_manifests, "TargetGroupBinding")[SAMPLE_APP]
    assert int(binding["metadata"]["annotations"][WAVE]) < int(chain.children[SAMPLE_APP]["metadata"]["annotations"][WAVE])


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_the_service_is_the_one_the_binding_names(chains: dict[tuple[str, str], Chain], name: str, colour: str) -> None:
    """Name and port from `blueGreen.service` (the configuration's `service`, defaults: the application's name, 80),
    sending to the pods' named port."""
    docs = rendered(chains, name, colour)
    service = docs["Service"]
    facts = chains[name, colour].children[SAMPLE_APP]["spec"]["source"]["helm"]["valuesObject"]["blueGreen"]
    assert facts["service"] == {"name": SAMPLE_APP, "port": 80}
    assert service["metadata"]["name"] == facts["service"]["name"]
    assert service["spec"]["type"] == "ClusterIP"
    (port,) = service["spec"]["ports"]
    assert (port["port"], port["targetPort"]) == (facts["service"]["port"], "http")
    (container,) = docs["Deployment"]["spec"]["template"]["spec"]["containers"]
    assert "http" in [p["name"] for p in container["ports"]]
    assert service["spec"]["selector"] == docs["Deployment"]["spec"]["template"]["metadata"]["labels"]


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_the_load_balancer_checks_what_kubelet_checks(
    syntheses: dict[str, Synthesized], chains: dict[tuple[str, str], Chain], name: str, colour: str
) -> None:
    """The traffic stack's target group of the app and colour checks the pods' health at the path the chart's liveness
    probe asks (the configuration's health_check_path), on the port the pods were registered with."""
    docs = rendered(chains, name, colour)
    (container,) = docs["Deployment"]["spec"]["template"]["spec"]["containers"]
    (group,) = [
        body
        for body in syntheses[name].resources("traffic", "aws_lb_target_group").values()
        if body["name"] == f"eks-bg-{SAMPLE_APP}-{colour}"
    ]
    assert group["health_check"]["path"] == container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert group["health_check"]["port"] == "traffic-port"


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_the_app_gets_no_kubernetes_api_token_and_only_the_traffic_it_needs(
    chains: dict[tuple[str, str], Chain], name: str, colour: str
) -> None:
    docs = rendered(chains, name, colour)
    assert docs["Deployment"]["spec"]["template"]["spec"]["automountServiceAccountToken"] is False
    assert docs["ServiceAccount"]["automountServiceAccountToken"] is False
    policy = docs["NetworkPolicy"]["spec"]
    assert policy["podSelector"]["matchLabels"] == docs["Deployment"]["spec"]["selector"]["matchLabels"]
    assert policy["policyTypes"] == ["Ingress", "Egress"]
    # The shared load balancer (in the VPC's public subnets) and kubelet: the VPC's addresses only.
    (ingress,) = policy["ingress"]
    vpc = {"ipBlock": {"cidr": RAW[name].get("network", {}).get("cidr", "10.0.0.0/16")}}
    assert (ingress["from"], ingress["ports"]) == ([vpc], [{"port": "http", "protocol": "TCP"}])
    allowed = [(rule["to"], [(p["port"], p["protocol"]) for p in rule["ports"]]) for rule in policy["egress"]]
    assert [ports for _, ports in allowed] == [[(53, "UDP"), (53, "TCP")], [(80, "TCP")], [(443, "TCP")]]
    assert allowed[1][0] == [{"ipBlock": {"cidr": "169.254.170.23/32"}}]  # the Pod Identity agent


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_deployment(chains: dict[tuple[str, str], Chain], name: str, colour: str) -> None:
    chain, docs = chains[name, colour], rendered(chains, name, colour)
    deployment = docs["Deployment"]
    spec = deployment["spec"]["template"]["spec"]
    namespace = chain.children[SAMPLE_APP]["spec"]["destination"]["namespace"]
    assert (namespace, spec["serviceAccountName"]) in chain.associations
    assert docs["ServiceAccount"]["metadata"]["name"] == spec["serviceAccountName"]
    assert deployment["spec"]["replicas"] == 2
    (container,) = spec["containers"]
    tag = image_tag(name, colour)
    assert container["image"] == f"{sample_for('sample_app_image_repository_url')}:{tag}"
    assert {e["name"]: e["value"] for e in container["env"]} == {
        "TABLE_NAME": sample_for("table_name"),
        "AWS_REGION": "ap-northeast-1",
        "CLUSTER_COLOR": colour,
        "IMAGE_TAG": tag,  # what /probe reports to readiness
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


def test_the_colours_run_their_own_image_tags(chains: dict[tuple[str, str], Chain]) -> None:
    """What the configurations say, so the image test above compares something that differs between them."""
    tags = {key: image_tag(*key) for key in chains}
    assert tags[("example", "blue")] == "0.1.0"
    assert tags[("variant", "purple")] == "4d5e6f7a"  # no entry of its own: the application's tag


def test_disruption_budget_keeps_one_pod(chains: dict[tuple[str, str], Chain]) -> None:
    docs = rendered(chains, "example", "blue")
    assert docs["PodDisruptionBudget"]["spec"]["minAvailable"] == 1
    selector = docs["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"]
    assert selector == docs["Deployment"]["spec"]["selector"]["matchLabels"] == docs["Service"]["spec"]["selector"]


def test_a_broken_manifest_would_be_caught() -> None:
    """The schema check is real: a Deployment with a string replica count fails it."""
    broken = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}, "spec": {"replicas": "two"}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, "1.35", strict=True)
