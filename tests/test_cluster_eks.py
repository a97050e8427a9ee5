"""Each colour's EKS cluster, node group, add-ons, Pod Identity associations, providers and releases."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from cdktf import Testing

from components.destroy_hook import python_command, with_failure_grace
from model.config import Config, SupportType, application_workloads
from model.eks_addons import ADDONS
from model.platform import ARGO_CD
from model.workloads import WORKLOADS, Workload
from tests.support.configs import (
    ADMIN_ROLE,
    DEPLOYER_ROLE,
    EVERYTHING_ON,
    EXAMPLE_COLOURS,
    PINNED_ADDONS,
    VARIANT,
    example,
    validated,
)
from tests.support.synth import Synthesized

COLOURS = EXAMPLE_COLOURS
ADMIN = ADMIN_ROLE
PINNED = PINNED_ADDONS


@pytest.fixture(scope="module")
def config() -> Config:
    return example()


# Every association a colour of the example makes: the platform's and the sample app's (its only application).
BOUND: tuple[Workload, ...] = (*WORKLOADS, *application_workloads(example()))


@pytest.fixture(scope="module")
def variant(variant_app: Synthesized) -> Synthesized:
    """Admins, a private-only endpoint, and blue with pinned add-ons and spot ARM nodes (tests/support/configs.VARIANT)."""
    return variant_app


def address(app: Synthesized, stack: str, resource_type: str, path: str) -> str:
    found = app.json(stack)["resource"][resource_type]
    (name,) = [n for n, body in found.items() if body["//"]["metadata"]["path"] == f"{stack}/{path}"]
    return f"{resource_type}.{name}"


def ref(app: Synthesized, stack: str, resource_type: str, path: str, attribute: str) -> str:
    return f"${{{address(app, stack, resource_type, path)}.{attribute}}}"


def common_output(name: str) -> str:
    return f"${{data.terraform_remote_state.common.outputs.{name}}}"


# --- control plane -----------------------------------------------------------------------------


@pytest.mark.parametrize("colour", COLOURS)
def test_cluster(example_app: Synthesized, config: Config, colour: str) -> None:
    cluster = example_app.resource(colour, "aws_eks_cluster", "eks/cluster")
    assert cluster["name"] == f"eks-bg-{colour}"
    assert cluster["version"] == config.clusters[colour].kubernetes_version
    # No admin outside Terraform: the creator's bootstrap entry would collide with a Terraform one (409).
    assert cluster["access_config"] == {"authentication_mode": "API", "bootstrap_cluster_creator_admin_permissions": False}
    assert cluster["kubernetes_network_config"] == {"service_ipv4_cidr": "172.20.0.0/16", "ip_family": "ipv4"}
    assert cluster["enabled_cluster_log_types"] == ["api", "audit", "authenticator", "controllerManager", "scheduler"]
    assert cluster["vpc_config"] == {
        "subnet_ids": common_output("private_subnet_ids"),
        "endpoint_private_access": True,
        "endpoint_public_access": True,
        "public_access_cidrs": ["203.0.113.0/24"],  # what the example names: no default, never the internet
    }
    assert cluster["encryption_config"] == {
        "provider": {"key_arn": ref(example_app, colour, "aws_kms_key", "eks/key/key", "arn")},
        "resources": ["secrets"],
    }
    # The role's ARN from its name (tests/test_cluster_replacement.py says why not its `arn`).
    role = example_app.resource(colour, "aws_iam_role", "eks/role")
    assert cluster["role_arn"].endswith(f":role/{role['name']}")


@pytest.mark.parametrize("colour", COLOURS)
def test_secrets_key_and_logs(example_app: Synthesized, colour: str) -> None:
    text = example_app.text(colour)
    assert Testing.to_have_resource_with_properties(text, "aws_kms_key", {"enable_key_rotation": True})
    assert Testing.to_have_resource_with_properties(
        text, "aws_cloudwatch_log_group", {"name": f"/aws/eks/eks-bg-{colour}/cluster", "retention_in_days": 365}
    )
    key = ref(example_app, colour, "aws_kms_key", "eks/key/key", "arn")
    assert example_app.resource(colour, "aws_cloudwatch_log_group", "eks/logs")["kms_key_id"] == key
    encryption = json.loads(example_app.resource(colour, "aws_iam_role_policy", "eks/encryption")["policy"])
    assert encryption["Statement"][0]["Resource"] == ref(example_app, colour, "aws_kms_key", "eks/key/key", "arn")


@pytest.mark.parametrize("colour", COLOURS)
def test_cluster_role(example_app: Synthesized, colour: str) -> None:
    role = example_app.resource(colour, "aws_iam_role", "eks/role")
    assert json.loads(role["assume_role_policy"])["Statement"][0]["Principal"] == {"Service": "eks.amazonaws.com"}
    attachment = example_app.resource(colour, "aws_iam_role_policy_attachment", "eks/policy")
    assert attachment["policy_arn"] == "arn:${data.aws_partition.partition.partition}:iam::aws:policy/AmazonEKSClusterPolicy"


def synthesized_config(fixture: str) -> Config:
    """The configuration a session fixture synthesized (tests/conftest.py)."""
    if fixture == "example_app":
        return example()
    return validated({"everything_on": EVERYTHING_ON, "variant_app": VARIANT}[fixture])


@pytest.mark.parametrize("fixture", ["example_app", "everything_on", "variant_app"])
def test_every_cluster_names_its_colours_support_policy(fixture: str, request: pytest.FixtureRequest) -> None:
    """upgrade_policy.support_type as clusters.<colour>.support_type says: what AWS does at the end of standard
    support is the config's choice, never AWS's default."""
    app: Synthesized = request.getfixturevalue(fixture)
    config = synthesized_config(fixture)
    found = {
        colour: [body.get("upgrade_policy") for body in app.resources(colour, "aws_eks_cluster").values()]
        for colour in config.clusters
    }
    assert found == {colour: [{"support_type": cluster.support_type}] for colour, cluster in config.clusters.items()}


@pytest.mark.parametrize("support_type", ["STANDARD", "EXTENDED"])
def test_the_support_type_reaches_the_cluster_as_given(support_type: SupportType) -> None:
    """Each value as such (the synthesized configs all run the default): the control plane alone, synthesized."""
    from cdktf import TerraformStack

    from components.control_plane import ControlPlane
    from model.config import EksConfig

    stack = TerraformStack(Testing.app(), "support")
    ControlPlane(
        stack,
        "eks",
        colour="blue",
        cluster_name="eks-bg-blue",
        kubernetes_version="1.35",
        support_type=support_type,
        subnet_ids=["subnet-1"],
        public_access_cidrs=[],
        settings=EksConfig(),
        partition="aws",
        account_id="123456789012",
        region="ap-northeast-1",
        permissions_boundary="arn:aws:iam::123456789012:policy/boundary-eks-bg",
    )
    (cluster,) = json.loads(Testing.synth(stack))["resource"]["aws_eks_cluster"].values()
    assert cluster["upgrade_policy"] == {"support_type": support_type}


@pytest.mark.parametrize("colour", COLOURS)
def test_a_leftover_log_group_is_removed_before_the_log_group_is_created_and_after_it_is_destroyed(
    example_app: Synthesized, colour: str
) -> None:
    """EKS re-creates a colour's log group after the destroy. The step runs tools.log_group once per incarnation at
    create, and at destroy, after the cluster and the group, watches for it (tests/test_orphaned_logs.py runs it, and
    Terraform too)."""
    step = example_app.resource(colour, "terraform_data", "eks/orphaned-logs")
    assert step["input"] == {
        "log_group": f"/aws/eks/eks-bg-{colour}/cluster",
        "cluster": f"eks-bg-{colour}",
        "region": "ap-northeast-1",
    }
    created, destroyed = step["provisioner"]
    assert created["local-exec"] == {
        "command": python_command("tools.log_group"),
        "environment": {"ORPHANED_LOG_GROUP": "${jsonencode(self.input)}"},
    }  # no "when": at create
    assert destroyed["local-exec"] == {
        "when": "destroy",
        "command": with_failure_grace(python_command("tools.log_group")),
        "environment": {"ORPHANED_LOG_GROUP": "${jsonencode(self.input)}", "LOG_GROUP_WATCH_SECONDS": "300"},
    }
    assert "triggers_replace" not in step  # once per incarnation, not on a running colour's changes
    logs = example_app.resource(colour, "aws_cloudwatch_log_group", "eks/logs")
    assert logs["depends_on"] == [address(example_app, colour, "terraform_data", "eks/orphaned-logs")]


def test_endpoint_access_from_config(variant: Synthesized) -> None:
    vpc = variant.resource("blue", "aws_eks_cluster", "eks/cluster")["vpc_config"]
    assert (vpc["endpoint_public_access"], vpc["endpoint_private_access"], vpc["public_access_cidrs"]) == (False, True, [])


def admins(app: Synthesized, colour: str = "blue") -> tuple[dict[str, Any], dict[str, Any]]:
    return (
        app.resource(colour, "aws_eks_access_entry", "admins/entry"),
        app.resource(colour, "aws_eks_access_policy_association", "admins/admin"),
    )


def session_issuer(app: Synthesized, colour: str = "blue") -> str:
    """The deploying identity's issuer ARN: an assumed-role session maps to its role."""
    (name,) = app.json(colour)["data"]["aws_iam_session_context"]
    session = app.json(colour)["data"]["aws_iam_session_context"][name]
    assert session["arn"] == f"${{{address_of_data(app, colour, 'aws_caller_identity')}.arn}}"
    return f"data.aws_iam_session_context.{name}.issuer_arn"


def address_of_data(app: Synthesized, colour: str, kind: str) -> str:
    (name,) = app.json(colour)["data"][kind]
    return f"data.{kind}.{name}"


def test_without_a_deployer_role_whoever_deploys_and_the_listed_roles_are_admins_once_each(example_app: Synthesized) -> None:
    """One person's setup: the identity that runs Terraform is admin; one set of principals, decided at plan time, so
    listing the deploying role as well gives one entry."""
    entry, association = admins(example_app)
    principals = f"${{toset(concat([{session_issuer(example_app)}], []))}}"
    assert (entry["for_each"], entry["principal_arn"], entry["type"]) == (principals, "${each.value}", "STANDARD")
    assert (association["for_each"], association["principal_arn"]) == (principals, "${each.value}")
    assert association["policy_arn"].endswith(":eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy")
    assert association["access_scope"] == {"type": "cluster"}
    assert association["depends_on"] == [address(example_app, "blue", "aws_eks_access_entry", "admins/entry")]


@pytest.mark.parametrize("colour", ["blue", "green", "purple"])
def test_the_configured_deployer_role_is_admin_whoever_plans(variant: Synthesized, colour: str) -> None:
    """`eks.deployer_role_arn` set: the admins are that role and the listed ones, never the caller (a pull request's
    plan, as the plan role, would otherwise propose replacing the deployer's entry with its own)."""
    entry, association = admins(variant, colour)
    principals = f'${{toset(concat(["{DEPLOYER_ROLE}"], ["{ADMIN}"]))}}'
    assert (entry["for_each"], association["for_each"]) == (principals, principals)
    assert "aws_iam_session_context" not in variant.json(colour).get("data", {})


@pytest.mark.parametrize("colour", COLOURS)
def test_what_terraform_does_inside_the_cluster_waits_for_its_admin_access(example_app: Synthesized, colour: str) -> None:
    """Helm and Kubernetes resources are created after, and destroyed before, the access Terraform uses for them."""
    admin = address(example_app, colour, "aws_eks_access_policy_association", "admins/admin")
    inside = [
        *example_app.resources(colour, "helm_release").values(),
        *example_app.resources(colour, "kubernetes_namespace_v1").values(),
    ]
    # The argocd and external-secrets namespaces, Argo CD, External Secrets Operator, its first Secrets, the App of Apps.
    assert len(inside) == 6
    assert all(admin in body["depends_on"] for body in inside)


# --- nodes -------------------------------------------------------------------------------------


@pytest.mark.parametrize("colour", COLOURS)
def test_launch_template_blocks_pod_access_to_node_credentials(example_app: Synthesized, colour: str) -> None:
    template = example_app.resource(colour, "aws_launch_template", "nodes/template")
    assert template["metadata_options"] == {
        "http_endpoint": "enabled",
        "http_tokens": "required",
        "http_put_response_hop_limit": 1,
    }
    assert template["block_device_mappings"] == [
        {
            "device_name": "/dev/xvda",
            "ebs": {"volume_size": 50, "volume_type": "gp3", "encrypted": "true", "delete_on_termination": "true"},
        }
    ]


@pytest.mark.parametrize("colour", COLOURS)
def test_node_group(example_app: Synthesized, colour: str) -> None:
    group = example_app.resource(colour, "aws_eks_node_group", "nodes/group")
    assert group["subnet_ids"] == common_output("private_subnet_ids")
    assert group["scaling_config"] == {"min_size": 2, "max_size": 4, "desired_size": 2}
    assert group["update_config"] == {"max_unavailable": 1}
    assert (group["capacity_type"], group["instance_types"], group["ami_type"]) == (
        "ON_DEMAND",
        ["m7i.large"],
        "AL2023_x86_64_STANDARD",
    )
    template = address(example_app, colour, "aws_launch_template", "nodes/template")
    assert group["launch_template"] == {"id": f"${{{template}.id}}", "version": f"${{{template}.latest_version}}"}
    policies = {
        body["policy_arn"].rsplit("/", 1)[1]
        for path, body in example_app.resources(colour, "aws_iam_role_policy_attachment").items()
        if path.startswith("nodes/")
    }
    # No AmazonEKS_CNI_Policy: only aws-node holds the CNI's EC2 permissions (its own role, below).
    assert policies == {"AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryPullOnly"}


@pytest.mark.parametrize("fixture", ["example_app", "variant"])
def test_the_node_group_follows_its_clusters_version(fixture: str, request: pytest.FixtureRequest) -> None:
    """The cluster's own attribute, not the config's string: an in-place control-plane upgrade is applied first,
    then the nodes move to the new version (an in-place update of the group)."""
    app: Synthesized = request.getfixturevalue(fixture)
    for colour in app.stacks():
        if colour in ("common", "traffic"):
            continue
        group = app.resource(colour, "aws_eks_node_group", "nodes/group")
        assert group["version"] == ref(app, colour, "aws_eks_cluster", "eks/cluster", "version")
        assert "image_id" not in app.resource(colour, "aws_launch_template", "nodes/template")  # EKS picks the AMI


def test_node_group_from_config(variant: Synthesized) -> None:
    group = variant.resource("blue", "aws_eks_node_group", "nodes/group")
    assert (group["capacity_type"], group["instance_types"], group["ami_type"]) == (
        "SPOT",
        ["m7g.large", "m6g.large"],
        "AL2023_ARM_64_STANDARD",
    )


# --- add-ons -----------------------------------------------------------------------------------


@pytest.mark.parametrize("colour", COLOURS)
def test_addons_without_pinned_versions(example_app: Synthesized, colour: str) -> None:
    addons = {body["addon_name"]: body for body in example_app.resources(colour, "aws_eks_addon").values()}
    assert (
        sorted(addons) == sorted(ADDONS) == ["aws-ebs-csi-driver", "coredns", "eks-pod-identity-agent", "kube-proxy", "vpc-cni"]
    )
    for body in addons.values():
        assert "addon_version" not in body
        assert (body["resolve_conflicts_on_create"], body["resolve_conflicts_on_update"]) == ("OVERWRITE", "OVERWRITE")


@pytest.mark.parametrize("colour", COLOURS)
def test_the_vpc_cni_runs_on_its_own_role_once_the_pod_identity_agent_is_there(example_app: Synthesized, colour: str) -> None:
    addons = {body["addon_name"]: body for body in example_app.resources(colour, "aws_eks_addon").values()}
    assert addons["vpc-cni"]["pod_identity_association"] == [
        {"service_account": "aws-node", "role_arn": common_output("vpc_cni_role_arn")}
    ]
    assert address(example_app, colour, "aws_eks_addon", "addons/eks-pod-identity-agent") in addons["vpc-cni"]["depends_on"]
    others = [name for name, body in addons.items() if "pod_identity_association" in body and name != "vpc-cni"]
    assert others == ["aws-ebs-csi-driver"]


@pytest.mark.parametrize("colour", COLOURS)
def test_the_ebs_csi_driver_goes_on_after_the_nodes_on_its_own_shared_role(example_app: Synthesized, colour: str) -> None:
    """Its controller needs nodes to run on (like coredns); its service account (the driver chart's
    `controller.serviceAccount.name`) assumes common's role, shared by every colour: the role's cluster-scoped policy keeps
    each colour to its own volumes (model/workloads.py)."""
    driver = example_app.resource(colour, "aws_eks_addon", "addons-on-nodes/aws-ebs-csi-driver")
    assert driver["addon_name"] == "aws-ebs-csi-driver"
    assert driver["pod_identity_association"] == [
        {"service_account": "ebs-csi-controller-sa", "role_arn": common_output("aws_ebs_csi_driver_role_arn")}
    ]
    assert driver["depends_on"] == [address(example_app, colour, "aws_eks_node_group", "nodes/group")]
    # The node group waits for the Pod Identity agent, so the driver's credentials are there when it starts.
    agent = address(example_app, colour, "aws_eks_addon", "addons/eks-pod-identity-agent")
    assert agent in example_app.resource(colour, "aws_eks_node_group", "nodes/group")["depends_on"]


@pytest.mark.parametrize("colour", COLOURS)
def test_the_vpc_cni_enforces_network_policies(example_app: Synthesized, colour: str) -> None:
    """The sample app's NetworkPolicy (argocd/sample-app) is enforced, not merely accepted."""
    addons = {body["addon_name"]: body for body in example_app.resources(colour, "aws_eks_addon").values()}
    assert json.loads(addons["vpc-cni"]["configuration_values"]) == {"enableNetworkPolicy": "true"}
    assert [name for name, body in addons.items() if "configuration_values" in body] == ["vpc-cni"]


@pytest.mark.parametrize("colour", COLOURS)
def test_nodes_wait_for_networking_and_coredns_waits_for_nodes(example_app: Synthesized, colour: str) -> None:
    group = example_app.resource(colour, "aws_eks_node_group", "nodes/group")
    early = {
        address(example_app, colour, "aws_eks_addon", f"addons/{n}") for n in ("vpc-cni", "kube-proxy", "eks-pod-identity-agent")
    }
    assert early <= set(group["depends_on"])
    coredns = example_app.resource(colour, "aws_eks_addon", "addons-on-nodes/coredns")
    assert coredns["depends_on"] == [address(example_app, colour, "aws_eks_node_group", "nodes/group")]


def test_addon_versions_pinned_from_config(variant: Synthesized) -> None:
    versions = {body["addon_name"]: body.get("addon_version") for body in variant.resources("blue", "aws_eks_addon").values()}
    assert versions == {
        "vpc-cni": PINNED["vpc-cni"],
        "kube-proxy": None,
        "eks-pod-identity-agent": None,
        "coredns": PINNED["coredns"],
        "aws-ebs-csi-driver": None,
    }


# --- Pod Identity ------------------------------------------------------------------------------


@pytest.mark.parametrize("colour", COLOURS)
def test_pod_identity_associations_bind_commons_roles(example_app: Synthesized, colour: str) -> None:
    """One per workload of the registry and per application with a policy, bound to the role common publishes for it
    (tests/test_pod_identity_roles.py follows each to the role's trust)."""
    associations = example_app.resources(colour, "aws_eks_pod_identity_association")
    found = {(a["namespace"], a["service_account"]): a["role_arn"] for a in associations.values()}
    assert found == {(w.namespace, w.service_account): common_output(f"{w.name.replace('-', '_')}_role_arn") for w in BOUND}
    assert {a["cluster_name"] for a in associations.values()} == {
        ref(example_app, colour, "aws_eks_cluster", "eks/cluster", "name")
    }


@pytest.mark.parametrize("colour", COLOURS)
def test_no_oidc_provider_no_irsa(example_app: Synthesized, colour: str) -> None:
    text = example_app.text(colour)
    assert "aws_iam_openid_connect_provider" not in text
    assert "eks.amazonaws.com/role-arn" not in text
    assert "AssumeRoleWithWebIdentity" not in text
    assert "aws_iam_role_policy_attachment" in text  # the check above looks at real resources


# --- providers and releases --------------------------------------------------------------------


@pytest.mark.parametrize("colour", COLOURS)
def test_helm_and_kubernetes_providers_use_short_lived_eks_tokens(example_app: Synthesized, colour: str) -> None:
    providers = example_app.json(colour)["provider"]
    cluster = address(example_app, colour, "aws_eks_cluster", "eks/cluster")
    token = {
        "api_version": "client.authentication.k8s.io/v1beta1",
        "command": "aws",
        "args": ["eks", "get-token", "--cluster-name", f"${{{cluster}.name}}", "--region", "ap-northeast-1", "--output", "json"],
    }
    connection = {
        "host": f"${{{cluster}.endpoint}}",
        "cluster_ca_certificate": f"${{base64decode({cluster}.certificate_authority[0].data)}}",
    }
    (helm,) = providers["helm"]
    assert helm == {"kubernetes": {**connection, "exec": token}}  # helm 3.x: objects, not blocks
    (kubernetes,) = providers["kubernetes"]
    assert kubernetes == {**connection, "exec": [token]}
    assert example_app.json(colour)["terraform"]["required_providers"]["helm"]["version"] == "3.1.1"


def releases(app: Synthesized, colour: str) -> dict[str, dict[str, Any]]:
    return {body["name"]: body for body in app.resources(colour, "helm_release").values()}


@pytest.mark.parametrize("colour", COLOURS)
def test_argocd_release(example_app: Synthesized, config: Config, colour: str) -> None:
    argocd = releases(example_app, colour)["argo-cd"]
    assert (argocd["repository"], argocd["chart"], argocd["version"]) == (
        "https://argoproj.github.io/argo-helm",
        "argo-cd",
        config.release(colour).platform.version(ARGO_CD),
    )
    assert argocd["namespace"] == ref(example_app, colour, "kubernetes_namespace_v1", "argocd/namespace", "metadata[0].name")
    (text,) = argocd["values"]
    # Only what must hold from the first minute: the rest comes from Git when Argo CD manages itself.
    assert yaml.safe_load(text) == {
        "dex": {"enabled": False},
        "server": {"service": {"type": "ClusterIP"}, "ingress": {"enabled": False}},
    }
    needs = {address(example_app, colour, "aws_eks_node_group", "nodes/group")}
    needs |= {
        address(example_app, colour, "aws_eks_addon", f"addons/{n}") for n in ("vpc-cni", "kube-proxy", "eks-pod-identity-agent")
    }
    needs |= {address(example_app, colour, "aws_eks_addon", f"addons-on-nodes/{n}") for n in ("coredns", "aws-ebs-csi-driver")}
    needs.add(address(example_app, colour, "aws_eks_access_policy_association", "admins/admin"))
    assert needs == set(argocd["depends_on"])


@pytest.mark.parametrize("fixture", ["example_app", "everything_on"])
def test_every_helm_release_keeps_five_revisions(fixture: str, request: pytest.FixtureRequest) -> None:
    """Each revision Helm keeps is a Secret with the release's values: the provider's default (0) keeps every one."""
    app: Synthesized = request.getfixturevalue(fixture)
    found = {(colour, name): body.get("max_history") for colour in app.colours() for name, body in releases(app, colour).items()}
    assert len(found) >= 2 * len(app.colours())  # Argo CD and the App of Apps in every colour at least
    assert set(found.values()) == {5}, found


@pytest.mark.parametrize("colour", COLOURS)
def test_argo_cds_bounded_history_never_upgrades_a_running_argo_cd(example_app: Synthesized, colour: str) -> None:
    """Helm applies max_history only while upgrading and stores it nowhere: a change of it on a colour installed before
    would only upgrade Argo CD with the bootstrap values over what Argo CD manages itself, so Terraform ignores it."""
    argocd = releases(example_app, colour)["argo-cd"]
    assert "max_history" in argocd["lifecycle"]["ignore_changes"]


@pytest.mark.parametrize("colour", COLOURS)
def test_root_release_goes_in_after_and_out_before_what_the_apps_need(example_app: Synthesized, colour: str) -> None:
    root = releases(example_app, colour)["app-of-apps"]
    assert root["chart"].startswith("assets/"), root["chart"]  # carried inside cdktf.out (tests/test_portable_output.py)
    assert root["namespace"] == "argocd"
    depends = set(root["depends_on"])
    assert address(example_app, colour, "helm_release", "argocd/release") in depends
    assert address(example_app, colour, "aws_eks_node_group", "nodes/group") in depends
    assert len([d for d in depends if d.startswith("aws_eks_addon.")]) == 5
    associations = {
        f"aws_eks_pod_identity_association.{n}" for n in example_app.json(colour)["resource"]["aws_eks_pod_identity_association"]
    }
    assert len(associations) == len(BOUND)
    assert associations <= depends
    # And the shared load balancer's access to the pods, with its check that the traffic stack has the colour's groups.
    assert (
        address(example_app, colour, "aws_vpc_security_group_ingress_rule", "load-balancer-access/from-load-balancer") in depends
    )


def expected_resources(colour: str, version: str, argo_cd: str) -> list[tuple[str, dict[str, Any]]]:
    """(type, properties) that each colour's stack must hold, checked with cdktf's own matcher."""
    return [
        ("aws_eks_cluster", {"name": f"eks-bg-{colour}", "version": version, "access_config": {"authentication_mode": "API"}}),
        ("aws_kms_key", {"enable_key_rotation": True}),
        ("aws_iam_role", {"name": f"eks-bg-{colour}-cluster"}),
        ("aws_launch_template", {"metadata_options": {"http_tokens": "required", "http_put_response_hop_limit": 1}}),
        ("aws_eks_node_group", {"capacity_type": "ON_DEMAND", "update_config": {"max_unavailable": 1}}),
        *[
            ("aws_eks_addon", {"addon_name": n, "resolve_conflicts_on_update": "OVERWRITE"})
            for n in ("vpc-cni", "kube-proxy", "eks-pod-identity-agent", "coredns", "aws-ebs-csi-driver")
        ],
        *[("aws_eks_pod_identity_association", {"namespace": w.namespace, "service_account": w.service_account}) for w in BOUND],
        ("kubernetes_namespace_v1", {"metadata": {"name": "argocd"}}),
        ("helm_release", {"name": "argo-cd", "chart": "argo-cd", "version": argo_cd}),
        ("helm_release", {"name": "app-of-apps", "namespace": "argocd"}),
    ]


@pytest.mark.parametrize("colour", COLOURS)
def test_every_cluster_resource_is_there(example_app: Synthesized, config: Config, colour: str) -> None:
    text = example_app.text(colour)
    missing = [
        (kind, props)
        for kind, props in expected_resources(
            colour, config.clusters[colour].kubernetes_version, config.release(colour).platform.version(ARGO_CD)
        )
        if not Testing.to_have_resource_with_properties(text, kind, props)
    ]
    assert missing == []
