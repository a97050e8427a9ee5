"""Argo CD's bootstrap: the argo-cd chart from argo-helm, in its own namespace, not exposed outside the cluster.

Terraform installs it once, at the colour's `platform.argo_cd`, with the few values it needs to start
(model/bootstrap.py). From then on Argo CD manages itself from Git at the colour's revision
(argocd/apps/platform/argo-cd), so Terraform leaves its values and version alone: nothing in this checkout
reaches a running colour's Argo CD.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from cdktf import ITerraformDependable
from cdktf_cdktf_provider_helm.release import Release
from cdktf_cdktf_provider_kubernetes.namespace_v1 import NamespaceV1
from constructs import Construct

from model.bootstrap import ARGO_CD_SELF_MANAGED, ARGO_CD_VALUES, HELM_MAX_HISTORY
from model.platform import ARGO_CD


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
            name=ARGO_CD.name,  # the child that manages it afterwards renders under the same release name
            repository=ARGO_CD.chart.repository if ARGO_CD.chart else None,
            chart=ARGO_CD.name,
            version=version,
            namespace=ns.metadata.name,
            values=[json.dumps(ARGO_CD_VALUES, indent=2, sort_keys=True)],
            wait=True,
            max_history=HELM_MAX_HISTORY,
            timeout=900,
            depends_on=list(depends_on),
        )
        self.release.add_override("lifecycle.ignore_changes", ARGO_CD_SELF_MANAGED)
