"""No load balancer outside the traffic stack (#45 item 3): the ValidatingAdmissionPolicy and its binding argocd/apps
renders, their CEL evaluated offline (cel-python) and their matching judged as the API server does
(tests/support/admission.py); the parent's project admitting exactly these two cluster-scoped objects; and the load
balancer controller's values, which make it serve neither Services nor Ingresses, held to the upstream chart's value
names and the program's feature gates (tests/fixtures/aws-load-balancer-controller/keys.yaml)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from model.admission import BINDING_KIND, POLICY_KIND
from model.argocd_access import PARENT_PROJECT
from model.bootstrap import IN_CLUSTER
from model.platform import ARGOCD_NAMESPACE, COMPONENTS, SYNC_WAVE_ANNOTATION
from model.routes import TRAFFIC_STACK
from tests.support.admission import Request, applies, refusal
from tests.support.argocd_projects import resource_refusals
from tests.support.charts import Chain, build_chain, by_kind
from tests.support.configs import VARIANT
from tests.support.label_selectors import selector_matches
from tests.support.synth import Synthesized

KEYS = yaml.safe_load((Path(__file__).parent / "fixtures" / "aws-load-balancer-controller" / "keys.yaml").read_text())
PLATFORM_NAMESPACES = sorted({"kube-system", "default", ARGOCD_NAMESPACE, *(c.namespace for c in COMPONENTS)})
APPLICATION_NAMESPACES = sorted({app.get("namespace", name) for name, app in VARIANT["applications"].items()})


@pytest.fixture(scope="module")
def chain(variant_app: Synthesized) -> Chain:
    return build_chain(variant_app, "green")


@pytest.fixture(scope="module")
def shared_load_balancer(variant_app: Synthesized) -> str:
    """The traffic stack's load balancer, as synthesized: the one the message must name."""
    (balancer,) = variant_app.json(TRAFFIC_STACK)["resource"]["aws_lb"].values()
    name: str = balancer["name"]
    return name


def policy_and_binding(chain: Chain) -> tuple[dict[str, Any], dict[str, Any]]:
    (policy,) = by_kind(chain.apps_manifests, POLICY_KIND).values()
    (binding,) = by_kind(chain.apps_manifests, BINDING_KIND).values()
    return policy, binding


def service(namespace: str, kind: str | None, name: str = "web") -> dict[str, Any]:
    spec: dict[str, Any] = {"ports": [{"port": 80}], "selector": {"app": name}}
    if kind is not None:
        spec["type"] = kind
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


# --- the policy, evaluated ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["LoadBalancer", "NodePort"])
@pytest.mark.parametrize("namespace", APPLICATION_NAMESPACES)
def test_a_load_balancer_or_node_port_in_an_application_namespace_is_refused_naming_the_shared_load_balancer(
    chain: Chain, shared_load_balancer: str, namespace: str, kind: str
) -> None:
    policy, binding = policy_and_binding(chain)
    said = refusal(policy, binding, Request("CREATE", service(namespace, kind)))
    assert said == (
        f"Service web in {namespace} is of type {kind}: applications are reached only through the shared load balancer "
        f"{shared_load_balancer} (the traffic stack) and their TargetGroupBinding; use type ClusterIP (docs/applications.md)"
    )


@pytest.mark.parametrize("kind", ["ClusterIP", None, "ExternalName"])
def test_a_cluster_ip_service_is_admitted(chain: Chain, kind: str | None) -> None:
    policy, binding = policy_and_binding(chain)
    for namespace in APPLICATION_NAMESPACES:
        request = Request("CREATE", service(namespace, kind))
        assert applies(policy, binding, request)  # judged, and admitted
        assert refusal(policy, binding, request) is None


def test_turning_a_service_into_a_load_balancer_later_is_refused(chain: Chain) -> None:
    policy, binding = policy_and_binding(chain)
    namespace = APPLICATION_NAMESPACES[0]
    before, after = service(namespace, "ClusterIP"), service(namespace, "LoadBalancer")
    assert refusal(policy, binding, Request("UPDATE", after, old_object=before)) is not None
    # Back to ClusterIP, and deleting one, stay possible.
    assert refusal(policy, binding, Request("UPDATE", before, old_object=after)) is None
    assert not applies(policy, binding, Request("DELETE", after))


@pytest.mark.parametrize("namespace", PLATFORM_NAMESPACES)
def test_a_platform_namespace_is_untouched(chain: Chain, namespace: str) -> None:
    policy, binding = policy_and_binding(chain)
    request = Request("CREATE", service(namespace, "LoadBalancer"))
    assert not applies(policy, binding, request)
    assert refusal(policy, binding, request) is None


def test_a_label_cannot_take_a_namespace_out_of_the_policy(chain: Chain) -> None:
    """Chosen by the name label the API server keeps, not by a label anyone with the namespace could change."""
    policy, binding = policy_and_binding(chain)
    request = Request("CREATE", service(APPLICATION_NAMESPACES[0], "LoadBalancer"), namespace_labels={"team": "x"})
    assert refusal(policy, binding, request) is not None
    assert binding["spec"]["matchResources"]["namespaceSelector"] == {
        "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": APPLICATION_NAMESPACES}]
    }


def test_every_service_the_projects_charts_render_is_admitted(chain: Chain) -> None:
    policy, binding = policy_and_binding(chain)
    services = [doc for docs in chain.applications.values() for doc in docs if doc["kind"] == "Service"]
    assert services
    for found in services:
        assert refusal(policy, binding, Request("CREATE", found)) is None, found["metadata"]["name"]


def test_the_selector_evaluator_follows_kubernetes_semantics() -> None:
    """The support function the tests above rely on can say no (labels.md: set-based requirements)."""
    labels = {"kubernetes.io/metadata.name": "shop", "tier": "web"}
    assert selector_matches(None, labels)
    assert selector_matches({}, labels)
    assert selector_matches({"matchLabels": {"tier": "web"}}, labels)
    assert not selector_matches({"matchLabels": {"tier": "db"}}, labels)
    assert not selector_matches({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["db"]}]}, labels)
    assert selector_matches({"matchExpressions": [{"key": "absent", "operator": "NotIn", "values": ["x"]}]}, labels)
    assert not selector_matches({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, labels)
    assert selector_matches({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, labels)


def test_the_policy_denies_and_is_in_place_before_the_applications(chain: Chain) -> None:
    policy, binding = policy_and_binding(chain)
    assert binding["spec"]["validationActions"] == ["Deny"]
    assert policy["spec"]["failurePolicy"] == "Fail"
    waves = [int(doc["metadata"]["annotations"][SYNC_WAVE_ANNOTATION]) for doc in (policy, binding)]
    namespaces = [
        int(ns["metadata"]["annotations"][SYNC_WAVE_ANNOTATION]) for ns in by_kind(chain.apps_manifests, "Namespace").values()
    ]
    applications = [int(app["wave"]) for app in chain.root_values["applications"].values()]
    assert max(waves) < min(namespaces) <= min(applications) - 1


# --- the parent's project ----------------------------------------------------------------------------------------


def test_the_parents_project_admits_exactly_the_policy_and_its_binding(chain: Chain) -> None:
    project = by_kind(chain.bootstrap, "AppProject")[PARENT_PROJECT]
    policy, binding = policy_and_binding(chain)
    for manifest in (policy, binding):
        assert resource_refusals(project, manifest, server=IN_CLUSTER) == []
        other = copy.deepcopy(manifest)
        other["metadata"]["name"] = "something-else"
        group = manifest["apiVersion"].rpartition("/")[0]
        assert resource_refusals(project, other, server=IN_CLUSTER) == [
            f"{group}/{manifest['kind']} something-else is not permitted"
        ]


# --- the load balancer controller serves no Service, Ingress or Gateway --------------------------------------------


def lbc_values(chain: Chain) -> dict[str, Any]:
    values: dict[str, Any] = chain.children["aws-load-balancer-controller"]["spec"]["source"]["helm"]["valuesObject"]
    return values


def flattened(values: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Key paths as the fixture names them: a map that is the fixture's whole value (featureGates) is not descended."""
    found: dict[str, Any] = {}
    for key, value in values.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value and path not in KEYS["chart"]["defaults"]:
            found.update(flattened(value, f"{path}."))
        else:
            found[path] = value
    return found


def test_the_controllers_values_are_the_charts_keys(chain: Chain) -> None:
    set_here = flattened(lbc_values(chain))
    assert sorted(set(set_here) - set(KEYS["chart"]["defaults"])) == []
    gates = set_here["controllerConfig.featureGates"]
    assert sorted(set(gates) - set(KEYS["program"]["featureGates"])) == []


def test_the_controller_makes_no_load_balancer_and_mutates_no_service(chain: Chain) -> None:
    values, defaults = lbc_values(chain), KEYS["chart"]["defaults"]
    gates, upstream = values["controllerConfig"]["featureGates"], KEYS["program"]["featureGates"]
    # Each is off here and on by upstream's default: the values are what turns it off.
    for gate in ("EnableServiceController", "ALBGatewayAPI", "NLBGatewayAPI"):
        assert (gates[gate], upstream[gate]) == (False, True), gate
    assert (values["createIngressClassResource"], defaults["createIngressClassResource"]) == (False, True)
    assert (values["enableServiceMutatorWebhook"], defaults["enableServiceMutatorWebhook"]) == (False, True)
    assert values["disableIngressClassAnnotation"] is True


def test_the_controller_has_a_disruption_budget_the_chart_renders(chain: Chain) -> None:
    values = lbc_values(chain)
    assert KEYS["chart"]["defaults"]["podDisruptionBudget"] == {}  # upstream makes none by default
    assert values["podDisruptionBudget"] == {"maxUnavailable": 1}
    assert values["replicaCount"] > 1  # templates/pdb.yaml renders the budget only then
    assert values["podDisruptionBudget"]["maxUnavailable"] < values["replicaCount"]
