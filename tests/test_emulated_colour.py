"""A colour deployed, proven and retired on the AWS emulator by the workflows' own commands: the test machinery the
upgrade cycle runs on (tests/support/emulated_colour.py, fake_clusters.py, emulated_cycle.py; scripts/emulator.py's
EKS as AWS answers it), each piece proven here.

- what a colour is cut down to, from the shipped example's synthesis (in-process);
- each cluster's Argo CD and load balancer controller, against the in-process emulator (in-process);
- the emulator's clusters: their Kubernetes API under the fake's URL, reached by the real `KubeApi.for_eks` with TLS
  checked, their security group, what they report back, their insights (an emulator process: `background`);
- the preview hosts, for a command of its own (an emulator process: `background`).

Colours deployed, proven, shifted to and retired on it by the workflows' own commands: tests/test_upgrade_cycle.py.
"""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from model.bootstrap import bootstrap_manifests
from model.platform import ARGOCD_NAMESPACE, PARENT_APPLICATION, RESOURCES_FINALIZER
from model.revisions import commit_of
from model.routes import target_group_name
from model.values import cluster_facts
from scripts.emulator import CREDENTIALS, MotoProcess, client
from tests.support.charts import sample_for
from tests.support.configs import retiring_blue, validated
from tests.support.emulated_aws import PROJECT, Emulated
from tests.support.emulated_colour import APP, RELEASE_STAND_IN, UNHOLDABLE, EmulatedProject, holdable_part
from tests.support.fake_clusters import FakeClusters, Release
from tests.support.fake_kubernetes import FakeKubernetes
from tests.support.preview_hosts import PreviewHosts
from tests.support.preview_server import Answer
from tests.support.synth import Synthesized
from tools.kube import APPLICATIONS, TARGET_GROUP_BINDINGS, KubeApi
from tools.readiness.release import COMPARISON_ERROR, expected, registry_at

IN_CLUSTER = ("helm_release", "kubernetes_namespace_v1")
REGION = "ap-northeast-1"

# --- what a colour is cut down to ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def blue(example_app: Synthesized) -> dict[str, Any]:
    return example_app.json("blue")


@pytest.fixture(scope="module")
def held(blue: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    return holdable_part(blue)


def addresses(document: dict[str, Any]) -> set[str]:
    return {f"{kind}.{name}" for kind, items in document["resource"].items() for name in items}


def test_the_in_cluster_part_and_what_moto_cannot_hold_are_taken_out(
    blue: dict[str, Any], held: tuple[dict[str, Any], list[str]]
) -> None:
    """Every resource of the helm and kubernetes providers and of the four EKS APIs moto lacks, and nothing else; the
    root release's place taken by its stand-in."""
    document, removed = held
    out = {a for a in addresses(blue) if a.split(".")[0] in (*IN_CLUSTER, *UNHOLDABLE)}
    assert len(out) == 18  # 4 releases, 2 namespaces, 5 add-ons, 1 access entry and its policy, 5 associations
    (release,) = [a for a in out if a.startswith("helm_release.") and a.split(".")[1].startswith("app-of-apps")]
    assert sorted(removed) == sorted(out - {release})
    assert addresses(document) == addresses(blue) - out | {f"terraform_data.{RELEASE_STAND_IN}"}
    assert set(document["terraform"]["required_providers"]) == {"aws"}
    assert set(document["provider"]) == {"aws"}


def test_nothing_refers_to_what_was_taken_out(blue: dict[str, Any], held: tuple[dict[str, Any], list[str]]) -> None:
    document, removed = held
    text = json.dumps(document)
    assert [address for address in removed if re.search(rf"\b{re.escape(address)}\b", text)] == []


def test_the_teardown_hook_stays_and_is_still_destroyed_first(held: tuple[dict[str, Any], list[str]]) -> None:
    """It depends on every other resource left, the release's stand-in among them: a destroy runs it first."""
    document, _ = held
    hooks = [name for name in document["resource"]["terraform_data"] if name.startswith("teardown_hook")]
    assert len(hooks) == 1
    hook = document["resource"]["terraform_data"][hooks[0]]
    assert hook["provisioner"][0]["local-exec"]["when"] == "destroy"
    assert set(hook["depends_on"]) == addresses(document) - {f"terraform_data.{hooks[0]}"}


def test_the_release_stand_in_carries_what_the_release_would_be_handed(
    blue: dict[str, Any], held: tuple[dict[str, Any], list[str]]
) -> None:
    document, _ = held
    (release,) = [r for r in blue["resource"]["helm_release"].values() if r["name"] == PARENT_APPLICATION]
    (cluster,) = document["resource"]["aws_eks_cluster"]
    stand_in = document["resource"]["terraform_data"][RELEASE_STAND_IN]
    assert stand_in["input"] == {
        "name": PARENT_APPLICATION,
        "namespace": ARGOCD_NAMESPACE,
        "values": release["values"],
        "cluster": f"${{aws_eks_cluster.{cluster}.name}}",
    }
    assert set(stand_in["depends_on"]) == set(release["depends_on"]) & addresses(document)


def test_a_stack_cut_down_already_comes_back_the_same(held: tuple[dict[str, Any], list[str]]) -> None:
    document, _ = held
    assert holdable_part(document) == (document, [])


def test_an_emulated_projects_synthesis_runs_through_the_cut(tmp_path: Path) -> None:
    """Its cdktf.json names the app that cuts the colours down, whatever config it is given later."""
    project = EmulatedProject.create(tmp_path / "project", "http://127.0.0.1:1", retiring_blue())
    project.write_config({**retiring_blue(), "project": "other"})
    written = json.loads((project.root / "cdktf.json").read_text())
    assert written["app"] == APP
    assert written["context"]["config"]["project"] == "other"
    assert written["language"] == "python"


# --- each cluster's controllers ---------------------------------------------------------------------------------------


@pytest.fixture
def controllers(emulated: Emulated) -> Iterator[tuple[FakeClusters, Emulated]]:
    clusters = FakeClusters()
    emulated.deploy_cluster("blue")
    emulated.deploy_traffic({"sample-app": "app"}, {"blue": 0, "green": 100})
    yield clusters, emulated
    clusters.close()


def blue_release(emulated: Emulated, revision: str) -> Release:
    """What Terraform hands blue's root release (stacks/cluster.py): the bootstrap of its facts, at revision."""
    raw = retiring_blue()
    raw["clusters"]["blue"]["gitops_revision"] = revision
    config = validated(raw)

    def target_group(app: str) -> str:
        name = target_group_name(PROJECT, app, "blue")
        return str(emulated.elbv2.describe_target_groups(Names=[name])["TargetGroups"][0]["TargetGroupArn"])

    facts = cluster_facts(config=config, colour="blue", common=sample_for, target_group=target_group)
    return Release(PARENT_APPLICATION, ARGOCD_NAMESPACE, {"manifests": bootstrap_manifests(facts)})


def api(clusters: FakeClusters, cluster: str) -> KubeApi:
    return KubeApi(f"{clusters.url}/{cluster}", lambda: "k8s-aws-v1.test", clusters.authority.trust())


def registered(emulated: Emulated) -> list[str]:
    (group,) = emulated.elbv2.describe_target_groups(Names=[target_group_name(PROJECT, "sample-app", "blue")])["TargetGroups"]
    health = emulated.elbv2.describe_target_health(TargetGroupArn=group["TargetGroupArn"])["TargetHealthDescriptions"]
    return [t["Target"]["Id"] for t in health]


def test_argo_cd_syncs_what_terraform_installed_and_the_controller_registers_the_pods(
    controllers: tuple[FakeClusters, Emulated],
) -> None:
    """The parent and every child the release defines at its revision (readiness's own list, read from the registry:
    another path than the fake's Helm render), Synced and Healthy at the revisions and chart versions configured; a pod
    of each application in blue's target group, taken out when its binding goes."""
    clusters, emulated = controllers
    head = commit_of("HEAD", key="test")
    clusters.watch(lambda service: getattr(emulated, service), lambda name: blue_release(emulated, head))
    assert registered(emulated) == []  # nothing before the controllers run
    listing = api(clusters, "eks-bg-blue").get(APPLICATIONS.format(namespace=ARGOCD_NAMESPACE))
    assert listing is not None
    running = {item["metadata"]["name"]: item for item in listing["items"]}
    release = expected(validated({**retiring_blue()}), "blue", registry_at)
    assert sorted(running) == sorted(want.name for want in release.applications)
    for want in release.applications:
        app = running[want.name]
        assert (app["status"]["sync"]["status"], app["status"]["health"]["status"]) == ("Synced", "Healthy")
        assert app["spec"]["source"]["targetRevision"] == want.target_revision, want.name
    assert running[PARENT_APPLICATION]["metadata"]["finalizers"] == [RESOURCES_FINALIZER]
    assert len(registered(emulated)) == 1
    bindings = api(clusters, "eks-bg-blue").get(TARGET_GROUP_BINDINGS)
    assert bindings is not None
    (binding,) = bindings["items"]
    path = f"/apis/elbv2.k8s.aws/v1beta1/namespaces/{binding['metadata']['namespace']}/targetgroupbindings/sample-app"
    api(clusters, "eks-bg-blue").delete(path)
    assert api(clusters, "eks-bg-blue").get(path) is not None  # its finalizer at work: the pod still registered
    assert len(registered(emulated)) == 1
    assert api(clusters, "eks-bg-blue").get(path) is None
    assert registered(emulated) == []


def test_argo_cd_does_not_bring_back_what_was_deleted_until_terraform_applies_again(
    controllers: tuple[FakeClusters, Emulated],
) -> None:
    clusters, emulated = controllers
    head = commit_of("HEAD", key="test")
    releases = {"blue": blue_release(emulated, head)}
    clusters.watch(lambda service: getattr(emulated, service), lambda name: releases.get("blue"))
    kube = api(clusters, "eks-bg-blue")
    path = f"{APPLICATIONS.format(namespace=ARGOCD_NAMESPACE)}/sample-app"
    kube.delete(path)
    assert [kube.get(path) is None for _ in range(2)] == [False, True]  # gone after its finalizer's reading
    clusters.reconcile()
    assert kube.get(path) is None
    assert clusters.syncs == ["eks-bg-blue"]
    releases["blue"] = blue_release(emulated, "HEAD")  # another value: what a deploy of other values hands over
    clusters.reconcile()
    assert kube.get(path) is not None
    assert clusters.syncs == ["eks-bg-blue", "eks-bg-blue"]


def test_a_revision_git_does_not_have_leaves_the_parent_with_argo_cds_comparison_error(
    controllers: tuple[FakeClusters, Emulated],
) -> None:
    clusters, emulated = controllers
    clusters.watch(lambda service: getattr(emulated, service), lambda name: blue_release(emulated, "no-such-revision"))
    listing = api(clusters, "eks-bg-blue").get(APPLICATIONS.format(namespace=ARGOCD_NAMESPACE))
    assert listing is not None
    (parent,) = listing["items"]
    assert parent["metadata"]["name"] == PARENT_APPLICATION
    (condition,) = parent["status"]["conditions"]
    assert condition["type"] == COMPARISON_ERROR
    assert "'no-such-revision' is no branch, tag or commit" in condition["message"]
    assert registered(emulated) == []


def test_a_cluster_the_emulator_does_not_hold_has_no_api(controllers: tuple[FakeClusters, Emulated]) -> None:
    clusters, emulated = controllers
    clusters.watch(lambda service: getattr(emulated, service), lambda name: blue_release(emulated, "HEAD"))
    assert api(clusters, "eks-bg-green").get(APPLICATIONS.format(namespace=ARGOCD_NAMESPACE)) is None
    emulated.eks.delete_cluster(name="eks-bg-blue")
    assert api(clusters, "eks-bg-blue").get(APPLICATIONS.format(namespace=ARGOCD_NAMESPACE)) is None


# --- the emulator's clusters, as a colour's commands meet them ---------------------------------------------------------


@pytest.fixture(scope="module")
def eks_emulator() -> Iterator[tuple[FakeClusters, MotoProcess]]:
    clusters = FakeClusters()
    server = MotoProcess(clusters.emulator_settings())
    server.ready()
    yield clusters, server
    server.stop()
    clusters.close()


def aws(server: MotoProcess, service: str) -> Any:
    return client(service, server.endpoint, REGION)


def a_cluster(server: MotoProcess, name: str, **options: Any) -> dict[str, Any]:
    ec2 = aws(server, "ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24")["Subnet"]["SubnetId"]
    role = "arn:aws:iam::123456789012:role/cluster"
    made: dict[str, Any] = aws(server, "eks").create_cluster(
        name=name, roleArn=role, resourcesVpcConfig={"subnetIds": [subnet]}, **options
    )["cluster"]
    return {**made, "vpc": vpc, "subnet": subnet}


@pytest.mark.background
def test_every_cluster_is_reached_through_kube_api_for_eks_with_tls_checked(
    eks_emulator: tuple[FakeClusters, MotoProcess],
) -> None:
    """The endpoint and certificate authority the emulator answers take the real client to the cluster's objects, with
    an EKS token (tools/kube.py); the same authority whether created or described."""
    clusters, server = eks_emulator
    made = a_cluster(server, "reached")
    described = aws(server, "eks").describe_cluster(name="reached")["cluster"]
    assert made["endpoint"] == described["endpoint"] == f"{clusters.url}/reached"
    assert base64.b64decode(described["certificateAuthority"]["data"]).decode() == clusters.authority.pem
    clusters.clusters["reached"] = FakeKubernetes(serve=False)
    clusters.clusters["reached"].add_application("app-of-apps")
    session = boto3.Session(region_name=REGION, **{k.lower(): v for k, v in CREDENTIALS.items()})
    kube = KubeApi.for_eks(session, aws(server, "eks"), "reached", REGION)
    listing = kube.get(APPLICATIONS.format(namespace=ARGOCD_NAMESPACE))
    assert listing is not None
    assert [item["metadata"]["name"] for item in listing["items"]] == ["app-of-apps"]
    (token,) = clusters.clusters["reached"].tokens
    assert token.startswith("Bearer k8s-aws-v1.")


@pytest.mark.background
def test_a_cluster_gets_the_security_group_eks_makes_and_loses_it_with_the_cluster(
    eks_emulator: tuple[FakeClusters, MotoProcess],
) -> None:
    _, server = eks_emulator
    made = a_cluster(server, "grouped")
    group = made["resourcesVpcConfig"]["clusterSecurityGroupId"]
    assert made["resourcesVpcConfig"]["vpcId"] == made["vpc"]
    (found,) = aws(server, "ec2").describe_security_groups(GroupIds=[group])["SecurityGroups"]
    assert found["GroupName"].startswith("eks-cluster-sg-grouped-")
    assert {"Key": "aws:eks:cluster-name", "Value": "grouped"} in found["Tags"]
    aws(server, "eks").delete_cluster(name="grouped")
    filtered = [{"Name": "tag:aws:eks:cluster-name", "Values": ["grouped"]}]
    assert aws(server, "ec2").describe_security_groups(Filters=filtered)["SecurityGroups"] == []


@pytest.mark.background
def test_a_cluster_and_its_node_group_are_reported_as_created(eks_emulator: tuple[FakeClusters, MotoProcess]) -> None:
    """What the aws provider reads back after its create (else its next plan replaces them): the access and upgrade
    settings as given, or EKS's defaults; a node group's update settings, and no remote access never asked for."""
    _, server = eks_emulator
    given = a_cluster(
        server,
        "configured",
        accessConfig={"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": False},
        upgradePolicy={"supportType": "STANDARD"},
    )
    assert given["accessConfig"] == {"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": False}
    assert given["upgradePolicy"] == {"supportType": "STANDARD"}
    defaults = a_cluster(server, "defaults")
    assert defaults["accessConfig"] == {"authenticationMode": "CONFIG_MAP", "bootstrapClusterCreatorAdminPermissions": True}
    assert defaults["upgradePolicy"] == {"supportType": "EXTENDED"}
    eks = aws(server, "eks")
    eks.create_nodegroup(
        clusterName="configured",
        nodegroupName="nodes",
        nodeRole="arn:aws:iam::123456789012:role/nodes",
        subnets=[given["subnet"]],
        updateConfig={"maxUnavailable": 1},
        diskSize=20,
    )
    group = eks.describe_nodegroup(clusterName="configured", nodegroupName="nodes")["nodegroup"]
    assert group["updateConfig"] == {"maxUnavailable": 1}
    assert "remoteAccess" not in group


@pytest.mark.background
def test_readiness_finds_no_updates_and_fresh_insights(eks_emulator: tuple[FakeClusters, MotoProcess]) -> None:
    _, server = eks_emulator
    made = a_cluster(server, "insightful")
    eks = aws(server, "eks")
    assert eks.list_updates(name="insightful")["updateIds"] == []
    assert eks.describe_insights_refresh(clusterName="insightful")["startedAt"] == made["createdAt"]
    assert eks.start_insights_refresh(clusterName="insightful")["status"] == "IN_PROGRESS"
    refresh = eks.describe_insights_refresh(clusterName="insightful")
    assert refresh["status"] == "COMPLETED"
    assert refresh["startedAt"] >= made["createdAt"]
    assert eks.list_insights(clusterName="insightful", filter={"statuses": ["ERROR"]})["insights"] == []
    with pytest.raises(eks.exceptions.ResourceNotFoundException):
        eks.list_insights(clusterName="none")


# --- the preview hosts, for a command in a process of its own ---------------------------------------------------------


@pytest.mark.background
def test_a_command_of_its_own_reaches_the_preview_hosts_with_the_machines_resolver_trust_and_port(tmp_path: Path) -> None:
    """What the probe's defaults do (tools/readiness/probe.py: the system's resolver, its trust store, port 443), in
    another process: the preview host resolves to the server, its certificate is trusted, it answers; names the server
    does not answer for resolve as before, and this process's resolver never sees the preview host."""
    hosts = PreviewHosts.start("eks.example.com", tmp_path)
    try:
        hosts.server.answers["app-blue.eks.example.com"] = Answer("blue", "0.1.0")
        asked = (
            "import json, socket, urllib.request\n"
            "from tools.readiness.probe import system_resolve\n"
            "print(json.dumps({'resolved': system_resolve('app-blue.eks.example.com', 443),\n"
            "  'answer': json.loads(urllib.request.urlopen('https://app-blue.eks.example.com/probe', timeout=10).read()),\n"
            "  'localhost': system_resolve('localhost', 443)}))\n"
        )
        done = subprocess.run(
            hosts.command(sys.executable, "-c", asked),
            env={**os.environ, **hosts.environment()},
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        said = json.loads(done.stdout)
        assert said["resolved"] == [hosts.server.address]
        assert (said["answer"]["colour"], said["answer"]["image_tag"]) == ("blue", "0.1.0")
        assert "127.0.0.1" in said["localhost"]
        assert hosts.server.requests == ["app-blue.eks.example.com"]
        with pytest.raises(socket.gaierror):
            socket.getaddrinfo("app-blue.eks.example.com", 443)
    finally:
        hosts.close()


def test_the_proof_synthesizes_blue_at_a_revision_git_has() -> None:
    """What the fake Argo CD renders of blue's release exists wherever the suite runs."""
    revision = retiring_blue()["clusters"]["blue"]["gitops_revision"]
    assert commit_of(revision, key="test") == revision
