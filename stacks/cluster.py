"""One stack per colour: its own EKS cluster, bound to common's shared roles, running Argo CD.

Blue and green are this same class with different data; a colour reads common's outputs from
common's state and never reads another colour's.
"""

from __future__ import annotations

from collections.abc import Sequence

from cdktf import Fn, TerraformResource, TerraformStack, Token
from cdktf_cdktf_provider_aws.data_aws_caller_identity import DataAwsCallerIdentity
from cdktf_cdktf_provider_aws.data_aws_partition import DataAwsPartition
from constructs import Construct

from components.addons import Addons, UnpinnedDefaults
from components.bootstrapped_chart import BootstrappedChart
from components.cluster_admins import ClusterAdmins
from components.control_plane import ControlPlane
from components.destroy_hook import DestroyHook
from components.kube_providers import KubeProviders
from components.live_weight import LiveWeight
from components.load_balancer_access import LoadBalancerAccess
from components.local_chart import LocalChart
from components.node_group import NodeGroup, NodeGroupGuard
from components.pod_identity import PodIdentityAssociations
from components.traffic_operator_access import TrafficOperatorAccess
from model.bootstrap import ARGO_CD_VALUES, BOOTSTRAP_SECRETS, EXTERNAL_SECRETS_VALUES, MANIFESTS_CHART, bootstrap_manifests
from model.config import COMMON_STACK, ClusterConfig, Config, application_workloads, cluster_name
from model.contract import LIST_OUTPUTS, TRAFFIC_DESCRIPTIONS, CommonOutput, TrafficOutput, common_outputs
from model.eks_addons import AFTER_NODES, BEFORE_NODES
from model.external_secrets import EXTERNAL_SECRETS, manifests, materialised
from model.literal import literals
from model.platform import ARGO_CD, ARGOCD_NAMESPACE, PARENT_APPLICATION
from model.routes import TRAFFIC_STACK, output_key, weights_parameter
from model.teardown_plan import teardown_plan
from model.values import cluster_facts
from model.workloads import ADDON_ROLES, WORKLOADS
from policies.boundary import policy_arn
from stacks.base import StackOutputs, configure_stack


class ClusterStack(TerraformStack):
    def __init__(self, scope: Construct, colour: str, *, config: Config, cluster: ClusterConfig) -> None:
        super().__init__(scope, colour)
        # From here on, every string of the configuration is data to Terraform (model/literal.py).
        config, cluster = configure_stack(self, config, colour), literals(cluster)
        self._common = StackOutputs(
            self, "common", state=config.state, stack_name=COMMON_STACK, names=common_outputs(config), lists=LIST_OUTPUTS
        )
        traffic = StackOutputs(self, "traffic", state=config.state, stack_name=TRAFFIC_STACK, names=TRAFFIC_DESCRIPTIONS)
        name = cluster_name(config, colour)
        partition = DataAwsPartition(self, "partition").partition
        subnets = self.common_list(CommonOutput.PRIVATE_SUBNET_IDS)

        account = DataAwsCallerIdentity(self, "account")
        boundary = policy_arn(partition=partition, account_id=account.account_id, project=config.project)
        eks = ControlPlane(
            self,
            "eks",
            colour=colour,
            cluster_name=name,
            kubernetes_version=cluster.kubernetes_version,
            support_type=cluster.support_type,
            subnet_ids=subnets,
            public_access_cidrs=self._public_access_cidrs(config),
            settings=config.eks,
            partition=partition,
            account_id=account.account_id,
            region=config.region,
            permissions_boundary=boundary,
        )
        admins = ClusterAdmins(
            self,
            "admins",
            cluster_name=eks.cluster_name,
            deployer_role_arn=config.eks.deployer_role_arn,
            caller=account,
            role_arns=config.eks.admin_role_arns,
            partition=partition,
        )
        # The CNI's and the EBS CSI driver's permissions on roles of their own, not on every process of the node.
        addon_identities = {role.name: (role.service_account, self.common(role.output)) for role in ADDON_ROLES}
        # An add-on with a minimum (aws-ebs-csi-driver) that the config leaves to EKS's default is judged at plan.
        unpinned = UnpinnedDefaults(colour=colour, kubernetes_version=cluster.kubernetes_version)
        early = Addons(
            self,
            "addons",
            cluster_name=eks.cluster_name,
            names=BEFORE_NODES,
            versions=cluster.addon_versions,
            pod_identities=addon_identities,
            unpinned=unpinned,
        )
        # Whether the colour serves is the live weights' to say (the shift moves them), never the config's.
        live = LiveWeight(self, "live-weight", parameter_name=weights_parameter(config.project), colour=colour)
        nodes = NodeGroup(
            self,
            "nodes",
            cluster_name=eks.cluster_name,
            kubernetes_version=eks.version,
            subnet_ids=subnets,
            nodes=cluster.nodes,
            guard=NodeGroupGuard(colour=colour, cluster_name=name, live_weight=live, listed_clusters=eks.listed_clusters),
            partition=partition,
            permissions_boundary=boundary,
            depends_on=early.addons,
        )
        late = Addons(
            self,
            "addons-on-nodes",
            cluster_name=eks.cluster_name,
            names=AFTER_NODES,
            versions=cluster.addon_versions,
            pod_identities=addon_identities,
            unpinned=unpinned,
            depends_on=[nodes.node_group],
        )
        workloads = (*WORKLOADS, *application_workloads(config))
        identities = PodIdentityAssociations(
            self, "pod-identity", cluster_name=eks.cluster_name, role_arns={w: self.common(w.output) for w in workloads}
        )
        access = LoadBalancerAccess(
            self,
            "load-balancer-access",
            colour=colour,
            cluster_security_group_id=eks.cluster_security_group_id,
            load_balancer_security_group_id=traffic.string(TrafficOutput.SECURITY_GROUP_ID),
            target_groups=traffic.any(TrafficOutput.TARGET_GROUPS),
            applications=list(config.applications),
        )

        KubeProviders(
            self,
            "kube",
            cluster_name=eks.cluster_name,
            endpoint=eks.endpoint,
            certificate_authority=eks.certificate_authority,
            region=config.region,
        )
        # What Helm and Kubernetes resources need, up before them and down after them: nodes, add-ons and
        # the admin access Terraform itself uses to reach the cluster.
        platform = [nodes.node_group, *early.addons, *late.addons, admins.admin_policies]
        release = config.release(colour)
        # Argo CD, with the few values it needs to start; it manages itself from Git afterwards (model/bootstrap.py).
        argocd = BootstrappedChart(
            self,
            "argocd",
            component=ARGO_CD,
            version=release.platform.version(ARGO_CD),
            values=ARGO_CD_VALUES,
            depends_on=platform,
            timeout=900,
        )
        # External Secrets Operator beside it, after its Pod Identity association (EKS hands a pod its credentials
        # only when the association exists as the pod starts), then what it makes before the parent's first clone:
        # the repository credentials (model/external_secrets.py). The App of Apps keeps the same objects from then on.
        external_secrets = BootstrappedChart(
            self,
            EXTERNAL_SECRETS.name,
            component=EXTERNAL_SECRETS,
            version=release.platform.version(EXTERNAL_SECRETS),
            values=EXTERNAL_SECRETS_VALUES,
            depends_on=[*platform, *identities.associations],
        )
        secrets = manifests(materialised(config), region=config.region)
        bootstrapped = [argocd.release, external_secrets.release]
        if secrets:
            bootstrapped.append(
                LocalChart(
                    self,
                    BOOTSTRAP_SECRETS,
                    chart=MANIFESTS_CHART,
                    release_name=BOOTSTRAP_SECRETS,
                    namespace=ARGOCD_NAMESPACE,
                    values={"manifests": secrets},
                    depends_on=[*bootstrapped, *platform],
                ).release
            )

        def target_group(app: str) -> str:
            return traffic.string_at(TrafficOutput.TARGET_GROUPS, output_key(colour), output_key(app))

        facts = cluster_facts(config=config, colour=colour, common=self.common, target_group=target_group)
        # The parent Application: argocd/apps at the colour's revision, the facts as its values. Everything
        # else in the cluster Argo CD installs from Git at that revision (model/bootstrap.py).
        LocalChart(
            self,
            PARENT_APPLICATION,
            chart=MANIFESTS_CHART,
            release_name=PARENT_APPLICATION,
            namespace=ARGOCD_NAMESPACE,
            values={"manifests": bootstrap_manifests(facts)},
            depends_on=[*bootstrapped, *platform, *identities.associations, access.rule],
        )
        if config.eks.traffic_operator_role_arn is not None:
            # The gated shift's readiness, as the traffic operator, reads Argo CD's Applications and nothing else.
            TrafficOperatorAccess(
                self,
                "traffic-operator",
                cluster_name=eks.cluster_name,
                principal_arn=config.eks.traffic_operator_role_arn,
                depends_on=[argocd.release, *platform],
            )
        # Last: on destroy it runs first (apps, load balancer, records), and nothing else goes if it fails.
        everything = [node for node in self.node.find_all() if isinstance(node, TerraformResource)]
        DestroyHook(self, "teardown", plan=teardown_plan(config, colour), after=everything)

    def _public_access_cidrs(self, config: Config) -> Sequence[str]:
        """Who may reach the public endpoint. With the private endpoint off, nodes reach the public one from
        the NAT gateways' addresses; AWS: "If you've disabled private endpoint access, make sure that you
        specify the necessary CIDR blocks for every node" (EKS API, VpcConfigRequest.publicAccessCidrs)."""
        allowed = list(config.eks.public_access_cidrs)
        if not config.eks.endpoint_public_access or config.eks.endpoint_private_access:
            return allowed
        nat = Fn.formatlist("%s/32", [self.common_list(CommonOutput.NAT_PUBLIC_IPS)])
        return Token.as_list(Fn.concat([allowed, nat]))

    def common(self, output: str) -> str:
        """A string output of common's state, by its contract name (model/contract.py)."""
        return self._common.string(output)

    def common_list(self, output: str) -> list[str]:
        return self._common.list(output)
