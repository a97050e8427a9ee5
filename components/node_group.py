"""Managed node group through a launch template: IMDSv2 only, hop limit 1, encrypted gp3 root."""

from __future__ import annotations

from collections.abc import Sequence

from cdktf import ITerraformDependable, Token
from cdktf_cdktf_provider_aws.eks_node_group import EksNodeGroup
from cdktf_cdktf_provider_aws.iam_role import IamRole
from cdktf_cdktf_provider_aws.iam_role_policy_attachment import IamRolePolicyAttachment
from cdktf_cdktf_provider_aws.launch_template import (
    LaunchTemplate,
    LaunchTemplateBlockDeviceMappings,
    LaunchTemplateBlockDeviceMappingsEbs,
)
from constructs import Construct

import policies
from model.config import NodeGroupConfig

# The CNI's EC2 permissions are not here: the vpc-cni add-on gets them through Pod Identity (a role of
# its own in common). Pulling images needs no more than PullOnly (ReadOnly also lists and describes).
NODE_POLICIES = ("AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryPullOnly")
ROOT_DEVICE = "/dev/xvda"  # Amazon Linux 2023 EKS AMIs


class NodeGroup(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        cluster_name: str,
        kubernetes_version: str,
        subnet_ids: Sequence[str],
        nodes: NodeGroupConfig,
        partition: str,
        permissions_boundary: str,
        depends_on: Sequence[ITerraformDependable],
    ) -> None:
        """kubernetes_version: the cluster's `version` attribute (ControlPlane.version), not the config's string.
        permissions_boundary: the project's boundary's ARN (policies/boundary.py), carried by the node role."""
        super().__init__(scope, id_)
        role = IamRole(
            self,
            "role",
            name=f"{cluster_name}-nodes",
            assume_role_policy=policies.render("ec2_trust"),
            permissions_boundary=permissions_boundary,
        )
        attachments = [
            IamRolePolicyAttachment(self, name, role=role.name, policy_arn=f"arn:{partition}:iam::aws:policy/{name}")
            for name in NODE_POLICIES
        ]
        template = LaunchTemplate(
            self,
            "template",
            name_prefix=f"{cluster_name}-nodes-",
            # Hop limit 1: pods cannot reach the node's credentials through IMDS; they get their
            # own through Pod Identity (and the controllers are told region and VPC explicitly).
            metadata_options={"http_endpoint": "enabled", "http_tokens": "required", "http_put_response_hop_limit": 1},
            block_device_mappings=[
                LaunchTemplateBlockDeviceMappings(
                    device_name=ROOT_DEVICE,
                    ebs=LaunchTemplateBlockDeviceMappingsEbs(
                        volume_size=nodes.disk_size_gib, volume_type="gp3", encrypted="true", delete_on_termination="true"
                    ),
                )
            ],
            update_default_version=True,
        )
        group = EksNodeGroup(
            self,
            "group",
            cluster_name=cluster_name,
            node_group_name_prefix=f"{cluster_name}-",
            node_role_arn=role.arn,
            # The cluster's version, by reference: an in-place control-plane upgrade is applied first, then the
            # nodes roll to the new version's AMI (an in-place update of the group, max_unavailable at a time).
            # Without it the kubelets stay on the old minor. Allowed with this launch template: it names no AMI.
            version=kubernetes_version,
            subnet_ids=list(subnet_ids),
            ami_type=nodes.ami_type,
            capacity_type=nodes.capacity_type,
            instance_types=list(nodes.instance_types),
            scaling_config={"min_size": nodes.min_size, "max_size": nodes.max_size, "desired_size": nodes.desired_size},
            update_config={"max_unavailable": nodes.max_unavailable},
            launch_template={"id": template.id, "version": Token.as_string(template.latest_version)},
            # The autoscaler (or an operator) owns desired_size once the group runs. No create_before_destroy:
            # Terraform would impose it on everything the group depends on, the cluster included, whose fixed
            # name cannot exist twice. A change that replaces the group (instance types, AMI or capacity type)
            # removes the old nodes first: make it on a colour without weight, or as a new colour.
            lifecycle={"ignore_changes": ["scaling_config[0].desired_size"]},
            depends_on=[*attachments, *depends_on],
        )
        self.node_group = group
