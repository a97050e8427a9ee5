"""The one typed configuration, read from `cdktf.json` -> `context.config` (model/loading.py).

Blue and green differ only in the data below. Every setting has a default that synthesizes
without an AWS account. Types, ranges, choices, patterns and unknown keys are the models' (the
JSON Schema in config.schema.json and docs/configuration.md are generated from them,
`make docs`); rules that relate settings to each other are in model/rules.py. Each setting's
`description` is its documentation.
"""

# No `from __future__ import annotations`: pydantic reads these annotations as objects, with their metadata.
import ipaddress
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WrapSerializer, create_model

from model.eks_addons import ADDONS, MINIMUM_VERSIONS, oldest
from model.eks_calendar import CALENDAR
from model.platform import VERSIONED, Component
from model.problems import Allowed, frozen_mapping
from model.routes import TRAFFIC_STACK
from model.tags import MANAGED_BY_TAG, PROJECT_TAG, STACK_TAG

# The Kubernetes versions EKS offers: the rows of the EKS calendar (model/eks_calendar.yaml). A new minor
# version is a row there; a typo such as "1.3" or "1.340" fails at synth.
SUPPORTED_KUBERNETES_VERSIONS = CALENDAR.supported
# EKS's upgrade policy of a cluster (UpgradePolicyRequest.supportType).
SupportType = Literal["STANDARD", "EXTENDED"]
# Values CloudWatch Logs accepts for retention_in_days.
LogRetentionDays = Literal[
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653
]
# The common stack's id; a colour may not take it (nor the traffic stack's).
COMMON_STACK = "common"
# Smallest subnet: with the VPC CNI every pod takes an address from its node's private subnet.
MIN_SUBNET_PREFIX = 24
MAX_WEIGHT = 255  # Route53 weighted records accept 0-255 (an ALB's weighted forward 0-999): the smaller range.
# An application's name: a child Application, a Helm release, a role `<project>-<name>` and an output key, so one
# DNS label, short enough for the role name (64) and the load balancer's names with the project and a colour.
APPLICATION_PATTERN = r"^[a-z]([a-z0-9-]{0,30}[a-z0-9])?$"
# ALB metrics arrive in 60 s periods: a shorter shift window can hold no complete period.
MIN_SHIFT_INTERVAL_SECONDS = 60
MAX_SHIFT_INTERVAL_SECONDS = 3600  # an hour per step: longer, and a window is no longer the step's own
# A colour is a stack name and a DNS label (model/rules.py checks it; the JSON Schema shows it).
COLOUR_PATTERN = rf"^(?!({COMMON_STACK}|{TRAFFIC_STACK})$)[a-z]([a-z0-9-]{{0,18}}[a-z0-9])?$"
# Zone IDs where EKS does not place control planes: a cluster subnet there fails with
# UnsupportedAvailabilityZoneException. AWS, Amazon EKS User Guide, "VPC and subnet requirements"
# (use1-az3, usw1-az2, cac1-az3); eksctl's deny-list adds cnn1-az4 (pkg/az). Zone IDs, not names:
# names are shuffled per account, IDs are the same everywhere.
EKS_UNSUPPORTED_ZONE_IDS = ("use1-az3", "usw1-az2", "cac1-az3", "cnn1-az4")
# The default Git URL only synthesizes; Argo CD cannot sync it (a warning says so at synth).
PLACEHOLDER_REPO_URL = "https://git.example.com/your-org/eks-blue-green.git"
# The network the shipped configurations let reach the clusters' API: TEST-NET-3 (RFC 5737), for documentation, so
# reachable from nowhere. It only synthesizes: a warning says so at synth until it names the operators' networks.
PLACEHOLDER_API_NETWORK = "203.0.113.0/24"
# Until an image is built and its tag configured, pods cannot pull (a warning says so at synth).
DEFAULT_IMAGE_TAG = "0.1.0"
# The Argo CD project (AppProject) of an application that names no `group`: the team's applications share its
# repositories and namespaces until the team splits them (docs/argocd-access.md).
DEFAULT_APPLICATION_GROUP = "applications"
# Where an operator opens Argo CD: `kubectl port-forward` (README, "First deploy"); the server is not exposed.
DEFAULT_ARGOCD_URL = "https://localhost:8080"

_LABEL = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"
_IMAGE_TAG = r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$"
_IMAGE_TAG_ALLOWED = "use an image tag (letters, digits, '._-')"
_REVISION = r"^\s*\S"
_REVISION_ALLOWED = "name a branch, tag or commit"
REGION_PATTERN = r"^[a-z]{2}(-[a-z]+)+-\d{1,2}$"
REGION_ALLOWED = "use an AWS region code such as 'ap-northeast-1'"
_LABEL_ALLOWED = "use one DNS label: lowercase letters, digits, '-'"
_VERSIONS = ", ".join(f"`{version}`" for version in SUPPORTED_KUBERNETES_VERSIONS)
# The default tags are the project's own: the guards find its running table, zone and target groups by them
# (components/stack_tagged.py), so a configured `Project` or `Stack` would hide them (and let a replacement through).
_DEFAULT_TAG_KEYS = (PROJECT_TAG, STACK_TAG, MANAGED_BY_TAG)
_TAG_TEXT = (
    f"tag keys are 1-128 characters, may not start with 'aws:' and are not the default tags' "
    f"({', '.join(_DEFAULT_TAG_KEYS)}); values at most 256"
)


class Section(BaseModel):
    """Frozen, strict (`"100"` is no integer, `true` no weight), no unknown keys. Patterns run on
    Python's `re`, which has the look-ahead some of them need (pydantic's default engine has none)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, regex_engine="python-re")


class Shown:
    """How the configuration reference shows a default that is derived or long (`<project>-users`)."""

    def __init__(self, text: str) -> None:
        self.text = text


# A mapping setting is read-only once validated, and serializes as the JSON object it came from.
FROZEN = AfterValidator(frozen_mapping)
AS_DICT = WrapSerializer(lambda value, serialize: serialize(dict(value)))


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
# An EKS-optimized AMI release (what DescribeNodegroup calls releaseVersion, and the SSM public parameter
# /aws/service/eks/optimized-ami/<k8s>/amazon-linux-2023/<arch>/standard/recommended/release_version holds): the
# Kubernetes patch version and the build date, e.g. 1.14.9-20201007 (AWS Systems Manager User Guide, "Calling the EKS
# optimized AMI public parameter in Parameter Store").
NODE_RELEASE_PATTERN = r"^\d+\.\d+\.\d+-\d{8}$"
AddonName = Annotated[Literal[ADDONS], Allowed(f"unknown add-on; use one of {', '.join(ADDONS)}")]  # type: ignore[valid-type]
AddonVersion = Annotated[
    str, Field(pattern=r"^v\d+\.\d+\.\d+-eksbuild\.\d+$"), Allowed("use an EKS add-on version such as 'v1.19.2-eksbuild.1'")
]


class NodeGroupConfig(Section):
    """The colour's managed node group."""

    instance_types: Annotated[
        tuple[Annotated[str, Field(pattern=r"^[a-z0-9-]+\.[a-z0-9-]+$")], ...],
        Field(min_length=1, description="one or more EC2 instance types"),
        Allowed("list at least one EC2 instance type such as 'm7i.large'"),
    ] = ("m7i.large",)
    min_size: Annotated[int, Field(description="0 to `max_size`")] = 2
    max_size: Annotated[int, Field(ge=1, description="at least 1"), Allowed("use at least 1")] = 4
    desired_size: Annotated[int, Field(description="`min_size` to `max_size`")] = 2
    capacity_type: Annotated[Literal["ON_DEMAND", "SPOT"], Field(description="`ON_DEMAND` or `SPOT`")] = "ON_DEMAND"
    ami_type: Annotated[
        Literal["AL2023_x86_64_STANDARD", "AL2023_ARM_64_STANDARD"],
        Field(description="`AL2023_x86_64_STANDARD` or `AL2023_ARM_64_STANDARD` (match the instance types)"),
    ] = "AL2023_x86_64_STANDARD"
    disk_size_gib: Annotated[
        int, Field(ge=20, le=16384, description="20-16384; encrypted gp3 root volume"), Allowed("use 20-16384 GiB")
    ] = 50
    max_unavailable: Annotated[int, Field(description="1 to `max_size`; nodes replaced at a time during an update")] = 1
    release_version: Annotated[
        Annotated[str, Field(pattern=NODE_RELEASE_PATTERN)] | None,
        Field(
            description="the EKS-optimized AMI release the nodes run, `<kubernetes version>.<patch>-<YYYYMMDD>` such as "
            "`1.35.0-20251120`, of the colour's `kubernetes_version`; a change rolls the nodes in place "
            "(`python -m tools.patch <colour> --write` writes the newest)"
        ),
        Allowed("use an EKS-optimized AMI release such as '1.35.0-20251120'"),
        Shown("EKS's latest for the version when the group is created"),
    ] = None


def _chart_versions(component: Component) -> Any:
    """The versions of one chart this project supports (its component.yaml), as the type of its setting."""
    return Annotated[
        Literal[component.versions()],
        Allowed(
            f"use a version of the {component.name} chart from the compatibility table "
            f"(argocd/apps/platform/{component.name}/component.yaml): " + ", ".join(component.versions())
        ),
    ]


def _known(component: Component) -> str:
    listed = ", ".join(f"`{v}`" for v in component.versions())
    return f"one of {listed} (compatibility table: argocd/apps/platform/{component.name}/component.yaml)"


def _installer(component: Component) -> str:
    if component.self_managed:
        return f"bootstrapped by Terraform, then managed by Argo CD itself (wave {component.wave})"
    return "installed by Terraform" if component.wave is None else f"installed by Argo CD (wave {component.wave})"


class PlatformBase(Section):
    """A platform release: the versions of the charts that run on a colour's cluster."""

    def version(self, component: Component) -> str:
        return str(getattr(self, component.key))


class ColourPlatformBase(Section):
    """Any of `platform`'s keys, for one colour only: the release that colour rehearses or keeps."""


# One setting per versioned component of the registry (model/platform.py): a new component is a new key.
if TYPE_CHECKING:
    PlatformConfig: TypeAlias = PlatformBase
    ColourPlatformConfig: TypeAlias = ColourPlatformBase
else:
    PlatformConfig = create_model(
        "PlatformConfig",
        __base__=PlatformBase,
        __doc__=PlatformBase.__doc__,
        **{
            c.key: (
                Annotated[
                    _chart_versions(c),
                    Field(description=f"the `{c.name}` chart: {c.title}, {_installer(c)}; " + _known(c)),
                ],
                c.chart.default,
            )
            for c in VERSIONED
        },
    )
    ColourPlatformConfig = create_model(
        "ColourPlatformConfig",
        __base__=ColourPlatformBase,
        __doc__=ColourPlatformBase.__doc__,
        **{
            c.key: (
                Annotated[
                    _chart_versions(c) | None,
                    Field(description=f"this colour's `{c.name}` chart"),
                    Shown(f"`platform.{c.key}`"),
                ],
                None,
            )
            for c in VERSIONED
        },
    )


class ColourApplicationConfig(Section):
    """What one colour runs of one application: its own release of it."""

    revision: Annotated[
        Annotated[str, Field(pattern=_REVISION)] | None,
        Field(
            description="the Git revision of an application from another repository (`source.repo_url`); an application "
            "of this repository follows the colour's `gitops_revision`"
        ),
        Allowed(_REVISION_ALLOWED),
        Shown("`applications.<name>.source.revision`"),
    ] = None
    image_tag: Annotated[
        Annotated[str, Field(pattern=_IMAGE_TAG)] | None,
        Field(description="the tag of the application's image this colour runs (an application with `image`)"),
        Allowed(_IMAGE_TAG_ALLOWED),
        Shown("`applications.<name>.image.tag`"),
    ] = None


def _version_in_schema(schema: dict[str, Any]) -> None:
    """For editors: the version is required and one of the supported (the rules say so at synth)."""
    del schema["default"]
    schema["enum"] = list(SUPPORTED_KUBERNETES_VERSIONS)


class ClusterConfig(Section):
    """One colour: its own EKS cluster and its share of the traffic."""

    model_config = ConfigDict(json_schema_extra={"required": ["kubernetes_version"]})

    kubernetes_version: Annotated[
        str,
        Field(
            description=_VERSIONS + " (the EKS calendar, model/eks_calendar.yaml); two colours may run the same version "
            "(a platform-only or cluster-replacing rebuild)",
            json_schema_extra=_version_in_schema,
        ),
        Shown("(required)"),
    ] = ""  # required (model/rules.py): no version is a sensible default for a new colour
    weight: Annotated[
        int,
        Field(
            ge=0,
            le=MAX_WEIGHT,
            description="0-255; the share this colour is declared to serve: the shared load balancer starts at these "
            "weights, then only `python -m tools.shift` moves them (`--status` shows both); a colour with weight names "
            "its whole release. At least one colour above 0",
        ),
        Allowed(f"use an integer 0-{MAX_WEIGHT}"),
    ] = 0  # a new colour receives no traffic until its weight is raised
    nodes: NodeGroupConfig = Field(default_factory=NodeGroupConfig)
    addon_versions: Annotated[
        Mapping[AddonName, AddonVersion],
        FROZEN,
        AS_DICT,
        Field(
            description=f'pins by add-on name: {", ".join(f"`{a}`" for a in ADDONS)}, e.g. `"v1.20.4-eksbuild.2"`; '
            + "; ".join(f"`{a}` {oldest(a)} or newer" for a in MINIMUM_VERSIONS)
            + " (unpinned, EKS's default for the version is read at plan and refused when older)"
        ),
        Shown("`{}` (EKS default for the version)"),
    ] = Field(default_factory=lambda: frozen_mapping({}))
    platform: ColourPlatformConfig = Field(default_factory=ColourPlatformConfig)
    gitops_revision: Annotated[
        Annotated[str, Field(pattern=_REVISION)] | None,
        Field(description="the Git revision this colour's App of Apps and this repository's charts follow"),
        Allowed(_REVISION_ALLOWED),
        Shown("`gitops.revision`"),
    ] = None
    applications: Annotated[
        Mapping[str, ColourApplicationConfig],
        FROZEN,
        AS_DICT,
        Field(
            description="application name -> what this colour runs of it: `revision` (an application from another "
            "repository) and `image_tag`; unset, the application's own defaults (`applications.<name>`)"
        ),
        Shown("`{}`"),
    ] = Field(default_factory=lambda: frozen_mapping({}))
    legacy_application: Annotated[
        Annotated[str, Field(pattern=APPLICATION_PATTERN)] | None,
        Field(
            description="a colour deployed before applications were data, whose `gitops_revision` still predates them: "
            "the one application it runs (an `applications` entry of this repository with an image); it keeps its own "
            "load balancer and ExternalDNS records weighted by `weight`, and Terraform binds its pods into the shared "
            "load balancer too (docs/upgrading.md: moving to the shared load balancer)"
        ),
        Allowed("name an application of `applications`"),
        Shown("(none)"),
    ] = None
    support_type: Annotated[
        SupportType,
        Field(
            description="`EXTENDED` (AWS's default): past the end of standard support the cluster stays on its version at "
            "the extended rate until you replace the colour; `STANDARD`: no extended rate, but AWS upgrades the control "
            "plane in place at the end of standard support (the cluster's `upgrade_policy`; docs/upgrade-runbook.md)"
        ),
        Allowed("use STANDARD or EXTENDED"),
    ] = "EXTENDED"


# The AWS services `network.interface_endpoints` may reach through an interface endpoint in the private subnets, by the
# last part of their endpoint service name `com.amazonaws.<region>.<name>` (AWS, Amazon EKS User Guide, "Private cluster
# requirements": the endpoints a cluster without internet access needs): ECR's API and its image layers (`ecr.dkr`; the
# layers themselves come from S3, through the gateway endpoint), STS, and EKS Auth, where the Pod Identity agent turns a
# pod's token into its role's credentials (the EKS Auth API's endpoint prefix is `eks-auth`).
INTERFACE_ENDPOINTS = ("ecr.api", "ecr.dkr", "sts", "eks-auth")
InterfaceEndpoint = Annotated[
    Literal[INTERFACE_ENDPOINTS],  # type: ignore[valid-type]
    Allowed(f"unknown interface endpoint; use one of {', '.join(INTERFACE_ENDPOINTS)}"),
]


class NetworkConfig(Section):
    cidr: Annotated[str, Field(description="IPv4 network, /16 to /28, large enough for 2 subnets per AZ of at least /24")] = (
        "10.0.0.0/16"
    )
    az_count: Annotated[int, Field(ge=2, le=6, description="2-6"), Allowed("use 2-6 availability zones")] = 3
    excluded_zone_ids: Annotated[
        tuple[Annotated[str, Field(pattern=r"^[a-z]+[0-9]+-az[0-9]+$")], ...],
        Field(
            description="availability zone IDs (not names) never used; the default leaves out those where EKS offers "
            "no control plane. Fewer usable zones than `network.az_count` fails the plan, naming the zones found"
        ),
        Allowed("use an availability zone ID such as 'use1-az3' (IDs, not names like 'us-east-1a': names differ per account)"),
    ] = EKS_UNSUPPORTED_ZONE_IDS
    nat: Annotated[
        Literal["single", "per_az"],
        Field(
            description="`per_az` for production: one NAT gateway in each AZ, each zone's private subnet routed through its "
            "own, so losing a zone cuts no other zone's outbound calls (ECR pulls, STS, EKS Auth for Pod Identity, the "
            "applications' AWS calls) in either colour. `single` (the default, cheaper: one NAT gateway and address instead "
            "of one per AZ, docs/costs.md) routes every zone through the first zone's gateway: that zone's outage cuts "
            "every colour's outbound traffic at once. The DynamoDB and S3 gateway endpoints carry those services either way"
        ),
    ] = "single"
    interface_endpoints: Annotated[
        tuple[InterfaceEndpoint, ...],
        Field(
            description="interface VPC endpoints in the private subnets, private DNS on, reachable on 443 from the VPC only: "
            f"any of {', '.join(f'`{name}`' for name in INTERFACE_ENDPOINTS)}. Calls to them stay off the NAT gateways (and "
            "work while a zone's NAT gateway is down); each costs an hourly fee per AZ (docs/costs.md). Default none. The "
            "DynamoDB and S3 gateway endpoints are always there (free)"
        ),
    ] = ()
    flow_log_retention_days: Annotated[
        LogRetentionDays, Field(description="a CloudWatch Logs retention value (1, 3, 5, 7, 14, 30, 60, 90, 120, ...)")
    ] = 365


class DnsConfig(Section):
    parent_zone: Annotated[
        str,
        Field(
            pattern=rf"^{_LABEL}(\.{_LABEL})*$",
            description="an existing public hosted zone in the account, lowercase, no trailing dot",
        ),
        Allowed("name an existing public hosted zone such as 'example.com' (lowercase, no trailing dot)"),
    ] = "example.com"
    sub_domain: Annotated[
        str,
        Field(pattern=f"^{_LABEL}$", description="one DNS label; the sub-zone is `<sub_domain>.<parent_zone>`"),
        Allowed(_LABEL_ALLOWED),
    ] = "eks"

    @property
    def zone_name(self) -> str:
        return f"{self.sub_domain}.{self.parent_zone}"


# An IAM role's ARN, of any partition, its path included.
ROLE_ARN = r"^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]{1,512}$"
_ROLE_ARN_ALLOWED = "use an IAM role ARN: arn:aws:iam::<account>:role/<name>"


class EksConfig(Section):
    """Settings every colour's cluster shares."""

    endpoint_public_access: Annotated[
        bool,
        Field(
            description="Terraform's helm and kubernetes providers reach the API through an endpoint, so keep one you can reach"
        ),
    ] = True
    endpoint_private_access: Annotated[bool, Field(description="not both endpoints off")] = True
    public_access_cidrs: Annotated[
        tuple[str, ...],
        Field(
            description="IPv4 networks allowed to reach the public endpoint: those `cdktf deploy` and your operators come "
            "from (offices, VPN, CI runners' egress). Required while `endpoint_public_access` is true, no default; "
            f"`{PLACEHOLDER_API_NETWORK}` (a documentation range, reachable from nowhere) only synthesizes, with a "
            "warning; a list covering the whole internet (`0.0.0.0/0`) synthesizes with a loud warning at every synth. "
            "With `eks.endpoint_private_access: false` each colour also allows common's NAT addresses "
            "(`nat_public_ips`), which its nodes come from"
        ),
        Shown("(required with the public endpoint)"),
    ] = ()
    admin_role_arns: Annotated[
        tuple[Annotated[str, Field(pattern=ROLE_ARN)], ...],
        Field(
            description="IAM role ARNs given `AmazonEKSClusterAdminPolicy` through access entries; the deploying identity "
            "(`eks.deployer_role_arn`) is admin anyway"
        ),
        Allowed(_ROLE_ARN_ALLOWED),
    ] = ()
    deployer_role_arn: Annotated[
        Annotated[str, Field(pattern=ROLE_ARN)] | None,
        Field(
            description="the IAM role that applies the colour stacks (a pipeline's deployer: `python -m policies.pipeline` "
            "prints it): admin of every cluster, the way Terraform's helm and kubernetes providers reach it. Set it when "
            "anyone else plans a colour (the pipeline's plan role, a colleague), or their plan replaces the deployer's "
            "access entry with their own"
        ),
        Allowed(_ROLE_ARN_ALLOWED),
        Shown("whoever runs the apply (one person's setup)"),
    ] = None
    traffic_operator_role_arn: Annotated[
        Annotated[str, Field(pattern=ROLE_ARN)] | None,
        Field(
            description="the IAM role that moves traffic (a pipeline's traffic operator: `python -m policies.pipeline` "
            "prints it): each colour gives it an access entry whose one Kubernetes group may only read Argo CD's "
            "Applications in Argo CD's namespace, what the gated shift's readiness reads, and nothing else (no access "
            "policy, no cluster-wide binding). Not a role of `eks.admin_role_arns` or `eks.deployer_role_arn`: a "
            "principal has one access entry per cluster"
        ),
        Allowed(_ROLE_ARN_ALLOWED),
        Shown("none: no access entry (the gated shift then runs as an admin)"),
    ] = None
    service_ipv4_cidr: Annotated[
        str,
        Field(description="private IPv4 network, /12 to /24, not overlapping `network.cidr`: the clusters' Service addresses"),
    ] = "172.20.0.0/16"
    log_retention_days: Annotated[
        LogRetentionDays, Field(description="a CloudWatch Logs retention value, for control-plane logs")
    ] = 365


# A Git URL, or the prefix of some (a credential's `url`): what Argo CD clones, https, ssh or scp-like.
_GIT_URL = r"^(https://|ssh://|git@)\S+$"
_GIT_URL_ALLOWED = "use a Git URL Argo CD can clone (https://, ssh:// or git@)"
# AWS Secrets Manager, CreateSecret `Name`: 1-512 of ASCII letters, digits and `/_+=.@-`; "Do not end your secret
# name with a hyphen followed by six characters" (the ARN's own suffix is that, so a name like it would be ambiguous).
SECRETS_MANAGER_NAME = r"^(?!.*-.{6}$)[A-Za-z0-9/_+=.@-]{1,512}$"
# A credential's name: its ExternalSecret and the Secret it makes in argocd (`repo-creds-<name>`), one DNS label.
CREDENTIAL_PATTERN = r"^[a-z]([a-z0-9-]{0,38}[a-z0-9])?$"


class GitCredentialConfig(Section):
    """A repository credential template of Argo CD, whose secret lives in AWS Secrets Manager (docs/architecture.md,
    "Private repositories"); only its name is in the configuration, the state and the facts."""

    url: Annotated[
        str,
        Field(
            pattern=_GIT_URL,
            description="the URL prefix of the repositories it opens, as Argo CD matches it "
            "(`https://github.com/my-org/` opens every repository of my-org over https) (required)",
        ),
        Allowed(_GIT_URL_ALLOWED + ", or the prefix of such URLs, e.g. 'https://github.com/my-org/'"),
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
            pattern=_GIT_URL,
            description="the Git URL of this project that Argo CD clones (`https://`, `ssh://` or `git@`); synth warns "
            "while it is the placeholder",
        ),
        Allowed(_GIT_URL_ALLOWED),
        Shown("a placeholder"),
    ] = PLACEHOLDER_REPO_URL
    revision: Annotated[
        str,
        Field(pattern=_REVISION, description="branch, tag or commit Argo CD follows, unless a colour names its own"),
        Allowed(_REVISION_ALLOWED),
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


class ShiftConfig(Section):
    """`python -m tools.shift`: how far each step moves and what the target must show to go on."""

    step: Annotated[
        int,
        Field(ge=1, le=MAX_WEIGHT, description="1-255; weight `python -m tools.shift` moves to the target per step"),
        Allowed(f"use 1-{MAX_WEIGHT} (weight moved per step)"),
    ] = 20
    interval_seconds: Annotated[
        int,
        Field(
            ge=MIN_SHIFT_INTERVAL_SECONDS,
            le=MAX_SHIFT_INTERVAL_SECONDS,
            description="60-3600; how long each step is watched before its metrics are judged",
        ),
        Allowed(f"use {MIN_SHIFT_INTERVAL_SECONDS}-{MAX_SHIFT_INTERVAL_SECONDS} seconds"),
    ] = 300
    max_5xx_ratio: Annotated[
        float,
        Field(
            ge=0,
            le=1,
            description="0-1; per application, (its pods' 5xx + connections they refused) / requests in the target colour's "
            "target group, above which a step rolls back",
        ),
        Allowed("use a ratio 0-1, e.g. 0.01"),
    ] = 0.01
    max_p99_seconds: Annotated[
        float,
        Field(gt=0, le=60, description="above 0, at most 60; `TargetResponseTime` p99 above which a step rolls back"),
        Allowed("use more than 0 and at most 60 seconds"),
    ] = 1.0
    min_requests: Annotated[
        int,
        Field(
            ge=1,
            description="1 or more; an application with fewer requests in the target colour's target group during a "
            "window is idle, not judged (`applications.<name>.min_requests` overrides it); a window in which every "
            "application is idle fails its step: no traffic is no evidence",
        ),
        Allowed("use 1 or more requests (to let a window without traffic pass, set traffic.shift.allow_idle)"),
    ] = 1
    allow_idle: Annotated[
        bool,
        Field(
            description="`true` lets a window with fewer than `min_requests` requests pass (also `--allow-idle`); the "
            "shift's first line and every step say so"
        ),
    ] = False


# AWS managed rule groups a web ACL may name: AWS's own names, `AWSManagedRules` and a word (AWS WAF Developer Guide,
# "AWS Managed Rules rule groups list"). Each costs WCUs; a web ACL holds 1,500 before a higher price applies.
_RULE_GROUP = r"^AWSManagedRules[A-Za-z0-9]{2,100}$"
# Two of AWS's baseline rule groups (WAF Developer Guide, "Baseline rule groups": the core rule set; known bad inputs,
# which carries the Log4j rules) and Amazon's IP reputation list ("IP reputation rule groups"): 700 + 200 + 25 WCUs.
DEFAULT_RULE_GROUPS = (
    "AWSManagedRulesCommonRuleSet",
    "AWSManagedRulesKnownBadInputsRuleSet",
    "AWSManagedRulesAmazonIpReputationList",
)


class WafConfig(Section):
    """An AWS WAF web ACL in front of the shared load balancer, the one every application is reached through."""

    enabled: Annotated[
        bool,
        Field(
            description="`true`: the traffic stack makes a web ACL of AWS managed rule groups, attaches it to the shared "
            "load balancer and logs to `aws-waf-logs-<project>`; leave it off when the organisation attaches its own "
            "(AWS Firewall Manager): a load balancer takes one web ACL"
        ),
    ] = False
    managed_rule_groups: Annotated[
        tuple[Annotated[str, Field(pattern=_RULE_GROUP)], ...],
        Field(description="AWS managed rule groups, at least one, in the order they are evaluated (names as AWS lists them)"),
        Allowed("name AWS managed rule groups as AWS lists them, e.g. 'AWSManagedRulesCommonRuleSet'"),
        Shown("the core rule set, known bad inputs and Amazon's IP reputation list"),
    ] = DEFAULT_RULE_GROUPS
    count_only: Annotated[
        bool,
        Field(
            description="`true`: the rule groups count what they would block and block nothing, to see their effect on "
            "real traffic in the logs first"
        ),
    ] = False
    log_retention_days: Annotated[
        LogRetentionDays, Field(description="a CloudWatch Logs retention value, for the web ACL's request logs")
    ] = 365


class TrafficConfig(Section):
    """How users reach the applications (the shared load balancer's records), how to shift, how to retire."""

    record_weight: Annotated[
        int,
        Field(
            ge=0,
            le=MAX_WEIGHT,
            description="0-255; the weight of the shared load balancer's record of each host among other weighted records "
            "of its name: only while colours deployed before it still have ExternalDNS records (docs/upgrading.md: "
            "moving to the shared load balancer); alone, any weight answers",
        ),
        Allowed(f"use 0-{MAX_WEIGHT}"),
    ] = 1
    record_ttl: Annotated[
        int,
        Field(
            ge=1,
            le=86400,
            description="1-86400 seconds; TTL of the weighted records a colour with `legacy_application` still has its "
            "ExternalDNS write",
        ),
        Allowed("use 1-86400 seconds (small: shifts take effect sooner)"),
    ] = 60
    access_logs_bucket: Annotated[
        str,
        Field(
            pattern=r"^$|^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$",
            description="an S3 bucket of the account's region, encrypted with S3-managed keys, whose policy lets Elastic "
            "Load Balancing deliver logs (often the organisation's log archive): the shared load balancer writes its "
            "access logs there under `<project>-traffic/`; empty: no access logs",
        ),
        Allowed("use an S3 bucket name: 3-63 lowercase letters, digits, '.' or '-'"),
    ] = ""
    sync_interval_seconds: Annotated[
        int,
        Field(ge=10, le=3600, description="10-3600; how often ExternalDNS reconciles Route53"),
        Allowed("use 10-3600 seconds"),
    ] = 60
    stickiness_seconds: Annotated[
        int,
        Field(
            ge=0,
            le=604800,
            description="0-604800; 0: each request is split by the live weights on its own, so one client's requests "
            "reach both colours during a shift; above 0: the weighted forward's target group stickiness (the load "
            "balancer's AWSALBTG cookie) keeps a client on the colour it was first sent to for that long, also after a "
            "step moves weight (a drain moves it at once). Rules take it when made and with every shift or drain",
        ),
        Allowed("use 0 (off) or 1-604800 seconds (7 days)"),
    ] = 0
    preview_cidrs: Annotated[
        tuple[str, ...] | None,
        Field(
            description="IPv4 networks each preview host `<host>-<colour>` answers (a `source-ip` condition on its "
            "listener rules; from elsewhere the load balancer's 404): where readiness runs and the team tests from "
            "(offices, VPN, CI runners' egress). Unset: `eks.public_access_cidrs`, the networks the operators already "
            "named; required when that is empty (a private API endpoint). A list covering the whole internet "
            "(`0.0.0.0/0`) synthesizes with a loud warning. More than 3 networks (after merging adjacent ones) take "
            'a rule per 3 (docs/applications.md, "Preview hosts")'
        ),
        Shown("`eks.public_access_cidrs`"),
    ] = None
    shift: ShiftConfig = Field(default_factory=ShiftConfig)
    waf: WafConfig = Field(default_factory=WafConfig)
    teardown_timeout_seconds: Annotated[
        int,
        Field(
            ge=60,
            le=7200,
            description="60-7200; how long `cdktf destroy <colour>` waits for the colour's apps, load balancer and records to go",
        ),
        Allowed("use 60-7200 seconds"),
    ] = 1200


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
            pattern=_GIT_URL,
            description="the Git URL of the application's own repository; unset: this project's (`gitops.repo_url`), at "
            "each colour's `gitops_revision`",
        ),
        Allowed(_GIT_URL_ALLOWED),
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
        Annotated[str, Field(pattern=_REVISION)] | None,
        Field(
            description="an application from another repository: the revision a colour without weight runs unless its "
            "entry names one (`clusters.<colour>.applications.<name>.revision`; a colour with weight must)"
        ),
        Allowed(_REVISION_ALLOWED),
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
            pattern=_IMAGE_TAG,
            description="the tag colours run unless their entry names one (`clusters.<colour>.applications.<name>.image_tag`"
            "); synth warns while a colour runs the default",
        ),
        Allowed(_IMAGE_TAG_ALLOWED),
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
            pattern=f"^{_LABEL}$",
            description="one DNS label (required): the application answers at `<host>.<sub-zone>`, and each colour at its "
            "preview host `<host>-<colour>.<sub-zone>`",
        ),
        Allowed(_LABEL_ALLOWED),
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
            pattern=f"^{_LABEL}$",
            description="its Argo CD project (AppProject): the applications of one group share one, limited to their source "
            "repositories and namespaces; not `platform` or `default`",
        ),
        Allowed("use one DNS label: lowercase letters, digits, '-'"),
    ] = DEFAULT_APPLICATION_GROUP


# A group of the identity provider, as Argo CD's RBAC (a Casbin CSV line) names it: no comma, quote or line break.
_IDP_GROUP = r"^[^,\"\r\n\s]([^,\"\r\n]*[^,\"\r\n\s])?$"
_IDP_GROUP_ALLOWED = "name a group of the identity provider (no comma, quote, line break, or space at either end)"


# Single sign-on's kinds: Argo CD's own OIDC client, or its bundled Dex with one connector (docs/argocd-access.md).
SsoKind = Literal["oidc", "github", "saml"]
# The fields of each kind beside `kind` and `name` (rules.py refuses a field of another kind).
SSO_FIELDS: dict[str, tuple[str, ...]] = {
    "oidc": ("issuer", "client_id", "client_secret", "requested_scopes", "groups_claim"),
    "github": ("client_id", "client_secret", "orgs", "team_name_field", "hostname"),
    "saml": ("sso_url", "ca_data", "entity_issuer", "groups_attr", "username_attr", "email_attr"),
}
# A GitHub organisation or team name as Dex's github connector matches it (connector/github/github.go, dex v2.45.1,
# `Org.Name`, `Org.Teams`): no comma (the RBAC group `org:team` is a Casbin CSV field), no line break.
_GITHUB_NAME = r"^[^,:\"\r\n\s]([^,:\"\r\n]*[^,:\"\r\n\s])?$"
# A SAML attribute name (an assertion's Attribute Name: a URI or a plain name).
_SAML_ATTR = r"^[A-Za-z0-9_:./-]{1,256}$"
# The base64 of a PEM certificate (Dex reads `caData` as JSON bytes: base64; argo-cd identity-center.md, v3.5.1,
# "base64-encode the entire certificate, including the -----BEGIN CERTIFICATE----- and -----END CERTIFICATE----- stanzas").
_BASE64 = r"^[A-Za-z0-9+/]+={0,2}$"


class ArgoCdSsoConfig(Section):
    """Single sign-on to Argo CD: the organisation's OpenID Connect provider through Argo CD's own OIDC client (`kind`
    `oidc`), or GitHub (OAuth) or IAM Identity Center (SAML 2.0) through Argo CD's bundled Dex."""

    kind: Annotated[
        SsoKind,
        Field(
            description="`oidc`: Argo CD's own OIDC client (`issuer`, `client_id`, `client_secret`); `github`: Dex's "
            "GitHub connector (`client_id`, `client_secret`, `orgs`); `saml`: Dex's SAML connector, e.g. IAM Identity "
            "Center (`sso_url`, `ca_data`). A field of another kind is refused"
        ),
        Allowed("use 'oidc', 'github' or 'saml'"),
    ] = "oidc"

    issuer: Annotated[
        str,
        Field(
            pattern=r"^https://\S+$", description="oidc: the provider's issuer URL (its `/.well-known/openid-configuration` base)"
        ),
        Allowed("use the provider's https:// issuer URL, e.g. 'https://acme.okta.com'"),
        Shown("(required with oidc)"),
    ] = ""
    client_id: Annotated[
        str,
        Field(pattern=r"^\S{1,256}$", description="oidc, github: the client (application) ID the provider gave Argo CD"),
        Allowed("use the client ID of the provider's application (no spaces)"),
        Shown("(required with oidc, github)"),
    ] = ""
    client_secret: Annotated[
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
    ] = ""
    name: Annotated[
        str,
        Field(min_length=1, max_length=64, description="shown on Argo CD's login button"),
        Allowed("use 1-64 characters"),
    ] = "SSO"
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


@dataclass(frozen=True)
class ApplicationRelease:
    """One application as a colour runs it, resolved: the colour's own choices, else the application's defaults."""

    revision: str | None  # None: from another repository, and neither the colour nor the application names one
    image_tag: str | None  # None: the application has no image of ours (`image` unset)


@dataclass(frozen=True)
class ColourRelease:
    """A colour's platform release, resolved: every value set, whether by the colour or by the project."""

    platform: PlatformConfig
    gitops_revision: str
    applications: Mapping[str, ApplicationRelease]


def _default_clusters() -> Mapping[str, ClusterConfig]:
    # blue serves beside green, so it names its whole release (model/rules.py): the defaults of today, written down
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


def cluster_name(config: Config, colour: str) -> str:
    """The EKS cluster of a colour; also its ExternalDNS owner id and its load balancers' cluster tag."""
    return f"{config.project}-{colour}"


def cluster_names(config: Config) -> str:
    """Every colour's cluster name, present and future, as an IAM StringLike pattern: what the shared Pod Identity
    roles trust (`aws:RequestTag/eks-cluster-name`), so a new colour never edits a trust policy."""
    return cluster_name(config, "*")


def subnet_cidrs(network: NetworkConfig) -> tuple[list[str], list[str]]:
    """(public, private) CIDRs, one of each per AZ, carved equally from the VPC CIDR."""
    vpc = ipaddress.IPv4Network(network.cidr)
    blocks = [str(b) for b in vpc.subnets(prefixlen_diff=split_bits(network.az_count))]
    return blocks[: network.az_count], blocks[network.az_count : 2 * network.az_count]


def split_bits(az_count: int) -> int:
    """Prefix bits that carve 2 subnets per AZ out of the VPC CIDR."""
    return math.ceil(math.log2(2 * az_count))
