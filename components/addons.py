"""EKS managed add-ons. Without a pinned version EKS installs its default for the cluster's version."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from cdktf import ITerraformDependable
from cdktf_cdktf_provider_aws.eks_addon import EksAddon, EksAddonPodIdentityAssociation
from constructs import Construct

POD_IDENTITY_AGENT = "eks-pod-identity-agent"
# Networking and the Pod Identity agent go before the nodes, so nodes join ready; coredns needs
# nodes to schedule on, so it goes after them (EKS reports it degraded otherwise). The agent comes
# first: an add-on that takes its credentials through Pod Identity is created after it (AWS, "IAM
# roles for Amazon EKS add-ons": confirm the agent is set up before such an add-on).
BEFORE_NODES = (POD_IDENTITY_AGENT, "vpc-cni", "kube-proxy")
AFTER_NODES = ("coredns",)
NONE: Mapping[str, tuple[str, str]] = MappingProxyType({})
# Add-on settings (each add-on's configuration schema): the VPC CNI enforces Kubernetes NetworkPolicy,
# which the sample app's chart relies on (off by default: policies would be accepted and ignored).
CONFIGURATION = {"vpc-cni": {"enableNetworkPolicy": "true"}}


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
