"""No load balancer outside the traffic stack: the admission policy argocd/apps renders (templates/admission.yaml).

A ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, built into Kubernetes since 1.30: no controller to run)
refuses Services of type LoadBalancer and NodePort in the applications' namespaces. A LoadBalancer Service would make a
load balancer of its own (EKS's cloud provider makes one even with the load balancer controller's Service controller
off), outside the shared load balancer's weights, WAF and readiness; a NodePort opens a port on every node to the whole
VPC, around that same load balancer. An application's pods are reached through its TargetGroupBinding, for which a
ClusterIP Service is enough (target type ip).

The policy's content is the chart's, so it follows the colour's revision; its name and the shared load balancer's name
it cites are facts, so that the parent's AppProject (model/bootstrap.py) admits exactly these two cluster-scoped
objects, by the one name defined here.
"""

from __future__ import annotations

from typing import Any

from model.config import Config
from model.routes import load_balancer_name

ADMISSION_API_GROUP = "admissionregistration.k8s.io"
POLICY_KIND = "ValidatingAdmissionPolicy"
BINDING_KIND = "ValidatingAdmissionPolicyBinding"
# The policy's and its binding's name (one of each kind may share it).
NO_LOAD_BALANCERS = "applications-no-load-balancers"


def admission_facts(config: Config) -> dict[str, str]:
    """The `admission` fact (additive: charts of an older revision ignore it, and render no policy)."""
    return {"policy": NO_LOAD_BALANCERS, "sharedLoadBalancer": load_balancer_name(config.project)}


def admission_cluster_resources(facts: dict[str, Any]) -> list[dict[str, str]]:
    """The parent project's clusterResourceWhitelist entries for what templates/admission.yaml renders: the policy and
    its binding, by name; none when the facts name no policy or no application (the chart then renders none)."""
    admission = facts.get("admission")
    if not admission or not facts.get("applications"):
        return []
    return [{"group": ADMISSION_API_GROUP, "kind": kind, "name": admission["policy"]} for kind in (POLICY_KIND, BINDING_KIND)]
