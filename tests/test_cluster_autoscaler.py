"""Cluster Autoscaler (#32 item 6), the component of argocd/apps/platform/cluster-autoscaler/: its shared role and each
colour's association as synthesized, its child's values as argocd/apps renders them from each colour's facts, held to
what the upstream chart and program accept (tests/fixtures/cluster-autoscaler/keys.yaml, read from kubernetes/autoscaler
at each chart version of the table: the chart cannot be pulled here) and to the tags EKS puts on a managed node group's
Auto Scaling group, and its policy decided as IAM decides it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

import policies
from model.config import cluster_name
from model.platform import component
from policies.boundary import document as boundary_document
from tests.support.charts import Chain, build_chain, render
from tests.support.configs import EXAMPLE_COLOURS, example
from tests.support.iam_evaluation import Request, decide
from tests.support.synth import Synthesized
from tests.test_pod_identity_roles import associations, trusted
from tests.test_policies import SAMPLES

CLUSTER_AUTOSCALER = component("cluster-autoscaler")
FIXTURE = yaml.safe_load((Path(__file__).parent / "fixtures" / "cluster-autoscaler" / "keys.yaml").read_text())
ENABLED_TAG = "k8s.io/cluster-autoscaler/enabled"


@pytest.fixture(scope="module")
def chains(example_app: Synthesized) -> dict[str, Chain]:
    return {colour: build_chain(example_app, colour) for colour in EXAMPLE_COLOURS}


def child_values(chain: Chain) -> dict[str, Any]:
    values: dict[str, Any] = chain.children[CLUSTER_AUTOSCALER.name]["spec"]["source"]["helm"]["valuesObject"]
    return values


def key_paths(values: dict[str, Any], prefix: str = "") -> set[str]:
    """Every key path the values set down to a leaf; extraArgs is one value (its keys are the program's flags)."""
    found = set()
    for key, value in values.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value and path != "extraArgs":
            found |= key_paths(value, f"{path}.")
        else:
            found.add(path)
    return found


def eks_tags(cluster: str) -> dict[str, str]:
    """The tags EKS puts on the managed node group's Auto Scaling group of this cluster (the fixture, from AWS's docs)."""
    tags: dict[str, str] = FIXTURE["managed_node_group_tags"]
    return {key.replace("<cluster>", cluster): value.replace("<cluster>", cluster) for key, value in tags.items()}


# --- the role in common and the association in each colour ------------------------------------------------------


def test_every_colour_binds_its_autoscaler_to_the_shared_role_trusting_only_it(example_app: Synthesized) -> None:
    assert CLUSTER_AUTOSCALER.identity
    wanted = (CLUSTER_AUTOSCALER.namespace, CLUSTER_AUTOSCALER.identity.service_account)
    assert wanted == ("kube-system", "cluster-autoscaler")
    role_arns = set()
    for colour in EXAMPLE_COLOURS:
        (found,) = [a for a in associations(example_app, colour) if a[:2] == wanted]
        assert trusted(example_app, found[2]) == wanted
        role_arns.add(found[2])
    assert role_arns == {"${data.terraform_remote_state.common.outputs.cluster_autoscaler_role_arn}"}  # one role


def test_the_shared_role_holds_the_components_policy_filled(example_app: Synthesized) -> None:
    common = example_app.json("common")["resource"]
    (role,) = [r for r in common["aws_iam_role"].values() if r["name"] == "eks-bg-cluster-autoscaler"]
    assert role["permissions_boundary"].endswith(":policy/boundary-eks-bg")
    (policy,) = [p for p in common["aws_iam_policy"].values() if p["name"] == role["name"]]
    document = json.loads(policy["policy"])
    (scaling,) = [s for s in document["Statement"] if "autoscaling:SetDesiredCapacity" in s["Action"]]
    assert scaling["Condition"] == {
        "StringEquals": {f"aws:ResourceTag/{ENABLED_TAG}": "true", "aws:RequestedRegion": example().region},
        "StringLike": {"aws:ResourceTag/eks:cluster-name": "eks-bg-*"},
    }


# --- the policy, as IAM decides it ------------------------------------------------------------------------------

ACCOUNT, REGION = str(SAMPLES["ACCOUNT_ID"]), str(SAMPLES["REGION"])
GROUP_ID = "0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"


def asg_arn(name: str, *, region: str = REGION) -> str:
    return f"arn:aws:autoscaling:{region}:{ACCOUNT}:autoScalingGroup:{GROUP_ID}:autoScalingGroupName/{name}"


# A managed node group's group: EKS names it eks-<node group name>-<id> (the node group's name starts with the cluster's).
MANAGED = asg_arn("eks-eks-bg-green-20261125-2ac9b1e0-1d2f-4a63-b6c8-6f0e5d4c3b2a")


@pytest.mark.parametrize(
    ("resource", "tags", "allowed"),
    [
        (MANAGED, eks_tags("eks-bg-green"), True),
        (MANAGED, {"eks:cluster-name": "eks-bg-green"}, False),  # not tagged for the autoscaler
        (MANAGED, {**eks_tags("eks-bg-green"), ENABLED_TAG: "false"}, False),
        (asg_arn("web-fleet"), {ENABLED_TAG: "true"}, False),  # a self-managed group: no eks:cluster-name
        (asg_arn("eks-x", region="us-east-1"), eks_tags("eks-bg-green"), False),  # another region
        (MANAGED, eks_tags("payments-green"), False),  # another project's cluster in the same account
    ],
)
def test_it_may_scale_only_managed_node_groups_tagged_for_it(resource: str, tags: dict[str, str], allowed: bool) -> None:
    """Another account's groups need no case: Auto Scaling groups have no resource policy, so no grant reaches them."""
    assert CLUSTER_AUTOSCALER.policy
    document = json.loads(
        policies.render(CLUSTER_AUTOSCALER.policy, ACCOUNT_ID=ACCOUNT, PARTITION="aws", REGION=REGION, CLUSTER_NAMES="eks-bg-*")
    )
    boundary = boundary_document(partition="aws", account_id=ACCOUNT, project="eks-bg")["Statement"]
    context = {f"aws:ResourceTag/{key}": value for key, value in tags.items()} | {"aws:RequestedRegion": resource.split(":")[3]}
    for action in ("autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"):
        assert decide(document["Statement"], Request(action, resource, context), boundary).allowed is allowed, action
    assert decide(document["Statement"], Request("autoscaling:DescribeAutoScalingGroups", "*"), boundary).allowed
    assert not decide(document["Statement"], Request("autoscaling:DeleteAutoScalingGroup", resource, context)).allowed


# --- the child's values, as argocd/apps renders them ------------------------------------------------------------


@pytest.mark.parametrize("colour", EXAMPLE_COLOURS)
def test_the_child_discovers_exactly_its_own_clusters_managed_node_groups(chains: dict[str, Chain], colour: str) -> None:
    config = example()
    chain = chains[colour]
    values = child_values(chain)
    name = cluster_name(config, colour)
    assert values["cloudProvider"] == "aws"
    assert values["awsRegion"] == config.region
    assert values["autoDiscovery"]["clusterName"] == name
    # Every tag the autoscaler looks for is one EKS puts on this cluster's managed node group's group, and the
    # cluster's own tag is among them, so it never finds another colour's groups.
    assert set(values["autoDiscovery"]["tags"]) <= set(eks_tags(name))
    assert f"k8s.io/cluster-autoscaler/{name}" in values["autoDiscovery"]["tags"]
    other = [cluster_name(config, c) for c in EXAMPLE_COLOURS if c != colour]
    assert not any(set(values["autoDiscovery"]["tags"]) <= set(eks_tags(o)) for o in other)
    # Its pods run as the service account Terraform associated with the shared role.
    account = values["rbac"]["serviceAccount"]
    assert (values["rbac"]["create"], account["create"]) == (True, True)
    assert (CLUSTER_AUTOSCALER.namespace, account["name"]) in chain.associations
    assert chain.children[CLUSTER_AUTOSCALER.name]["spec"]["destination"]["namespace"] == CLUSTER_AUTOSCALER.namespace


@pytest.mark.parametrize("colour", EXAMPLE_COLOURS)
def test_every_value_the_child_sets_is_one_of_the_chart_at_every_version_of_the_table(
    chains: dict[str, Chain], colour: str
) -> None:
    """The fixture names each chart version of the table; our keys are the chart's, our flags the program's at every
    image the values run, and the defaults we rely on are the chart's."""
    assert CLUSTER_AUTOSCALER.chart
    charts = {entry["tag"]: entry for entry in FIXTURE["charts"]}
    assert sorted(charts) == sorted(f"cluster-autoscaler-chart-{v}" for v in CLUSTER_AUTOSCALER.versions())
    values = child_values(chains[colour])
    for tag, chart in charts.items():
        assert sorted(key_paths(values) - set(chart["keys"])) == [], tag
        assert chart["defaults"]["cloudProvider"] == values["cloudProvider"]
    assert set(values["extraArgs"]) <= set(FIXTURE["flags"])
    assert values["extraArgs"]["expander"] in FIXTURE["expanders"]


# --- the image follows the cluster's Kubernetes minor -----------------------------------------------------------


def scratch_chart(path: Path, template: str, files: dict[str, str] | None = None) -> Path:
    """A chart of one ConfigMap template (and files beside Chart.yaml), to render a template alone."""
    (path / "templates").mkdir(parents=True)
    (path / "Chart.yaml").write_text("apiVersion: v2\nname: scratch\nversion: 0.1.0\n")
    (path / "templates" / "cm.yaml").write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: scratch\ndata:\n{template}")
    for name, text in (files or {}).items():
        (path / name).write_text(text)
    return path


# The template argocd/apps applies to a component's values.yaml (templates/applications.yaml: tpl over the facts).
AS_ARGOCD_APPS = '  values: |\n    {{- tpl (.Files.Get "raw.yaml") $ | nindent 4 }}\n'
FACTS = {
    "cluster": {"name": "eks-bg-green", "region": "ap-northeast-1"},
    "identities": {CLUSTER_AUTOSCALER.name: {"serviceAccount": "cluster-autoscaler"}},
}


def values_for(major: str, minor: str, tmp_path: Path) -> dict[str, Any]:
    """The component's values.yaml rendered as argocd/apps renders it, for a cluster whose version Helm reports as
    (major, minor). helm-python-sdk cannot set the Kubernetes version, so the values.yaml rendered here has the two
    capabilities it reads written in as literals."""
    text = (CLUSTER_AUTOSCALER.folder / "values.yaml").read_text()
    text = text.replace(".Capabilities.KubeVersion.Major", f'"{major}"').replace(".Capabilities.KubeVersion.Minor", f'"{minor}"')
    chart = scratch_chart(tmp_path / f"values-{major}-{minor.replace('+', 'plus')}", AS_ARGOCD_APPS, {"raw.yaml": text})
    (config_map,) = render(chart, FACTS, release="scratch", namespace="default")
    rendered: dict[str, Any] = yaml.safe_load(config_map["data"]["values"])
    return rendered


def test_each_kubernetes_version_of_the_table_runs_the_autoscaler_of_its_own_minor(tmp_path: Path) -> None:
    assert CLUSTER_AUTOSCALER.chart
    supported = sorted({k for row in CLUSTER_AUTOSCALER.chart.releases for k in row.kubernetes})
    images = {image["kubernetes"]: image["tag"].removeprefix("cluster-autoscaler-") for image in FIXTURE["images"]}
    assert sorted(images) == supported
    for version in supported:
        major, minor = version.split(".")
        for reported in (minor, f"{minor}+"):  # as Argo CD hands it to Helm, and as EKS's API server reports it
            tag = values_for(major, reported, tmp_path)["image"]["tag"]
            assert tag == f"v{images[version]}", version
            assert tag.startswith(f"v{version}.")


def test_a_kubernetes_version_it_does_not_know_keeps_the_charts_image(tmp_path: Path) -> None:
    assert "image" not in values_for("1", "40", tmp_path)


def test_the_chain_renders_the_image_of_helms_own_kubernetes_version(chains: dict[str, Chain], tmp_path: Path) -> None:
    """In the suite, argocd/apps is rendered by helm-python-sdk, whose Kubernetes version is its own default (Argo CD
    passes the cluster's): every colour's child gets that minor's image, read the same way."""
    version = '  version: "{{ .Capabilities.KubeVersion.Major }}.{{ .Capabilities.KubeVersion.Minor }}"\n'
    (config_map,) = render(scratch_chart(tmp_path / "probe", version), {}, release="probe", namespace="default")
    images = {image["kubernetes"]: image["tag"].removeprefix("cluster-autoscaler-") for image in FIXTURE["images"]}
    for chain in chains.values():
        assert child_values(chain)["image"]["tag"] == f"v{images[config_map['data']['version']]}"
