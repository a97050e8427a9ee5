"""`python -m tools.patch <colour> [--write [--newest]]`: the patches EKS offers a colour, and pins them in the config.

For the colour's Kubernetes version and AMI type: the newest EKS-optimized AMI release (EKS's public SSM parameter)
and, for every managed add-on of model/eks_addons.py, the versions EKS offers (DescribeAddonVersions): EKS's default
for the version and the newest. Prints each beside the config's pin. `--write` pins them into that colour's entry of
the config (`nodes.release_version`, `addon_versions`): EKS's default add-on versions, or with `--newest` the newest;
every other colour and every other byte of the file stay as they are. Then review the diff and deploy the colour
(docs/upgrade-runbook.md, "Patch a colour"). Reads AWS only: exit 0 done, 2 refused (nothing written).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model.config import ClusterConfig
from model.eks_addons import ADDONS
from model.loading import ConfigError, load_config, write_colour
from tools.cli import exit_status

# The architecture in the public parameter's path, by node group AMI type (AWS, Amazon EKS User Guide, "Retrieve
# recommended Amazon Linux AMI IDs": amazon-linux-2023/x86_64/standard, amazon-linux-2023/arm64/standard).
AMI_ARCHITECTURES = {"AL2023_x86_64_STANDARD": "x86_64", "AL2023_ARM_64_STANDARD": "arm64"}
NOT_PINNED = "-"
_ADDON_VERSION = re.compile(r"^v(\d+)\.(\d+)\.(\d+)-eksbuild\.(\d+)$")


class PatchError(Exception):
    """What EKS offers cannot be looked up or pinned; nothing was written."""


def release_parameter(kubernetes_version: str, ami_type: str) -> str:
    """The public SSM parameter holding the recommended (newest) AMI release of a version and AMI type."""
    arch = AMI_ARCHITECTURES[ami_type]
    return f"/aws/service/eks/optimized-ami/{kubernetes_version}/amazon-linux-2023/{arch}/standard/recommended/release_version"


@dataclass(frozen=True)
class Offer:
    """One thing to pin: the config's pin (or NOT_PINNED), EKS's default for the version, and the newest it offers."""

    name: str
    pinned: str
    default: str
    newest: str


def node_release(ssm: Any, cluster: ClusterConfig) -> str:
    name = release_parameter(cluster.kubernetes_version, cluster.nodes.ami_type)
    try:
        return str(ssm.get_parameter(Name=name)["Parameter"]["Value"])
    except ssm.exceptions.ParameterNotFound:
        raise PatchError(
            f"EKS publishes no AMI release for Kubernetes {cluster.kubernetes_version} and {cluster.nodes.ami_type} in "
            f"this region (no SSM parameter {name})"
        ) from None


def addon_offer(eks: Any, addon: str, kubernetes_version: str, pinned: str | None) -> Offer:
    """EKS's default and newest version of an add-on for a Kubernetes version (DescribeAddonVersions: each version
    lists the cluster versions it is compatible with, and whether it is the default there)."""
    versions: list[str] = []
    defaults: list[str] = []
    pages = eks.get_paginator("describe_addon_versions").paginate(addonName=addon, kubernetesVersion=kubernetes_version)
    for page in pages:
        for entry in page["addons"]:
            for version in entry["addonVersions"]:
                fits = [c for c in version.get("compatibilities", []) if c.get("clusterVersion") == kubernetes_version]
                if not fits or not _ADDON_VERSION.match(version["addonVersion"]):
                    continue
                versions.append(version["addonVersion"])
                if any(c.get("defaultVersion") for c in fits):
                    defaults.append(version["addonVersion"])
    if not versions:
        raise PatchError(f"EKS offers no version of the add-on {addon} for Kubernetes {kubernetes_version}")
    newest = max(versions, key=_order)
    # No default marked (EKS marks one per version; said rather than guessed): the newest stands in.
    return Offer(addon, pinned or NOT_PINNED, max(defaults, key=_order) if defaults else newest, newest)


def _order(version: str) -> tuple[int, ...]:
    matched = _ADDON_VERSION.match(version)
    assert matched is not None  # only matching versions are kept
    return tuple(int(part) for part in matched.groups())


def offers(ssm: Any, eks: Any, cluster: ClusterConfig) -> list[Offer]:
    """The node release first, then each add-on in ADDONS order."""
    release = node_release(ssm, cluster)
    nodes = Offer("nodes.release_version", cluster.nodes.release_version or NOT_PINNED, release, release)
    version = cluster.kubernetes_version
    return [nodes] + [addon_offer(eks, addon, version, cluster.addon_versions.get(addon)) for addon in ADDONS]


def clients(region: str) -> tuple[Any, Any]:
    """SSM and EKS in the project's region (boto3 imported only now: --help and refusals stay fast)."""
    import boto3  # lazy: --help and refusals stay fast

    session = boto3.Session(region_name=region)
    return session.client("ssm"), session.client("eks")


def table(colour: str, kubernetes_version: str, found: Sequence[Offer]) -> list[str]:
    rows = [("", "pinned", "EKS default", "newest"), *((o.name, o.pinned, o.default, o.newest) for o in found)]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [f"{colour} (Kubernetes {kubernetes_version}):"]
    lines += ["  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    return lines


def settings(found: Sequence[Offer], *, newest: bool) -> dict[str, Mapping[str, str]]:
    """What --write pins: the node release (the recommended one is the newest) and every add-on's chosen version."""
    nodes, *addons = found
    return {
        "nodes": {"release_version": nodes.newest},
        "addon_versions": {o.name: o.newest if newest else o.default for o in addons},
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.patch", description=__doc__.split("\n\n")[0])
    parser.add_argument("colour", help="the colour to patch")
    parser.add_argument(
        "--write",
        action="store_true",
        help="pin the node release and EKS's default add-on versions in the colour's entry of the config",
    )
    parser.add_argument("--newest", action="store_true", help="with --write: pin the newest add-on versions instead")
    parser.add_argument("--config", type=Path, default=Path("cdktf.json"), help="the project file (default: cdktf.json)")
    args = parser.parse_args(argv)
    if args.newest and not args.write:
        parser.error("--newest chooses what --write pins: give both")

    def patch() -> None:
        config = load_config(args.config)
        if args.colour not in config.clusters:
            raise PatchError(f"clusters.{args.colour}: no such colour; configured: {', '.join(config.clusters)}")
        cluster = config.clusters[args.colour]
        found = offers(*clients(config.region), cluster)
        print("\n".join(table(args.colour, cluster.kubernetes_version, found)))
        if not args.write:
            print("(nothing written: --write pins these, EKS's default add-on versions or with --newest the newest)")
            return
        written = write_colour(args.config, args.colour, settings(found, newest=args.newest))
        print(
            f"written: clusters.{args.colour}.nodes.release_version and addon_versions in {written}; review the diff, "
            f"then `cdktf diff {args.colour}` and `cdktf deploy {args.colour}` (docs/upgrade-runbook.md, 'Patch a colour')"
        )

    return exit_status(patch, refused=(PatchError, ConfigError), failed=())


if __name__ == "__main__":
    sys.exit(main())
