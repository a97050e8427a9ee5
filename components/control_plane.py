"""EKS control plane: cluster role, a KMS key of its own for secrets, logs with a retention (a group a destroyed
incarnation of the colour left behind removed first, and the one EKS's last logs make again after the colour's
destroy removed then), its support policy, and a refusal to replace a cluster that exists."""

from __future__ import annotations

from collections.abc import Sequence

from cdktf import LocalExecProvisioner, Precondition, TerraformResourceLifecycle, Token
from cdktf_cdktf_provider_aws.cloudwatch_log_group import CloudwatchLogGroup
from cdktf_cdktf_provider_aws.data_aws_eks_cluster import DataAwsEksCluster
from cdktf_cdktf_provider_aws.data_aws_eks_clusters import DataAwsEksClusters
from cdktf_cdktf_provider_aws.eks_cluster import EksCluster
from cdktf_cdktf_provider_aws.iam_role import IamRole
from cdktf_cdktf_provider_aws.iam_role_policy import IamRolePolicy
from cdktf_cdktf_provider_aws.iam_role_policy_attachment import IamRolePolicyAttachment
from constructs import Construct

import policies
from components.destroy_hook import python_command, with_failure_grace
from components.kms_key import AccountKey
from components.terraform_data import TerraformData
from model.config import EksConfig, SupportType
from model.hooks import LOG_GROUP, LOG_GROUP_ENV, WATCH_ENV, WATCH_SECONDS

LOG_TYPES = ("api", "audit", "authenticator", "controllerManager", "scheduler")
REMOVE_ORPHANED_LOGS = python_command(LOG_GROUP)
# The Kubernetes network family of every cluster: common's VPC and subnets have IPv4 ranges only. Named rather than left
# to EKS's default (also ipv4), so that the replacement guard compares what runs with what the stack asks for.
IP_FAMILY = "ipv4"


class ControlPlane(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        colour: str,
        cluster_name: str,
        kubernetes_version: str,
        support_type: SupportType,
        subnet_ids: Sequence[str],
        public_access_cidrs: Sequence[str],
        settings: EksConfig,
        partition: str,
        account_id: str,
        region: str,
        permissions_boundary: str,
    ) -> None:
        """public_access_cidrs: who may reach the public endpoint (settings.public_access_cidrs and, when the
        private endpoint is off, the addresses the nodes come from). support_type: clusters.<colour>.support_type,
        what AWS does with the cluster at the end of standard support. permissions_boundary: the project's boundary's
        ARN (policies/boundary.py), carried by the cluster role."""
        super().__init__(scope, id_)
        role_name = f"{cluster_name}-cluster"
        role = IamRole(
            self,
            "role",
            name=role_name,
            assume_role_policy=policies.render("eks_cluster_trust"),
            permissions_boundary=permissions_boundary,
        )
        policy = IamRolePolicyAttachment(
            self, "policy", role=role.name, policy_arn=f"arn:{partition}:iam::aws:policy/AmazonEKSClusterPolicy"
        )
        # One key of the cluster's own, for its secrets and its control-plane logs.
        key = AccountKey(
            self,
            "key",
            description=f"{cluster_name}: secrets and logs",
            account_id=account_id,
            partition=partition,
            region=region,
        )
        IamRolePolicy(self, "encryption", role=role.id, policy=policies.render("eks_cluster_encryption", KEY_ARN=key.key_arn))
        # EKS would create this group itself, without a retention; creating it first sets one.
        log_group = f"/aws/eks/{cluster_name}/cluster"
        logs = CloudwatchLogGroup(
            self,
            "logs",
            name=log_group,
            retention_in_days=settings.log_retention_days,
            kms_key_id=key.key_arn,
            depends_on=[_orphaned_logs_removed(self, log_group=log_group, cluster_name=cluster_name, region=region)],
        )
        # The account's clusters, listed once per plan: what tells whether this colour's cluster exists yet, for its
        # replacement guard and its node group's (a new colour's first plan reads nothing more).
        listed = DataAwsEksClusters(self, "clusters")
        self.listed_clusters = listed
        # The role's ARN as IAM makes it (no path), from values known at plan: the role's own `arn` is unknown while the
        # role is replaced, which would replace the cluster too (role_arn is ForceNew) and leave its guard unable to
        # tell. A role re-created under its fixed name (deleted by hand, say) then leaves the cluster alone.
        role_arn = f"arn:{partition}:iam::{account_id}:role/{role_name}"
        cluster = EksCluster(
            self,
            "cluster",
            name=cluster_name,
            version=kubernetes_version,
            role_arn=role_arn,
            vpc_config={
                "subnet_ids": list(subnet_ids),
                "endpoint_private_access": settings.endpoint_private_access,
                "endpoint_public_access": settings.endpoint_public_access,
                "public_access_cidrs": public_access_cidrs,
            },
            # No admin outside Terraform: components/cluster_admins.py makes the deploying identity one.
            # (ForceNew in the aws provider: a cluster created with the bootstrap on is replaced.)
            access_config={"authentication_mode": "API", "bootstrap_cluster_creator_admin_permissions": False},
            kubernetes_network_config={"service_ipv4_cidr": settings.service_ipv4_cidr, "ip_family": IP_FAMILY},
            enabled_cluster_log_types=list(LOG_TYPES),
            encryption_config={"provider": {"key_arn": key.key_arn}, "resources": ["secrets"]},
            # Named, so that what AWS does at the end of standard support is the config's choice, not AWS's default:
            # EXTENDED stays on the version at the extended rate, STANDARD is upgraded in place. Updated in place.
            upgrade_policy={"support_type": support_type},
            depends_on=[role, policy, logs],
            lifecycle=TerraformResourceLifecycle(
                precondition=[
                    _never_replaced(
                        self,
                        listed,
                        colour=colour,
                        cluster_name=cluster_name,
                        settings=settings,
                        role=(partition, account_id, role_name),
                    )
                ]
            ),
        )
        self.cluster_name = cluster.name
        # The version the cluster runs, as a reference: what follows it (the node group) is updated after it.
        self.version = cluster.version
        self.endpoint = cluster.endpoint
        self.certificate_authority = cluster.certificate_authority.get(0).data
        # EKS makes it and puts it on the nodes of a managed node group whose launch template names no security group
        # (components/node_group.py), so on every pod's network interface too.
        self.cluster_security_group_id = cluster.vpc_config.cluster_security_group_id


def _orphaned_logs_removed(scope: Construct, *, log_group: str, cluster_name: str, region: str) -> TerraformData:
    """A step the log group depends on (and so the cluster, which depends on the group): no group of that name outlives
    the colour (tools/hooks/log_group.py).

    EKS delivers the cluster's last logs after Terraform has deleted the group, and CloudWatch creates it again,
    without retention or key, where it outlives the colour and makes the next create of the colour fail on
    ResourceAlreadyExistsException (terraform-aws-modules/terraform-aws-eks issues 920 and 2486). Terraform destroys a
    resource only after everything that depends on it, so this step, created before the group and the cluster, is
    destroyed after both: its destroy provisioner runs once the cluster is deleted (the provider waits for that) and
    its group too. It watches the name for WATCH_SECONDS and deletes the group each time it comes back. Its create
    provisioner deletes a group an earlier incarnation left behind all the same (a delivery later than the watch).

    Each deletes the group only when no cluster of that name exists, and says what it found and did. The create-time
    one runs when the colour is created, and again after each destroy (the step goes with the colour); on a running
    colour only once, when the step is first added. When it fails, the log group and the cluster are not created
    and the step is tainted: the next deploy runs it again. When the destroy-time one fails (it cannot tell), the step
    stays in the state, the cluster and its group already gone: the next destroy runs it again.

    Rather than an `import` block adopting the group (Terraform 1.7+ import for_each, decided at plan): checkov
    cannot parse a stack holding one, and import blocks are refused in a module, as the stacks are validated.
    """
    environment = {LOG_GROUP_ENV: "${jsonencode(self.input)}"}
    removed = LocalExecProvisioner(type="local-exec", command=REMOVE_ORPHANED_LOGS, environment=environment)
    watched = LocalExecProvisioner(
        type="local-exec",
        when="destroy",
        command=with_failure_grace(REMOVE_ORPHANED_LOGS),
        environment={**environment, WATCH_ENV: str(WATCH_SECONDS)},
    )
    return TerraformData(
        scope,
        "orphaned-logs",
        input={"log_group": log_group, "cluster": cluster_name, "region": region},
        provisioners=[removed, watched],
    )


def _never_replaced(
    scope: Construct,
    listed: DataAwsEksClusters,
    *,
    colour: str,
    cluster_name: str,
    settings: EksConfig,
    role: tuple[str, str, str],
) -> Precondition:
    """Refuse, at plan, a change EKS can only make by replacing an existing cluster, naming each such attribute.

    A replacement cannot happen cleanly: the node group is create_before_destroy and depends on the cluster, so
    Terraform would create the new cluster first, under the same fixed name, which EKS refuses after much else has
    changed; and the helm and kubernetes providers are configured from the cluster's endpoint, unknown while it is
    replaced, so the plan would end in a provider error and the colour's teardown would never run. A failed
    precondition stops the cluster's node, and with it everything configured from the cluster, so this message is
    what the operator reads.

    The ForceNew arguments of aws_eks_cluster in hashicorp/aws 5.100.0 (internal/service/eks/cluster.go, read in
    snapshots of the 5.x and 6.x lines; each confirmed with the 5.100.0 binary of the offline mirror: a plan from a
    state holding the old value lists it in `replace_paths`): name, role_arn, kubernetes_network_config's
    service_ipv4_cidr and ip_family, access_config.bootstrap_cluster_creator_admin_permissions,
    bootstrap_self_managed_addons, encryption_config removed (a CustomizeDiff: another key_arn is an in-place update),
    and, unused here, outpost_config's and remote_network_config's settings and compute_config.node_role_arn. Compared
    with the live cluster, each as the stack sets it: service_ipv4_cidr (eks.service_ipv4_cidr), ip_family (IP_FAMILY)
    and role_arn (the cluster role's ARN, built from values known at plan: `role` is its partition, account id and name).
    Not compared:
    - name: the cluster is looked up by it; another name (a new `project`) is another cluster, with no clash;
    - bootstrap_cluster_creator_admin_permissions: the EKS API does not return it (the provider's read keeps the
      configured value: aws/containers-roadmap issue 185), and the stack always sets it false;
    - bootstrap_self_managed_addons: not returned either (the read keeps the configured value), and never set here, so
      it stays at its default;
    - encryption_config: always set, never removed (the data source does not return it in 5.100.0).
    """
    existing = DataAwsEksCluster(
        scope,
        "existing",
        name=cluster_name,
        count=Token.as_number(f'${{contains({listed.fqn}.names, "{cluster_name}") ? 1 : 0}}'),
    )
    # (what it is, its value in a live cluster `c`, the value the stack wants, what sets that value), as expressions. A
    # cluster EKS reports without an IP family runs its default (EKS API, KubernetesNetworkConfigRequest.ipFamily: "If
    # you don't specify a value, ipv4 is used by default"). The role's ARN is built by format(): cdktf writes a reference
    # inside an expression bare, not as a template.
    partition, account_id, role_name = role
    compared = (
        (
            "Service network",
            "c.kubernetes_network_config[0].service_ipv4_cidr",
            f'"{settings.service_ipv4_cidr}"',
            "eks.service_ipv4_cidr is now",
        ),
        ("IP family", 'coalesce(c.kubernetes_network_config[0].ip_family, "ipv4")', f'"{IP_FAMILY}"', "the stack builds"),
        (
            "cluster role",
            "c.role_arn",
            f'format("arn:%s:iam::%s:role/%s", {partition}, {account_id}, "{role_name}")',
            "the stack now names",
        ),
    )
    same = " && ".join(f"{running} == {wanted}" for _, running, wanted, _ in compared)
    rows = ", ".join(f'["{what}", {running}, {wanted}, "{says}"]' for what, running, wanted, says in compared)
    differences = (
        f'join("; ", flatten([for c in {existing.fqn} : [for d in [{rows}] : '
        f'format("it runs with %s %s, %s %s", d[0], d[1], d[3], d[2]) if d[1] != d[2]]]))'
    )
    return Precondition(
        condition=f"${{alltrue([for c in {existing.fqn} : {same}])}}",
        error_message=(
            f"clusters.{colour}: this change would replace the EKS cluster {cluster_name}: ${{{differences}}}; and EKS "
            f"cannot change that in place. Replacing a cluster takes down everything it serves. Keep what {colour} runs "
            f"while it exists; build the change as a new colour, shift to it and retire {colour} "
            "(docs/upgrade-runbook.md)."
        ),
    )
