"""Cluster administrators: an access entry + AmazonEKSClusterAdminPolicy per IAM principal, all in Terraform.

The identity that deploys is one of them, by its issuer ARN (an assumed-role session maps to its role),
beside the configured roles, as one set: listing the deploying role too gives one entry, not a
`409 ResourceInUseException` (terraform-aws-modules/terraform-aws-eks issues 2968/2969). EKS's own
creator bootstrap is off (components/control_plane.py), so no admin lives outside Terraform.
"""

from __future__ import annotations

from collections.abc import Sequence

from cdktf import Fn, TerraformIterator, Token
from cdktf_cdktf_provider_aws.data_aws_caller_identity import DataAwsCallerIdentity
from cdktf_cdktf_provider_aws.data_aws_iam_session_context import DataAwsIamSessionContext
from cdktf_cdktf_provider_aws.eks_access_entry import EksAccessEntry
from cdktf_cdktf_provider_aws.eks_access_policy_association import EksAccessPolicyAssociation
from constructs import Construct


class ClusterAdmins(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        cluster_name: str,
        deployer: DataAwsCallerIdentity,
        role_arns: Sequence[str],
        partition: str,
    ) -> None:
        """deployer: who runs Terraform; whoever deploys is admin (a second operator or a CI role that runs
        the shift or `cdktf destroy` must be in role_arns to plan against a cluster someone else deployed).
        role_arns: default none; admins that stay, whoever deploys."""
        super().__init__(scope, id_)
        # iam:GetRole on the session's role finds its path, which the assumed-role ARN leaves out.
        session = DataAwsIamSessionContext(self, "deployer", arn=deployer.arn)
        # toset(): one entry per distinct principal, decided at plan time from known values.
        principals = TerraformIterator.from_list(Token.as_list(Fn.concat([[session.issuer_arn], list(role_arns)])))
        entry = EksAccessEntry(
            self,
            "entry",
            for_each=principals,
            cluster_name=cluster_name,
            principal_arn=Token.as_string(principals.value),
            type="STANDARD",
        )
        self.admin_policies = EksAccessPolicyAssociation(
            self,
            "admin",
            for_each=principals,
            cluster_name=cluster_name,
            principal_arn=Token.as_string(principals.value),
            policy_arn=f"arn:{partition}:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy",
            access_scope={"type": "cluster"},
            depends_on=[entry],
        )
