"""The values chain, rendered for real with Helm's engine: from the values the synthesized
helm_release carries, through bootstrap/manifests and argocd/apps (the platform's children, and per application its
Namespace, its TargetGroupBinding and its child Application), down to the manifests of the applications of this
repository.

Every colour of the shipped example and of the variant (three colours, three applications: the sample app, and two
from another repository sharing the namespace `shop`). Names are compared with the Pod Identity associations and the
traffic stack's target groups in the synthesized Terraform, not with the Python constants, so a name changed in only
one place (a chart, a values file, a stack) fails here.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest

from model.bootstrap import MANIFESTS_CHART
from model.config import DEFAULT_IMAGE_TAG, Config, applications
from model.paths import PROJECT_DIR
from model.platform import ARGO_CD, ARGOCD_NAMESPACE, CHILDREN, COMPONENTS, PARENT_APPLICATION
from model.routes import output_key
from tests.support.charts import (
    CHARTS,
    Chain,
    build_chain,
    by_kind,
    lint_errors,
    release_applications,
    render,
    sample_for,
)
from tests.support.configs import VARIANT, example, example_raw, validated
from tests.support.synth import Synthesized

FINALIZER = "resources-finalizer.argocd.argoproj.io"
WAVE = "argocd.argoproj.io/sync-wave"
READINESS_GATE = {"elbv2.k8s.aws/pod-readiness-gate-inject": "enabled"}
# Where a colour's stack reads an application's target group from: the traffic stack's output, by colour, then by
# application (model/routes.output_key of each).
TARGET_GROUPS = "data.terraform_remote_state.traffic.outputs.target_groups"

# The configurations as data (what the expectations below are read from) and as validated.
RAW: dict[str, dict[str, Any]] = {"example": example_raw(), "variant": VARIANT}
CONFIGS: dict[str, Config] = {"example": example(), "variant": validated(VARIANT)}
CASES = [pytest.param(name, colour, id=f"{name}-{colour}") for name, config in CONFIGS.items() for colour in config.clusters]
EXAMPLE_CASES = [case for case in CASES if case.values[0] == "example"]
VARIANT_CASES = [case for case in CASES if case.values[0] == "variant"]
Chains = dict[tuple[str, str], Chain]  # by (configuration, colour)


@pytest.fixture(scope="module")
def syntheses(example_app: Synthesized, variant_app: Synthesized) -> dict[str, Synthesized]:
    return {"example": example_app, "variant": variant_app}


@pytest.fixture(scope="module")
def chains(syntheses: dict[str, Synthesized]) -> Chains:
    return {
        (name, colour): build_chain(syntheses[name], colour) for name, config in CONFIGS.items() for colour in config.clusters
    }


def child_values(chain: Chain, name: str) -> dict[str, Any]:
    values: dict[str, Any] = chain.children[name]["spec"]["source"]["helm"]["valuesObject"]
    return values


def expected_revision(raw: dict[str, Any], app: str, colour: str) -> str:
    """What a colour runs of an application, as docs/configuration.md says it: an application of this repository at
    the colour's gitops_revision (else the project's, else main); one of another repository at the revision the
    colour's entry names, else at its own source.revision."""
    entry, cluster = raw["applications"][app], raw["clusters"][colour]
    if "repo_url" not in entry["source"]:
        return str(cluster.get("gitops_revision", raw.get("gitops", {}).get("revision", "main")))
    return str(cluster.get("applications", {}).get(app, {}).get("revision", entry["source"]["revision"]))


def expected_image_tag(raw: dict[str, Any], app: str, colour: str) -> str:
    entry = raw["applications"][app]
    return str(
        raw["clusters"][colour]
        .get("applications", {})
        .get(app, {})
        .get("image_tag", entry["image"].get("tag", DEFAULT_IMAGE_TAG))
    )


def target_group_sample(colour: str, app: str) -> str:
    """The stand-in (tests/support/charts.sample_for) of the colour's target group of the application."""
    return sample_for(f"{TARGET_GROUPS}.{output_key(colour)}.{output_key(app)}")


# --- bootstrap/manifests: the parent Application ------------------------------------------------


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_the_bootstrap_renders_exactly_the_parent_it_is_given(chains: Chains, name: str, colour: str) -> None:
    """bootstrap/manifests adds nothing and drops nothing: the parent and its project are model/bootstrap.py's, as built."""
    chain = chains[name, colour]
    assert chain.bootstrap == chain.bootstrap_values["manifests"]
    assert [doc["kind"] for doc in chain.bootstrap] == ["AppProject", "Application"]


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_root_renders_one_parent_application(chains: Chains, name: str, colour: str) -> None:
    parent = chains[name, colour].parent
    assert (parent["kind"], parent["metadata"]["name"], parent["metadata"]["namespace"]) == (
        "Application",
        PARENT_APPLICATION,
        ARGOCD_NAMESPACE,
    )
    assert parent["metadata"]["finalizers"] == [FINALIZER]
    source = parent["spec"]["source"]
    raw, config = RAW[name], CONFIGS[name]
    revision = raw["clusters"][colour].get("gitops_revision", raw.get("gitops", {}).get("revision", "main"))
    assert (source["repoURL"], source["targetRevision"], source["path"]) == (config.gitops.repo_url, revision, "argocd/apps")
    assert parent["spec"]["syncPolicy"]["automated"] == {"prune": True, "selfHeal": True}
    assert source["helm"]["valuesObject"] == chains[name, colour].root_values  # handed down unchanged


@pytest.mark.parametrize(("name", "colour"), EXAMPLE_CASES)
def test_parent_carries_the_clusters_facts(chains: Chains, name: str, colour: str) -> None:
    facts = chains[name, colour].parent["spec"]["source"]["helm"]["valuesObject"]
    # Contract 2: what contract 1 had for its one sample app (`ingress`, `sampleApp`, the Ingress's host names in `dns`,
    # `disabledApplications`) is gone; each application's facts are under `applications`. `argocd` and `externalSecrets`
    # were added later (additive: who may use Argo CD, tests/test_argocd_access.py; the Secrets made from Secrets
    # Manager, model/external_secrets.py; the admission policy's name, model/admission.py).
    assert sorted(facts) == sorted(
        [
            "contractVersion",
            "git",
            "cluster",
            "dns",
            "identities",
            "platform",
            "syncRetry",
            "applications",
            "argocd",
            "externalSecrets",
            "admission",
            "trafficOperator",
        ]
    )
    assert facts["contractVersion"] == 2
    assert facts["cluster"] == {
        "name": f"eks-bg-{colour}",
        "region": "ap-northeast-1",
        "vpcId": sample_for("vpc_id"),
        "vpcCidr": "10.0.0.0/16",
        "colour": colour,
    }
    assert facts["dns"] == {"zoneName": sample_for("zone_name"), "txtOwnerId": f"eks-bg-{colour}", "syncInterval": "60s"}
    assert list(facts["applications"]) == ["sample-app"]


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_each_applications_facts(chains: Chains, name: str, colour: str) -> None:
    """`applications.<name>`: where its chart is, what argocd/apps makes of it, and its chart's values with `blueGreen`,
    the colour's facts about it. Expected from the configuration as written, defaults spelt out."""
    raw, facts = RAW[name], chains[name, colour].root_values
    assert sorted(facts["applications"]) == sorted(raw["applications"])  # Helm's values are maps: no order
    for app, entry in raw["applications"].items():
        namespace, service = entry.get("namespace", app), {"name": app, "port": 80, **entry.get("service", {})}
        own_repository = "repo_url" not in entry["source"]
        blue_green = {
            "contractVersion": 2,
            "application": app,
            "colour": colour,
            "cluster": {
                "name": f"eks-bg-{colour}",
                "region": "ap-northeast-1",
                "vpcCidr": raw.get("network", {}).get("cidr", "10.0.0.0/16"),
            },
            "serviceAccount": entry.get("service_account", app),
            "service": service,
            "hosts": {"public": f"{entry['host']}.eks.example.com", "preview": f"{entry['host']}-{colour}.eks.example.com"},
            "table": {"name": sample_for("table_name")},
        }
        if "image" in entry:
            image_url = sample_for(f"{output_key(app)}_image_repository_url")
            blue_green["image"] = {"repository": image_url, "tag": expected_image_tag(raw, app, colour)}
        assert facts["applications"][app] == {
            "namespace": namespace,
            "project": entry.get("group", "applications"),
            "wave": entry.get("wave", 1),
            "source": {
                "repoURL": CONFIGS[name].gitops.repo_url if own_repository else entry["source"]["repo_url"],
                "targetRevision": expected_revision(raw, app, colour),
                "path": entry["source"]["path"],
            },
            "service": service,
            "targetGroupArn": target_group_sample(colour, app),
            "values": {**entry.get("values", {}), "blueGreen": blue_green},
        }, app


# --- argocd/apps: the child Applications ---------------------------------------------------------


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_every_child_in_its_wave_with_finalizers_and_automated_sync(chains: Chains, name: str, colour: str) -> None:
    """The registry's children and one per application; the applications after every controller."""
    apps = applications(CONFIGS[name])
    children = chains[name, colour].children
    waves = {child: int(app["metadata"]["annotations"][WAVE]) for child, app in children.items()}
    assert waves == {**{c.name: c.wave for c in CHILDREN}, **{a.name: a.config.wave for a in apps}}
    assert max(c.wave for c in CHILDREN if c.wave is not None) < min(a.config.wave for a in apps)
    for child, app in children.items():
        # The bootstrapped children have none (Argo CD's own, External Secrets Operator): deleting them in the teardown
        # must not take Argo CD, or the credentials it reads, down with them.
        bootstrapped = {c.name for c in CHILDREN if c.self_managed}
        assert app["metadata"].get("finalizers") == (None if child in bootstrapped else [FINALIZER]), child
        assert app["metadata"]["namespace"] == ARGOCD_NAMESPACE
        assert app["spec"]["syncPolicy"]["automated"] == {"prune": True, "selfHeal": True}
    for component in CHILDREN:
        assert "CreateNamespace=true" in children[component.name]["spec"]["syncPolicy"]["syncOptions"]
    for application in apps:
        # Its namespace is argocd/apps' own Namespace (labelled, below), never one Argo CD creates unlabelled.
        options = children[application.name]["spec"]["syncPolicy"].get("syncOptions", [])
        assert "CreateNamespace=true" not in options, application.name


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_controller_charts_are_pinned_to_the_colours_release(chains: Chains, name: str, colour: str) -> None:
    pinned = {
        child: (source["repoURL"], source["chart"], source["targetRevision"])
        for child, source in ((n, app["spec"]["source"]) for n, app in chains[name, colour].children.items())
        if "chart" in source
    }
    release = CONFIGS[name].release(colour).platform
    assert pinned == {c.name: (c.chart.repository, c.name, release.version(c)) for c in CHILDREN}
    assert pinned["external-dns"][0] == "https://kubernetes-sigs.github.io/external-dns"


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_each_applications_child_runs_its_chart_at_the_colours_revision_of_it(chains: Chains, name: str, colour: str) -> None:
    """Its repository (this one, or its own), at the colour's revision of it, its path, its release named after it, its
    namespace, its values (with `blueGreen`) as the facts hold them; deleted with what it installed; retried."""
    raw, chain = RAW[name], chains[name, colour]
    for app, entry in raw["applications"].items():
        child = chain.children[app]
        source = child["spec"]["source"]
        repository = entry["source"].get("repo_url", CONFIGS[name].gitops.repo_url)
        assert (source["repoURL"], source["targetRevision"], source["path"]) == (
            repository,
            expected_revision(raw, app, colour),
            entry["source"]["path"],
        ), app
        assert source["helm"] == {"releaseName": app, "valuesObject": chain.root_values["applications"][app]["values"]}
        assert child["spec"]["destination"] == {
            "server": "https://kubernetes.default.svc",
            "namespace": entry.get("namespace", app),
        }
        assert child["metadata"]["finalizers"] == [FINALIZER]
        assert child["spec"]["syncPolicy"]["retry"] == chain.root_values["syncRetry"]


def test_each_colour_runs_the_revisions_its_own_entry_names() -> None:
    """The synthesized configurations name each application's default revisions; here the colours differ: green (serving)
    names its own revision of catalogue and its own gitops_revision, purple (no weight) names one of orders only and
    inherits the rest. Rendered from the facts (no synthesis: tests/support/charts.release_applications)."""
    raw: dict[str, Any] = {**VARIANT, "clusters": {colour: dict(entry) for colour, entry in VARIANT["clusters"].items()}}
    green, purple = raw["clusters"]["green"], raw["clusters"]["purple"]
    green["gitops_revision"] = "platform-b"
    green["applications"] = {**green["applications"], "catalogue": {"revision": "catalogue-v1.9.0"}}
    purple["applications"] = {"orders": {"revision": "orders-v5.0.0-rc1"}}
    config = validated(raw)
    ran = {}
    for colour in config.clusters:
        children = {doc["metadata"]["name"]: doc for doc in release_applications(config, colour)}
        ran[colour] = {app: children[app]["spec"]["source"]["targetRevision"] for app in raw["applications"]}
        assert ran[colour] == {app: expected_revision(raw, app, colour) for app in raw["applications"]}, colour
    assert ran["green"] == {"sample-app": "platform-b", "catalogue": "catalogue-v1.9.0", "orders": "orders-v4.2.1"}
    assert ran["purple"] == {"sample-app": "main", "catalogue": "catalogue-v1.8.0", "orders": "orders-v5.0.0-rc1"}
    assert ran["blue"] == {"sample-app": "main", "catalogue": "catalogue-v1.8.0", "orders": "orders-v4.2.1"}


@pytest.mark.parametrize(("name", "colour"), EXAMPLE_CASES)
def test_argo_cd_manages_itself_from_git_after_the_bootstrap(
    chains: Chains, example_app: Synthesized, name: str, colour: str
) -> None:
    """The child renders over Terraform's bootstrap release (same release name and namespace), at the colour's
    version, with the settings of argocd/apps/platform/argo-cd/values.yaml, which the bootstrap does not carry."""
    child = chains[name, colour].children[ARGO_CD.name]
    (bootstrap,) = [r for r in example_app.resources(colour, "helm_release").values() if r["name"] == "argo-cd"]
    source = child["spec"]["source"]
    namespace = example_app.json(colour)["resource"]["kubernetes_namespace_v1"]
    (bootstrap_namespace,) = [n["metadata"]["name"] for n in namespace.values() if n["metadata"]["name"] == ARGOCD_NAMESPACE]
    assert bootstrap["namespace"].startswith("${kubernetes_namespace_v1.")  # that namespace, by reference
    assert (source["helm"]["releaseName"], child["spec"]["destination"]["namespace"]) == (bootstrap["name"], bootstrap_namespace)
    assert source["targetRevision"] == bootstrap["version"] == CONFIGS[name].release(colour).platform.version(ARGO_CD)
    health = "resource.customizations.health.argoproj.io_Application"
    assert health in source["helm"]["valuesObject"]["configs"]["cm"]
    assert health not in bootstrap["values"][0]
    # Terraform bootstraps it once: what the child changes later is not Terraform's to revert.
    assert bootstrap["lifecycle"]["ignore_changes"] == ["values", "version", "max_history"]


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_terraform_installs_no_application(syntheses: dict[str, Synthesized], name: str, colour: str) -> None:
    """Only the bootstrap: Argo CD, External Secrets Operator with the Secrets Argo CD needs before its first clone, and
    the App of Apps. Every application is a child of argocd/apps, from Git."""
    synthesized = syntheses[name]
    releases = sorted(r["name"] for r in synthesized.resources(colour, "helm_release").values())
    assert releases == ["app-of-apps", "argo-cd", "bootstrap-secrets", "external-secrets"]
    namespaces = synthesized.json(colour)["resource"]["kubernetes_namespace_v1"].values()
    assert [n["metadata"]["name"] for n in namespaces] == [ARGOCD_NAMESPACE, "external-secrets"]


@pytest.mark.parametrize(("name", "colour"), EXAMPLE_CASES)
def test_load_balancer_controller_values(chains: Chains, name: str, colour: str) -> None:
    values = child_values(chains[name, colour], "aws-load-balancer-controller")
    assert values["clusterName"] == f"eks-bg-{colour}"
    assert (values["region"], values["vpcId"]) == ("ap-northeast-1", sample_for("vpc_id"))


@pytest.mark.parametrize(("name", "colour"), EXAMPLE_CASES)
def test_external_dns_values(chains: Chains, name: str, colour: str) -> None:
    values = child_values(chains[name, colour], "external-dns")
    assert values["provider"] == {"name": "aws"}
    assert values["sources"] == ["ingress"]
    assert values["domainFilters"] == [sample_for("zone_name")]
    assert values["txtOwnerId"] == f"eks-bg-{colour}"  # distinct per cluster
    assert (values["policy"], values["registry"], values["interval"]) == ("sync", "txt", "60s")
    assert {"name": "AWS_DEFAULT_REGION", "value": "ap-northeast-1"} in values["env"]


# --- argocd/apps: each application's namespace and TargetGroupBinding ----------------------------


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_one_namespace_per_name_labelled_for_the_readiness_gate(chains: Chains, name: str, colour: str) -> None:
    """The load balancer controller injects its readiness gate into pods of a namespace with the label (docs/deploy/
    pod_readiness_gate.md, v3.5.0): a rollout then holds each old pod until its replacement is healthy in the target
    group. One Namespace per name, however many applications share it; the platform's namespaces are not among them."""
    raw = RAW[name]
    namespaces = [doc for doc in chains[name, colour].apps_manifests if doc["kind"] == "Namespace"]
    wanted = sorted({entry.get("namespace", app) for app, entry in raw["applications"].items()})
    assert sorted(doc["metadata"]["name"] for doc in namespaces) == wanted
    for namespace in namespaces:
        assert namespace["metadata"]["labels"] == READINESS_GATE
        assert namespace["metadata"]["annotations"] == {WAVE: "0"}
        kubernetes_validate.validate(namespace, raw["clusters"][colour]["kubernetes_version"], strict=True)
    assert not set(wanted) & {c.namespace for c in COMPONENTS}


@pytest.mark.parametrize(("name", "colour"), VARIANT_CASES)
def test_two_applications_in_one_namespace_get_one_namespace(chains: Chains, name: str, colour: str) -> None:
    shop = [app for app, entry in RAW[name]["applications"].items() if entry.get("namespace") == "shop"]
    assert shop == ["catalogue", "orders"]  # what this test is about
    chain = chains[name, colour]
    assert [doc["metadata"]["name"] for doc in chain.apps_manifests if doc["kind"] == "Namespace"].count("shop") == 1
    bindings = [doc for doc in chain.apps_manifests if doc["kind"] == "TargetGroupBinding"]
    assert sorted(b["metadata"]["name"] for b in bindings if b["metadata"]["namespace"] == "shop") == shop


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_one_target_group_binding_per_application(chains: Chains, name: str, colour: str) -> None:
    """In the application's namespace, naming its Service and port (the configuration's `service`) and the colour's own
    target group of it (the traffic stack's output for this colour and application); before its pods (wave 0)."""
    raw, chain = RAW[name], chains[name, colour]
    bindings = [doc for doc in chain.apps_manifests if doc["kind"] == "TargetGroupBinding"]
    assert sorted(b["metadata"]["name"] for b in bindings) == sorted(raw["applications"])
    for binding in bindings:
        app = binding["metadata"]["name"]
        entry = raw["applications"][app]
        assert binding["apiVersion"] == "elbv2.k8s.aws/v1beta1"
        assert binding["metadata"]["namespace"] == entry.get("namespace", app)
        assert binding["spec"] == {
            "targetGroupARN": target_group_sample(colour, app),
            "targetType": "ip",
            "serviceRef": {"name": entry.get("service", {}).get("name", app), "port": entry.get("service", {}).get("port", 80)},
        }
        wave = int(binding["metadata"]["annotations"][WAVE])
        assert wave == 0 < int(chain.children[app]["metadata"]["annotations"][WAVE])


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_a_binding_waits_for_the_controllers_crd_not_for_a_dry_run(chains: Chains, name: str, colour: str) -> None:
    """The TargetGroupBinding CRD comes from the load balancer controller's chart, another Application (wave -1). On a
    new colour the parent's first sync would dry-run the bindings before that child exists, fail with "the server could
    not find the requested resource", and apply nothing, the controller's child included: the colour never comes up.
    The annotation skips the dry run only while the type is missing (argoproj/argo-cd docs/user-guide/sync-options.md at
    v3.5.1, "Skip Dry Run for new custom resources types")."""
    for binding in by_kind(chains[name, colour].apps_manifests, "TargetGroupBinding").values():
        options = binding["metadata"]["annotations"]["argocd.argoproj.io/sync-options"].split(",")
        assert "SkipDryRunOnMissingResource=true" in [option.strip() for option in options]


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_a_binding_follows_a_replaced_target_group_and_is_never_recreated_otherwise(
    chains: Chains, name: str, colour: str
) -> None:
    """spec.targetGroupARN is immutable in the controller's webhook: when the traffic stack replaced the colour's group
    (allowed only while the colour has no live weight), the binding is deleted and created again (Force, Replace); the
    parent applies only what differs, so a sync of anything else leaves an unchanged binding alone."""
    chain = chains[name, colour]
    for binding in by_kind(chain.apps_manifests, "TargetGroupBinding").values():
        options = [o.strip() for o in binding["metadata"]["annotations"]["argocd.argoproj.io/sync-options"].split(",")]
        assert {"Force=true", "Replace=true"} <= set(options)
    assert chain.parent["spec"]["syncPolicy"]["syncOptions"] == ["ApplyOutOfSyncOnly=true"]


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_each_binding_names_the_colours_target_group_of_the_application(
    syntheses: dict[str, Synthesized], name: str, colour: str
) -> None:
    """The reference a colour hands its bindings resolves, in the traffic stack, to the target group of that application
    and colour: its name, its port, and the target type the binding declares (the controller registers pod IPs)."""
    synthesized, config = syntheses[name], CONFIGS[name]
    traffic = synthesized.json("traffic")
    groups = traffic["output"]["target_groups"]["value"][output_key(colour)]
    by_reference = {
        f"${{aws_lb_target_group.{key}.arn}}": body for key, body in traffic["resource"]["aws_lb_target_group"].items()
    }
    for app in applications(config):
        group = by_reference[groups[output_key(app.name)]]
        # Its port is a fixed default (components/application_routes.py): the binding gives every pod its own.
        assert (group["name"], group["port"], group["target_type"]) == (f"eks-bg-{app.name}-{colour}", 80, "ip")
    # ...read from the traffic stack's own state.
    (remote,) = [body for key, body in synthesized.json(colour)["data"]["terraform_remote_state"].items() if key == "traffic"]
    assert remote["config"] == traffic["terraform"]["backend"]["local"]


# The TargetGroupBinding CRD the colours' load balancer controller installs (its chart 3.5.0), read from aws/eks-charts
# at commit 5239609242f3430be50fb0b714a24d3ef2b47983, stable/aws-load-balancer-controller/crds/crds.yaml (not vendored:
# the facts checked, transcribed by hand): group elbv2.k8s.aws, kind TargetGroupBinding, scope Namespaced (lines 895-903);
# version v1beta1 served and the storage version (lines 1117, 1405-1406); its spec (lines 1139-1338): the fields it
# names (types and enums as there; the nested schemas of networking and nodeSelector left out), `serviceRef` required
# (lines 1336-1337) with `name` and `port` (lines 1288-1304; the port an int or a string), `targetType` one of instance
# and ip (lines 1325-1331), `targetGroupARN` a string (lines 1305-1308).
TARGET_GROUP_BINDING_CRD = {"apiVersion": "elbv2.k8s.aws/v1beta1", "kind": "TargetGroupBinding", "namespaced": True}
TARGET_GROUP_BINDING_SPEC: dict[str, Any] = {
    "type": "object",
    "required": ["serviceRef"],
    "properties": {
        "assumeRoleExternalId": {"type": "string"},
        "iamRoleArnToAssume": {"type": "string"},
        "ipAddressType": {"type": "string", "enum": ["ipv4", "ipv6"]},
        "multiClusterTargetGroup": {"type": "boolean"},
        "networking": {"type": "object"},
        "nodeSelector": {"type": "object"},
        "serviceRef": {
            "type": "object",
            "required": ["name", "port"],
            "properties": {"name": {"type": "string"}, "port": {"anyOf": [{"type": "integer"}, {"type": "string"}]}},
            "additionalProperties": False,
        },
        "targetGroupARN": {"type": "string"},
        "targetGroupName": {"type": "string"},
        "targetGroupProtocol": {"type": "string", "enum": ["HTTP", "HTTPS", "TCP", "TLS", "UDP", "TCP_UDP", "QUIC", "TCP_QUIC"]},
        "targetType": {"type": "string", "enum": ["instance", "ip"]},
        "vpcID": {"type": "string"},
    },
    # Not the CRD's words: the API server prunes a field its (structural) schema does not name, so a misspelt one
    # (`targetGroupArn`) would vanish without an error and leave the controller a binding without its target group.
    "additionalProperties": False,
}


def crd_problems(binding: dict[str, Any]) -> list[str]:
    """What the API server would refuse (or silently prune) of a TargetGroupBinding, by the CRD's facts above."""
    problems = [
        f"{key}: {binding.get(key)!r}, not {wanted!r}"
        for key, wanted in (("apiVersion", TARGET_GROUP_BINDING_CRD["apiVersion"]), ("kind", TARGET_GROUP_BINDING_CRD["kind"]))
        if binding.get(key) != wanted
    ]
    if not binding.get("metadata", {}).get("name") or not binding.get("metadata", {}).get("namespace"):
        problems.append("metadata: a namespaced resource needs its name and namespace")
    validator = jsonschema.Draft7Validator(TARGET_GROUP_BINDING_SPEC)
    problems += [
        "spec" + "".join(f".{part}" for part in e.absolute_path) + f": {e.message}"
        for e in validator.iter_errors(binding.get("spec"))
    ]
    return problems


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_every_target_group_binding_is_valid_for_the_controllers_crd(chains: Chains, name: str, colour: str) -> None:
    bindings = [doc for doc in chains[name, colour].apps_manifests if doc["kind"] == "TargetGroupBinding"]
    assert bindings
    assert {b["metadata"]["name"]: crd_problems(b) for b in bindings} == {b["metadata"]["name"]: [] for b in bindings}


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        pytest.param({"targetType": "pod"}, "spec.targetType: 'pod' is not one of ['instance', 'ip']", id="target type"),
        pytest.param({"serviceRef": {"name": "x"}}, "spec.serviceRef: 'port' is a required property", id="no port"),
        pytest.param({"serviceRef": {"name": "x", "port": 8.5}}, "spec.serviceRef.port: 8.5 is not valid", id="port type"),
        pytest.param({"targetGroupArn": "arn"}, "spec: Additional properties are not allowed", id="misspelt field"),
    ],
)
def test_the_crd_check_refuses_what_the_api_server_would(change: dict[str, Any], problem: str) -> None:
    binding: dict[str, Any] = {
        "apiVersion": "elbv2.k8s.aws/v1beta1",
        "kind": "TargetGroupBinding",
        "metadata": {"name": "x", "namespace": "x"},
        "spec": {"targetGroupARN": "arn", "targetType": "ip", "serviceRef": {"name": "x", "port": 80}},
    }
    assert crd_problems(binding) == []
    binding["spec"] = {**binding["spec"], **change}
    assert [p for p in crd_problems(binding) if p.startswith(problem)] != [], crd_problems(binding)
    assert crd_problems({**binding, "apiVersion": "elbv2.k8s.aws/v1"})[0].startswith("apiVersion")


# --- names agree with the Pod Identity associations ----------------------------------------------


@pytest.mark.parametrize(("name", "colour"), CASES)
@pytest.mark.parametrize("child", [c.name for c in CHILDREN if c.identity])
def test_controller_service_accounts_are_the_associated_ones(chains: Chains, name: str, colour: str, child: str) -> None:
    """The chart's one `serviceAccount` block, wherever the chart keeps it (at the top for most; under `rbac` for
    cluster-autoscaler's), makes the service account the association binds."""
    chain = chains[name, colour]
    namespace = chain.children[child]["spec"]["destination"]["namespace"]
    (service_account,) = service_accounts(child_values(chain, child))
    assert service_account["create"] is True
    assert (namespace, service_account["name"]) in chain.associations


def service_accounts(values: dict[str, Any]) -> list[dict[str, Any]]:
    """Every mapping the values keep under a key `serviceAccount`, at any depth."""
    found: list[dict[str, Any]] = []
    for key, value in values.items():
        if isinstance(value, dict):
            found += [value] if key == "serviceAccount" else service_accounts(value)
    return found


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_every_application_with_a_policy_has_the_association_of_its_namespace_and_service_account(
    chains: Chains, name: str, colour: str
) -> None:
    """Its child hands its chart the service account (`blueGreen.serviceAccount`) the association binds, in the namespace
    it deploys to; an application without a policy has none (catalogue, in the variant)."""
    chain, raw = chains[name, colour], RAW[name]
    platform = {
        (chain.children[c.name]["spec"]["destination"]["namespace"], c.identity.service_account) for c in CHILDREN if c.identity
    }
    bound = set()
    for app, entry in raw["applications"].items():
        namespace = chain.children[app]["spec"]["destination"]["namespace"]
        account = child_values(chain, app)["blueGreen"]["serviceAccount"]
        assert (namespace, account) == (entry.get("namespace", app), entry.get("service_account", app))
        if entry.get("policy"):
            bound.add((namespace, account))
    assert chain.associations - platform == bound
    assert bound  # every configuration here has an application with a policy


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_the_sample_app_runs_as_its_associated_service_account(chains: Chains, name: str, colour: str) -> None:
    """The chart of this repository, rendered from its child's values: its ServiceAccount is the one a Pod Identity
    association of the colour binds, in the namespace the child deploys to."""
    chain = chains[name, colour]
    rendered = chain.applications["sample-app"]
    namespace = chain.children["sample-app"]["spec"]["destination"]["namespace"]
    (account,) = by_kind(rendered, "ServiceAccount")
    assert (namespace, account) in chain.associations
    deployment = by_kind(rendered, "Deployment")["sample-app"]
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == account
    assert "annotations" not in by_kind(rendered, "ServiceAccount")[account]["metadata"]  # no IRSA annotation
    assert {doc["metadata"]["namespace"] for doc in rendered} == {namespace}


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_the_binding_finds_the_service_the_chart_makes(chains: Chains, name: str, colour: str) -> None:
    """The sample app's Service has the name and a port the TargetGroupBinding names, in its namespace."""
    chain = chains[name, colour]
    binding = by_kind(chain.apps_manifests, "TargetGroupBinding")["sample-app"]
    reference = binding["spec"]["serviceRef"]
    service = by_kind(chain.applications["sample-app"], "Service")[reference["name"]]
    assert service["metadata"]["namespace"] == binding["metadata"]["namespace"]
    assert reference["port"] in [port["port"] for port in service["spec"]["ports"]]


# --- what renders, and where ---------------------------------------------------------------------


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_only_the_applications_of_this_repository_render_here(chains: Chains, name: str, colour: str) -> None:
    own = [app for app, entry in RAW[name]["applications"].items() if "repo_url" not in entry["source"]]
    assert sorted(chains[name, colour].applications) == sorted(own) == ["sample-app"]


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_no_ingress_anywhere(chains: Chains, name: str, colour: str) -> None:
    """The shared load balancer is the traffic stack's: argocd/apps renders only the projects, Applications, the
    applications' Namespaces and their TargetGroupBindings (and the repository credentials' ExternalSecrets and their
    store, and the admission policy that refuses load balancers, tests/test_admission.py), and no application of this
    repository makes a load balancer."""
    chain = chains[name, colour]
    kinds = {"AppProject", "Application", "Namespace", "TargetGroupBinding", "ClusterSecretStore", "ExternalSecret"}
    kinds |= {"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "Role", "RoleBinding"}
    assert {doc["kind"] for doc in chain.apps_manifests} == kinds
    rendered = [doc for docs in chain.applications.values() for doc in docs]
    assert [doc["metadata"]["name"] for doc in rendered if doc["kind"] == "Ingress"] == []
    assert [
        doc["metadata"]["name"] for doc in rendered if doc["kind"] == "Service" and doc["spec"].get("type") == "LoadBalancer"
    ] == []


# --- the charts themselves -----------------------------------------------------------------------


@pytest.mark.parametrize(("name", "colour"), CASES)
def test_charts_lint_clean_with_the_chain_values(chains: Chains, name: str, colour: str) -> None:
    chain = chains[name, colour]
    assert lint_errors(MANIFESTS_CHART, chain.bootstrap_values) == []
    assert lint_errors("apps", chain.parent["spec"]["source"]["helm"]["valuesObject"]) == []
    for app in chain.applications:
        chart = PROJECT_DIR / chain.children[app]["spec"]["source"]["path"]
        assert lint_errors(chart, child_values(chain, app)) == [], app


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


@pytest.mark.parametrize("fact", ["targetGroupArn", "source.targetRevision"])
def test_an_application_without_its_target_group_or_revision_fails_the_render(chains: Chains, fact: str) -> None:
    """A colour never gets a binding without a target group, nor a child following a revision nobody named."""
    from helm_python import HelmRenderError

    facts = chains["variant", "purple"].root_values
    app: dict[str, Any] = {**facts["applications"]["orders"], "source": dict(facts["applications"]["orders"]["source"])}
    *parents, key = fact.split(".")
    (app["source"] if parents else app).pop(key)
    broken = {**facts, "applications": {**facts["applications"], "orders": app}}
    with pytest.raises(HelmRenderError, match=re.escape(f"applications.orders.{fact} is required")):
        render("apps", broken, release="apps", namespace=ARGOCD_NAMESPACE)
