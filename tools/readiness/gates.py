"""Readiness, fourth (with targets.py): each application's pods carry the load balancer controller's readiness gate.

The controller's pod webhook adds `target-health.elbv2.k8s.aws/<TargetGroupBinding name>` to the readiness gates of
each pod its Service selects, in a namespace labelled for it (argocd/apps labels the applications' namespaces, and names
each binding after its application). The webhook's failurePolicy is Ignore: a pod created while no controller answered
got no gate, and is Ready without being healthy in the target group, so a rollout would remove old pods before their
replacements serve. Such pods are named, with the fix: restart the rollout (new pods get the gate).
Upstream: kubernetes-sigs/aws-load-balancer-controller v3.5.0, pkg/inject/pod_readiness/pod_readiness_gate.go
(computeTargetHealthReadinessGateConditionTypes: the pods the bound Service's selector matches) and
pkg/targetgroupbinding/utils.go (BuildTargetHealthPodConditionType: "target-health.elbv2.k8s.aws/" + the binding's
name); aws/eks-charts stable/aws-load-balancer-controller 3.5.0 values.yaml (podMutatorWebhookConfig.failurePolicy:
Ignore).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from typing import Any

from tools.kube import PODS_IN, SERVICE_IN, KubeApi, KubeError
from tools.readiness.types import Finding, Probed, Target

TARGET_HEALTH_GATE_PREFIX = "target-health.elbv2.k8s.aws/"
_DONE_PHASES = ("Succeeded", "Failed")


def gate_of(application: str) -> str:
    """The condition type the controller injects for the application's TargetGroupBinding (named after it)."""
    return TARGET_HEALTH_GATE_PREFIX + application


def readiness_gates(kube: Callable[[], KubeApi], target: Target) -> list[Finding]:
    try:
        api = kube()
        return [_judge(api, app, target.colour) for app in target.applications]
    except KubeError as err:
        return [Finding(False, f"readiness gates of {target.colour}: the cluster's Kubernetes API did not answer ({err})")]


def _judge(api: KubeApi, app: Probed, colour: str) -> Finding:
    label = f"readiness gate of {app.name} in {colour}"
    service = api.get(SERVICE_IN.format(namespace=app.namespace, name=app.service))
    if service is None:
        return Finding(False, f"{label}: no Service {app.service} in namespace {app.namespace} (its chart makes it)")
    selector = (service.get("spec") or {}).get("selector") or {}
    if not selector:
        return Finding(False, f"{label}: Service {app.service} selects no pods (no spec.selector)")
    query = urllib.parse.urlencode({"labelSelector": ",".join(f"{k}={v}" for k, v in sorted(selector.items()))})
    listing = api.get(f"{PODS_IN.format(namespace=app.namespace)}?{query}") or {}
    pods = [pod for pod in listing.get("items", []) if _running(pod)]
    gate = gate_of(app.name)
    lacking = sorted(pod["metadata"]["name"] for pod in pods if gate not in _gates(pod))
    if lacking:
        return Finding(
            False,
            f"{label}: pod(s) {', '.join(lacking)} in {app.namespace} lack the readiness gate {gate} (created while the "
            "load balancer controller did not answer): a rollout would not wait for their replacements to serve; "
            f"restart the rollout (kubectl -n {app.namespace} rollout restart deployment/<its deployment>)",
        )
    return Finding(True, f"{label}: {len(pods)} pod(s) carry {gate}")


def _running(pod: dict[str, Any]) -> bool:
    return not pod["metadata"].get("deletionTimestamp") and (pod.get("status") or {}).get("phase") not in _DONE_PHASES


def _gates(pod: dict[str, Any]) -> set[str]:
    return {gate["conditionType"] for gate in (pod.get("spec") or {}).get("readinessGates") or []}
