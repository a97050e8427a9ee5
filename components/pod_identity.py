"""Pod Identity associations: bind common's shared roles to this cluster's service accounts."""

from __future__ import annotations

from collections.abc import Mapping

from cdktf_cdktf_provider_aws.eks_pod_identity_association import EksPodIdentityAssociation
from constructs import Construct

from model.workloads import Workload


class PodIdentityAssociations(Construct):
    def __init__(self, scope: Construct, id_: str, *, cluster_name: str, role_arns: Mapping[Workload, str]) -> None:
        """role_arns: the role each workload assumes, read from common's state (never created here)."""
        super().__init__(scope, id_)
        self.associations = [
            EksPodIdentityAssociation(
                self,
                workload.service_account,
                cluster_name=cluster_name,
                namespace=workload.namespace,
                service_account=workload.service_account,
                role_arn=role_arn,
            )
            for workload, role_arn in role_arns.items()
        ]
