"""The pods that get AWS permissions, named once.

A Pod Identity association (Terraform) and the ServiceAccount it serves (Helm, through the
values chain) both read these constants, so they cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from stacks.contract import CommonOutput


@dataclass(frozen=True)
class Workload:
    key: str  # its key under `identities` in the charts' values
    namespace: str
    service_account: str
    role: CommonOutput  # the shared role in common that the association binds


LOAD_BALANCER_CONTROLLER = Workload(
    key="loadBalancerController",
    namespace="kube-system",
    service_account="aws-load-balancer-controller",
    role=CommonOutput.LOAD_BALANCER_CONTROLLER_ROLE_ARN,
)
EXTERNAL_DNS = Workload(
    key="externalDns",
    namespace="external-dns",
    service_account="external-dns",
    role=CommonOutput.EXTERNAL_DNS_ROLE_ARN,
)
SAMPLE_APP = Workload(key="sampleApp", namespace="sample-app", service_account="sample-app", role=CommonOutput.APP_ROLE_ARN)

WORKLOADS = (LOAD_BALANCER_CONTROLLER, EXTERNAL_DNS, SAMPLE_APP)
ARGOCD_NAMESPACE = "argocd"
# The App of Apps: the root release and the parent Application it renders (argocd/root) share this name.
PARENT_APPLICATION = "app-of-apps"
