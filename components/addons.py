"""EKS managed add-ons. Without a pinned version EKS installs its default for the cluster's version."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from cdktf import ITerraformDependable
from cdktf_cdktf_provider_aws.eks_addon import EksAddon, EksAddonPodIdentityAssociation
from constructs import Construct

from model.eks_addons import CONFIGURATION, POD_IDENTITY_AGENT

NONE: Mapping[str, tuple[str, str]] = MappingProxyType({})


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
        depends_on: Sequence[ITerraformDependable] = (),
    ) -> None:
        """pod_identities: add-on name -> (its service account, the role it assumes); default none: the
        add-on runs with the node's permissions."""
        super().__init__(scope, id_)
        made: dict[str, EksAddon] = {}
        for name in names:
            identity = pod_identities.get(name)
            agent = [made[POD_IDENTITY_AGENT]] if identity and POD_IDENTITY_AGENT in made else []
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
                depends_on=[*depends_on, *agent],
            )
        self.addons = list(made.values())
