"""An IAM role for EKS Pod Identity: trusts `pods.eks.amazonaws.com`, not a cluster's OIDC issuer.

That trust names no one cluster, so one role serves blue, green and any later colour: a new cluster
adds an association on its side and never edits the role. It does name, through the session tags EKS
Pod Identity sets (Amazon EKS User Guide, "Grant Pods access to AWS resources based on tags", list of
session tags: eks-cluster-name, kubernetes-namespace, kubernetes-service-account, ...), the one
namespace and service account that may use it and the project's cluster names (`<project>-*`), so no
association for another pod, nor of another project's cluster, can have it. A project whose name starts with
`<project>-` in the same account would match the pattern: give projects that share an account names that are no
prefix of each other.

No `aws:SourceAccount` (issue #45, decided on evidence): no AWS source says EKS Auth puts it, or `aws:SourceArn`, in
the request context of the AssumeRole it makes for `pods.eks.amazonaws.com`, and without the key every pod loses its
role (aws-node's included). Read: "Create IAM role with trust policy required by EKS Pod Identity"
(https://docs.aws.amazon.com/eks/latest/userguide/pod-id-role.html) and "Grant Pods access to AWS resources based on
tags" (https://docs.aws.amazon.com/eks/latest/userguide/pod-id-abac.html) document the session-tag conditions only;
the EKS Best Practices Guide, "Identity and Access Management" (aws/aws-eks-best-practices
latest/bpg/security/iam.adoc at b784fad, "EKS Pod Identities") says EKS passes `aws:SourceOrgId`, which an account
outside AWS Organizations has not; the EKS User Guide documents `aws:SourceArn` for Fargate's
`eks-fargate-pods.amazonaws.com` only (awsdocs/amazon-eks-user-guide
latest/ug/security/iam-reference/security-iam.adoc at 4d52b4d). Samples and users' reports that the key works are not
AWS's word. What the key would have added is already held: "The EKS Pod Identity role must be in your EKS cluster's
account due to IAM PassRole requirements" ("Access AWS Resources using EKS Pod Identity Target IAM Roles",
https://docs.aws.amazon.com/eks/latest/userguide/pod-id-assign-target-role.html), so only an association made in this
account, by an identity allowed iam:PassRole on the role, binds it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from cdktf import TerraformResource
from cdktf_cdktf_provider_aws.iam_policy import IamPolicy
from cdktf_cdktf_provider_aws.iam_role import IamRole
from cdktf_cdktf_provider_aws.iam_role_policy_attachment import IamRolePolicyAttachment
from constructs import Construct

import policies


class PodIdentityRole(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        role_name: str,
        description: str,
        namespace: str,
        service_account: str,
        cluster_names: str,
        permissions_boundary: str,
        policy_json: str = "",
        managed_policy_arns: Sequence[str] = (),
        moved_from: Mapping[str, str] = MappingProxyType({}),
    ) -> None:
        """permissions_boundary: the project's boundary's ARN (policies/boundary.py); its own policies never reach
        past it. cluster_names: the StringLike pattern of the clusters that may use it (model/config/ cluster_names).
        policy_json: default none; a policy of this role's own. managed_policy_arns: default none.
        moved_from: the Terraform address each of its resources had before ("role", "policy", "attachment"); default
        none. Terraform moves that state here instead of replacing the role."""
        super().__init__(scope, id_)
        role = IamRole(
            self,
            "role",
            name=role_name,
            description=description,
            assume_role_policy=policies.render(
                "pod_identity_trust",
                NAMESPACE=namespace,
                SERVICE_ACCOUNT=service_account,
                CLUSTER_NAMES=cluster_names,
            ),
            permissions_boundary=permissions_boundary,
        )
        made: dict[str, TerraformResource] = {"role": role}
        if policy_json:
            policy = IamPolicy(self, "policy", name=role_name, description=description, policy=policy_json)
            attachment = IamRolePolicyAttachment(self, "attachment", role=role.name, policy_arn=policy.arn)
            made.update(policy=policy, attachment=attachment)
        for i, arn in enumerate(managed_policy_arns):
            IamRolePolicyAttachment(self, f"managed-{i}", role=role.name, policy_arn=arn)
        for part, address in moved_from.items():
            made[part].move_from_id(address)
        self.role_arn = role.arn
