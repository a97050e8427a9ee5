"""Argo CD from the argo-helm chart, in its own namespace, not exposed outside the cluster."""

from __future__ import annotations

from collections.abc import Sequence

from cdktf import ITerraformDependable
from cdktf_cdktf_provider_helm.release import Release
from cdktf_cdktf_provider_kubernetes.namespace_v1 import NamespaceV1
from constructs import Construct

from model.platform import ARGO_CD, REGISTRY

VALUES_FILE = REGISTRY / ARGO_CD.name / "values.yaml"


class ArgoCd(Construct):
    def __init__(
        self, scope: Construct, id_: str, *, namespace: str, version: str, depends_on: Sequence[ITerraformDependable]
    ) -> None:
        """version: the argo-cd chart version of the colour's platform release (argocd/apps/platform/argo-cd/).
        depends_on: the nodes and add-ons Argo CD's pods need before Helm can wait for them."""
        super().__init__(scope, id_)
        ns = NamespaceV1(self, "namespace", metadata={"name": namespace}, depends_on=list(depends_on))
        self.release = Release(
            self,
            "release",
            name="argo-cd",
            repository=ARGO_CD.chart.repository if ARGO_CD.chart else None,
            chart=ARGO_CD.name,
            version=version,
            namespace=ns.metadata.name,
            values=[VALUES_FILE.read_text()],
            wait=True,
            timeout=900,
            depends_on=list(depends_on),
        )
