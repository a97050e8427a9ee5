"""The traffic operator's view of a colour: an EKS access entry with one Kubernetes group and no access policy, and in
Argo CD's namespace a Role that may only read Argo CD's Applications, bound to that group.

That is what the gated shift's readiness reads as the operator (tools/readiness/release.py lists the Applications);
nothing else in the cluster is visible to it. An access entry without an access policy grants only what Kubernetes RBAC
binds to its groups (EKS API reference, CreateAccessEntry `kubernetesGroups`; User Guide, "Create access entries"), so
the group is the whole grant. No ClusterRole, no ClusterRoleBinding: the Role and its binding live in one namespace.
"""

from __future__ import annotations

from collections.abc import Sequence

from cdktf import ITerraformDependable
from cdktf_cdktf_provider_aws.eks_access_entry import EksAccessEntry
from cdktf_cdktf_provider_kubernetes.role_binding_v1 import RoleBindingV1, RoleBindingV1RoleRef, RoleBindingV1Subject
from cdktf_cdktf_provider_kubernetes.role_v1 import RoleV1, RoleV1Rule
from constructs import Construct

from model.argocd_access import APPLICATION_READERS, APPLICATIONS, ARGOCD_API_GROUP, READ_VERBS
from model.platform import ARGOCD_NAMESPACE

RBAC_API_GROUP = "rbac.authorization.k8s.io"


class TrafficOperatorAccess(Construct):
    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        cluster_name: str,
        principal_arn: str,
        depends_on: Sequence[ITerraformDependable],
    ) -> None:
        """principal_arn: the traffic operator's role (`eks.traffic_operator_role_arn`). depends_on: what Terraform
        needs to write into the cluster (its own admin access) and Argo CD's namespace; on destroy the Role and its
        binding go first, while that access still stands."""
        super().__init__(scope, id_)
        EksAccessEntry(
            self,
            "entry",
            cluster_name=cluster_name,
            principal_arn=principal_arn,
            type="STANDARD",
            kubernetes_groups=[APPLICATION_READERS],
        )
        metadata = {"name": APPLICATION_READERS, "namespace": ARGOCD_NAMESPACE}
        rule = RoleV1Rule(api_groups=[ARGOCD_API_GROUP], resources=[APPLICATIONS], verbs=list(READ_VERBS))
        role = RoleV1(self, "role", metadata=metadata, rule=[rule], depends_on=list(depends_on))
        self.binding = RoleBindingV1(
            self,
            "binding",
            metadata=metadata,
            role_ref=RoleBindingV1RoleRef(api_group=RBAC_API_GROUP, kind="Role", name=APPLICATION_READERS),
            subject=[RoleBindingV1Subject(kind="Group", name=APPLICATION_READERS, api_group=RBAC_API_GROUP)],
            depends_on=[role],
        )
