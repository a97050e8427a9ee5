"""Cluster administrators: an access entry + AmazonEKSClusterAdminPolicy per IAM principal, all in Terraform.

The identity that deploys is one of them, beside the configured roles, as one set: listing the deploying role too
gives one entry, not a `409 ResourceInUseException` (terraform-aws-modules/terraform-aws-eks issues 2968/2969). It is
the configured deployer role when there is one (`eks.deployer_role_arn`), so a plan by anyone else (a pipeline's
plan role, a colleague) proposes no change to who is admin; otherwise whoever runs Terraform, by its issuer ARN (an
assumed-role session maps to its role). EKS's own creator bootstrap is off (components/control_plane.py), so no admin
lives outside Terraform.
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
        deployer_role_arn: str | None,
        caller: DataAwsCallerIdentity,
        role_arns: Sequence[str],
        partition: str,
    ) -> None:
        """deployer_role_arn: the role that applies (config); None: whoever runs Terraform (caller), as one person
        does from a laptop. role_arns: default none; admins that stay, whoever deploys (a second operator, or a CI role
        that runs `cdktf destroy`, must be listed to reach a cluster someone else deployed)."""
        super().__init__(scope, id_)
        if deployer_role_arn is None:
            # iam:GetRole on the session's role finds its path, which the assumed-role ARN leaves out.
            deployer = DataAwsIamSessionContext(self, "deployer", arn=caller.arn).issuer_arn
        else:
            deployer = deployer_role_arn
        # toset(): one entry per distinct principal, decided at plan time from known values.
        principals = TerraformIterator.from_list(Token.as_list(Fn.concat([[deployer], list(role_arns)])))
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
