"""Extra cluster administrators: an access entry + AmazonEKSClusterAdminPolicy per IAM role."""

from __future__ import annotations

from collections.abc import Sequence

from cdktf_cdktf_provider_aws.eks_access_entry import EksAccessEntry
from cdktf_cdktf_provider_aws.eks_access_policy_association import EksAccessPolicyAssociation
from constructs import Construct


class ClusterAdmins(Construct):
    def __init__(self, scope: Construct, id_: str, *, cluster_name: str, role_arns: Sequence[str], partition: str) -> None:
        """role_arns: default none; the identity running `cdktf deploy` is admin through bootstrap permissions."""
        super().__init__(scope, id_)
        policy_arn = f"arn:{partition}:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
        for i, arn in enumerate(role_arns):
            entry = EksAccessEntry(self, f"entry-{i}", cluster_name=cluster_name, principal_arn=arn, type="STANDARD")
            EksAccessPolicyAssociation(
                self,
                f"admin-{i}",
                cluster_name=cluster_name,
                principal_arn=entry.principal_arn,
                policy_arn=policy_arn,
                access_scope={"type": "cluster"},
            )
