"""The `argocd` section: who may use each colour's Argo CD and how they log in. Single sign-on is one of three kinds,
each a model of its own fields (`argocd.sso.kind` tells them apart; without it, `oidc`): a field of another kind is
refused by the model, and the fields a kind needs by this section's rules."""

import base64
import binascii
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import Discriminator, Field, Tag

from model.config.checks import as_shown, check
from model.config.fields import AS_DICT, FROZEN, Section, Shown
from model.problems import TAG_KEY, UNKNOWN_KIND, Allowed, Problems, frozen_mapping

if TYPE_CHECKING:
    from model.config.project import Config


# Where an operator opens Argo CD: `kubectl port-forward` (README, "First deploy"); the server is not exposed.
DEFAULT_ARGOCD_URL = "https://localhost:8080"
# A group of the identity provider, as Argo CD's RBAC (a Casbin CSV line) names it: no comma, quote or line break.
_IDP_GROUP = r"^[^,\"\r\n\s]([^,\"\r\n]*[^,\"\r\n\s])?$"
_IDP_GROUP_ALLOWED = "name a group of the identity provider (no comma, quote, line break, or space at either end)"


# Single sign-on's kinds (ArgoCdSsoConfig below): Argo CD's own OIDC client, or its bundled Dex with one connector
# (docs/argocd-access.md).
_KIND_ALLOWED = Allowed("use 'oidc', 'github' or 'saml'")
# A GitHub organisation or team name as Dex's github connector matches it (connector/github/github.go, dex v2.45.1,
# `Org.Name`, `Org.Teams`): no comma (the RBAC group `org:team` is a Casbin CSV field), no line break.
_GITHUB_NAME = r"^[^,:\"\r\n\s]([^,:\"\r\n]*[^,:\"\r\n\s])?$"
# A SAML attribute name (an assertion's Attribute Name: a URI or a plain name).
_SAML_ATTR = r"^[A-Za-z0-9_:./-]{1,256}$"
# The base64 of a PEM certificate (Dex reads `caData` as JSON bytes: base64; argo-cd identity-center.md, v3.5.1,
# "base64-encode the entire certificate, including the -----BEGIN CERTIFICATE----- and -----END CERTIFICATE----- stanzas").
_BASE64 = r"^[A-Za-z0-9+/]+={0,2}$"


# The client fields oidc and github need, with the words of the refusal when one is empty.
_CLIENT = {
    "client_id": "the client ID the provider gave Argo CD",
    "client_secret": "the name of the Secrets Manager secret holding the client secret",
}
# The fields more than one kind has: one type each, so each kind's model spells them alike.
ClientId = Annotated[
    str,
    Field(pattern=r"^\S{1,256}$", description="oidc, github: the client (application) ID the provider gave Argo CD"),
    Allowed("use the client ID of the provider's application (no spaces)"),
    Shown("(required with oidc, github)"),
]
ClientSecret = Annotated[
    str,
    # Secrets Manager's own rule for a secret's name (CreateSecret: 1-512 of letters, digits and /_+=.@-).
    Field(
        pattern=r"^[A-Za-z0-9/_+=.@-]{1,512}$",
        description="oidc, github: the NAME of an AWS Secrets Manager secret (of the project's region) whose value is "
        "the client secret; never the secret itself. Argo CD reads it from a Kubernetes Secret made from it, so the "
        "value is in no Terraform state, synthesized file or Git",
    ),
    Allowed("name an AWS Secrets Manager secret (1-512 of letters, digits and /_+=.@-), not the secret's value"),
    Shown("(required with oidc, github)"),
]
SsoName = Annotated[
    str,
    Field(min_length=1, max_length=64, description="shown on Argo CD's login button"),
    Allowed("use 1-64 characters"),
]


class OidcSsoConfig(Section):
    """Single sign-on through the organisation's OpenID Connect provider, with Argo CD's own OIDC client."""

    REQUIRED: ClassVar[Mapping[str, str]] = {"issuer": "the provider's https:// issuer URL", **_CLIENT}

    kind: Annotated[
        Literal["oidc"],
        Field(
            description="`oidc`: Argo CD's own OIDC client (`issuer`, `client_id`, `client_secret`); `github`: Dex's "
            "GitHub connector (`client_id`, `client_secret`, `orgs`); `saml`: Dex's SAML connector, e.g. IAM Identity "
            "Center (`sso_url`, `ca_data`). A field of another kind is refused"
        ),
        _KIND_ALLOWED,
    ] = "oidc"
    issuer: Annotated[
        str,
        Field(
            pattern=r"^https://\S+$", description="oidc: the provider's issuer URL (its `/.well-known/openid-configuration` base)"
        ),
        Allowed("use the provider's https:// issuer URL, e.g. 'https://acme.okta.com'"),
        Shown("(required with oidc)"),
    ] = ""
    client_id: ClientId = ""
    client_secret: ClientSecret = ""
    name: SsoName = "SSO"
    requested_scopes: Annotated[
        tuple[Annotated[str, Field(pattern=r"^[\x21\x23-\x5B\x5D-\x7E]+$")], ...],
        Field(min_length=1, description="oidc: the OIDC scopes Argo CD asks for; `openid` among them"),
        Allowed("list OIDC scopes such as 'openid', 'profile', 'email', 'groups'"),
    ] = ("openid", "profile", "email", "groups")
    groups_claim: Annotated[
        str,
        Field(
            pattern=r"^[A-Za-z0-9_:./-]{1,128}$",
            description="oidc: the ID token's claim that lists the user's groups (`argocd.admin_groups` are matched against it; "
            "Dex delivers `groups`)",
        ),
        Allowed("use a claim name such as 'groups'"),
    ] = "groups"


class GithubSsoConfig(Section):
    """Single sign-on through GitHub (OAuth), with Dex's GitHub connector."""

    REQUIRED: ClassVar[Mapping[str, str]] = {**_CLIENT, "orgs": "the GitHub organisations whose members may log in"}

    kind: Annotated[
        Literal["github"],
        Field(
            description="`oidc`: Argo CD's own OIDC client (`issuer`, `client_id`, `client_secret`); `github`: Dex's "
            "GitHub connector (`client_id`, `client_secret`, `orgs`); `saml`: Dex's SAML connector, e.g. IAM Identity "
            "Center (`sso_url`, `ca_data`). A field of another kind is refused"
        ),
        _KIND_ALLOWED,
    ]
    client_id: ClientId = ""
    client_secret: ClientSecret = ""
    name: SsoName = "SSO"
    orgs: Annotated[
        Mapping[Annotated[str, Field(pattern=_GITHUB_NAME)], tuple[Annotated[str, Field(pattern=_GITHUB_NAME)], ...]],
        FROZEN,
        AS_DICT,
        Field(
            description="github: organisation -> its teams whose members may log in (`[]`: any member of the "
            "organisation); Dex's `orgs: [{name, teams}]`. A user's groups are `<org>:<team>` of these organisations",
            json_schema_extra={"propertyNames": {"pattern": _GITHUB_NAME}},
        ),
        Allowed("name GitHub organisations, each with a list of its teams (no comma, colon, quote or line break)"),
        Shown("(required with github)"),
    ] = Field(default_factory=lambda: frozen_mapping({}))
    team_name_field: Annotated[
        Literal["slug", "name", "both"],
        Field(
            description="github: how a team is named in the groups: `slug` (`acme:platform-admins`, stable and "
            "without spaces), `name` (its display name) or `both` (Dex's `teamNameField`)"
        ),
        Allowed("use 'slug', 'name' or 'both'"),
    ] = "slug"
    hostname: Annotated[
        str | None,
        Field(
            pattern=r"^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$",
            description="github: the GitHub Enterprise Server host (Dex's `hostName`); unset: github.com",
        ),
        Allowed("use a host name without scheme or path, e.g. 'github.acme.example.com'"),
        Shown("github.com"),
    ] = None


class SamlSsoConfig(Section):
    """Single sign-on through a SAML 2.0 provider such as IAM Identity Center, with Dex's SAML connector."""

    REQUIRED: ClassVar[Mapping[str, str]] = {
        "sso_url": "the provider's SAML sign-in URL",
        "ca_data": "the provider's certificate, its PEM file in base64",
    }

    kind: Annotated[
        Literal["saml"],
        Field(
            description="`oidc`: Argo CD's own OIDC client (`issuer`, `client_id`, `client_secret`); `github`: Dex's "
            "GitHub connector (`client_id`, `client_secret`, `orgs`); `saml`: Dex's SAML connector, e.g. IAM Identity "
            "Center (`sso_url`, `ca_data`). A field of another kind is refused"
        ),
        _KIND_ALLOWED,
    ]
    name: SsoName = "SSO"
    sso_url: Annotated[
        str,
        Field(
            pattern=r"^https://\S+$",
            description="saml: the identity provider's sign-in URL (Identity Center: the application's \"IAM Identity "
            'Center sign-in URL", `https://portal.sso.<region>.amazonaws.com/saml/assertion/...`)',
        ),
        Allowed("use the provider's https:// SAML sign-in URL"),
        Shown("(required with saml)"),
    ] = ""
    ca_data: Annotated[
        str,
        Field(
            pattern=_BASE64,
            max_length=65536,
            description="saml: the provider's signing certificate, the PEM file (BEGIN and END lines included) in "
            "base64 (`base64 -w0 cert.pem`): public, checks the assertions' signatures",
        ),
        Allowed("use the base64 of the provider's PEM certificate (`base64 -w0 cert.pem`)"),
        Shown("(required with saml)"),
    ] = ""
    entity_issuer: Annotated[
        str | None,
        Field(
            pattern=r"^https://\S+$",
            description="saml: the issuer Argo CD's assertions are requested for (Identity Center: the application's "
            '"Application SAML audience")',
        ),
        Allowed("use an https:// URL, as the provider's application names its audience"),
        Shown("`<argocd.url>/api/dex/callback`"),
    ] = None
    groups_attr: Annotated[
        str,
        Field(pattern=_SAML_ATTR, description="saml: the assertion attribute listing the user's groups"),
        Allowed("use an attribute name such as 'groups'"),
    ] = "groups"
    username_attr: Annotated[
        str,
        Field(pattern=_SAML_ATTR, description="saml: the assertion attribute naming the user"),
        Allowed("use an attribute name such as 'email'"),
    ] = "email"
    email_attr: Annotated[
        str,
        Field(pattern=_SAML_ATTR, description="saml: the assertion attribute holding the user's email"),
        Allowed("use an attribute name such as 'email'"),
    ] = "email"


def _sso_kind(value: Any) -> str | None:
    """The kind an `argocd.sso` entry is of: its `kind`, or `oidc` when it names none (the kind of the releases before
    the others); None for a kind that is no string, which is refused as an unknown kind."""
    found = value.get(TAG_KEY, "oidc") if isinstance(value, Mapping) else getattr(value, TAG_KEY, "oidc")
    return found if isinstance(found, str) else None


# One of the kinds, by `kind`: pydantic validates the entry against that kind's model only. An unknown kind is the
# error UNKNOWN_KIND, which model/problems.py words as the `kind` setting's own refusal.
ArgoCdSsoConfig = Annotated[
    Annotated[OidcSsoConfig, Tag("oidc")] | Annotated[GithubSsoConfig, Tag("github")] | Annotated[SamlSsoConfig, Tag("saml")],
    Discriminator(_sso_kind, custom_error_type=UNKNOWN_KIND, custom_error_message="unknown kind"),
]


class ArgoCdConfig(Section):
    """Who may use each colour's Argo CD, and how they log in (docs/argocd-access.md)."""

    url: Annotated[
        str,
        Field(
            pattern=r"^https://[^\s/]+$",
            description="where operators open Argo CD; with `sso`, the provider's redirect URI is `<url>/auth/callback` (oidc) "
            "or `<url>/api/dex/callback` (github, saml)",
        ),
        Allowed("use an https:// address without a path, e.g. 'https://localhost:8080'"),
    ] = DEFAULT_ARGOCD_URL
    sso: ArgoCdSsoConfig | None = Field(
        default=None,
        description="set: users log in through the provider and the local `admin` account is disabled; unset: only the "
        "local `admin` (its initial password in the `argocd-initial-admin-secret` Secret), for a first login",
    )
    admin_groups: Annotated[
        tuple[Annotated[str, Field(pattern=_IDP_GROUP)], ...],
        Field(description="groups of the provider given Argo CD's `role:admin` (needs `sso`; with `sso`, at least one)"),
        Allowed(_IDP_GROUP_ALLOWED),
    ] = ()
    default_role: Annotated[
        Literal["role:readonly", ""],
        Field(
            description='`role:readonly` (see every application, change none) or `""` (nothing) for a logged-in user of '
            "no admin group"
        ),
        Allowed("use 'role:readonly' or '' (no access)"),
    ] = "role:readonly"


def _pem_certificate(data: str) -> bool:
    """Whether data is the base64 of a PEM certificate, as Dex's SAML connector reads `caData` (connector/saml/saml.go,
    dex v2.45.1: PEM blocks, else "no certificates found in ca data" when Dex starts)."""
    try:
        decoded = base64.b64decode(data, validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError):
        return False
    return "-----BEGIN CERTIFICATE-----" in decoded and "-----END CERTIFICATE-----" in decoded


def argocd_rules(c: "Config", p: Problems) -> None:
    """Single sign-on and its admins go together: the groups come from the provider, and with SSO the local admin is
    off, so without an admin group nobody could administer Argo CD but through kubectl."""
    access = c.argocd
    if access.sso is None:
        check(
            p,
            "argocd.admin_groups",
            list(access.admin_groups),
            not access.admin_groups,
            "admin groups are the identity provider's: set argocd.sso too, or leave argocd.admin_groups empty",
        )
        return
    sso = access.sso
    for field, what in sso.REQUIRED.items():
        value = getattr(sso, field)
        check(p, f"argocd.sso.{field}", as_shown(value), bool(value), f"argocd.sso ({sso.kind}) needs {what}")
    if isinstance(sso, SamlSsoConfig) and sso.ca_data:
        check(p, "argocd.sso.ca_data", "(not shown)", _pem_certificate(sso.ca_data), _CA_DATA_RULE)
    check(
        p,
        "argocd.admin_groups",
        [],
        bool(access.admin_groups),
        "with argocd.sso set the local admin is disabled: name at least one group of the provider to be Argo CD's admins",
    )


_CA_DATA_RULE = "use the base64 of the provider's PEM certificate, BEGIN and END lines included (`base64 -w0 cert.pem`)"
