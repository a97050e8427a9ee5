"""The App of Apps: a local chart (argocd/root) that renders one parent Argo CD Application."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cdktf import ITerraformDependable
from cdktf_cdktf_provider_helm.release import Release
from constructs import Construct

ROOT_CHART = Path(__file__).resolve().parent.parent / "argocd" / "root"


class AppOfApps(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        namespace: str,
        facts: Mapping[str, Any],
        depends_on: Sequence[ITerraformDependable],
    ) -> None:
        """facts: this cluster's values, handed down root -> apps -> each child.
        depends_on: everything the children need; on destroy the root then goes first, while
        the controllers still run and still hold credentials to remove what they made."""
        super().__init__(scope, id_)
        self.release = Release(
            self,
            "release",
            name="app-of-apps",
            chart=str(ROOT_CHART),
            namespace=namespace,
            # JSON is YAML; Terraform fills the ${...} references inside the string at apply.
            values=[json.dumps(facts, indent=2, sort_keys=True)],
            depends_on=list(depends_on),
        )
