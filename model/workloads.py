"""The pods that get AWS permissions, and the shared roles they assume, named once.

A Pod Identity association (Terraform), the ServiceAccount it serves (Helm, through the values
chain) and the trust of the role behind it (common) all read these constants, so they cannot
disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from model.contract import CommonOutput


@dataclass(frozen=True)
class Workload:
    key: str  # its key under `identities` in the charts' values
    namespace: str
    service_account: str
    role: CommonOutput  # the shared role in common that the association binds


LOAD_BALANCER_CONTROLLER = Workload(
    key="loadBalancerController",
    namespace="kube-system",
    service_account="aws-load-balancer-controller",
    role=CommonOutput.LOAD_BALANCER_CONTROLLER_ROLE_ARN,
)
EXTERNAL_DNS = Workload(
    key="externalDns",
    namespace="external-dns",
    service_account="external-dns",
    role=CommonOutput.EXTERNAL_DNS_ROLE_ARN,
)
SAMPLE_APP = Workload(key="sampleApp", namespace="sample-app", service_account="sample-app", role=CommonOutput.APP_ROLE_ARN)
# The VPC CNI's DaemonSet (EKS add-on vpc-cni); its association is the add-on's own, not one of ours.
# The partition key (a string) of the table the sample app reads: common makes it, the seed script fills it.
SAMPLE_TABLE_KEY = "UserId"
VPC_CNI = Workload(key="vpcCni", namespace="kube-system", service_account="aws-node", role=CommonOutput.VPC_CNI_ROLE_ARN)

# Workloads this project installs: an association each in every colour, their names handed to the charts.
WORKLOADS = (LOAD_BALANCER_CONTROLLER, EXTERNAL_DNS, SAMPLE_APP)
ARGOCD_NAMESPACE = "argocd"
# The App of Apps: the root release and the parent Application it renders (argocd/root) share this name.
PARENT_APPLICATION = "app-of-apps"


@dataclass(frozen=True)
class SharedRole:
    """One of common's Pod Identity roles: the one workload that may assume it, and what it may do."""

    construct_id: str  # a contract: renaming it replaces the role
    name: str  # the role is named <project>-<name>
    workload: Workload
    description: str
    document: str = ""  # policies/<document>.json, filled at synth, attached as a policy of its own
    aws_managed_policy: str = ""  # or an AWS-managed policy, by name


SHARED_ROLES = (
    SharedRole("app-role", "sample-app", SAMPLE_APP, "Sample app pods: read-only on the sample table", document="app_table_read"),
    SharedRole(
        "lbc-role",
        "aws-load-balancer-controller",
        LOAD_BALANCER_CONTROLLER,
        "AWS Load Balancer Controller (upstream policy)",
        document="aws_load_balancer_controller",
    ),
    SharedRole(
        "external-dns-role",
        "external-dns",
        EXTERNAL_DNS,
        "ExternalDNS: records in the shared sub-zone only",
        document="external_dns",
    ),
    # AWS keeps AmazonEKS_CNI_Policy in step with the plugin; on this role, not on the nodes, only
    # aws-node holds the CNI's EC2 network permissions.
    SharedRole(
        "vpc-cni-role",
        "vpc-cni",
        VPC_CNI,
        "VPC CNI (aws-node): node network interfaces and addresses",
        aws_managed_policy="AmazonEKS_CNI_Policy",
    ),
)
