"""The whole configuration, `Config`: the project's own settings (its name, region, tags, the table, the image builds'
connection, where the state lives) and one setting per section, with the names derived from it (each colour's cluster).

Blue and green differ only in the data below. Every setting has a default that synthesizes without an AWS account.
Types, ranges, choices, patterns and unknown keys are the models' (the JSON Schema in config.schema.json and
docs/configuration.md are generated from them, `make docs`); rules that relate settings to each other are beside
each section's models (model/config/), gathered by model/rules.py. Each setting's `description` is its documentation.
"""

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from model.config.applications import APPLICATION_PATTERN, ApplicationConfig
from model.config.argocd import ArgoCdConfig
from model.config.checks import check
from model.config.clusters import ClusterConfig, ColourApplicationConfig
from model.config.dns import DnsConfig
from model.config.eks import EksConfig
from model.config.fields import AS_DICT, COLOUR_PATTERN, FROZEN, REGION_ALLOWED, REGION_PATTERN, Section, Shown
from model.config.gitops import GitOpsConfig
from model.config.platform_release import ApplicationRelease, ColourPlatformConfig, ColourRelease, PlatformConfig
from model.config.traffic_settings import TrafficConfig
from model.config.vpc import NetworkConfig
from model.problems import Allowed, Problems, frozen_mapping
from model.tags import MANAGED_BY_TAG, PROJECT_TAG, STACK_TAG

# The default tags are the project's own: the guards find its running table, zone and target groups by them
# (components/stack_tagged.py), so a configured `Project` or `Stack` would hide them (and let a replacement through).
_DEFAULT_TAG_KEYS = (PROJECT_TAG, STACK_TAG, MANAGED_BY_TAG)
_TAG_TEXT = (
    f"tag keys are 1-128 characters, may not start with 'aws:' and are not the default tags' "
    f"({', '.join(_DEFAULT_TAG_KEYS)}); values at most 256"
)

_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_REGION = re.compile(REGION_PATTERN)


def _tag_keys_in_schema(schema: dict[str, Any]) -> None:
    """pydantic writes a key pattern as patternProperties, which lets other keys through: a key rule it is."""
    ((pattern, values),) = schema.pop("patternProperties").items()
    schema["propertyNames"]["pattern"] = pattern
    schema["additionalProperties"] = values


TagKey = Annotated[
    str,
    Field(min_length=1, max_length=128, pattern=rf"^(?![aA][wW][sS]:)(?!({'|'.join(_DEFAULT_TAG_KEYS)})$)"),
    Allowed(_TAG_TEXT),
]
TagValue = Annotated[str, Field(max_length=256), Allowed(_TAG_TEXT)]


# The partition key (a string) of common's table (an application's policy may grant reading it: `{{TABLE_ARN}}`).
TABLE_KEY = "UserId"


class TableConfig(Section):
    name: Annotated[
        str,
        Field(pattern=r"^$|^[A-Za-z0-9_.-]{3,255}$", description="3-255 of `A-Z a-z 0-9 _ . -`"),
        Allowed("use 3-255 of A-Z a-z 0-9 _ . -"),
        Shown("`<project>-users`"),
    ] = ""
    deletion_protection: Annotated[
        bool,
        Field(description="the former name of `deletion_protection`, still read (set both only to the same value)"),
    ] = True


class ImageConfig(Section):
    """The project's connection to its Git host, for the image builds of applications that ask for one."""

    build_connection_arn: Annotated[
        str,
        Field(
            pattern=r"^$|^arn:aws[a-z-]*:(codeconnections|codestar-connections):[a-z0-9-]+:\d{12}:connection/[0-9a-f-]{36}$",
            description="a CodeConnections / CodeStar connection ARN to your Git host; common then builds the image of "
            "each application with `image.buildspec` with CodeBuild (from its source repository, an `https://` URL)",
        ),
        Allowed("use a CodeConnections connection ARN (arn:aws:codeconnections:...)"),
        Shown('`""` (no build project)'),
    ] = ""
    build_source_type: Annotated[
        Literal["GITHUB", "GITLAB", "BITBUCKET"],
        Field(description="`GITHUB`, `GITLAB` or `BITBUCKET`: the Git host of the applications' source repositories"),
    ] = "GITHUB"


class StateConfig(Section):
    backend: Annotated[Literal["local", "s3"], Field(description="`local` or `s3`")] = "local"
    directory: Annotated[str, Field(description="local: directory of `<stack>.tfstate` files, relative to `cdktf.json`")] = (
        "terraform-state"
    )
    bucket: Annotated[str, Field(description="s3: an existing bucket; required with `backend: s3`"), Shown("(none)")] = ""
    region: Annotated[str, Field(description="s3: the bucket's region"), Shown("the project's `region`")] = ""
    key_prefix: Annotated[str, Field(description="s3: keys are `<key_prefix>/<stack>.tfstate`"), Shown("`<project>`")] = ""
    encrypt: Annotated[bool, Field(description="s3: server-side encryption of the state objects")] = True

    def key(self, stack: str) -> str:
        """s3: the object holding one stack's state."""
        return f"{self.key_prefix}/{stack}.tfstate" if self.key_prefix else f"{stack}.tfstate"

    def file(self, stack: str) -> Path:
        """local: the file holding one stack's state."""
        return Path(self.directory) / f"{stack}.tfstate"


def _default_clusters() -> Mapping[str, ClusterConfig]:
    # blue serves beside green, so it names its whole release (model/config/platform_release.py): the defaults of
    # today, written down
    serving_release = ColourPlatformConfig(**PlatformConfig().model_dump())
    return frozen_mapping(
        {
            "blue": ClusterConfig(
                kubernetes_version="1.35",
                weight=100,
                platform=serving_release,
                gitops_revision=GitOpsConfig.model_fields["revision"].default,
            ),
            "green": ClusterConfig(kubernetes_version="1.36", weight=0),
        }
    )


class Config(Section):
    project: Annotated[
        str,
        Field(
            pattern=r"^[a-z]([a-z0-9-]{1,18}[a-z0-9])$",
            description="3-20 lowercase letters, digits, `-`; prefix of every name created",
        ),
        Allowed("use 3-20 lowercase letters, digits or '-', starting with a letter"),
    ] = "eks-bg"
    region: Annotated[str, Field(pattern=REGION_PATTERN, description="an AWS region code"), Allowed(REGION_ALLOWED)] = (
        "ap-northeast-1"
    )
    deletion_protection: Annotated[
        bool,
        Field(
            description="protects what common keeps that no deploy re-creates: the table (DynamoDB deletion protection) and "
            "the image repository (never deleted with images in it). While on, `cdktf destroy common` stops before "
            "deleting anything"
        ),
    ] = True
    tags: Annotated[
        Mapping[TagKey, TagValue],
        FROZEN,
        AS_DICT,
        Field(
            description="string to string; added to the default tags `Project`, `Stack`, `ManagedBy` "
            "(keys may not start with `aws:` nor be one of those three)",
            json_schema_extra=_tag_keys_in_schema,
        ),
    ] = Field(default_factory=lambda: frozen_mapping({}))
    network: NetworkConfig = Field(default_factory=NetworkConfig)
    dns: DnsConfig = Field(default_factory=DnsConfig)
    eks: EksConfig = Field(default_factory=EksConfig)
    platform: PlatformConfig = Field(default_factory=PlatformConfig)
    gitops: GitOpsConfig = Field(default_factory=GitOpsConfig)
    traffic: TrafficConfig = Field(default_factory=TrafficConfig)
    table: TableConfig = Field(default_factory=TableConfig)
    image: ImageConfig = Field(default_factory=ImageConfig)
    applications: Annotated[
        Mapping[str, ApplicationConfig],
        FROZEN,
        AS_DICT,
        Field(
            description="application name -> application: what every colour runs behind the shared load balancer; the name "
            "is a DNS label of at most 32 characters, not a platform component's (docs/applications.md)",
            json_schema_extra={"propertyNames": {"pattern": APPLICATION_PATTERN}},
        ),
        Shown("`{}` (none)"),
    ] = Field(default_factory=lambda: frozen_mapping({}))
    argocd: ArgoCdConfig = Field(default_factory=ArgoCdConfig)
    state: StateConfig = Field(default_factory=StateConfig)
    clusters: Annotated[
        Mapping[str, ClusterConfig],
        FROZEN,
        AS_DICT,
        Field(
            description="colour name -> cluster; a colour is a stack name and DNS label (1-20 of `a-z 0-9 -`, not `common` or "
            "`traffic`)",
            json_schema_extra={"propertyNames": {"pattern": COLOUR_PATTERN}},
        ),
        Shown(
            "`blue` (1.35, weight 100, naming its whole release: today's `platform` defaults, `main`), "
            "`green` (1.36, weight 0, inheriting)"
        ),
    ] = Field(default_factory=_default_clusters)

    @property
    def weights(self) -> dict[str, int]:
        """Each colour's weight as the config declares it, in config order."""
        return {colour: cluster.weight for colour, cluster in self.clusters.items()}

    def release(self, colour: str) -> ColourRelease:
        """What a colour runs on top of its cluster: the project's defaults, with its own overrides applied."""
        cluster = self.clusters[colour]
        revision = cluster.gitops_revision if cluster.gitops_revision is not None else self.gitops.revision
        return ColourRelease(
            platform=self.platform.model_copy(update=cluster.platform.model_dump(exclude_none=True)),
            gitops_revision=revision,
            applications={name: self._application_release(cluster, name, revision) for name in self.applications},
        )

    def _application_release(self, cluster: ClusterConfig, name: str, gitops_revision: str) -> ApplicationRelease:
        application, own = self.applications[name], cluster.applications.get(name) or ColourApplicationConfig()
        if application.source.repo_url is None:
            revision: str | None = gitops_revision  # this repository: at the colour's revision, like argocd/apps
        else:
            revision = own.revision if own.revision is not None else application.source.revision
        tag = None
        if application.image is not None:
            tag = own.image_tag if own.image_tag is not None else application.image.tag
        return ApplicationRelease(revision=revision, image_tag=tag)


def cluster_name(config: "Config", colour: str) -> str:
    """The EKS cluster of a colour; also its ExternalDNS owner id and its load balancers' cluster tag."""
    return f"{config.project}-{colour}"


def cluster_names(config: "Config") -> str:
    """Every colour's cluster name, present and future, as an IAM StringLike pattern: what the shared Pod Identity
    roles trust (`aws:RequestTag/eks-cluster-name`), so a new colour never edits a trust policy."""
    return cluster_name(config, "*")


def state_rules(c: "Config", p: Problems) -> None:
    s = c.state
    if s.backend == "local":
        check(p, "state.directory", s.directory, bool(s.directory.strip()), "name a directory for the local state files")
        return
    check(p, "state.bucket", s.bucket, bool(_BUCKET.match(s.bucket)), "the s3 backend needs an existing S3 bucket name")
    check(p, "state.region", s.region, bool(_REGION.match(s.region)), REGION_ALLOWED)
    prefix_ok = not s.key_prefix.startswith("/") and not s.key_prefix.endswith("/")
    check(p, "state.key_prefix", s.key_prefix, prefix_ok, "use a key prefix without a leading or trailing '/'")
