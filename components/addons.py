"""EKS managed add-ons. Without a pinned version EKS installs its default for the cluster's version; an add-on with a
minimum (model/eks_addons.py) left unpinned is refused at plan when that default is older."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from cdktf import ITerraformDependable, Precondition, TerraformResourceLifecycle
from cdktf_cdktf_provider_aws.data_aws_eks_addon_version import DataAwsEksAddonVersion
from cdktf_cdktf_provider_aws.eks_addon import EksAddon, EksAddonPodIdentityAssociation
from constructs import Construct

from model.eks_addons import CONFIGURATION, MINIMUM_VERSIONS, POD_IDENTITY_AGENT, minimum_reason, oldest

NONE: Mapping[str, tuple[str, str]] = MappingProxyType({})


@dataclass(frozen=True)
class UnpinnedDefaults:
    """What judges an add-on with a minimum that the config leaves unpinned: colour names its key
    (clusters.<colour>.addon_versions.<add-on>); kubernetes_version is the colour's as written (not the cluster's
    attribute), so EKS's default for it is read at plan, a new colour's first plan included."""

    colour: str
    kubernetes_version: str


class Addons(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        cluster_name: str,
        names: Sequence[str],
        versions: Mapping[str, str],
        pod_identities: Mapping[str, tuple[str, str]] = NONE,
        unpinned: UnpinnedDefaults | None = None,
        depends_on: Sequence[ITerraformDependable] = (),
    ) -> None:
        """pod_identities: add-on name -> (its service account, the role it assumes); default none: the
        add-on runs with the node's permissions. unpinned: default none, EKS's default is installed unjudged."""
        super().__init__(scope, id_)
        made: dict[str, EksAddon] = {}
        for name in names:
            identity = pod_identities.get(name)
            agent = [made[POD_IDENTITY_AGENT]] if identity and POD_IDENTITY_AGENT in made else []
            judged = unpinned if name in MINIMUM_VERSIONS and name not in versions else None
            made[name] = EksAddon(
                self,
                name,
                cluster_name=cluster_name,
                addon_name=name,
                addon_version=versions.get(name),
                configuration_values=json.dumps(CONFIGURATION[name]) if name in CONFIGURATION else None,
                resolve_conflicts_on_create="OVERWRITE",
                resolve_conflicts_on_update="OVERWRITE",
                pod_identity_association=[EksAddonPodIdentityAssociation(service_account=identity[0], role_arn=identity[1])]
                if identity
                else None,
                lifecycle=TerraformResourceLifecycle(precondition=[_default_new_enough(self, name, judged)]) if judged else None,
                depends_on=[*depends_on, *agent],
            )
        self.addons = list(made.values())


def _default_new_enough(scope: Construct, name: str, unpinned: UnpinnedDefaults) -> Precondition:
    """Refuse, at plan, EKS's default version of an unpinned add-on when it is older than the add-on's minimum.

    Judged rather than pinned for the operator: an unpinned add-on keeps EKS's default, which the colour's plan never
    moves (addon_version is Optional+Computed in hashicorp/aws 5.100.0: left out, the provider sends no version and
    sees no change), so the serving colour stays frozen. Resolving the newest instead (`most_recent`) would move a
    running colour's add-on whenever AWS publishes a version. The data source's `most_recent = false` is what EKS
    installs: the version whose compatibility for that Kubernetes version is `defaultVersion`
    (internal/service/eks/addon_version_data_source.go, findAddonVersionByTwoPartKey; read in a 5.x snapshot of
    hashicorp/terraform-provider-aws, commit b8a258ef, and the 5.100.0 schema has the same arguments).

    On a later Kubernetes upgrade of the colour, EKS does not update an add-on by itself and Terraform sends no
    version, so the add-on keeps the one it runs; the check then reads the new version's default, no older in EKS's
    tables than the one before. An add-on created before this check is judged by today's default, not by what it runs
    (no data source reads an add-on that may not exist yet): `python -m tools.patch <colour>` shows that.
    """
    default = DataAwsEksAddonVersion(
        scope, f"{name}-default", addon_name=name, kubernetes_version=unpinned.kubernetes_version, most_recent=False
    )
    key = f"clusters.{unpinned.colour}.addon_versions.{name}"
    return Precondition(
        condition=f"${{{at_least(default.version, MINIMUM_VERSIONS[name])}}}",
        error_message=(
            f"{key} is not set, so EKS would install its default for Kubernetes {unpinned.kubernetes_version}, "
            f"${{{default.version}}}, older than {oldest(name)}: {minimum_reason(name)}. Set {key} to a version of "
            f"{oldest(name)} or newer that EKS offers for Kubernetes {unpinned.kubernetes_version} (`python -m tools.patch "
            f"{unpinned.colour}` lists them)."
        ),
    )


def at_least(version: str, minimum: tuple[int, int, int]) -> str:
    """A Terraform expression: whether `version` (an expression; an EKS add-on version, `vX.Y.Z-eksbuild.N`) is at
    least `minimum`, comparing major, minor and patch as numbers (as strings, v1.100.0 would sort before v1.58.0);
    false for a version of another form."""
    major, minor, patch = minimum
    parts = f'[for n in regex("^v([0-9]+)[.]([0-9]+)[.]([0-9]+)", {version}) : tonumber(n)]'
    newer = f"p[0] > {major} || p[0] == {major} && (p[1] > {minor} || p[1] == {minor} && p[2] >= {patch})"
    return f"try(alltrue([for p in [{parts}] : {newer}]), false)"
