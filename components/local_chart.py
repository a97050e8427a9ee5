"""A Helm release of one of this project's own charts (a directory: bootstrap/manifests, or argocd/sample-app
as the colour's Git revision has it), its values as JSON.

The chart travels inside cdktf.out as a cdktf asset (stacks/<stack>/assets/<id>/<content hash>):
the synthesized stack names it by a relative path, so cdktf.out made in CI or another checkout
applies anywhere, and a template change alone changes the path, so Helm upgrades the release.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cdktf import AssetType, ITerraformDependable, TerraformAsset
from cdktf_cdktf_provider_helm.release import Release
from cdktf_cdktf_provider_kubernetes.namespace_v1 import NamespaceV1
from constructs import Construct


class LocalChart(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        chart: Path,
        release_name: str,
        namespace: str,
        values: Mapping[str, Any],
        depends_on: Sequence[ITerraformDependable],
        namespace_labels: Mapping[str, str] | None = None,
    ) -> None:
        """depends_on: what the chart's workloads need; on destroy the release then goes first,
        while all of that still runs. namespace_labels: create the namespace first, with these labels (Helm's
        own create_namespace cannot label it, and a label such as the readiness gate's must be there before
        the first pod); None: the namespace exists already."""
        super().__init__(scope, id_)
        source = TerraformAsset(self, "chart", path=str(chart), type=AssetType.DIRECTORY)
        if namespace_labels is not None:
            created = NamespaceV1(
                self, "namespace", metadata={"name": namespace, "labels": dict(namespace_labels)}, depends_on=list(depends_on)
            )
            namespace = created.metadata.name
        self.release = Release(
            self,
            "release",
            name=release_name,
            chart=source.path,
            namespace=namespace,
            # JSON is YAML; Terraform fills the ${...} references inside the string at apply.
            values=[json.dumps(values, indent=2, sort_keys=True)],
            depends_on=list(depends_on),
        )
