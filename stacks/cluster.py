"""One stack per colour: its own EKS cluster, bound to common's shared roles, running Argo CD.

Blue and green are this same class with different data; a colour reads common's outputs from
common's state and never reads another colour's.
"""

from __future__ import annotations

from cdktf import TerraformResource, TerraformStack
from cdktf_cdktf_provider_aws.data_aws_caller_identity import DataAwsCallerIdentity
from cdktf_cdktf_provider_aws.data_aws_partition import DataAwsPartition
from constructs import Construct

from components.addons import AFTER_NODES, BEFORE_NODES, Addons
from components.argocd import ArgoCd
from components.cluster_admins import ClusterAdmins
from components.control_plane import ControlPlane
from components.kube_providers import KubeProviders
from components.local_chart import LocalChart
from components.node_group import NodeGroup
from components.pod_identity import PodIdentityAssociations
from components.teardown import Teardown
from stacks.base import configure_stack, read_state
from stacks.config import COMMON_STACK, ClusterConfig, Config, cluster_name
from stacks.contract import LIST_OUTPUTS, CommonOutput
from stacks.teardown import teardown_plan
from stacks.values import cluster_facts, sample_app_values
from stacks.workloads import ARGOCD_NAMESPACE, PARENT_APPLICATION, SAMPLE_APP, WORKLOADS


class ClusterStack(TerraformStack):
    def __init__(self, scope: Construct, colour: str, *, config: Config, cluster: ClusterConfig) -> None:
        super().__init__(scope, colour)
        configure_stack(self, config, colour)
        self._common = read_state(self, "common", config.state, COMMON_STACK)
        name = cluster_name(config, colour)
        partition = DataAwsPartition(self, "partition").partition
        subnets = self.common_list(CommonOutput.PRIVATE_SUBNET_IDS)

        eks = ControlPlane(
            self,
            "eks",
            cluster_name=name,
            kubernetes_version=cluster.kubernetes_version,
            subnet_ids=subnets,
            settings=config.eks,
            partition=partition,
            account_id=DataAwsCallerIdentity(self, "account").account_id,
            region=config.region,
        )
        ClusterAdmins(self, "admins", cluster_name=eks.cluster_name, role_arns=config.eks.admin_role_arns, partition=partition)
        early = Addons(self, "addons", cluster_name=eks.cluster_name, names=BEFORE_NODES, versions=cluster.addon_versions)
        nodes = NodeGroup(
            self,
            "nodes",
            cluster_name=eks.cluster_name,
            subnet_ids=subnets,
            nodes=cluster.nodes,
            partition=partition,
            depends_on=early.addons,
        )
        late = Addons(
            self,
            "addons-on-nodes",
            cluster_name=eks.cluster_name,
            names=AFTER_NODES,
            versions=cluster.addon_versions,
            depends_on=[nodes.node_group],
        )
        identities = PodIdentityAssociations(
            self, "pod-identity", cluster_name=eks.cluster_name, role_arns={w: self.common(w.role) for w in WORKLOADS}
        )

        KubeProviders(
            self,
            "kube",
            cluster_name=eks.cluster_name,
            endpoint=eks.endpoint,
            certificate_authority=eks.certificate_authority,
            region=config.region,
        )
        platform = [nodes.node_group, *early.addons, *late.addons]
        argocd = ArgoCd(self, "argocd", namespace=ARGOCD_NAMESPACE, depends_on=platform)
        facts = cluster_facts(config=config, colour=colour, cluster=cluster, cluster_name=name, common=self.common)
        root = LocalChart(
            self,
            PARENT_APPLICATION,
            chart="root",
            release_name=PARENT_APPLICATION,
            namespace=ARGOCD_NAMESPACE,
            values=facts,
            depends_on=[argocd.release, *platform, *identities.associations],
        )
        if config.app.delivery == "helm":
            # After the root release, so the load balancer controller and ExternalDNS are up first.
            LocalChart(
                self,
                "sample-app",
                chart="sample-app",
                release_name="sample-app",
                namespace=SAMPLE_APP.namespace,
                create_namespace=True,
                values=sample_app_values(facts),
                depends_on=[root.release],
            )
        # Last: on destroy it runs first (apps, load balancer, records), and nothing else goes if it fails.
        everything = [node for node in self.node.find_all() if isinstance(node, TerraformResource)]
        Teardown(self, "teardown", plan=teardown_plan(config, colour, cluster), after=everything)

    def common(self, output: CommonOutput) -> str:
        """A string output of common's state, by its contract name."""
        if output in LIST_OUTPUTS:
            raise TypeError(f"{output} is a list; use common_list")
        return self._common.get_string(output.value)

    def common_list(self, output: CommonOutput) -> list[str]:
        if output not in LIST_OUTPUTS:
            raise TypeError(f"{output} is a string; use common")
        return self._common.get_list(output.value)
