"""The bootstrap: all Terraform installs in a colour's cluster from this checkout.

Argo CD at the colour's chart version with the values below, and the parent Application of the App of
Apps at the colour's Git revision (bootstrap/manifests applies it). From there Argo CD installs the rest
from Git at that revision, Argo CD itself included (argocd/apps/platform/argo-cd, `selfManaged`), so a
change under argocd/ reaches a colour only at the revision it follows, never because the checkout moved.

What is here reaches every colour at its next deploy, so it stays small and rarely changes: Terraform
installs Argo CD once (`lifecycle.ignore_changes`), and the parent Application is the facts and where to
find argocd/apps.
"""

from __future__ import annotations

from typing import Any

from model.admission import admission_cluster_resources
from model.argocd_access import PARENT_PROJECT
from model.external_secrets import EXTERNAL_SECRETS
from model.paths import PROJECT_DIR
from model.platform import ARGOCD_NAMESPACE, PARENT_APPLICATION, RESOURCES_FINALIZER
from model.values import SYNC_RETRY

IN_CLUSTER = "https://kubernetes.default.svc"

BOOTSTRAP_DIR = PROJECT_DIR / "bootstrap"
MANIFESTS_CHART = BOOTSTRAP_DIR / "manifests"  # applies the objects it gets as values (the parent Application)

# Argo CD until it has synced itself from Git (seconds after the parent's first sync). Only what must hold
# from the first minute: no SSO login server (Dex stays off here even with `argocd.sso.kind` github or saml: it starts
# when Argo CD has synced its own child, whose values turn it on), and no way in from outside the cluster (the chart's default,
# said here so a chart change cannot expose it). Everything else comes from argocd/apps/platform/argo-cd/
# values.yaml at the colour's revision; until then sync waves do not wait on Application health (its Lua
# check lives there), and the children's sync retries (SYNC_RETRY) cover the order of a first install.
ARGO_CD_VALUES: dict[str, Any] = {
    "dex": {"enabled": False},
    "server": {"service": {"type": "ClusterIP"}, "ingress": {"enabled": False}},
}
# What Argo CD changes after the bootstrap and Terraform must leave alone: its values and its version are
# the self-managed child's, from Git and the colour's `platform.argo_cd`.
# max_history too: Helm reads it only during an upgrade and stores it nowhere, so a change of it would only make
# Terraform upgrade Argo CD with the bootstrap values above over what Argo CD manages; Terraform never upgrades it.
ARGO_CD_SELF_MANAGED = ["values", "version", "max_history"]
# Revisions Helm keeps of each release Terraform installs (a Secret each, holding the release's values and
# manifests): without a bound they pile up at every upgrade (the helm provider's default, 0, keeps them all). Enough to roll
# back a few deploys by hand (`helm rollback`); Argo CD's children are no Helm releases and keep none.
HELM_MAX_HISTORY = 5


def bootstrap_manifests(facts: dict[str, Any]) -> list[dict[str, Any]]:
    """What bootstrap/manifests applies: the parent's project, then the parent."""
    return [parent_project(facts), parent_application(facts)]


def parent_project(facts: dict[str, Any]) -> dict[str, Any]:
    """The parent's own AppProject. argocd/apps makes the children's projects, which do not exist before its first sync,
    so Terraform applies this one beside the parent: exactly what argocd/apps renders, from where: this repository,
    Argo CD's namespace (the projects, child Applications and ExternalSecrets), each application's namespace (its
    Namespace and TargetGroupBinding), and as cluster-scoped kinds those Namespaces, the secrets' store and the admission
    policy with its binding (model/admission.py), by name."""
    namespaces = sorted({app["namespace"] for app in facts.get("applications", {}).values()})
    # The secrets' store is cluster-scoped (model/external_secrets.py); their ExternalSecrets live in Argo CD's namespace.
    stores = [
        {"group": m["apiVersion"].rpartition("/")[0], "kind": m["kind"], "name": m["metadata"]["name"]}
        for m in facts.get("externalSecrets", [])
        if "namespace" not in m["metadata"]
    ]
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "AppProject",
        "metadata": {"name": PARENT_PROJECT, "namespace": ARGOCD_NAMESPACE},
        "spec": {
            "description": "The App of Apps (argocd/apps): the projects, the child Applications, the applications' namespaces",
            "sourceRepos": [facts["git"]["repoURL"]],
            "destinations": [{"server": IN_CLUSTER, "namespace": ns} for ns in [ARGOCD_NAMESPACE, *namespaces]],
            "clusterResourceWhitelist": [{"group": "", "kind": "Namespace", "name": ns} for ns in namespaces]
            + stores
            + admission_cluster_resources(facts),
        },
    }


APPLY_OUT_OF_SYNC_ONLY = "ApplyOutOfSyncOnly=true"


def parent_application(facts: dict[str, Any]) -> dict[str, Any]:
    """The App of Apps: argocd/apps at the colour's revision (facts["git"]), handed the facts unchanged."""
    git = facts["git"]
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {
            "name": PARENT_APPLICATION,  # the teardown finds it by this name
            "namespace": ARGOCD_NAMESPACE,
            # Deleting the parent deletes its children (in reverse sync-wave order), and theirs in turn.
            "finalizers": [RESOURCES_FINALIZER],
        },
        "spec": {
            "project": PARENT_PROJECT,
            "source": {
                "repoURL": git["repoURL"],
                "targetRevision": git["targetRevision"],
                "path": git["path"],
                "helm": {"valuesObject": facts},
            },
            "destination": {"server": IN_CLUSTER, "namespace": ARGOCD_NAMESPACE},
            "syncPolicy": {
                "automated": {"prune": True, "selfHeal": True},
                # A failed sync (a child not yet valid, say) is tried again with backoff, not left until the next commit.
                "retry": SYNC_RETRY,
                # Only what differs is applied: the TargetGroupBindings are replaced (deleted and created: their target
                # group is immutable in the controller's webhook) when their target group changed, never re-created by
                # a sync of something else (argoproj/argo-cd docs/user-guide/sync-options.md: "Apply Resources
                # OutOfSync Only", "Force Sync").
                "syncOptions": [APPLY_OUT_OF_SYNC_ONLY],
            },
        },
    }


def facts_in(bootstrap_values: dict[str, Any]) -> dict[str, Any]:
    """The facts inside what Terraform hands bootstrap/manifests (for readers of a synthesized stack)."""
    (parent,) = [m for m in bootstrap_values["manifests"] if m["kind"] == "Application"]
    facts: dict[str, Any] = parent["spec"]["source"]["helm"]["valuesObject"]
    return facts


# External Secrets Operator, installed with Argo CD (and, like it, once: `lifecycle.ignore_changes`, its child manages
# it from Git afterwards with argocd/apps/platform/external-secrets/values.yaml), so the Secrets Argo CD needs before
# its first clone exist: the service account its Pod Identity association names, and its CRDs.
EXTERNAL_SECRETS_VALUES: dict[str, Any] = {
    "installCRDs": True,
    "serviceAccount": {"create": True, "name": EXTERNAL_SECRETS.identity.service_account if EXTERNAL_SECRETS.identity else ""},
}
# The release that applies the ClusterSecretStore and the ExternalSecrets (model/external_secrets.py) before the
# parent Application; the App of Apps renders the same objects from the facts and keeps them from then on.
BOOTSTRAP_SECRETS = "bootstrap-secrets"
