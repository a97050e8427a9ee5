"""The `clusters` section: one entry per colour, its own EKS cluster (version, nodes, add-ons) and its share of the
traffic, and the rules of each colour's entry. What a colour runs on top of its cluster, its release, is
model/config/platform_release.py's."""

import datetime as dt
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import ConfigDict, Field

from model.config.checks import check, minor
from model.config.fields import (
    AS_DICT,
    COLOUR,
    COMMON_STACK,
    FROZEN,
    IMAGE_TAG,
    IMAGE_TAG_ALLOWED,
    MAX_WEIGHT,
    REVISION,
    REVISION_ALLOWED,
    Section,
    Shown,
)
from model.config.platform_release import ColourPlatformConfig, platform_rules, serving_release_rules
from model.eks_addons import ADDONS, MINIMUM_VERSIONS, minimum_reason, oldest
from model.eks_calendar import CALENDAR, CALENDAR_NAME, WARN_DAYS
from model.problems import Allowed, Problems, frozen_mapping
from model.routes import TRAFFIC_STACK

if TYPE_CHECKING:
    from model.config.project import Config


# The Kubernetes versions EKS offers: the rows of the EKS calendar (model/eks_calendar.yaml). A new minor
# version is a row there; a typo such as "1.3" or "1.340" fails at synth.
SUPPORTED_KUBERNETES_VERSIONS = CALENDAR.supported
# EKS's upgrade policy of a cluster (UpgradePolicyRequest.supportType).
SupportType = Literal["STANDARD", "EXTENDED"]
_VERSIONS = ", ".join(f"`{version}`" for version in SUPPORTED_KUBERNETES_VERSIONS)
# An EKS-optimized AMI release (what DescribeNodegroup calls releaseVersion, and the SSM public parameter
# /aws/service/eks/optimized-ami/<k8s>/amazon-linux-2023/<arch>/standard/recommended/release_version holds): the
# Kubernetes patch version and the build date, e.g. 1.14.9-20201007 (AWS Systems Manager User Guide, "Calling the EKS
# optimized AMI public parameter in Parameter Store").
NODE_RELEASE_PATTERN = r"^\d+\.\d+\.\d+-\d{8}$"
AddonName = Annotated[Literal[ADDONS], Allowed(f"unknown add-on; use one of {', '.join(ADDONS)}")]  # type: ignore[valid-type]
AddonVersion = Annotated[
    str, Field(pattern=r"^v\d+\.\d+\.\d+-eksbuild\.\d+$"), Allowed("use an EKS add-on version such as 'v1.19.2-eksbuild.1'")
]

_VERSION = re.compile(r"^1\.\d{2}$")
_COLOUR_RULE = (
    "a colour is a stack name and DNS label: 1-20 lowercase letters, digits or '-', starting with a letter, not "
    f"'{COMMON_STACK}' or '{TRAFFIC_STACK}'"
)


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


class ColourApplicationConfig(Section):
    """What one colour runs of one application: its own release of it."""

    revision: Annotated[
        Annotated[str, Field(pattern=REVISION)] | None,
        Field(
            description="the Git revision of an application from another repository (`source.repo_url`); an application "
            "of this repository follows the colour's `gitops_revision`"
        ),
        Allowed(REVISION_ALLOWED),
        Shown("`applications.<name>.source.revision`"),
    ] = None
    image_tag: Annotated[
        Annotated[str, Field(pattern=IMAGE_TAG)] | None,
        Field(description="the tag of the application's image this colour runs (an application with `image`)"),
        Allowed(IMAGE_TAG_ALLOWED),
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
    ] = ""  # required (cluster_rules below): no version is a sensible default for a new colour
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
        Annotated[str, Field(pattern=REVISION)] | None,
        Field(description="the Git revision this colour's App of Apps and this repository's charts follow"),
        Allowed(REVISION_ALLOWED),
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
    support_type: Annotated[
        SupportType,
        Field(
            description="`EXTENDED` (AWS's default): past the end of standard support the cluster stays on its version at "
            "the extended rate until you replace the colour; `STANDARD`: no extended rate, but AWS upgrades the control "
            "plane in place at the end of standard support (the cluster's `upgrade_policy`; docs/upgrade-runbook.md)"
        ),
        Allowed("use STANDARD or EXTENDED"),
    ] = "EXTENDED"


def cluster_rules(c: "Config", p: Problems) -> None:
    check(
        p,
        "clusters",
        dict(c.clusters),
        bool(c.clusters),
        'name at least one colour, e.g. {"blue": {"kubernetes_version": "1.35", "weight": 100}}',
    )
    for colour, cluster in c.clusters.items():
        key = f"clusters.{colour}"
        check(p, key, colour, bool(COLOUR.match(colour)), _COLOUR_RULE)
        _version_rules(p, key, cluster.kubernetes_version)
        # A release is judged against the colour's version only when that version itself stands.
        version_known = not p.is_bad(f"{key}.kubernetes_version")
        _node_rules(p, f"{key}.nodes", cluster.nodes, cluster.kubernetes_version if version_known else None)
        _addon_rules(p, f"{key}.addon_versions", cluster.addon_versions)
        platform_rules(c, p, colour)
        serving_release_rules(c, p, colour)
    weights_known = not any(p.is_bad(f"clusters.{colour}.weight") for colour in c.clusters)
    all_zero = bool(c.clusters) and all(cluster.weight == 0 for cluster in c.clusters.values())
    if weights_known:
        check(
            p,
            "clusters.*.weight",
            c.weights,
            not all_zero,
            "at least one colour needs a weight above 0 (the shared load balancer starts at these weights: all 0 would "
            "send no request anywhere)",
        )


def _version_rules(p: Problems, key: str, version: str) -> None:
    """One of the versions EKS offers (the calendar's rows). Two colours may share one: a platform-only or a
    cluster-replacing rebuild is a new colour on the same version."""
    key = f"{key}.kubernetes_version"
    allowed = f"use one of {', '.join(SUPPORTED_KUBERNETES_VERSIONS)}"
    check(p, key, version, bool(version), f"required for every colour; {allowed}")
    check(p, key, version, bool(_VERSION.match(version)), f"use the form '1.NN'; {allowed}")
    check(
        p,
        key,
        version,
        version in SUPPORTED_KUBERNETES_VERSIONS,
        f"not in the EKS calendar ({CALENDAR_NAME}); {allowed}. A version EKS has started to offer is a row there "
        "plus rows in the compatibility table (argocd/apps/platform/*/component.yaml)",
    )


def _addon_rules(p: Problems, key: str, pins: Mapping[str, str]) -> None:
    """A pinned add-on is at least the version that works with what the project gives it (MINIMUM_VERSIONS)."""
    for name, version in pins.items():
        minimum = MINIMUM_VERSIONS.get(name)
        if minimum is None or p.is_bad(f"{key}.{name}"):
            continue
        check(
            p,
            f"{key}.{name}",
            version,
            minor(version)[:3] >= minimum,
            f"use {oldest(name)} or newer: {minimum_reason(name)} (`python -m tools.patch <colour>` lists the versions "
            "EKS offers)",
        )


def _node_rules(p: Problems, key: str, nodes: NodeGroupConfig, kubernetes_version: str | None) -> None:
    """kubernetes_version: the colour's; None when it is refused itself (its release is then not judged)."""
    release = nodes.release_version
    if release is not None and kubernetes_version is not None:
        # EKS refuses a release of another minor than the group's version (UpdateNodegroupVersion: the AMI release must
        # match the Kubernetes version); said at synth, naming the key, not at apply after the control plane moved.
        check(
            p,
            f"{key}.release_version",
            release,
            release.startswith(f"{kubernetes_version}."),
            f"use an EKS-optimized AMI release of Kubernetes {kubernetes_version} (the colour's kubernetes_version), "
            f"'{kubernetes_version}.<patch>-<YYYYMMDD>': `python -m tools.patch <colour>` lists the newest",
        )
    if p.is_bad(f"{key}.max_size"):
        return  # the sizes below are judged against max_size
    check(p, f"{key}.min_size", nodes.min_size, 0 <= nodes.min_size <= nodes.max_size, f"use 0-{nodes.max_size} (max_size)")
    if not p.is_bad(f"{key}.min_size"):
        desired_ok = nodes.min_size <= nodes.desired_size <= nodes.max_size
        check(
            p, f"{key}.desired_size", nodes.desired_size, desired_ok, f"use {nodes.min_size}-{nodes.max_size} (min_size-max_size)"
        )
    unavailable_ok = 1 <= nodes.max_unavailable <= nodes.max_size
    check(p, f"{key}.max_unavailable", nodes.max_unavailable, unavailable_ok, f"use 1-{nodes.max_size} (max_size)")


def calendar_warnings(config: "Config", today: dt.date) -> list[str]:
    """Each colour within WARN_DAYS of, or past, the end of standard support of its version, and what happens
    then; a colour older than the one serving (a new colour should be the upgrade, not a step back)."""
    warnings = []
    for colour, cluster in config.clusters.items():
        found = CALENDAR.find(cluster.kubernetes_version)
        if found is None:
            continue  # refused by the rules already
        days = found.days_to_standard_end(today)
        if days > WARN_DAYS:
            continue
        end = found.end_of_standard_support.isoformat()
        if cluster.support_type == "EXTENDED":
            then = (
                f"the control plane is billed at the extended rate (${CALENDAR.price_per_hour.extended:.2f}/h instead of "
                f"${CALENDAR.price_per_hour.standard:.2f}/h) until {found.end_of_extended_support.isoformat()}"
            )
        else:
            then = "support_type is STANDARD: AWS upgrades its control plane in place to the next version"
        when = f"ends on {end}, in {days} days" if days > 0 else f"ended on {end}, {-days} days ago"
        warnings.append(
            f"clusters.{colour}: Kubernetes {found.version}'s EKS standard support {when}; from then {then}. Build the "
            f"next colour on a newer version (`python -m tools.calendar`, {CALENDAR_NAME})"
        )
    serving = [c for c in config.clusters.values() if c.weight > 0]
    if serving:
        newest_serving = max((c.kubernetes_version for c in serving), key=minor)
        for colour, cluster in config.clusters.items():
            if cluster.weight == 0 and minor(cluster.kubernetes_version) < minor(newest_serving):
                warnings.append(
                    f"clusters.{colour} runs Kubernetes {cluster.kubernetes_version}, older than the {newest_serving} "
                    "that serves now: shifting to it would be a downgrade"
                )
    return warnings
