"""The EKS managed add-ons every cluster gets, in the order they go on, and their settings."""

from __future__ import annotations

POD_IDENTITY_AGENT = "eks-pod-identity-agent"
# The EBS CSI driver: PersistentVolumes on EBS (gp3) for the applications that need them. Its controller provisions and
# attaches volumes, so it needs nodes to run on, and goes after them like coredns.
EBS_CSI_DRIVER = "aws-ebs-csi-driver"
# Networking and the Pod Identity agent go before the nodes, so nodes join ready; coredns needs
# nodes to schedule on, so it goes after them (EKS reports it degraded otherwise). The agent comes
# first: an add-on that takes its credentials through Pod Identity is created after it (AWS, "IAM
# roles for Amazon EKS add-ons": confirm the agent is set up before such an add-on).
BEFORE_NODES = (POD_IDENTITY_AGENT, "vpc-cni", "kube-proxy")
AFTER_NODES = ("coredns", EBS_CSI_DRIVER)
# Add-on settings (each add-on's configuration schema): the VPC CNI enforces Kubernetes NetworkPolicy,
# which the sample app's chart relies on (off by default: policies would be accepted and ignored).
CONFIGURATION = {"vpc-cni": {"enableNetworkPolicy": "true"}}
# Every managed add-on, by name: config may pin any of them (clusters.<colour>.addon_versions).
ADDONS = BEFORE_NODES + AFTER_NODES
# The oldest version of an add-on that works with what this project gives it. The EBS CSI driver's shared role holds
# AmazonEBSCSIDriverEKSClusterScopedPolicy, which acts only on volumes tagged with the driver's cluster; the driver
# writes that tag from v1.58.0 (model/workloads.py, EBS_CSI): an older version would make volumes it may then not
# attach or delete. A pin is judged at synth (model/config/clusters.py); unpinned, EKS installs its default for the cluster's
# Kubernetes version, judged at plan (components/addons.py).
MINIMUM_VERSIONS = {EBS_CSI_DRIVER: (1, 58, 0)}
# Why each minimum, for the messages of both ({oldest}: the minimum as EKS writes versions, e.g. v1.58.0).
MINIMUM_REASONS = {
    EBS_CSI_DRIVER: "its shared role acts only on volumes tagged with the cluster, which the driver writes from {oldest}"
}


def oldest(name: str) -> str:
    """An add-on's MINIMUM_VERSIONS entry as EKS writes versions: `v1.58.0`."""
    return "v" + ".".join(str(part) for part in MINIMUM_VERSIONS[name])


def minimum_reason(name: str) -> str:
    return MINIMUM_REASONS[name].format(oldest=oldest(name))
