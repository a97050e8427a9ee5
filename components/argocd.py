"""Argo CD from the argo-helm chart, in its own namespace, not exposed outside the cluster."""

from __future__ import annotations

from collections.abc import Sequence

from cdktf import ITerraformDependable
from cdktf_cdktf_provider_helm.release import Release
from cdktf_cdktf_provider_kubernetes.namespace_v1 import NamespaceV1
from constructs import Construct

from model.paths import CHARTS_DIR
from model.platform import ARGO_CD

ARGO_HELM_REPOSITORY = "https://argoproj.github.io/argo-helm"
VALUES_FILE = CHARTS_DIR / "argo-cd-values.yaml"


class ArgoCd(Construct):
    def __init__(
        self, scope: Construct, id_: str, *, namespace: str, version: str, depends_on: Sequence[ITerraformDependable]
    ) -> None:
        """version: the argo-cd chart version of the colour's platform release (model/platform.py).
        depends_on: the nodes and add-ons Argo CD's pods need before Helm can wait for them."""
        super().__init__(scope, id_)
        ns = NamespaceV1(self, "namespace", metadata={"name": namespace}, depends_on=list(depends_on))
        self.release = Release(
            self,
            "release",
            name="argo-cd",
            repository=ARGO_HELM_REPOSITORY,
            chart=ARGO_CD.chart,
            version=version,
            namespace=ns.metadata.name,
            values=[VALUES_FILE.read_text()],
            wait=True,
            timeout=900,
            depends_on=list(depends_on),
        )
