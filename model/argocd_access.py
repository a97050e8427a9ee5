"""Who may use a colour's Argo CD and what each Argo CD project may deploy (docs/argocd-access.md).

Single sign-on and RBAC are facts (`argocd`), rendered by argocd/apps/platform/argo-cd/values.yaml into the argo-cd
chart's `configs.cm` and `configs.rbac` at the colour's revision. The SSO client secret is never a fact: argocd-cm names
a Kubernetes Secret (`$<secret>:<key>`, Argo CD's syntax for a key of a Secret labelled
`app.kubernetes.io/part-of: argocd`), made in the cluster from the Secrets Manager secret the configuration names
(secret_copies), so its value is in no Terraform state, synthesized file, fact or Git.

The projects: argocd/apps renders `platform` (every component of the registry) and one per application group
(`applications.<name>.group`); Terraform's bootstrap applies the parent's own (`app-of-apps`, model/bootstrap.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from model.config import Config
from model.workloads import ARGOCD_NAMESPACE, PARENT_APPLICATION, SSO_CLIENT_SECRET, SSO_CLIENT_SECRET_KEY

# The AppProject of the platform's components (argocd/apps/templates/projects.yaml writes the same name).
PLATFORM_PROJECT = "platform"
# Argo CD's own project, created by its server where missing; argocd/apps locks it: no Application of this project's
# deploys through it.
DEFAULT_PROJECT = "default"
# The parent Application's own project, applied by Terraform beside it (the others do not exist on a first install).
PARENT_PROJECT = PARENT_APPLICATION
# Project names an application group cannot take.
RESERVED_PROJECTS = (PLATFORM_PROJECT, DEFAULT_PROJECT, PARENT_PROJECT)
# Argo CD's label of a Secret its configuration may reference (argo-cd docs/operator-manual/user-management/index.md,
# v3.5.1: "Secret must have label `app.kubernetes.io/part-of: argocd`").
PART_OF_ARGOCD = {"app.kubernetes.io/part-of": "argocd"}


def argocd_facts(config: Config) -> dict[str, Any]:
    """The `argocd` fact: what argocd/apps/platform/argo-cd/values.yaml renders into argocd-cm and argocd-rbac-cm."""
    access = config.argocd
    facts: dict[str, Any] = {
        "url": access.url,
        "rbac": {
            "defaultRole": access.default_role,
            "adminGroups": list(access.admin_groups),
            "groupsClaim": access.sso.groups_claim if access.sso else "groups",
        },
    }
    if access.sso is not None:
        facts["sso"] = {
            "name": access.sso.name,
            "issuer": access.sso.issuer,
            "clientID": access.sso.client_id,
            # A reference Argo CD resolves in its own namespace, never the value.
            "clientSecret": f"${SSO_CLIENT_SECRET}:{SSO_CLIENT_SECRET_KEY}",
            "requestedScopes": list(access.sso.requested_scopes),
        }
    return facts


@dataclass(frozen=True)
class SecretCopy:
    """A Kubernetes Secret a colour needs made from a Secrets Manager secret (the value of the one, under `key` of the
    other), by whatever materialises Secrets Manager secrets in the cluster."""

    secrets_manager_name: str  # the secret of the project's region
    namespace: str
    name: str  # the Kubernetes Secret
    key: str
    labels: dict[str, str]


def secret_copies(config: Config) -> tuple[SecretCopy, ...]:
    """The Secrets Manager secrets Argo CD's configuration reads, and the Kubernetes Secret each must become."""
    sso = config.argocd.sso
    if sso is None:
        return ()
    return (SecretCopy(sso.client_secret, ARGOCD_NAMESPACE, SSO_CLIENT_SECRET, SSO_CLIENT_SECRET_KEY, dict(PART_OF_ARGOCD)),)
