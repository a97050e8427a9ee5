"""What `cdktf destroy <colour>` must take down, in which order, before Terraform removes the cluster.

The plan is data: the colour's stack carries it (components/destroy_hook.py) and hands it to
`tools.teardown` at destroy time. The order of the Argo CD applications comes from their sync
waves in argocd/apps/values.yaml, the same entries that install them: last up, first down.
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict, dataclass, fields
from typing import Any

import yaml

from model.config import ClusterConfig, Config, cluster_name
from model.paths import CHARTS_DIR
from model.values import SAMPLE_APP_CHILD
from model.workloads import ARGOCD_NAMESPACE, PARENT_APPLICATION, SAMPLE_APP

PLAN_ENV = "TEARDOWN_PLAN"  # the destroy provisioner hands the plan to tools.teardown in this variable
FORCE_ENV = "BLUEGREEN_FORCE_DESTROY"  # "1": tear down a colour that still has weight
APPS_VALUES = CHARTS_DIR / "apps" / "values.yaml"


@dataclass(frozen=True)
class TeardownPlan:
    colour: str
    cluster: str
    region: str
    zone_name: str
    hostname: str
    weight: int  # the colour's weight in the config it was last deployed with
    argocd_namespace: str
    parent_application: str  # the App of Apps: it must stop re-creating what the teardown deletes
    # Workloads (wave above 0) go first: their Ingresses make the ALB and the records.
    workload_applications: tuple[str, ...]
    # Then the controllers, once what they made is gone: ExternalDNS, then the load balancer controller.
    controller_applications: tuple[str, ...]
    # Namespaces whose Ingresses Terraform installed directly (app delivery "helm").
    ingress_namespaces: tuple[str, ...]
    timeout_seconds: int

    def to_json(self) -> dict[str, Any]:
        """As JSON has it (lists, not tuples): what Terraform stores and jsii passes."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_json(cls, text: str) -> TeardownPlan:
        raw = json.loads(text)
        names = {f.name for f in fields(cls)}
        if not isinstance(raw, dict) or set(raw) != names:
            raise ValueError(f"a teardown plan has exactly the keys {sorted(names)}; got {text[:200]}")
        values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
        return cls(**values)


@functools.cache
def applications_by_wave() -> tuple[tuple[str, int], ...]:
    """(name, sync wave) of every child Application of argocd/apps, as the chart installs them."""
    entries = yaml.safe_load(APPS_VALUES.read_text())["applications"]
    return tuple((str(entry["name"]), int(entry["wave"])) for entry in entries)


def teardown_plan(config: Config, colour: str, cluster: ClusterConfig) -> TeardownPlan:
    disabled = {SAMPLE_APP_CHILD} if config.app.delivery == "helm" else set()
    last_up_first = sorted((a for a in applications_by_wave() if a[0] not in disabled), key=lambda a: a[1], reverse=True)
    return TeardownPlan(
        colour=colour,
        cluster=cluster_name(config, colour),
        region=config.region,
        zone_name=config.dns.zone_name,
        hostname=config.dns.app_hostname,
        weight=cluster.weight,
        argocd_namespace=ARGOCD_NAMESPACE,
        parent_application=PARENT_APPLICATION,
        workload_applications=tuple(name for name, wave in last_up_first if wave > 0),
        controller_applications=tuple(name for name, wave in last_up_first if wave <= 0),
        ingress_namespaces=(SAMPLE_APP.namespace,) if config.app.delivery == "helm" else (),
        timeout_seconds=config.traffic.teardown_timeout_seconds,
    )
