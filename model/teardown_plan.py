"""What `cdktf destroy <colour>` must take down, in which order, before Terraform removes the cluster.

The plan is data: the colour's stack carries it (components/destroy_hook.py) and hands it to
`tools.teardown` at destroy time. It names no Argo CD application: which ones the colour runs, and in
which sync waves, depends on the Git revision it follows, not on this checkout, so the teardown reads
them from the cluster (tools/teardown.py).
"""

from __future__ import annotations

import json
from dataclasses import MISSING, asdict, dataclass, fields
from typing import Any

from model.config import Config, cluster_name
from model.migrations.retired_plan_keys import RETIRED_KEYS  # of plans earlier releases made: model/migrations/
from model.platform import ARGOCD_NAMESPACE, PARENT_APPLICATION

PLAN_ENV = "TEARDOWN_PLAN"  # the destroy provisioner hands the plan to tools.teardown in this variable
FORCE_ENV = "BLUEGREEN_FORCE_DESTROY"  # "1": tear down a colour that still has weight


@dataclass(frozen=True)
class TeardownPlan:
    colour: str
    cluster: str
    region: str
    zone_name: str
    argocd_namespace: str
    parent_application: str  # the App of Apps: it must stop re-creating what the teardown deletes
    timeout_seconds: int
    project: str  # the shared load balancer's live weights and target groups are found by it (model/routes.py)

    def to_json(self) -> dict[str, Any]:
        """As JSON has it (lists, not tuples): what Terraform stores and jsii passes."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_json(cls, text: str) -> TeardownPlan:
        raw = json.loads(text)
        names = {f.name for f in fields(cls)}
        optional = {f.name for f in fields(cls) if f.default is not MISSING}
        if not isinstance(raw, dict) or not names - optional <= set(raw) - RETIRED_KEYS <= names:
            raise ValueError(f"a teardown plan has exactly the keys {sorted(names)}; got {text[:200]}")
        values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items() if k in names}
        return cls(**values)


def teardown_plan(config: Config, colour: str) -> TeardownPlan:
    """Nothing of it depends on the config's weights: whether the colour serves is read live when the hook runs."""
    return TeardownPlan(
        colour=colour,
        cluster=cluster_name(config, colour),
        region=config.region,
        zone_name=config.dns.zone_name,
        argocd_namespace=ARGOCD_NAMESPACE,
        parent_application=PARENT_APPLICATION,
        timeout_seconds=config.traffic.teardown_timeout_seconds,
        project=config.project,
    )
