"""A platform component's chart that Terraform installs once, before the App of Apps, and its child then manages.

The component's own chart from its Helm repository, in its namespace, with the few values it needs to start
(model/bootstrap.py). Terraform leaves its values and version alone afterwards (`lifecycle.ignore_changes`): the
component's child Application, rendered under the same release name from Git at the colour's revision, owns it, so
nothing in this checkout reaches a running colour's component. Two are: Argo CD itself (not exposed outside the
cluster), and External Secrets Operator (the Secrets Argo CD needs before its first clone).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from cdktf import ITerraformDependable
from cdktf_cdktf_provider_helm.release import Release
from cdktf_cdktf_provider_kubernetes.namespace_v1 import NamespaceV1
from constructs import Construct

from model.bootstrap import ARGO_CD_SELF_MANAGED, HELM_MAX_HISTORY
from model.platform import Component


class BootstrappedChart(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        component: Component,
        version: str,
        values: Mapping[str, Any],
        depends_on: Sequence[ITerraformDependable],
        timeout: int = 600,
    ) -> None:
        """version: the chart version of the colour's platform release. depends_on: what its pods need before Helm can
        wait for them (nodes, add-ons, the Pod Identity association its service account is named in). timeout: seconds
        Helm waits for its pods (default 600)."""
        super().__init__(scope, id_)
        ns = NamespaceV1(self, "namespace", metadata={"name": component.namespace}, depends_on=list(depends_on))
        self.release = Release(
            self,
            "release",
            name=component.name,  # the child that manages it afterwards renders under the same release name
            repository=component.chart.repository if component.chart else None,
            chart=component.name,
            version=version,
            namespace=ns.metadata.name,
            values=[json.dumps(values, indent=2, sort_keys=True)],
            wait=True,
            max_history=HELM_MAX_HISTORY,
            timeout=timeout,
            depends_on=list(depends_on),
        )
        # The same as Argo CD's: values and version are the child's from then on.
        self.release.add_override("lifecycle.ignore_changes", ARGO_CD_SELF_MANAGED)
