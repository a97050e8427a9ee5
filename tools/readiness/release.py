"""Readiness, third: the release the config names is what Argo CD runs.

The expected Applications are the parent (the App of Apps) and every child the colour's release defines: the
components of the registry (argocd/apps/platform/) at the colour's Git revision, as argocd/apps renders them
there, and every application of the configuration. Each must exist, be Synced and Healthy, its last sync must not
have failed, and its source must be at what the config names for the colour: the chart version of `platform.<key>`
for a platform component, the revision the colour runs of an application (its `gitops_revision` for one of this
repository), the colour's `gitops_revision` for the parent. Applications outside that set are not the release's,
and are ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from model.config import Config
from model.platform import ARGOCD_NAMESPACE, PARENT_APPLICATION, Component, RegistryError, load
from model.revisions import RevisionError, files_at
from model.values import cluster_facts
from tools.kube import APPLICATIONS, KubeApi, KubeError
from tools.readiness.types import Finding

_PROVEN = ("Synced", "Healthy")
_FAILED_PHASES = ("Failed", "Error")
# An Application's condition when its desired state cannot be loaded (argo-cd pkg/apis/application/v1alpha1/types.go
# at v3.5.1, ApplicationConditionComparisonError).
COMPARISON_ERROR = "ComparisonError"
# What a repository Argo CD cannot read says, in the message of that condition (lower case).
_CLONE_FAILURES = (
    "failed to list refs",
    "authentication required",
    "authorization failed",
    "repository not found",
    "could not read username",
    "permission denied (publickey)",
)


@dataclass(frozen=True)
class Expected:
    name: str
    target_revision: str | None  # None: the colour's facts name no version for it (the message says why)
    key: str  # the config key that names target_revision, for the message
    chart: bool  # a chart version (from a Helm repository), or a Git revision


@dataclass(frozen=True)
class Release:
    colour: str
    revision: str
    applications: tuple[Expected, ...]
    problem: str = ""  # why the children could not be known (the revision cannot be read)


def registry_at(revision: str) -> tuple[Component, ...]:
    """The components argocd/apps renders at a Git revision of this repository."""
    return load(files_at(revision, "argocd/apps/platform", key="gitops_revision"))


def expected(config: Config, colour: str, registry: Callable[[str], tuple[Component, ...]]) -> Release:
    # The facts Terraform hands the colour's charts: the versions and revision they render the children at.
    facts = cluster_facts(config=config, colour=colour, common=str, target_group=str)
    revision = facts["git"]["targetRevision"]
    revision_key = f"clusters.{colour}.gitops_revision"
    parent = Expected(PARENT_APPLICATION, revision, revision_key, chart=False)
    try:
        components = registry(revision)
    except (RevisionError, RegistryError) as err:  # not fetched here; or written for a newer checkout than this one
        return Release(colour, revision, (parent,), problem=f"its children at {revision!r} cannot be read here ({err})")
    children = sorted((c for c in components if c.wave is not None), key=lambda c: (c.wave or 0, c.name))
    apps = facts["applications"]
    return Release(
        colour,
        revision,
        (
            parent,
            *(
                Expected(c.name, facts["platform"].get(c.name), f"clusters.{colour}.platform.{c.key}", chart=True)
                for c in children
            ),
            *(
                Expected(name, app["source"]["targetRevision"], _revision_key(config, colour, name), chart=False)
                for name, app in sorted(apps.items(), key=lambda item: (item[1]["wave"], item[0]))
            ),
        ),
    )


def _revision_key(config: Config, colour: str, application: str) -> str:
    if config.applications[application].source.repo_url is None:
        return f"clusters.{colour}.gitops_revision"
    return f"clusters.{colour}.applications.{application}.revision"


def applications(kube: Callable[[], KubeApi], release: Release) -> list[Finding]:
    try:
        listing = kube().get(APPLICATIONS.format(namespace=ARGOCD_NAMESPACE)) or {}
    except KubeError as err:
        return [
            Finding(
                False,
                f"Argo CD applications: the cluster's Kubernetes API did not answer ({err}); your identity needs an access "
                "entry (the traffic operator's: eks.traffic_operator_role_arn; an admin's: eks.admin_role_arns) and a "
                "route to the endpoint",
            )
        ]
    live = {item["metadata"]["name"]: item for item in listing.get("items", [])}
    found = [_judge(want, live.get(want.name), release) for want in release.applications]
    if release.problem:
        found.append(Finding(False, f"Argo CD children of {release.colour}: {release.problem}"))
    return found


def _clone_failure(status: dict[str, Any]) -> str:
    """The message of a ComparisonError that says the repository could not be read, or "". Argo CD sets the condition
    when it cannot load the target state ("Failed to load target state: " + the repo server's error: argo-cd
    controller/state.go at v3.5.1); a clone or ls-remote fails with go-git's transport errors ("failed to list refs: "
    util/git/client.go, then "authentication required", "authorization failed", "repository not found") or git's own.
    Any other ComparisonError (a chart that does not render) is the sync's, judged below."""
    for condition in status.get("conditions") or []:
        message = str(condition.get("message", ""))
        if condition.get("type") == COMPARISON_ERROR and any(sign in message.lower() for sign in _CLONE_FAILURES):
            return message
    return ""


def _judge(want: Expected, app: dict[str, Any] | None, release: Release) -> Finding:
    label = f"Argo CD {want.name}"
    at = f"{'chart' if want.chart else 'revision'} {want.target_revision}"
    if app is None:
        where = "the App of Apps" if want.name == PARENT_APPLICATION else f"{release.colour}'s release at {release.revision}"
        return Finding(False, f"{label}: missing from namespace {ARGOCD_NAMESPACE} ({where} defines it, at {at})")
    if want.target_revision is None:
        return Finding(False, f"{label}: {release.colour}'s config names no version for it ({want.key})")
    source = app.get("spec", {}).get("source", {})
    status = app.get("status", {})
    unreachable = _clone_failure(status)
    if unreachable:
        return Finding(False, f"Argo CD cannot reach {source.get('repoURL', '?')}: {unreachable} ({label})")
    running = str(source.get("targetRevision", "?"))
    if running != want.target_revision:
        kind = "chart" if want.chart else "revision"
        return Finding(False, f"{label}: at {kind} {running}, but {want.key} is {want.target_revision}")
    synced = status.get("sync", {}).get("revision")
    if want.chart and synced and synced != want.target_revision:
        return Finding(False, f"{label}: synced chart {synced}, not {want.target_revision} ({want.key})")
    sync, health = status.get("sync", {}).get("status", "Unknown"), status.get("health", {}).get("status", "Unknown")
    operation = status.get("operationState") or {}
    if operation.get("phase") in _FAILED_PHASES:
        said = f": {operation['message']}" if operation.get("message") else ""
        return Finding(False, f"{label}: its last sync {operation['phase'].lower()}{said} ({sync}/{health}, {at})")
    if (sync, health) != _PROVEN:
        message = status.get("health", {}).get("message")
        return Finding(False, f"{label}: {sync}/{health}{f' ({message})' if message else ''}, {at}")
    return Finding(True, f"{label}: Synced/Healthy, {at}")
