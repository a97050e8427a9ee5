"""A Helm release of one of this project's own charts (a directory: bootstrap/manifests), its values as JSON.

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
from constructs import Construct

from model.bootstrap import HELM_MAX_HISTORY


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
    ) -> None:
        """depends_on: what the chart's workloads need; on destroy the release then goes first,
        while all of that still runs. The namespace exists already."""
        super().__init__(scope, id_)
        source = TerraformAsset(self, "chart", path=str(chart), type=AssetType.DIRECTORY)
        self.release = Release(
            self,
            "release",
            name=release_name,
            chart=source.path,
            namespace=namespace,
            # JSON is YAML; Terraform fills the ${...} references inside the string at apply.
            values=[json.dumps(values, indent=2, sort_keys=True)],
            max_history=HELM_MAX_HISTORY,
            depends_on=list(depends_on),
        )
