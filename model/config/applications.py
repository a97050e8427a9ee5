"""The `applications` section: the team's applications, each an entry `applications.<name>` (what every colour runs
behind the shared load balancer). Its rules are model/config/application_rules.py's.

An entry is read through `Application` (its name and its settings, with what is derived from the name: namespace,
service account, Service, role): common's role and image repository, the traffic stack's target groups, listener
rules and records, each colour's Pod Identity association, child Application and TargetGroupBinding, readiness, the
shift and the teardown all read it here. So adding an application is an edit of the configuration, never of the
code, and no module names one.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import ConfigDict, Field

from model.config.analysis import AnalysisConfig
from model.config.fields import (
    AS_DICT,
    FROZEN,
    GIT_URL,
    GIT_URL_ALLOWED,
    IMAGE_TAG,
    IMAGE_TAG_ALLOWED,
    LABEL,
    LABEL_ALLOWED,
    REVISION,
    REVISION_ALLOWED,
    Section,
    Shown,
)
from model.paths import PROJECT_DIR
from model.problems import Allowed, frozen_mapping
from model.workloads import ADDON_ROLES, WORKLOADS, Workload

if TYPE_CHECKING:
    from model.config.project import Config


# An application's name: a child Application, a Helm release, a role `<project>-<name>` and an output key, so one
# DNS label, short enough for the role name (64) and the load balancer's names with the project and a colour.
APPLICATION_PATTERN = r"^[a-z]([a-z0-9-]{0,30}[a-z0-9])?$"
# Until an image is built and its tag configured, pods cannot pull (a warning says so at synth).
DEFAULT_IMAGE_TAG = "0.1.0"
# The Argo CD project (AppProject) of an application that names no `group`: the team's applications share its
# repositories and namespaces until the team splits them (docs/argocd-access.md).
DEFAULT_APPLICATION_GROUP = "applications"
# The key of an application's chart values the platform writes: the colour's facts about it (model/values.py).
BLUE_GREEN = "blueGreen"
# What synth fills in an application's policy document (stacks/common.py).
APPLICATION_POLICY_VALUES = frozenset({"TABLE_ARN", "PARTITION", "REGION", "ACCOUNT_ID"})


_NAMESPACE_ALLOWED = "use a Kubernetes namespace name: 1-63 lowercase letters, digits or '-'"
_K8S_NAME = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"
_HTTP_PATH = r"^/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$"
_HTTP_PATH_ALLOWED = "use an absolute URL path such as '/healthz'"
# A path relative to a repository's root that stays inside it: no `..` part (the start of a pattern).
_RELATIVE = r"^(?!(.*/)?\.\.(/|$))"


class ApplicationSourceConfig(Section):
    """Where Argo CD finds the application's Helm chart."""

    repo_url: Annotated[
        str | None,
        Field(
            pattern=GIT_URL,
            description="the Git URL of the application's own repository; unset: this project's (`gitops.repo_url`), at "
            "each colour's `gitops_revision`",
        ),
        Allowed(GIT_URL_ALLOWED),
        Shown("this repository"),
    ] = None
    path: Annotated[
        str,
        Field(
            pattern=_RELATIVE + r"[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$",
            description="the directory of the application's Helm chart in that repository (required)",
        ),
        Allowed("name the chart's directory in the repository, relative, without '..', e.g. 'deploy/chart'"),
        Shown("(required)"),
    ] = ""
    revision: Annotated[
        Annotated[str, Field(pattern=REVISION)] | None,
        Field(
            description="an application from another repository: the revision a colour without weight runs unless its "
            "entry names one (`clusters.<colour>.applications.<name>.revision`; a colour with weight must)"
        ),
        Allowed(REVISION_ALLOWED),
        Shown("(none)"),
    ] = None


class ApplicationServiceConfig(Section):
    """The application's Kubernetes Service: the shared load balancer sends to its pods (a TargetGroupBinding)."""

    name: Annotated[
        str | None,
        Field(pattern=_K8S_NAME, description="the Service its chart creates"),
        Allowed("use a Kubernetes Service name: lowercase letters, digits or '-'"),
        Shown("the application's name"),
    ] = None
    port: Annotated[int, Field(ge=1, le=65535, description="1-65535; the Service port"), Allowed("use a port 1-65535")] = 80


class ApplicationProbeConfig(Section):
    """What readiness asks each colour through its preview host, and what the answer must be."""

    path: Annotated[str, Field(pattern=_HTTP_PATH, description="the path readiness requests"), Allowed(_HTTP_PATH_ALLOWED)] = "/"
    status: Annotated[
        int, Field(ge=200, le=399, description="200-399; the status the answer must have"), Allowed("use an HTTP status 200-399")
    ] = 200
    expect_json: Annotated[
        Mapping[str, str],
        FROZEN,
        AS_DICT,
        Field(
            description="fields the JSON answer must hold, with these values; `{colour}` and `{image_tag}` are filled with "
            "the colour's, so an answer from another colour or another release fails"
        ),
    ] = Field(default_factory=lambda: frozen_mapping({}))


class ApplicationImageConfig(Section):
    """The application's image in an ECR repository common makes (immutable tags, scanned on push)."""

    repository: Annotated[
        str,
        # ECR's own rule (CreateRepository): 2-256 characters, lowercase parts joined by '._-' and '/'.
        Field(
            pattern=r"^$|^(?=.{2,256}$)[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*$",
            description="the ECR repository's name, under `<project>/`",
        ),
        Allowed("use an ECR repository name: lowercase, digits, '._-' and '/' between parts"),
        Shown("`<project>/<name>`"),
    ] = ""
    tag: Annotated[
        str,
        Field(
            pattern=IMAGE_TAG,
            description="the tag colours run unless their entry names one (`clusters.<colour>.applications.<name>.image_tag`"
            "); synth warns while a colour runs the default",
        ),
        Allowed(IMAGE_TAG_ALLOWED),
    ] = DEFAULT_IMAGE_TAG
    buildspec: Annotated[
        str,
        Field(
            pattern=r"^$|^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$",
            description="a CodeBuild buildspec in the source repository; with `image.build_connection_arn` set, common "
            "makes a CodeBuild project that builds the image and pushes it here",
        ),
        Allowed("name the buildspec file in the repository, relative, e.g. 'app/buildspec.yml'"),
        Shown('`""` (no build)'),
    ] = ""


class ApplicationConfig(Section):
    """One of the team's applications: every colour runs it from its own release, behind the shared load balancer."""

    model_config = ConfigDict(json_schema_extra={"required": ["host", "source"]})

    host: Annotated[
        str,
        Field(
            pattern=f"^{LABEL}$",
            description="one DNS label (required): the application answers at `<host>.<sub-zone>`, and each colour at its "
            "preview host `<host>-<colour>.<sub-zone>`",
        ),
        Allowed(LABEL_ALLOWED),
        Shown("(required)"),
    ] = ""
    source: ApplicationSourceConfig = Field(default_factory=ApplicationSourceConfig)
    description: Annotated[
        str,
        Field(
            max_length=200,
            description="what it is, in a few words: its role's and policy's description (a policy's cannot change "
            "without replacing it)",
        ),
        Allowed("use at most 200 characters"),
        Shown("`the application <name>`"),
    ] = ""
    namespace: Annotated[
        str | None,
        Field(pattern=_K8S_NAME, description="where it runs; not a namespace of the platform"),
        Allowed(_NAMESPACE_ALLOWED),
        Shown("the application's name"),
    ] = None
    service_account: Annotated[
        str | None,
        Field(pattern=_K8S_NAME, description="the ServiceAccount its pods run as (bound to its role with `policy`)"),
        Allowed("use a Kubernetes ServiceAccount name: lowercase letters, digits or '-'"),
        Shown("the application's name"),
    ] = None
    policy: Annotated[
        str,
        Field(
            pattern=r"^$|" + _RELATIVE + r"[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*\.json$",
            description="an IAM policy document in this project (a path relative to it); set, common makes the shared "
            "Pod Identity role `<project>-<name>` with it, trusted by this namespace and service account only. "
            "`{{TABLE_ARN}}`, `{{PARTITION}}`, `{{REGION}}`, `{{ACCOUNT_ID}}` are filled at synth",
        ),
        Allowed("name a .json file in the project, relative, without '..', e.g. 'argocd/applications/orders/policy.json'"),
        Shown('`""` (no AWS permissions)'),
    ] = ""
    service: ApplicationServiceConfig = Field(default_factory=ApplicationServiceConfig)
    health_check_path: Annotated[
        str,
        Field(pattern=_HTTP_PATH, description="the load balancer's health check of each pod"),
        Allowed(_HTTP_PATH_ALLOWED),
    ] = "/"
    probe: ApplicationProbeConfig = Field(default_factory=ApplicationProbeConfig)
    image: ApplicationImageConfig | None = Field(
        default=None, description="set: common makes its ECR repository, and its chart is handed the image (`blueGreen.image`)"
    )
    wave: Annotated[
        int,
        Field(ge=1, le=50, description="1-50; its sync wave (applications start after the platform's controllers)"),
        Allowed("use a sync wave 1-50"),
    ] = 1
    min_requests: Annotated[
        int | None,
        Field(
            ge=0,
            description="0 or more; requests a shift window must show for this application, or it is reported idle (0: "
            "always judged; a window in which no application had a request is still no evidence)",
        ),
        Allowed("use 0 or more requests"),
        Shown("`traffic.shift.min_requests`"),
    ] = None
    values: Annotated[
        Mapping[str, Any],
        FROZEN,
        AS_DICT,
        Field(description="values for its chart, as a JSON object; the platform adds `blueGreen` (the colour's facts)"),
    ] = Field(default_factory=lambda: frozen_mapping({}))
    group: Annotated[
        str,
        Field(
            pattern=f"^{LABEL}$",
            description="its Argo CD project (AppProject): the applications of one group share one, limited to their source "
            "repositories and namespaces; not `platform` or `default`",
        ),
        Allowed("use one DNS label: lowercase letters, digits, '-'"),
    ] = DEFAULT_APPLICATION_GROUP
    analysis: Annotated[
        AnalysisConfig | None,
        Field(
            description="this application's own analysis of a shift's windows: each key it sets replaces "
            "`traffic.shift.analysis`'s (a list whole, so `[]` drops a default)"
        ),
        Shown("`traffic.shift.analysis`"),
    ] = None


@dataclass(frozen=True)
class Application:
    """One entry of `applications`: its name and its settings, with what derives from the name (no setting copied)."""

    name: str  # the child Application, its Helm release, its role `<project>-<name>`, its target groups' tag
    config: ApplicationConfig

    @property
    def key(self) -> str:
        """Its part of output and setting names (`<key>_role_arn`)."""
        return self.name.replace("-", "_")

    @property
    def description(self) -> str:
        return self.config.description or f"the application {self.name}"

    @property
    def namespace(self) -> str:
        return self.config.namespace or self.name

    @property
    def service_account(self) -> str:
        return self.config.service_account or self.name

    @property
    def service_name(self) -> str:
        """The Service its chart makes, which the colour's TargetGroupBinding names."""
        return self.config.service.name or self.name

    @property
    def policy_file(self) -> Path | None:
        return PROJECT_DIR / self.config.policy if self.config.policy else None

    @property
    def image_output(self) -> str:
        """Common's output with its ECR repository's URL (an application with `image`)."""
        return f"{self.key}_image_repository_url"

    @property
    def from_this_repository(self) -> bool:
        """Its chart is of this repository (no `source.repo_url`), at each colour's gitops_revision."""
        return self.config.source.repo_url is None

    @property
    def workload(self) -> Workload | None:
        """With a `policy`: a role of its own in common, trusted by its namespace and service account."""
        if self.policy_file is None:
            return None
        return Workload(self.name, self.namespace, self.service_account, self.description, self.policy_file)


def applications(config: "Config") -> tuple[Application, ...]:
    """Every application, in the order the configuration lists them."""
    return tuple(Application(name, app) for name, app in config.applications.items())


def application(config: "Config", name: str) -> Application:
    return Application(name, config.applications[name])


def public_hostname(config: "Config", app: Application) -> str:
    """Where its users reach it, whichever colour serves: the shared load balancer splits it by the live weights."""
    return f"{app.config.host}.{config.dns.zone_name}"


def preview_hostname(config: "Config", app: Application, colour: str) -> str:
    """The colour's own host of the application, beside the public one: the shared load balancer sends it to that
    colour only, at any weight (readiness, smoke tests, a browser). One label (`app-green`), so the sub-zone's
    wildcard certificate covers it."""
    return f"{app.config.host}-{colour}.{config.dns.zone_name}"


def image_repository_name(config: "Config", app: Application) -> str:
    """The ECR repository common makes for it (an application with `image`)."""
    assert app.config.image is not None
    return app.config.image.repository or f"{config.project}/{app.name}"


def application_workloads(config: "Config") -> tuple[Workload, ...]:
    """The applications with a `policy`: each gets a role of its own, trusted by its namespace and service account."""
    return tuple(app.workload for app in applications(config) if app.workload is not None)


def shared_roles(config: "Config") -> tuple[Workload, ...]:
    """Common's Pod Identity roles: one per workload, the platform's and the applications', shared by every colour."""
    return (*WORKLOADS, *application_workloads(config), *ADDON_ROLES)
