"""Helm and Kubernetes providers for one cluster, authenticated with short-lived EKS tokens."""

from __future__ import annotations

from cdktf import Fn
from cdktf_cdktf_provider_helm.provider import HelmProvider, HelmProviderKubernetes, HelmProviderKubernetesExec
from cdktf_cdktf_provider_kubernetes.provider import KubernetesProvider, KubernetesProviderExec
from constructs import Construct

EXEC_API_VERSION = "client.authentication.k8s.io/v1beta1"


class KubeProviders(Construct):
    def __init__(
        self, scope: Construct, id_: str, *, cluster_name: str, endpoint: str, certificate_authority: str, region: str
    ) -> None:
        super().__init__(scope, id_)
        # A token from `aws eks get-token` at every run: nothing long-lived lands in the state.
        command = "aws"
        args = ["eks", "get-token", "--cluster-name", cluster_name, "--region", region, "--output", "json"]
        ca = Fn.base64decode(certificate_authority)
        # helm provider 3.x: `kubernetes` and its `exec` are attributes (objects), not blocks.
        HelmProvider(
            self,
            "helm",
            kubernetes=HelmProviderKubernetes(
                host=endpoint,
                cluster_ca_certificate=ca,
                exec=HelmProviderKubernetesExec(api_version=EXEC_API_VERSION, command=command, args=args),
            ),
        )
        KubernetesProvider(
            self,
            "kubernetes",
            host=endpoint,
            cluster_ca_certificate=ca,
            exec=[KubernetesProviderExec(api_version=EXEC_API_VERSION, command=command, args=args)],
        )
