"""Managed node group through a launch template: IMDSv2 only, hop limit 1, encrypted gp3 root; patched in place (AMI
release, PodDisruptionBudgets respected), replaced only create-before-destroy and never while its colour serves."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cdktf import ITerraformDependable, Precondition, TerraformResourceLifecycle, Token
from cdktf_cdktf_provider_aws.data_aws_eks_clusters import DataAwsEksClusters
from cdktf_cdktf_provider_aws.data_aws_eks_node_group import DataAwsEksNodeGroup
from cdktf_cdktf_provider_aws.data_aws_eks_node_groups import DataAwsEksNodeGroups
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
from components.live_weight import LiveWeight
from model.config import NodeGroupConfig

# The CNI's EC2 permissions are not here: the vpc-cni add-on gets them through Pod Identity (a role of
# its own in common). Pulling images needs no more than PullOnly (ReadOnly also lists and describes).
NODE_POLICIES = ("AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryPullOnly")
ROOT_DEVICE = "/dev/xvda"  # Amazon Linux 2023 EKS AMIs
# The group's arguments EKS cannot change in place that come from the config (ForceNew in hashicorp/aws 5.100.0,
# internal/service/eks/node_group.go): a change of one replaces the group. Its other ForceNew arguments (cluster,
# name prefix, role, subnets, launch template id) are fixed per colour; the disk is the launch template's, whose new
# version rolls the nodes in place like an AMI release. Those from the config: instance_types, ami_type, capacity_type.


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
        guard: NodeGroupGuard,
        partition: str,
        permissions_boundary: str,
        depends_on: Sequence[ITerraformDependable],
    ) -> None:
        """kubernetes_version: the cluster's `version` attribute (ControlPlane.version), not the config's string.
        guard: who the group belongs to, for the refusal to replace it while its colour serves.
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
            # A patch (release_version, the launch template's version, the cluster's version) is an in-place update
            # that rolls the nodes max_unavailable at a time, each drained with the pods' PodDisruptionBudgets honoured.
            update_config={"max_unavailable": nodes.max_unavailable},
            # Unset: EKS's latest AMI release for the version when the group is created, then kept until an edit.
            release_version=nodes.release_version,
            # False, said: a drain a PodDisruptionBudget blocks fails the update (EKS, "Managed node update
            # behavior") rather than evicting past the budget; the nodes already rolled keep the new release.
            force_update_version=False,
            launch_template={"id": template.id, "version": Token.as_string(template.latest_version)},
            lifecycle=TerraformResourceLifecycle(
                # The autoscaler (or an operator) owns desired_size once the group runs.
                ignore_changes=["scaling_config[0].desired_size"],
                # A replacement (one of those keys changed) brings the new nodes up before the old go: node_group_name_prefix
                # gives the new group a name of its own. Terraform applies create_before_destroy to what the group
                # depends on too, which matters only for a dependency that is itself replaced: the role, its
                # attachments, the launch template and the add-ons have fixed names and arguments per colour, and
                # the cluster's replacement is refused at plan (components/control_plane.py).
                create_before_destroy=True,
                precondition=[_never_replaced_while_serving(self, nodes=nodes, guard=guard)],
            ),
            depends_on=[*attachments, *depends_on],
        )
        self.node_group = group


@dataclass(frozen=True)
class NodeGroupGuard:
    """colour: the colour the group serves; cluster_name: its cluster's name as written (not a reference, so the live
    group is read at plan even while the cluster changes); live_weight: the colour's weight in the live weights, read at
    plan (whether it serves is the shift's to say, not the config's: config weights only seed a new traffic stack);
    listed_clusters: the control plane's listing of the account's clusters (ControlPlane.listed_clusters), read once per
    plan for both guards."""

    colour: str
    cluster_name: str
    live_weight: LiveWeight
    listed_clusters: DataAwsEksClusters


def _never_replaced_while_serving(scope: Construct, *, nodes: NodeGroupConfig, guard: NodeGroupGuard) -> Precondition:
    """Refuse, at plan, a change that would replace the node group of a colour with live weight.

    A replaced group's pods are evicted together, whatever their PodDisruptionBudgets say, and the colour serves
    with whatever capacity comes up in time: a serving colour's nodes change in place or as a new colour. The
    live group (the cluster's groups named `<cluster>-...`, read only when the cluster exists: a new colour's first
    plan passes) is compared with the config; a colour the live weights give nothing passes, and is replaced
    create-before-destroy.
    """
    name = guard.cluster_name
    listed = guard.listed_clusters
    groups = DataAwsEksNodeGroups(
        scope, "groups", cluster_name=name, count=Token.as_number(f'${{contains({listed.fqn}.names, "{name}") ? 1 : 0}}')
    )
    existing = DataAwsEksNodeGroup(scope, "existing", cluster_name=name, node_group_name="${each.value}")
    # Set as written: cdktf's iterators wrap an expression of their own in a second toset.
    existing.add_override("for_each", f'${{toset([for n in flatten({groups.fqn}[*].names) : n if startswith(n, "{name}-")])}}')
    running = f"values({existing.fqn})"
    wanted = {"instance_types": ",".join(nodes.instance_types), "ami_type": nodes.ami_type, "capacity_type": nodes.capacity_type}
    same = " && ".join(
        [f'join(",", g.instance_types) == "{wanted["instance_types"]}"']
        + [f'g.{key} == "{wanted[key]}"' for key in ("ami_type", "capacity_type")]
    )
    runs = (
        f'join("; ", [for g in {running} : format("%s runs instance_types %s, ami_type %s, capacity_type %s", '
        'g.node_group_name, join(",", g.instance_types), g.ami_type, g.capacity_type)])'
    )
    key = f"clusters.{guard.colour}.nodes"
    weight = guard.live_weight.weight
    return Precondition(
        condition=f"${{{weight} == 0 || alltrue([for g in {running} : {same}])}}",
        error_message=(
            f"{key}: this change would replace the node group of the EKS cluster {name} while {guard.colour} serves "
            f"(live weight ${{{weight}}} in {guard.live_weight.parameter_name}): ${{{runs}}}; the config now names "
            f"instance_types {wanted['instance_types']}, ami_type {wanted['ami_type']}, capacity_type "
            f"{wanted['capacity_type']}, and EKS cannot change these in place. A replaced group evicts every pod of "
            f"{guard.colour} at once, past its PodDisruptionBudgets. Keep {key}.instance_types, ami_type and "
            f"capacity_type as they run while {guard.colour} serves; build the change as a new colour, shift to it "
            f"and retire {guard.colour}, or shift {guard.colour}'s traffic away first (python -m tools.shift --to "
            "<colour>: a colour without live weight has its node group replaced create-before-destroy; "
            "docs/upgrade-runbook.md)."
        ),
    )
