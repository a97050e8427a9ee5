"""What runs on top of a colour's cluster: the platform components, read from their registry.

Each component is one folder of argocd/apps/platform/: its `component.yaml` (name, namespace, sync wave,
the chart it installs with the chart versions this project supports, and
its Pod Identity binding), its `values.yaml` (its chart's values, a template over the cluster's facts) and,
with a Pod Identity binding, its role's IAM policy (`policy.json`, filled at synth) and, for a chart's, `upstream/`:
upstream's own policy of each version of its table as published (`<tag>.json`) and their sources (`sources.yaml`),
which tests/test_upstream_policies.py holds the policy to. argocd/apps reads only component.yaml and values.yaml.
Everything else is derived from that entry: the config keys `platform.<key>` and
`clusters.<colour>.platform.<key>`, common's shared role and its output, each colour's Pod Identity
association, the facts handed to the charts, the App of Apps' child Application (argocd/apps renders it
from the same file, at the colour's Git revision), the teardown order and the docs.

A colour is a whole platform release: its Kubernetes version and the chart versions of its components.
Synth refuses a colour whose charts are not known to work with its Kubernetes version (model/config/platform_release.py).
Supporting a chart version is adding a row to its component's `chart.releases`, with the upstream evidence.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from model import yaml_text
from model.paths import CHARTS_DIR

REGISTRY = CHARTS_DIR / "apps" / "platform"
ENTRY = "component.yaml"


class _Entry(BaseModel):
    """A part of a component.yaml: frozen, no unknown keys (a misspelt key fails loudly, naming the file)."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class ChartRelease(_Entry):
    """One chart version this project supports."""

    version: str
    app_version: str = Field(alias="appVersion")  # what the chart installs (its Chart.yaml appVersion)
    kubernetes: tuple[str, ...]  # the Kubernetes minor versions upstream documents it to work with
    evidence: str  # where upstream says so


class Chart(_Entry):
    repository: str
    default: str  # the project's current release: the default of `platform.<key>`
    releases: tuple[ChartRelease, ...]


class UpstreamPolicy(_Entry):
    """What upstream's own IAM policy grants for some chart versions: facts read from it, not a copy."""

    releases: tuple[str, ...]  # the chart versions it is the policy of
    document: str  # where it is, at which ref
    actions: dict[str, tuple[str, ...]]  # service -> action names

    def action_names(self) -> set[str]:
        return {f"{service}:{name}" for service, names in self.actions.items() for name in names}


class Identity(_Entry):
    """The component's Pod Identity binding: common's role `<project>-<name>` trusts this service account of the
    component's namespace, and holds the policy document `policy` names, a file of the component's folder."""

    service_account: str = Field(alias="serviceAccount")
    # A file name relative to the component's folder (`policy.json`). Only a string here: a revision written before
    # the documents moved into the folders names one of policies/, and tools/readiness still reads its registry.
    policy: str
    description: str
    upstream: tuple[UpstreamPolicy, ...] = ()  # what upstream's policy grants, for the versions of the table


class ClusterResource(_Entry):
    """A cluster-scoped kind a component's chart installs: the platform's AppProject allows exactly these."""

    group: str  # its API group, "" for the core group
    kind: str


class Component(_Entry):
    name: str  # the folder, the chart, the child Application, its facts (`platform.<name>`, `identities.<name>`)
    title: str  # how messages and docs name it
    namespace: str
    wave: int | None = None  # its sync wave as a child of the App of Apps; none: not a child
    # Argo CD itself: bootstrapped by Terraform (model/bootstrap.py), then managed by its own child Application,
    # which has no resources finalizer (deleting the child must not take Argo CD down mid-teardown).
    self_managed: bool = Field(default=False, alias="selfManaged")
    chart: Chart  # a chart from a Helm repository, at this colour's version of it
    identity: Identity | None = None
    # Labels of its namespace (Argo CD's managedNamespaceMetadata).
    namespace_labels: dict[str, str] = Field(default_factory=dict, alias="namespaceLabels")
    ignore_differences: tuple[dict[str, Any], ...] = Field(default=(), alias="ignoreDifferences")  # Argo CD's, as is
    # The cluster-scoped kinds its chart installs at the versions of its table (read from the chart's templates and
    # crds/): the platform's AppProject (argocd/apps/templates/projects.yaml) allows these and no other, beside the
    # Namespace of each component (CreateNamespace). A kind missing here fails that child's sync, naming the kind.
    cluster_resources: tuple[ClusterResource, ...] = Field(default=(), alias="clusterResources")
    # The folder it was read from (load() records it): not a key of the file, so never in it.
    _folder: Path | None = PrivateAttr(default=None)

    @property
    def folder(self) -> Path:
        """Its folder of the registry: component.yaml, values.yaml, its policy, upstream's copies."""
        if self._folder is None:
            raise RegistryError(f"{self.name}: not read from a registry folder (model.platform.load)")
        return self._folder

    @property
    def policy(self) -> Path | None:
        """The document its role holds (`identity.policy`, in its folder); none without an identity."""
        return self.folder / self.identity.policy if self.identity else None

    @property
    def key(self) -> str:
        """Its config key: `platform.<key>`."""
        return self.name.replace("-", "_")

    def versions(self) -> tuple[str, ...]:
        """The chart versions this project supports, newest first."""
        found = [release.version for release in self.chart.releases]
        return tuple(sorted(found, key=_numbers, reverse=True))

    def release(self, version: str) -> ChartRelease | None:
        return next((r for r in self.chart.releases if r.version == version), None)

    def known_kubernetes(self, version: str) -> tuple[str, ...]:
        """The Kubernetes versions one chart version is known to work with (none, when it is not in the table)."""
        found = self.release(version)
        return found.kubernetes if found else ()

    def working_versions(self, kubernetes: str) -> tuple[str, ...]:
        """The chart versions known to work with one Kubernetes version, newest first."""
        return tuple(v for v in self.versions() if kubernetes in self.known_kubernetes(v))


def _numbers(version: str) -> tuple[int, ...]:
    """A chart version's numbers, for ordering: `3.5.0` and `v1.19.1` (jetstack's charts carry the `v`) alike."""
    return tuple(int(part) for part in re.findall(r"\d+", version))


class RegistryError(Exception):
    """A component.yaml is not a valid entry; the message names the file."""


def load(registry: Path = REGISTRY) -> tuple[Component, ...]:
    """Every component, in the order of their names."""
    found = []
    for entry in sorted(registry.glob(f"*/{ENTRY}")):
        where = f"argocd/apps/platform/{entry.parent.name}/{ENTRY}"
        try:
            component = Component.model_validate(yaml_text.parse(entry.read_text()))
        except ValidationError as err:
            raise RegistryError(f"{where}: {err}") from None
        if component.name != entry.parent.name:
            raise RegistryError(f"{where}: name {component.name!r} is not its folder's, {entry.parent.name!r}")
        if component.chart.default not in component.versions():
            raise RegistryError(f"{where}: chart.default {component.chart.default} is not one of its releases")
        component._folder = entry.parent
        found.append(component)
    return tuple(found)


COMPONENTS = load()
# Those whose chart version a colour's release names (`platform.<key>`).
VERSIONED = tuple(c for c in COMPONENTS if c.chart)
# The App of Apps' children, first up first.
CHILDREN = tuple(sorted((c for c in COMPONENTS if c.wave is not None), key=lambda c: (c.wave, c.name)))


@functools.cache
def component(name: str) -> Component:
    (found,) = [c for c in COMPONENTS if c.name == name]
    return found


ARGO_CD = component("argo-cd")
# Argo CD's namespace: its component's, where the parent Application, the children and their secrets live.
ARGOCD_NAMESPACE = ARGO_CD.namespace
# The App of Apps: the parent Application Terraform installs (model/bootstrap.py), whose children are CHILDREN; the
# teardown finds it by this name.
PARENT_APPLICATION = "app-of-apps"
# On an Application, this finalizer makes deleting it delete what it installed (Argo CD docs, "App Deletion").
# argocd/apps/templates/applications.yaml writes it on every child that must be cleaned up before its cluster
# goes; the teardown deletes exactly the Applications that carry it (tools/teardown.py).
RESOURCES_FINALIZER = "resources-finalizer.argocd.argoproj.io"
# The order Argo CD syncs the children in (ascending, each child's `wave`); the teardown reads it from the cluster and
# goes the other way.
SYNC_WAVE_ANNOTATION = "argocd.argoproj.io/sync-wave"
