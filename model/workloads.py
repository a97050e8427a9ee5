"""The pods that get AWS permissions, and the shared roles they assume, derived from the component registry and the
configuration's applications (those with a `policy`).

A Pod Identity association (Terraform), the ServiceAccount it serves (Helm, through the values chain)
and the trust of the role behind it (common) all read these, so they cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from model.eks_addons import EBS_CSI_DRIVER
from model.platform import COMPONENTS, Component, RegistryError


@dataclass(frozen=True)
class Workload:
    """One service account that assumes one of common's shared roles, `<project>-<name>`."""

    name: str  # the component, application or EKS add-on it belongs to
    namespace: str
    service_account: str
    description: str
    policy: Path | None = None  # its policy document (a component's, in its folder), filled at synth, attached as its own
    aws_managed_policy: str = ""  # or an AWS-managed policy, by name

    @property
    def output(self) -> str:
        """Common's output that publishes its role's ARN."""
        return f"{self.name.replace('-', '_')}_role_arn"

    @property
    def construct_id(self) -> str:
        """Its role's construct id in common: a contract (renaming it replaces the role)."""
        return f"{self.name}-role"


def _of(component: Component) -> Workload:
    assert component.identity is not None
    identity = component.identity
    # Checked here, not by model.platform.load: that also reads the registry of older revisions (tools/readiness),
    # whose `policy` named a document of policies/; only this checkout's registry is synthesized.
    if component.policy is None or not component.policy.is_file():
        raise RegistryError(
            f"argocd/apps/platform/{component.name}/component.yaml: identity.policy {identity.policy!r} is not a file "
            "of the component's folder; name its policy document there (policy.json)"
        )
    return Workload(component.name, component.namespace, identity.service_account, identity.description, component.policy)


# Workloads this project installs: an association each in every colour, their names handed to the charts.
WORKLOADS = tuple(_of(c) for c in COMPONENTS if c.identity)
# The VPC CNI's DaemonSet (EKS add-on vpc-cni); its association is the add-on's own, not one of ours. AWS keeps
# AmazonEKS_CNI_Policy in step with the plugin; on this role, not on the nodes, only aws-node holds the CNI's EC2
# network permissions.
VPC_CNI = Workload(
    "vpc-cni",
    "kube-system",
    "aws-node",
    "VPC CNI (aws-node): node network interfaces and addresses",
    aws_managed_policy="AmazonEKS_CNI_Policy",
)
# The EBS CSI driver's controller (EKS add-on aws-ebs-csi-driver, its service account as the add-on names it), through
# the add-on's own association like the CNI's. AmazonEBSCSIDriverEKSClusterScopedPolicy, not AmazonEBSCSIDriverPolicy:
# AWS keeps both in step with the driver, but the older one acts on every volume and snapshot of the account, and this
# role is shared by every colour. The scoped one lets a session act only on volumes and snapshots tagged
# `ebs.csi.aws.com/cluster-name` = its own `eks-cluster-name` session tag (EKS Pod Identity sets it), and attach only to
# instances tagged `eks:cluster-name` = that cluster (EKS tags managed nodes so): blue's driver cannot touch green's
# volumes. The driver writes that tag from v1.58.0 when `--k8s-tag-cluster-id` is set, which the EKS add-on sets to the
# cluster's name itself (kubernetes-sigs/aws-ebs-csi-driver#2918, "Migrating to AmazonEBSCSIDriverEKSClusterScopedPolicy";
# AWS Managed Policy reference, AmazonEBSCSIDriverEKSClusterScopedPolicy). A volume made outside the driver (static
# provisioning) needs that tag by hand.
EBS_CSI = Workload(
    EBS_CSI_DRIVER,
    "kube-system",
    "ebs-csi-controller-sa",
    "EBS CSI driver (ebs-csi-controller-sa): the colour's own EBS volumes and snapshots",
    aws_managed_policy="AmazonEBSCSIDriverEKSClusterScopedPolicy",
)
# EKS add-ons that assume one of common's roles through their own association, by add-on name.
ADDON_ROLES = (VPC_CNI, EBS_CSI)
