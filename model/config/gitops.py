"""The `gitops` section: the Git repository Argo CD renders argocd/apps and this repository's applications from, and
the credentials of private repositories (which repository each opens: model/config/across.py)."""

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from model.config.checks import check
from model.config.fields import AS_DICT, FROZEN, GIT_URL, GIT_URL_ALLOWED, REVISION, REVISION_ALLOWED, Section, Shown
from model.problems import Allowed, Problems, frozen_mapping

if TYPE_CHECKING:
    from model.config.project import Config


# The default Git URL only synthesizes; Argo CD cannot sync it (a warning says so at synth).
PLACEHOLDER_REPO_URL = "https://git.example.com/your-org/eks-blue-green.git"
# AWS Secrets Manager, CreateSecret `Name`: 1-512 of ASCII letters, digits and `/_+=.@-`; "Do not end your secret
# name with a hyphen followed by six characters" (the ARN's own suffix is that, so a name like it would be ambiguous).
SECRETS_MANAGER_NAME = r"^(?!.*-.{6}$)[A-Za-z0-9/_+=.@-]{1,512}$"
# A credential's name: its ExternalSecret and the Secret it makes in argocd (`repo-creds-<name>`), one DNS label.
CREDENTIAL_PATTERN = r"^[a-z]([a-z0-9-]{0,38}[a-z0-9])?$"
CREDENTIAL = re.compile(CREDENTIAL_PATTERN)
_CREDENTIAL_RULE = (
    "a credential's name is a DNS label of at most 40 characters (lowercase letters, digits, '-', starting with a letter): "
    "its Secret in argocd is repo-creds-<name>"
)


class GitCredentialConfig(Section):
    """A repository credential template of Argo CD, whose secret lives in AWS Secrets Manager (docs/architecture.md,
    "Private repositories"); only its name is in the configuration, the state and the facts."""

    url: Annotated[
        str,
        Field(
            pattern=GIT_URL,
            description="the URL prefix of the repositories it opens, as Argo CD matches it "
            "(`https://github.com/my-org/` opens every repository of my-org over https) (required)",
        ),
        Allowed(GIT_URL_ALLOWED + ", or the prefix of such URLs, e.g. 'https://github.com/my-org/'"),
        Shown("(required)"),
    ] = ""
    secret: Annotated[
        str,
        Field(
            pattern=SECRETS_MANAGER_NAME,
            description="the name of an AWS Secrets Manager secret of the project's account and region: a JSON object "
            "of Argo CD's credential fields (`username` and `password`; or `githubAppID`, `githubAppInstallationID` "
            "and `githubAppPrivateKey`; or `sshPrivateKey`) (required)",
        ),
        Allowed(
            "use a Secrets Manager secret name: 1-512 of letters, digits and '/_+=.@-', not ending in '-' and six characters"
        ),
        Shown("(required)"),
    ] = ""


class GitOpsConfig(Section):
    """The Git repository (this project) that Argo CD renders argocd/apps and this repository's applications from."""

    repo_url: Annotated[
        str,
        Field(
            pattern=GIT_URL,
            description="the Git URL of this project that Argo CD clones (`https://`, `ssh://` or `git@`); synth warns "
            "while it is the placeholder",
        ),
        Allowed(GIT_URL_ALLOWED),
        Shown("a placeholder"),
    ] = PLACEHOLDER_REPO_URL
    revision: Annotated[
        str,
        Field(pattern=REVISION, description="branch, tag or commit Argo CD follows, unless a colour names its own"),
        Allowed(REVISION_ALLOWED),
    ] = "main"
    credentials: Annotated[
        Mapping[str, GitCredentialConfig],
        FROZEN,
        AS_DICT,
        Field(
            description="credential name -> the credential Argo CD uses for the repositories under its `url` (a private "
            "`repo_url` or application `source.repo_url`); at most one matches each repository, none for a public "
            "one. The name is a DNS label of at most 40 characters (docs/architecture.md, Private repositories)",
            json_schema_extra={"propertyNames": {"pattern": CREDENTIAL_PATTERN}},
        ),
        Shown("`{}` (public repositories)"),
    ] = Field(default_factory=lambda: frozen_mapping({}))


def credential_name_rules(c: "Config", p: Problems) -> None:
    """Each credential is named as its Secret in argocd can be, and names its URL prefix and its secret."""
    for name, credential in c.gitops.credentials.items():
        key = f"gitops.credentials.{name}"
        check(p, key, name, bool(CREDENTIAL.match(name)), _CREDENTIAL_RULE)
        check(p, f"{key}.url", credential.url, bool(credential.url), "name the URL prefix of the repositories it opens")
        check(p, f"{key}.secret", credential.secret, bool(credential.secret), "name its AWS Secrets Manager secret")


def placeholder_warnings(config: "Config") -> list[str]:
    """The placeholder repository synthesizes, but Argo CD cannot clone it."""
    if config.gitops.repo_url != PLACEHOLDER_REPO_URL:
        return []
    return [
        f"gitops.repo_url is the placeholder {PLACEHOLDER_REPO_URL!r}: set it to a Git URL of this project "
        "that Argo CD can read before `cdktf deploy <colour>`, or Argo CD cannot sync the App of Apps"
    ]
