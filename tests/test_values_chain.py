"""The values chain, rendered for real with Helm's engine: from the values the synthesized
helm_release carries, through bootstrap/manifests and argocd/apps, down to the sample app's manifests.

Names are compared with the Pod Identity associations in the synthesized Terraform, not with
the Python constants, so a name changed in only one place (a chart, a values file, the stack)
fails here.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from model.bootstrap import MANIFESTS_CHART
from model.config import Config
from model.platform import ARGO_CD, CHILDREN, COMPONENTS
from model.workloads import ARGOCD_NAMESPACE, PARENT_APPLICATION
from tests.support.charts import CHARTS, Chain, build_chain, by_kind, lint_errors, render, sample_for
from tests.support.configs import EXAMPLE_COLOURS, example
from tests.support.synth import Synthesized

COLOURS = EXAMPLE_COLOURS
FINALIZER = "resources-finalizer.argocd.argoproj.io"


@pytest.fixture(scope="module")
def chains(example_app: Synthesized) -> dict[str, Chain]:
    return {colour: build_chain(example_app, colour) for colour in COLOURS}


@pytest.fixture(scope="module")
def config() -> Config:
    return example()


def child_values(chain: Chain, name: str) -> dict[str, Any]:
    values: dict[str, Any] = chain.children[name]["spec"]["source"]["helm"]["valuesObject"]
    return values


# --- bootstrap/manifests: the parent Application ------------------------------------------------


@pytest.mark.parametrize("colour", COLOURS)
def test_the_bootstrap_renders_exactly_the_parent_it_is_given(chains: dict[str, Chain], colour: str) -> None:
    """bootstrap/manifests adds nothing and drops nothing: the parent is model/bootstrap.py's, as built."""
    assert [chains[colour].parent] == chains[colour].bootstrap_values["manifests"]


@pytest.mark.parametrize("colour", COLOURS)
def test_root_renders_one_parent_application(chains: dict[str, Chain], config: Config, colour: str) -> None:
    parent = chains[colour].parent
    assert (parent["kind"], parent["metadata"]["name"], parent["metadata"]["namespace"]) == (
        "Application",
        PARENT_APPLICATION,
        ARGOCD_NAMESPACE,
    )
    assert parent["metadata"]["finalizers"] == [FINALIZER]
    source = parent["spec"]["source"]
    assert (source["repoURL"], source["targetRevision"], source["path"]) == (config.gitops.repo_url, "main", "argocd/apps")
    assert parent["spec"]["syncPolicy"]["automated"] == {"prune": True, "selfHeal": True}
    assert source["helm"]["valuesObject"] == chains[colour].root_values  # handed down unchanged


@pytest.mark.parametrize("colour", COLOURS)
def test_parent_carries_the_clusters_facts(chains: dict[str, Chain], config: Config, colour: str) -> None:
    facts = chains[colour].parent["spec"]["source"]["helm"]["valuesObject"]
    assert facts["cluster"] == {
        "name": f"eks-bg-{colour}",
        "region": "ap-northeast-1",
        "vpcId": sample_for("vpc_id"),
        "vpcCidr": "10.0.0.0/16",
        "colour": colour,
    }
    assert facts["ingress"] == {
        "certificateArn": sample_for("certificate_arn"),
        "weight": config.clusters[colour].weight,
        "setIdentifier": colour,
        "ttl": 60,
    }
    assert facts["dns"]["hostname"] == "app.eks.example.com"
    assert facts["sampleApp"]["tableName"] == sample_for("table_name")


# --- argocd/apps: the child Applications ---------------------------------------------------------


@pytest.mark.parametrize("colour", COLOURS)
def test_every_child_of_the_registry_in_its_wave_with_finalizers_and_automated_sync(
    chains: dict[str, Chain], colour: str
) -> None:
    children = chains[colour].children
    waves = {name: app["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] for name, app in children.items()}
    assert waves == {c.name: str(c.wave) for c in CHILDREN}
    assert waves["aws-load-balancer-controller"] < waves["external-dns"] < waves["sample-app"]  # as strings: "-1" "0" "1"
    for name, app in children.items():
        # Argo CD's own child has none: deleting it in the teardown must not take Argo CD down with it.
        assert app["metadata"].get("finalizers") == (None if name == "argo-cd" else [FINALIZER]), name
        assert app["metadata"]["namespace"] == "argocd"
        assert app["spec"]["syncPolicy"]["automated"] == {"prune": True, "selfHeal": True}
        assert "CreateNamespace=true" in app["spec"]["syncPolicy"]["syncOptions"]


@pytest.mark.parametrize("colour", COLOURS)
def test_controller_charts_are_pinned_to_the_colours_release(chains: dict[str, Chain], config: Config, colour: str) -> None:
    pinned = {
        name: (source["repoURL"], source["chart"], source["targetRevision"])
        for name, source in ((n, child["spec"]["source"]) for n, child in chains[colour].children.items())
        if "chart" in source
    }
    release = config.release(colour).platform
    assert pinned == {c.name: (c.chart.repository, c.name, release.version(c)) for c in CHILDREN if c.chart}
    assert pinned["external-dns"][0] == "https://kubernetes-sigs.github.io/external-dns"


@pytest.mark.parametrize("colour", COLOURS)
def test_argo_cd_manages_itself_from_git_after_the_bootstrap(
    chains: dict[str, Chain], example_app: Synthesized, config: Config, colour: str
) -> None:
    """The child renders over Terraform's bootstrap release (same release name and namespace), at the colour's
    version, with the settings of argocd/apps/platform/argo-cd/values.yaml, which the bootstrap does not carry."""
    child = chains[colour].children["argo-cd"]
    (bootstrap,) = [r for r in example_app.resources(colour, "helm_release").values() if r["name"] == "argo-cd"]
    source = child["spec"]["source"]
    namespace = example_app.json(colour)["resource"]["kubernetes_namespace_v1"]
    (bootstrap_namespace,) = [n["metadata"]["name"] for n in namespace.values() if n["metadata"]["name"] == ARGOCD_NAMESPACE]
    assert bootstrap["namespace"].startswith("${kubernetes_namespace_v1.")  # that namespace, by reference
    assert (source["helm"]["releaseName"], child["spec"]["destination"]["namespace"]) == (bootstrap["name"], bootstrap_namespace)
    assert source["targetRevision"] == bootstrap["version"] == config.release(colour).platform.version(ARGO_CD)
    health = "resource.customizations.health.argoproj.io_Application"
    assert health in source["helm"]["valuesObject"]["configs"]["cm"]
    assert health not in bootstrap["values"][0]
    # Terraform bootstraps it once: what the child changes later is not Terraform's to revert.
    assert bootstrap["lifecycle"]["ignore_changes"] == ["values", "version"]


@pytest.mark.parametrize("colour", COLOURS)
def test_sample_app_child_comes_from_this_repository(chains: dict[str, Chain], config: Config, colour: str) -> None:
    source = chains[colour].children["sample-app"]["spec"]["source"]
    assert (source["repoURL"], source["targetRevision"], source["path"]) == (config.gitops.repo_url, "main", "argocd/sample-app")


@pytest.mark.parametrize("colour", COLOURS)
def test_load_balancer_controller_values(chains: dict[str, Chain], colour: str) -> None:
    values = child_values(chains[colour], "aws-load-balancer-controller")
    assert values["clusterName"] == f"eks-bg-{colour}"
    assert (values["region"], values["vpcId"]) == ("ap-northeast-1", sample_for("vpc_id"))


@pytest.mark.parametrize("colour", COLOURS)
def test_external_dns_values(chains: dict[str, Chain], colour: str) -> None:
    values = child_values(chains[colour], "external-dns")
    assert values["provider"] == {"name": "aws"}
    assert values["sources"] == ["ingress"]
    assert values["domainFilters"] == [sample_for("zone_name")]
    assert values["txtOwnerId"] == f"eks-bg-{colour}"  # distinct per cluster
    assert (values["policy"], values["registry"], values["interval"]) == ("sync", "txt", "60s")
    assert {"name": "AWS_DEFAULT_REGION", "value": "ap-northeast-1"} in values["env"]


# --- names agree with the Pod Identity associations ----------------------------------------------


@pytest.mark.parametrize("colour", COLOURS)
@pytest.mark.parametrize("child", [c.name for c in CHILDREN if c.identity and c.chart])
def test_controller_service_accounts_are_the_associated_ones(chains: dict[str, Chain], colour: str, child: str) -> None:
    chain = chains[colour]
    namespace = chain.children[child]["spec"]["destination"]["namespace"]
    service_account = child_values(chain, child)["serviceAccount"]
    assert service_account["create"] is True
    assert (namespace, service_account["name"]) in chain.associations


@pytest.mark.parametrize("colour", COLOURS)
def test_sample_app_pods_run_as_the_associated_service_account(chains: dict[str, Chain], colour: str) -> None:
    chain = chains[colour]
    namespace = chain.children["sample-app"]["spec"]["destination"]["namespace"]
    (account,) = by_kind(chain.sample_app, "ServiceAccount")
    assert (namespace, account) in chain.associations
    deployment = by_kind(chain.sample_app, "Deployment")["sample-app"]
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == account
    assert "annotations" not in by_kind(chain.sample_app, "ServiceAccount")[account]["metadata"]  # no IRSA annotation


# --- the weight reaches the Ingress --------------------------------------------------------------


@pytest.mark.parametrize("colour", COLOURS)
def test_weight_and_set_identifier_reach_the_ingress(chains: dict[str, Chain], config: Config, colour: str) -> None:
    annotations = by_kind(chains[colour].sample_app, "Ingress")["sample-app"]["metadata"]["annotations"]
    assert annotations["external-dns.alpha.kubernetes.io/aws-weight"] == str(config.clusters[colour].weight)
    assert annotations["external-dns.alpha.kubernetes.io/set-identifier"] == colour
    hosts = f"{config.dns.app_hostname},{config.dns.preview_hostname(colour)}"
    assert (
        annotations["external-dns.alpha.kubernetes.io/hostname"] == hosts == f"app.eks.example.com,app-{colour}.eks.example.com"
    )
    assert annotations["external-dns.alpha.kubernetes.io/ttl"] == "60"
    assert annotations["alb.ingress.kubernetes.io/certificate-arn"] == sample_for("certificate_arn")


# --- the charts themselves -----------------------------------------------------------------------


@pytest.mark.parametrize("colour", COLOURS)
def test_charts_lint_clean_with_the_chain_values(chains: dict[str, Chain], colour: str) -> None:
    chain = chains[colour]
    assert lint_errors(MANIFESTS_CHART, chain.bootstrap_values) == []
    assert lint_errors("apps", chain.parent["spec"]["source"]["helm"]["valuesObject"]) == []
    assert lint_errors("sample-app", child_values(chain, "sample-app")) == []


def test_the_app_of_apps_holds_only_the_entries_and_values_of_the_registry(tmp_path: Path) -> None:
    """A component's folder also holds its IAM policy and upstream's copies of it; argocd/apps/.helmignore leaves them
    out of the chart, so nothing but component.yaml and values.yaml can change what Argo CD renders. Seen by a copy
    of the chart whose one template lists the files Helm loaded."""
    probe = tmp_path / "apps"
    shutil.copytree(CHARTS / "apps", probe)
    shutil.rmtree(probe / "templates")
    (probe / "templates").mkdir()
    (probe / "templates" / "files.yaml").write_text(
        'kind: ConfigMap\ndata:\n{{- range $file, $_ := .Files.Glob "platform/**" }}\n  {{ $file }}: loaded\n{{- end }}\n'
    )
    (listing,) = render(probe, {}, release="apps", namespace=ARGOCD_NAMESPACE)
    assert sorted(listing["data"]) == sorted(
        f"platform/{c.name}/{f}" for c in COMPONENTS for f in ("component.yaml", "values.yaml")
    )


def test_a_missing_fact_fails_the_render() -> None:
    from helm_python import HelmRenderError

    with pytest.raises(HelmRenderError, match=r"manifests is required"):
        render(MANIFESTS_CHART, {}, release="app-of-apps", namespace="argocd")
