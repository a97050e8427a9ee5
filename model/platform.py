"""What runs on top of a colour's cluster: the platform components, the chart versions this project
supports, and the Kubernetes versions each is known to work with.

A colour is a whole platform release: its Kubernetes version, and the versions of the charts below
(`platform` in the config, overridden per colour by `clusters.<colour>.platform`). Synth refuses a
colour whose charts are not known to work with its Kubernetes version (model/rules.py), so a
platform bump is rehearsed on the new colour while the old one keeps what it runs.

Adding a supported version is adding a row to COMPATIBILITY, with the upstream evidence beside it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Component:
    key: str  # the config key under `platform`
    title: str  # how messages and docs name it
    chart: str  # the Helm chart
    fact: str  # its key in the facts handed to the charts (model/values.py), where it is not Argo CD itself


ARGO_CD = Component(key="argo_cd", title="Argo CD", chart="argo-cd", fact="argoCd")
LOAD_BALANCER_CONTROLLER = Component(
    key="aws_load_balancer_controller",
    title="AWS Load Balancer Controller",
    chart="aws-load-balancer-controller",
    fact="awsLoadBalancerController",
)
EXTERNAL_DNS = Component(key="external_dns", title="ExternalDNS", chart="external-dns", fact="externalDns")
COMPONENTS = (ARGO_CD, LOAD_BALANCER_CONTROLLER, EXTERNAL_DNS)


@dataclass(frozen=True)
class ChartRelease:
    component: Component
    version: str  # the chart version
    app_version: str  # what the chart installs (its Chart.yaml appVersion)
    kubernetes: tuple[str, ...]  # Kubernetes minor versions upstream documents it to work with
    evidence: str  # where upstream says so


# Evidence, read in the upstream repositories (snapshots of August 2026):
# - Argo CD: argoproj/argo-cd docs/operator-manual/tested-kubernetes-versions.md, the "Tested versions"
#   table of docs/operator-manual/installation.md, at tag v3.4.7: "| 3.4 | v1.35, v1.34, v1.33, v1.32 |",
#   "| 3.3 | v1.35, v1.34, v1.33, v1.32 |", "| 3.2 | v1.34, v1.33, v1.32, v1.31 |". Chart appVersions from
#   argoproj/argo-helm charts/argo-cd/Chart.yaml (9.4.18: v3.3.6, 9.3.7: v3.2.6; 10.x ship 3.4); every chart
#   has kubeVersion ">=1.25.0-0". v3.5.1 adds "| 3.5 | v1.36, v1.35, v1.34, v1.33 |": the first Argo CD
#   tested on 1.36, not yet in an argo-cd chart when this table was written.
# - AWS Load Balancer Controller: kubernetes-sigs/aws-load-balancer-controller docs/deploy/installation.md,
#   "Supported Kubernetes versions", unchanged to tag v3.5.0: "AWS Load Balancer Controller v2.5.0+ requires
#   Kubernetes 1.22+" (a minimum, no upper bound; its e2e tests default to 1.32). Chart versions and
#   appVersions from aws/eks-charts stable/aws-load-balancer-controller/Chart.yaml (no kubeVersion).
# - ExternalDNS: kubernetes-sigs/external-dns README.md, "Kubernetes version compatibility", for
#   ExternalDNS >= 0.18: "Kubernetes >= 1.22 and <= 1.32" and "Kubernetes >= 1.33" both supported.
#   appVersions from charts/external-dns/Chart.yaml (1.21.1: 0.21.0, 1.20.0: 0.20.0; no kubeVersion).
_ARGO_CD_DOCS = "argo-cd docs/operator-manual/tested-kubernetes-versions.md (v3.4.7)"
_LBC_DOCS = "aws-load-balancer-controller docs/deploy/installation.md: v2.5.0+ requires Kubernetes 1.22+"
_EXTERNAL_DNS_DOCS = "external-dns README.md: Kubernetes version compatibility (>= 0.18)"
_K8S = ("1.32", "1.33", "1.34", "1.35")

# fmt: off
COMPATIBILITY: tuple[ChartRelease, ...] = (
    ChartRelease(ARGO_CD, "10.1.4", "v3.4", _K8S, _ARGO_CD_DOCS),
    ChartRelease(ARGO_CD, "9.4.18", "v3.3.6", _K8S, _ARGO_CD_DOCS),
    ChartRelease(ARGO_CD, "9.3.7", "v3.2.6", ("1.31", "1.32", "1.33", "1.34"), _ARGO_CD_DOCS),
    ChartRelease(LOAD_BALANCER_CONTROLLER, "3.5.0", "v3.5.0", _K8S, _LBC_DOCS),
    ChartRelease(LOAD_BALANCER_CONTROLLER, "3.4.3", "v3.4.3", _K8S, _LBC_DOCS),
    ChartRelease(EXTERNAL_DNS, "1.21.1", "0.21.0", _K8S, _EXTERNAL_DNS_DOCS),
    ChartRelease(EXTERNAL_DNS, "1.20.0", "0.20.0", _K8S, _EXTERNAL_DNS_DOCS),
)
# fmt: on

# The project's current platform release: the defaults of `platform`.
CURRENT = {ARGO_CD: "10.1.4", LOAD_BALANCER_CONTROLLER: "3.5.0", EXTERNAL_DNS: "1.21.1"}


def versions(component: Component) -> tuple[str, ...]:
    """The chart versions of a component this project supports, newest first."""
    found = [release.version for release in COMPATIBILITY if release.component == component]
    return tuple(sorted(found, key=_numbers, reverse=True))


def release(component: Component, version: str) -> ChartRelease | None:
    return next((r for r in COMPATIBILITY if r.component == component and r.version == version), None)


def working_versions(component: Component, kubernetes: str) -> tuple[str, ...]:
    """The chart versions of a component known to work with one Kubernetes version, newest first."""
    return tuple(v for v in versions(component) if kubernetes in known_kubernetes(component, v))


def known_kubernetes(component: Component, version: str) -> tuple[str, ...]:
    """The Kubernetes versions one chart version is known to work with (none, when it is not in the table)."""
    found = release(component, version)
    return found.kubernetes if found else ()


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))
