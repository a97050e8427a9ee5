"""Who may use a colour's Argo CD and what each Argo CD project may deploy (docs/argocd-access.md).

Single sign-on and RBAC are facts (`argocd`), rendered by argocd/apps/platform/argo-cd/values.yaml into the argo-cd
chart's `configs.cm` and `configs.rbac` at the colour's revision. The SSO client secret is never a fact: argocd-cm names
a Kubernetes Secret (`$<secret>:<key>`, Argo CD's syntax for a key of a Secret labelled
`app.kubernetes.io/part-of: argocd`), made in the cluster from the Secrets Manager secret the configuration names
(model/external_secrets.py, sso_client_secret), so its value is in no Terraform state, synthesized file, fact or Git.

The projects: argocd/apps renders `platform` (every component of the registry) and one per application group
(`applications.<name>.group`); Terraform's bootstrap applies the parent's own (`app-of-apps`, model/bootstrap.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from model.platform import PARENT_APPLICATION

if TYPE_CHECKING:  # the configuration's rules read this module: a type only, no import cycle
    from model.config import Config

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
# The Kubernetes Secret, in Argo CD's namespace, that holds the SSO client secret under SSO_CLIENT_SECRET_KEY:
# argocd-cm's oidc.config names it (SECRET_REFERENCE); it is made from the Secrets Manager secret
# `argocd.sso.client_secret` names (model.external_secrets.sso_client_secret), labelled as Argo CD requires.
SSO_CLIENT_SECRET = "argocd-sso-client"
SSO_CLIENT_SECRET_KEY = "clientSecret"
# How argocd-cm names the SSO client secret (oidc.config and dex.config alike): Argo CD's `$<secret>:<key>`.
SECRET_REFERENCE = f"${SSO_CLIENT_SECRET}:{SSO_CLIENT_SECRET_KEY}"


# Dex's callback under Argo CD's address: argocd-server proxies /api/dex to its Dex (argo-cd docs/operator-manual/
# user-management/index.md, v3.5.1, "Dex": "The callback address should be the `/api/dex/callback` endpoint").
DEX_CALLBACK = "/api/dex/callback"
# The claim Dex's ID tokens list groups in (dex server/oauth2.go `Groups []string json:"groups"`).
DEX_GROUPS_CLAIM = "groups"

# The traffic operator's view of a colour (`eks.traffic_operator_role_arn`, components/application_readers.py): the one
# Kubernetes group of its access entry, bound in Argo CD's namespace to a Role of the same name that reads Applications,
# which is all the gated shift's readiness reads (tools/readiness/release.py lists them). Kubernetes reserves the prefix
# `system:` for its own groups (kubernetes/website, docs/reference/access-authn-authz/rbac.md, "Referring to Subjects").
APPLICATION_READERS = "argocd-application-readers"
ARGOCD_API_GROUP = "argoproj.io"
APPLICATIONS = "applications"
# get, list and watch return the same objects, "in terms of access to the returned data they are equivalent"
# (kubernetes/website, docs/reference/access-authn-authz/authorization.md, "Determine the request verb"): readiness
# lists, get and watch show nothing more. No write, no other resource, no other namespace.
READ_VERBS = ("get", "list", "watch")


def argocd_facts(config: Config) -> dict[str, Any]:
    """The `argocd` fact: what argocd/apps/platform/argo-cd/values.yaml renders into argocd-cm and argocd-rbac-cm.

    `sso` is Argo CD's own OIDC client, `dex` Dex's one connector: a colour whose revision predates `dex` renders
    neither, so its Argo CD keeps its local admin (the fail-safe side) until it moves to a revision that has it."""
    access = config.argocd
    sso = access.sso
    facts: dict[str, Any] = {
        "url": access.url,
        "rbac": {
            "defaultRole": access.default_role,
            "adminGroups": list(access.admin_groups),
            "groupsClaim": sso.groups_claim if sso and sso.kind == "oidc" else DEX_GROUPS_CLAIM,
        },
    }
    if sso is not None and sso.kind == "oidc":
        facts["sso"] = {
            "name": sso.name,
            "issuer": sso.issuer,
            "clientID": sso.client_id,
            # A reference Argo CD resolves in its own namespace, never the value.
            "clientSecret": SECRET_REFERENCE,
            "requestedScopes": list(sso.requested_scopes),
        }
    elif sso is not None:
        facts["dex"] = {"connector": dex_connector(config)}
    return facts


def dex_connector(config: Config) -> dict[str, Any]:
    """The one Dex connector of `argocd.sso` (kind github or saml), as argocd-cm's `dex.config` lists it."""
    sso = config.argocd.sso
    assert sso is not None
    assert sso.kind != "oidc"  # the kinds that reach the provider through the bundled Dex; oidc is Argo CD's own client
    callback = config.argocd.url + DEX_CALLBACK
    # Argo CD sets redirectURI itself for these types (argo-cd util/dex/config.go, v3.5.1, needsRedirectURI); said
    # here too so the rendered dex.config reads as what Dex runs with.
    settings: dict[str, Any]
    if sso.kind == "github":
        # Dex's github connector (connector/github/github.go, dex v2.45.1, `Config`, `Org`; the image the argo-cd chart
        # 10.1.1 runs: `dex.image.tag: v2.45.1`). Groups are `<org>:<team>` of the listed organisations.
        settings = {
            "clientID": sso.client_id,
            "clientSecret": SECRET_REFERENCE,  # Argo CD's `$<secret>:<key>`, resolved before Dex reads it
            "redirectURI": callback,
            "orgs": [{"name": org, "teams": list(teams)} if teams else {"name": org} for org, teams in sso.orgs.items()],
            "teamNameField": sso.team_name_field,
        }
        if sso.hostname is not None:
            settings["hostName"] = sso.hostname
    else:
        # Dex's saml connector (connector/saml/saml.go, dex v2.45.1, `Config`), as argo-cd's identity-center.md (v3.5.1)
        # sets it for IAM Identity Center: ssoURL, caData, entityIssuer and redirectURI the callback, the attributes.
        settings = {
            "ssoURL": sso.sso_url,
            "caData": sso.ca_data,
            "entityIssuer": sso.entity_issuer or callback,
            "redirectURI": callback,
            "usernameAttr": sso.username_attr,
            "emailAttr": sso.email_attr,
            "groupsAttr": sso.groups_attr,
        }
    return {"type": sso.kind, "id": sso.kind, "name": sso.name, "config": settings}
