"""Kubernetes Secrets whose values live in AWS Secrets Manager, materialised in each colour by External Secrets
Operator (the platform component argocd/apps/platform/external-secrets).

Only a secret's name travels: into common's policy (the ESO role may read exactly these secrets), into the facts and
into the ExternalSecret objects below. The value goes from Secrets Manager to the Kubernetes Secret inside the cluster,
so it is never in the configuration, Terraform's state, cdktf.out, the facts or Git; and a new value in Secrets
Manager reaches the cluster within `refresh` with no deploy.

`materialised(config)` lists them all (the repository credentials of `gitops.credentials`, and Argo CD's SSO client
secret of `argocd.sso.client_secret`; any other part of the platform that needs a secret adds its own there), and `manifests`
turns them into the objects Terraform's bootstrap applies first and the App of Apps keeps from then on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from model.argocd_access import PART_OF_ARGOCD, SSO_CLIENT_SECRET, SSO_CLIENT_SECRET_KEY
from model.config import Config
from model.platform import ARGOCD_NAMESPACE, component

EXTERNAL_SECRETS = component("external-secrets")
# ESO's API that v2.x serves and stores (its CRDs at v2.9.0: config/crds/bases/external-secrets.io_*.yaml, version v1;
# v1beta1 no longer served).
API_VERSION = "external-secrets.io/v1"
# The one store: AWS Secrets Manager of the project's region, with the controller's own credentials. No `auth` block:
# the AWS SDK's default credential chain, which finds EKS Pod Identity's (docs/provider/aws-access.md at v2.9.0,
# "Controller's Pod Identity" and "EKS Pod Identity Setup").
STORE = "aws-secrets-manager"
# How often ESO reads each secret again: a rotated value reaches its Kubernetes Secret within this (ESO's default is
# 1h0m0s: ExternalSecret spec.refreshInterval).
REFRESH = "5m"
# Argo CD reads a Secret of its namespace with this label as a repository credential template, for every repository
# whose URL starts with the Secret's `url` (argo-cd docs/operator-manual/declarative-setup.md at v3.5.1, "Repository
# Credentials"; the longest matching prefix wins).
ARGOCD_SECRET_TYPE = "argocd.argoproj.io/secret-type"
REPO_CREDS = "repo-creds"


@dataclass(frozen=True)
class MaterialisedSecret:
    """One Kubernetes Secret made from one Secrets Manager secret, a JSON object whose keys become its data keys."""

    name: str  # the Secret, and the ExternalSecret that makes it
    namespace: str
    secret: str  # the Secrets Manager secret's name, in the project's account and region
    labels: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    data: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # literal keys beside the extracted
    refresh: str = REFRESH
    # Set: the secret is one plain value (not a JSON object), and becomes this one key of the Secret.
    key: str | None = None


def repository_credentials(config: Config) -> tuple[MaterialisedSecret, ...]:
    """One repo-creds Secret in argocd per `gitops.credentials` entry: its `url` prefix and, from Secrets Manager,
    Argo CD's credential fields (username/password, githubAppID/githubAppInstallationID/githubAppPrivateKey, or
    sshPrivateKey)."""
    return tuple(
        MaterialisedSecret(
            name=f"{REPO_CREDS}-{name}",
            namespace=ARGOCD_NAMESPACE,
            secret=credential.secret,
            labels={ARGOCD_SECRET_TYPE: REPO_CREDS},
            data={"url": credential.url, "type": "git"},
        )
        for name, credential in sorted(config.gitops.credentials.items())
    )


def sso_client_secret(config: Config) -> tuple[MaterialisedSecret, ...]:
    """The Secret argocd-cm's SSO settings name (`$<secret>:<key>`, model/argocd_access.py): the plain value of
    `argocd.sso.client_secret` under its one key, labelled so Argo CD may read it; none without a client secret."""
    sso = config.argocd.sso
    if sso is None or sso.kind == "saml":  # Dex's SAML connector has no client secret: the provider signs, Dex checks
        return ()
    return (
        MaterialisedSecret(
            name=SSO_CLIENT_SECRET,
            namespace=ARGOCD_NAMESPACE,
            secret=sso.client_secret,
            labels=dict(PART_OF_ARGOCD),
            key=SSO_CLIENT_SECRET_KEY,
        ),
    )


def materialised(config: Config) -> tuple[MaterialisedSecret, ...]:
    """Every Secret ESO makes in a colour from Secrets Manager: the repository credentials, and Argo CD's SSO client
    secret."""
    return (*repository_credentials(config), *sso_client_secret(config))


def secret_arns(secrets: Iterable[MaterialisedSecret], *, partition: str, region: str, account_id: str) -> list[str]:
    """What the ESO role may read: each secret by its name. Secrets Manager appends `-` and six random characters to
    a secret's name in its ARN (Secrets Manager User Guide, "Permissions policy examples": `MySecret-??????`), so
    `??????` matches that suffix and no other secret (a name may not itself end in `-` and six characters:
    model/config/gitops.py)."""
    names = sorted({s.secret for s in secrets})
    return [f"arn:{partition}:secretsmanager:{region}:{account_id}:secret:{name}-??????" for name in names]


def manifests(secrets: Iterable[MaterialisedSecret], *, region: str) -> list[dict[str, Any]]:
    """The ClusterSecretStore and one ExternalSecret per Secret; none at all when there is no secret."""
    found = [_external_secret(s) for s in secrets]
    return [_store(region), *found] if found else []


def _store(region: str) -> dict[str, Any]:
    """The one store, usable from Argo CD's namespace only (#45): its role may read Argo CD's Git credential and SSO
    client secret, so an ExternalSecret in an application's namespace that names it must get nothing. ESO serves a
    ClusterSecretStore to an ExternalSecret only in a namespace one of its `conditions` admits, by name, label selector
    or regular expression; with no condition, to every namespace (external-secrets v2.9.0, pkg/controllers/secretstore/
    client_manager.go: Manager.Get, which the ExternalSecret and PushSecret controllers call, refuses a store whose
    shouldProcessSecret is false; apis/externalsecrets/v1/secretstore_types.go ClusterSecretStoreCondition). Conditions
    rather than a namespaced SecretStore: the same object updated in place on a running colour (its name, the parent's
    project entry for it and the bootstrap's release unchanged), where a new kind would make Argo CD prune the old store
    it then no longer renders. Application projects refuse ESO's kinds outright besides
    (argocd/apps/templates/projects.yaml)."""
    return {
        "apiVersion": API_VERSION,
        "kind": "ClusterSecretStore",
        "metadata": {"name": STORE},
        "spec": {
            "provider": {"aws": {"service": "SecretsManager", "region": region}},
            "conditions": [{"namespaces": [ARGOCD_NAMESPACE]}],
        },
    }


def _external_secret(secret: MaterialisedSecret) -> dict[str, Any]:
    template: dict[str, Any] = {"metadata": {"labels": dict(secret.labels)}}
    if secret.data:
        # Merge: the literal keys beside those extracted from Secrets Manager (Replace would keep only the literals).
        template.update(mergePolicy="Merge", data=dict(secret.data))
    return {
        "apiVersion": API_VERSION,
        "kind": "ExternalSecret",
        "metadata": {"name": secret.name, "namespace": secret.namespace},
        "spec": {
            "refreshInterval": secret.refresh,
            "secretStoreRef": {"kind": "ClusterSecretStore", "name": STORE},
            "target": {"name": secret.name, "creationPolicy": "Owner", "template": template},
            **_source(secret),
        },
    }


def _source(secret: MaterialisedSecret) -> dict[str, Any]:
    if secret.key is not None:  # the whole plain value under one key
        return {"data": [{"secretKey": secret.key, "remoteRef": {"key": secret.secret}}]}
    # Every key of the secret's JSON object becomes a key of the Secret.
    return {"dataFrom": [{"extract": {"key": secret.secret}}]}
