"""EKS managed add-ons. Without a pinned version EKS installs its default for the cluster's version."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cdktf import ITerraformDependable
from cdktf_cdktf_provider_aws.eks_addon import EksAddon
from constructs import Construct

# Networking and the Pod Identity agent go before the nodes, so nodes join ready; coredns needs
# nodes to schedule on, so it goes after them (EKS reports it degraded otherwise).
BEFORE_NODES = ("vpc-cni", "kube-proxy", "eks-pod-identity-agent")
AFTER_NODES = ("coredns",)


class Addons(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        cluster_name: str,
        names: Sequence[str],
        versions: Mapping[str, str],
        depends_on: Sequence[ITerraformDependable] = (),
    ) -> None:
        super().__init__(scope, id_)
        self.addons = [
            EksAddon(
                self,
                name,
                cluster_name=cluster_name,
                addon_name=name,
                addon_version=versions.get(name),
                resolve_conflicts_on_create="OVERWRITE",
                resolve_conflicts_on_update="OVERWRITE",
                depends_on=list(depends_on),
            )
            for name in names
        ]
