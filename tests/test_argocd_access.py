"""Who may use a colour's Argo CD and what each project may deploy (#31 item 3, docs/argocd-access.md): the AppProjects
argocd/apps renders and the parent's, held to Argo CD's own matching rules (tests/support/argocd_projects.py), and single
sign-on and RBAC in the argo-cd child's values, under the argo-cd chart's value names."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from model.argocd_access import DEFAULT_PROJECT, PARENT_PROJECT, PLATFORM_PROJECT, SSO_CLIENT_SECRET, SSO_CLIENT_SECRET_KEY
from model.bootstrap import IN_CLUSTER
from model.config import DEFAULT_APPLICATION_GROUP
from model.external_secrets import sso_client_secret
from model.platform import ARGOCD_NAMESPACE, CHILDREN, COMPONENTS
from model.values import cluster_facts
from tests.support.argocd_projects import destination_permitted, refusals, resource_refusals, source_permitted
from tests.support.charts import Chain, build_chain, by_kind, render, sample_for
from tests.support.configs import ARGOCD_SSO, EXAMPLE_COLOURS, REPO_URL, SSO_SECRET_NAME, VARIANT, validated
from tests.support.emulated_aws import in_process_aws
from tests.support.synth import Synthesized

KEYS = Path(__file__).parent / "fixtures" / "argo-cd-values" / "keys.yaml"
# Kubernetes' own namespaces and every component's: no application may deploy there.
PLATFORM_NAMESPACES = sorted({"kube-system", "kube-public", "kube-node-lease", "default", *(c.namespace for c in COMPONENTS)})
# A value that stands for the client secret in Secrets Manager: it must reach no synthesized file and no fact.
FAKE_CLIENT_SECRET = "fake-client-secret-7Qm2-never-in-output"


@pytest.fixture(scope="module")
def chains(example_app: Synthesized, variant_app: Synthesized) -> dict[str, Chain]:
    """The example (no SSO, one group) and the variant (SSO, groups `applications` and `shop`), one colour each."""
    return {"example": build_chain(example_app, EXAMPLE_COLOURS[0]), "variant": build_chain(variant_app, "green")}


def projects(chain: Chain) -> dict[str, dict[str, Any]]:
    return {**by_kind(chain.bootstrap, "AppProject"), **by_kind(chain.apps_manifests, "AppProject")}


def argo_cd_values(chain: Chain) -> dict[str, Any]:
    values: dict[str, Any] = chain.children["argo-cd"]["spec"]["source"]["helm"]["valuesObject"]
    return values


# --- the projects --------------------------------------------------------------------------------


def test_one_project_for_the_platform_one_per_group_and_the_parents(chains: dict[str, Chain]) -> None:
    assert sorted(projects(chains["example"])) == sorted([PARENT_PROJECT, PLATFORM_PROJECT, DEFAULT_APPLICATION_GROUP, "default"])
    assert sorted(projects(chains["variant"])) == sorted(
        [PARENT_PROJECT, PLATFORM_PROJECT, DEFAULT_APPLICATION_GROUP, "shop", "default"]
    )
    # Created before any child that names them.
    for project in by_kind(chains["variant"].apps_manifests, "AppProject").values():
        assert project["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] == "-3"
    assert min(c.wave for c in CHILDREN if c.wave is not None) > -3


@pytest.mark.parametrize("name", ["example", "variant"])
def test_every_application_names_a_project_that_permits_it(chains: dict[str, Chain], name: str) -> None:
    """The parent in its own project, each platform child in `platform`, each application in its group's."""
    chain, found = chains[name], projects(chains[name])
    assert chain.parent["spec"]["project"] == PARENT_PROJECT
    for application in [chain.parent, *chain.children.values()]:
        project = found[application["spec"]["project"]]
        assert refusals(project, application) == [], application["metadata"]["name"]
    assert {c.name: chain.children[c.name]["spec"]["project"] for c in CHILDREN} == {c.name: PLATFORM_PROJECT for c in CHILDREN}


def test_applications_are_in_their_groups_project(chains: dict[str, Chain]) -> None:
    children = chains["variant"].children
    expected = {name: app.get("group", DEFAULT_APPLICATION_GROUP) for name, app in VARIANT["applications"].items()}
    assert {name: children[name]["spec"]["project"] for name in expected} == expected
    shop = projects(chains["variant"])["shop"]["spec"]
    assert shop["sourceRepos"] == ["https://github.com/acme/shop.git"]
    assert shop["destinations"] == [{"server": IN_CLUSTER, "namespace": "shop"}]
    assert "clusterResourceWhitelist" not in shop  # nothing cluster-scoped: the parent makes their Namespace


@pytest.mark.parametrize("namespace", PLATFORM_NAMESPACES)
def test_an_application_aimed_at_the_platforms_namespaces_is_refused(chains: dict[str, Chain], namespace: str) -> None:
    chain = chains["variant"]
    for name in VARIANT["applications"]:
        aimed = copy.deepcopy(chain.children[name])
        aimed["spec"]["destination"]["namespace"] = namespace
        project = projects(chain)[aimed["spec"]["project"]]
        assert refusals(project, aimed) == [f"namespace {namespace} is not permitted"], name


def test_an_application_from_an_unlisted_repository_is_refused(chains: dict[str, Chain]) -> None:
    chain = chains["variant"]
    for name in ["catalogue", "sample-app"]:
        moved = copy.deepcopy(chain.children[name])
        moved["spec"]["source"]["repoURL"] = "https://github.com/someone-else/shop.git"
        project = projects(chain)[moved["spec"]["project"]]
        assert refusals(project, moved) == ["source https://github.com/someone-else/shop.git is not permitted"]
    # The group `shop` may not take this repository's charts, nor `applications` shop's.
    sample = copy.deepcopy(chain.children["sample-app"])
    sample["spec"]["project"] = "shop"
    assert refusals(projects(chain)["shop"], sample) == [
        f"source {REPO_URL} is not permitted",
        "namespace sample-app is not permitted",
    ]


def test_the_platform_project_follows_the_registry(chains: dict[str, Chain]) -> None:
    """Repositories, namespaces and cluster-scoped kinds from each component.yaml: a new component needs no edit here."""
    chain = chains["variant"]
    spec = projects(chain)[PLATFORM_PROJECT]["spec"]
    namespaces = {c.namespace for c in CHILDREN}
    assert set(spec["sourceRepos"]) == {REPO_URL, *(c.chart.repository for c in CHILDREN)}
    assert {d["namespace"] for d in spec["destinations"]} == namespaces | {ARGOCD_NAMESPACE}
    kinds = {(k.group, k.kind) for c in CHILDREN for k in c.cluster_resources}
    assert {(e["group"], e["kind"]) for e in spec["clusterResourceWhitelist"] if "name" not in e} == kinds
    assert {e["name"] for e in spec["clusterResourceWhitelist"] if e["kind"] == "Namespace"} == namespaces
    # What the load balancer controller's chart installs cluster-wide (its component.yaml, read from its chart).
    assert {("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"), ("networking.k8s.io", "IngressClass")} <= kinds
    # Platform children may not deploy into an application's namespace.
    for namespace in {app.get("namespace", name) for name, app in VARIANT["applications"].items()}:
        assert not destination_permitted(projects(chain)[PLATFORM_PROJECT], IN_CLUSTER, namespace)


@pytest.mark.parametrize("name", ["example", "variant"])
def test_the_parents_project_permits_what_argocd_apps_renders_and_nothing_cluster_wide_else(
    chains: dict[str, Chain], name: str
) -> None:
    chain = chains[name]
    project = projects(chain)[PARENT_PROJECT]
    for manifest in chain.apps_manifests:
        assert resource_refusals(project, manifest, server=IN_CLUSTER) == [], manifest["metadata"]["name"]
    stray = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}}
    assert resource_refusals(project, stray, server=IN_CLUSTER) == ["/Namespace kube-system is not permitted"]
    stray = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "kube-system"}}
    assert resource_refusals(project, stray, server=IN_CLUSTER) == ["namespace kube-system is not permitted"]


def test_argo_cds_default_project_permits_nothing(chains: dict[str, Chain]) -> None:
    default = projects(chains["variant"])[DEFAULT_PROJECT]
    moved = copy.deepcopy(chains["variant"].children["sample-app"])
    moved["spec"]["project"] = DEFAULT_PROJECT
    assert refusals(default, moved) == [f"source {REPO_URL} is not permitted", "namespace sample-app is not permitted"]
    # Left in place when the parent goes or no longer renders it (a revision before the projects).
    assert default["metadata"]["annotations"]["argocd.argoproj.io/sync-options"] == "Delete=false,Prune=false"


def test_the_checker_applies_argo_cds_deny_entries() -> None:
    """Why the projects list no `!` entry: an unmatched deny entry admits everything else (the checker does as Argo CD
    does, so a project with `!kube-system` would pass an application aimed at `default`)."""
    project = {"spec": {"destinations": [{"server": IN_CLUSTER, "namespace": "!kube-system"}]}}
    assert not destination_permitted(project, IN_CLUSTER, "kube-system")
    assert destination_permitted(project, IN_CLUSTER, "default")
    both = {"spec": {"destinations": [{"server": IN_CLUSTER, "namespace": "shop"}, {"server": "*", "namespace": "!shop"}]}}
    assert not destination_permitted(both, IN_CLUSTER, "shop")  # a deny entry refuses outright
    globbed = {"spec": {"sourceRepos": ["https://github.com/acme/*", "!https://github.com/acme/secret"]}}
    assert source_permitted(globbed, "https://github.com/Acme/shop.git")  # normalized: case, .git
    assert not source_permitted(globbed, "https://github.com/acme/secret.git")
    # The same quirk for sources: the unmatched deny entry admits any other repository; alone, `*` stops at `/`.
    assert source_permitted(globbed, "https://gitlab.com/other/team/shop.git")
    assert not source_permitted({"spec": {"sourceRepos": ["https://github.com/acme/*"]}}, "https://github.com/acme/a/b.git")


def test_charts_of_facts_from_before_the_projects_still_render() -> None:
    """Additive facts: a colour deployed before `argocd` and `project` existed, following a branch that now has these
    charts, renders its applications into the default group and Argo CD with only its local admin."""
    facts = cluster_facts(config=validated(VARIANT), colour="green", common=sample_for, target_group=lambda a: a)
    del facts["argocd"]
    for app in facts["applications"].values():
        del app["project"]
    docs = render("apps", facts, release="apps", namespace=ARGOCD_NAMESPACE)
    children = by_kind(docs, "Application")
    assert {name: children[name]["spec"]["project"] for name in VARIANT["applications"]} == dict.fromkeys(
        VARIANT["applications"], DEFAULT_APPLICATION_GROUP
    )
    configs = children["argo-cd"]["spec"]["source"]["helm"]["valuesObject"]["configs"]
    assert configs["cm"]["admin.enabled"] == "true"
    assert "oidc.config" not in configs["cm"]
    assert configs["rbac"] == {"policy.default": "role:readonly", "policy.csv": "", "scopes": "[groups]"}


# --- single sign-on and RBAC ---------------------------------------------------------------------


def test_without_sso_the_local_admin_logs_in_and_everyone_else_reads(chains: dict[str, Chain]) -> None:
    configs = argo_cd_values(chains["example"])["configs"]
    assert configs["cm"]["admin.enabled"] == "true"
    assert "oidc.config" not in configs["cm"]
    assert configs["rbac"] == {"policy.default": "role:readonly", "policy.csv": "", "scopes": "[groups]"}


def test_with_sso_oidc_the_admin_groups_and_no_local_admin(chains: dict[str, Chain]) -> None:
    cm = argo_cd_values(chains["variant"])["configs"]["cm"]
    assert cm["admin.enabled"] == "false"
    assert cm["url"] == ARGOCD_SSO["url"]
    sso = ARGOCD_SSO["sso"]
    assert yaml.safe_load(cm["oidc.config"]) == {
        "name": sso["name"],
        "issuer": sso["issuer"],
        "clientID": sso["client_id"],
        "clientSecret": f"${SSO_CLIENT_SECRET}:{SSO_CLIENT_SECRET_KEY}",  # Argo CD's `$<secret>:<key>`, not a value
        "requestedScopes": sso["requested_scopes"],
        "requestedIDTokenClaims": {"groups": {"essential": True}},
    }
    assert argo_cd_values(chains["variant"])["configs"]["rbac"] == {
        "policy.default": "role:readonly",
        "policy.csv": "g, platform-admins, role:admin\ng, sre on call, role:admin",
        "scopes": "[groups]",
    }


def test_the_rbac_and_cm_configmaps_the_argo_cd_chart_makes_of_them(chains: dict[str, Chain]) -> None:
    """The upstream chart cannot be pulled here. Its two templates make each ConfigMap's data from the values as they
    are, less `create` and `annotations` (argo-helm charts/argo-cd/templates/argocd-configs/argocd-rbac-cm.yaml,
    argocd-cm.yaml and _helpers.tpl "argo-cd.config.cm", at argo-cd-10.1.1); every key used must be one of the chart's
    (tests/fixtures/argo-cd-values/keys.yaml, read from its values.yaml at each tag there)."""
    upstream = yaml.safe_load(KEYS.read_text())
    values = argo_cd_values(chains["variant"])
    rbac_cm = {k: v for k, v in values["configs"]["rbac"].items() if k not in ("create", "annotations")}
    assert rbac_cm["policy.csv"].splitlines() == ["g, platform-admins, role:admin", "g, sre on call, role:admin"]
    for release in upstream["releases"]:
        assert set(values["configs"]["rbac"]) <= set(release["configs.rbac"]), release["tag"]
        assert {"admin.enabled", "oidc.config", "url"} <= set(release["configs.cm"]), release["tag"]
        assert {"policy.default", "policy.csv", "scopes"} <= set(release["configs.rbac"]), release["tag"]
    used = {"dex.enabled", "server.service.type", "server.ingress.enabled"}
    assert used <= set(upstream["releases"][0]["other"])


def test_the_client_secret_is_copied_from_secrets_manager_into_the_secret_argo_cd_reads() -> None:
    (copy_,) = sso_client_secret(validated(VARIANT))
    assert (copy_.secret, copy_.namespace, copy_.name, copy_.key) == (
        SSO_SECRET_NAME,
        ARGOCD_NAMESPACE,
        SSO_CLIENT_SECRET,
        SSO_CLIENT_SECRET_KEY,
    )
    assert copy_.labels == {"app.kubernetes.io/part-of": "argocd"}  # or Argo CD will not resolve `$<secret>:<key>`
    assert sso_client_secret(validated({})) == ()


def test_no_secret_value_anywhere_in_the_output_or_the_facts(variant_app: Synthesized, chains: dict[str, Chain]) -> None:
    """The client secret lives in Secrets Manager (here, the emulator's secret holds a recognisable value); synth reads
    no secret value: no stack reads one (no secret version data source or resource), and the value is nowhere."""
    import boto3

    with pytest.MonkeyPatch.context() as patch, in_process_aws(patch):
        client = boto3.client("secretsmanager", region_name="ap-northeast-1")
        client.create_secret(Name=SSO_SECRET_NAME, SecretString=FAKE_CLIENT_SECRET)
        assert client.get_secret_value(SecretId=SSO_SECRET_NAME)["SecretString"] == FAKE_CLIENT_SECRET
    texts = [p.read_text(errors="replace") for p in variant_app.outdir.rglob("*") if p.is_file()]
    assert texts
    assert not [t for t in texts if FAKE_CLIENT_SECRET in t]
    for stack in variant_app.stacks():
        body = variant_app.json(stack)
        assert "aws_secretsmanager_secret_version" not in {*body.get("data", {}), *body.get("resource", {})}, stack
    facts = json.dumps(chains["variant"].root_values)
    assert FAKE_CLIENT_SECRET not in facts
    assert "secret_string" not in facts
