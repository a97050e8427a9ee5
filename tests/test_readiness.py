"""`python -m tools.readiness <colour>` and the shift's proof, one test per condition that fails it.

The world: green (Kubernetes 1.36) in the AWS emulator with its pods registered in its target groups of the shared load
balancer, three applications (tests/support/configs.THREE_APPLICATIONS), EKS insights served beside moto
(tests/support/emulated_aws.WithInsights), Argo CD behind a fake Kubernetes API running exactly the Applications the
charts render from green's facts (tests/support/charts.release_applications), and a local HTTPS server standing in for
green's preview hosts (tests/support/preview_server.py). Each test breaks one thing, most of them for one application
while the others pass.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from model.config import Config
from model.loading import load_config
from model.platform import COMPONENTS, PARENT_APPLICATION, Component, component
from model.values import cluster_facts
from tests.support.charts import release_applications, render, sample_for
from tests.support.configs import THREE_APPLICATIONS, validated, write_project
from tests.support.emulated_aws import REGION, ZONE_NAME, Emulated, FakeClock, WithInsights, base_config, insight
from tests.support.fake_kubernetes import FakeKubernetes
from tests.support.kube_rbac import attributes, role_allows
from tests.support.preview_server import Answer, PreviewServer
from tests.support.synth import Synthesized
from tools.aws import Aws
from tools.readiness import Readiness, missing
from tools.readiness.insights import REFRESH_TIMEOUT_SECONDS
from tools.readiness.release import registry_at
from tools.readiness.report import main
from tools.readiness.types import Finding

GREEN_TAG = "0.2.0"
PREVIEW = f"app-green.{ZONE_NAME}"  # the sample app's
APPS = {name: app["host"] for name, app in THREE_APPLICATIONS.items()}


def answers() -> dict[str, Answer]:
    """What green's pods of each application answer on their probe paths (fresh objects: tests change them)."""
    return {
        PREVIEW: Answer("green", GREEN_TAG),
        f"catalogue-green.{ZONE_NAME}": Answer("green", "", path="/health", body={"status": "ok"}),
        f"orders-green.{ZONE_NAME}": Answer("green", "", path="/status", body={"colour": "green", "release": "4.2.1"}),
    }


def chart(name: str) -> str:
    """green's version of one chart: today's defaults, which named_release writes down."""
    return Config().platform.version(component(name))


def registry(_: str) -> tuple[Component, ...]:
    """The components at green's revision: the checkout's (the revision reader has a test of its own below)."""
    return COMPONENTS


@pytest.fixture(scope="module")
def preview() -> Iterator[PreviewServer]:
    server = PreviewServer(ZONE_NAME)
    yield server
    server.close()


@dataclass
class World:
    config: Config
    path: Path
    aws: Emulated
    eks: WithInsights
    argocd: FakeKubernetes
    preview: PreviewServer
    clock: FakeClock

    def readiness(self, *, refresh: bool = True, attempts: int = 3) -> Readiness:
        clients = Aws(REGION, eks=self.eks, elbv2=self.aws.elbv2, ssm=self.aws.ssm, kube=lambda _: self.argocd.api())
        prober = self.preview.prober(attempts=attempts)
        return Readiness(self.config, clients, self.clock, refresh_insights=refresh, prober=prober, components=registry)

    def check(self, **options: bool | int) -> list[Finding]:
        return self.readiness(**options).check("green")  # type: ignore[arg-type]

    def gaps(self, **options: bool | int) -> list[str]:
        return missing(self.check(**options))


RAW = base_config(
    applications=THREE_APPLICATIONS, blue={"kubernetes_version": "1.35", "weight": 100}, green={"kubernetes_version": "1.36"}
)
RAW["clusters"]["green"]["applications"]["sample-app"]["image_tag"] = GREEN_TAG


@pytest.fixture(scope="module")
def green_runs() -> list[dict[str, Any]]:
    """What green's Argo CD holds when it runs its release: rendered once (Helm's engine) for the module."""
    return release_applications(validated(RAW), "green")


@pytest.fixture
def world(
    tmp_path: Path, emulated: Emulated, argocd: FakeKubernetes, preview: PreviewServer, green_runs: list[dict[str, Any]]
) -> World:
    """green, deployed and ready: every check passes until a test breaks one."""
    path = write_project(tmp_path, RAW)
    config = load_config(path)
    emulated.deploy_cluster("green", "1.36")
    emulated.deploy_traffic(APPS, {"blue": 100, "green": 0})
    emulated.register_pods("green")
    argocd.runs(copy.deepcopy(green_runs))
    preview.answers = answers()
    preview.unresolved = set()
    preview.refused = set()
    return World(config, path, emulated, WithInsights(emulated.eks), argocd, preview, FakeClock())


def test_a_ready_colour_passes_every_check_and_says_what_it_proved(world: World) -> None:
    findings = world.check()
    assert missing(findings) == []
    details = [f.detail for f in findings]
    assert details[0] == "EKS cluster eks-bg-green: ACTIVE, Kubernetes 1.36 as configured, platform eks.4"
    assert details[1].startswith("EKS upgrade insights of eks-bg-green: none in ERROR (refreshed ")
    release = config_release(world.config)
    assert details[2] == f"Argo CD {PARENT_APPLICATION}: Synced/Healthy, revision main"
    assert details[3 : 3 + len(release)] == [
        f"Argo CD {name}: Synced/Healthy, {'chart ' + version if version else 'revision ' + str(revision)}"
        for name, version, revision in release
    ]
    groups = 3 + len(release)
    assert details[groups : groups + len(APPS)] == [f"target group of {app} in green: 1 of 1 target(s) healthy" for app in APPS]
    assert details[groups + len(APPS) : -3] == [
        f"readiness gate of {app} in green: 1 pod(s) carry target-health.elbv2.k8s.aws/{app}" for app in APPS
    ]
    assert details[-3:] == [
        f"https://{PREVIEW}/probe: green answered through DNS, the shared load balancer and TLS: colour green, "
        f"image_tag {GREEN_TAG}, as configured",
        f"https://catalogue-green.{ZONE_NAME}/health: green answered 200 through DNS, the shared load balancer and TLS",
        f"https://orders-green.{ZONE_NAME}/status: green answered through DNS, the shared load balancer and TLS: colour "
        "green, release 4.2.1, as configured",
    ]


def config_release(config: Config) -> list[tuple[str, str | None, str | None]]:
    """The children green's release defines, written out from the registry and the applications: (name, chart version
    or None, revision or None), in wave order."""
    release = config.release("green")
    children = sorted((c for c in COMPONENTS if c.wave is not None), key=lambda c: (c.wave or 0, c.name))
    platform = [(c.name, release.platform.version(c), None) for c in children]
    apps = sorted(config.applications.items(), key=lambda item: (item[1].wave, item[0]))
    return platform + [(name, None, release.applications[name].revision) for name, _ in apps]


# --- Argo CD: the release the config names ------------------------------------------------------------------------


def test_only_the_parent_present_names_every_missing_child(world: World) -> None:
    for name in world.argocd.application_names():
        if name != PARENT_APPLICATION:
            world.argocd.remove_application(name)
    gaps = world.gaps()
    children = [name for name, _, _ in config_release(world.config)]
    assert [g.split(":")[0] for g in gaps] == [f"Argo CD {name}" for name in children]
    assert all("missing from namespace argocd (green's release at main defines it" in g for g in gaps)


def test_one_child_missing_is_named(world: World) -> None:
    world.argocd.remove_application("external-dns")
    assert world.gaps() == [
        "Argo CD external-dns: missing from namespace argocd (green's release at main defines it, at chart "
        f"{chart('external-dns')})"
    ]


def test_a_child_at_another_chart_version_is_refused_naming_the_key(world: World) -> None:
    source = world.argocd.application_source("aws-load-balancer-controller")
    world.argocd.add_application("aws-load-balancer-controller", wave=-1, source={**source, "targetRevision": "3.4.3"})
    assert world.gaps() == [
        "Argo CD aws-load-balancer-controller: at chart 3.4.3, but clusters.green.platform.aws_load_balancer_controller "
        f"is {chart('aws-load-balancer-controller')}"
    ]


def test_a_child_at_another_revision_is_refused(world: World) -> None:
    source = world.argocd.application_source("sample-app")
    world.argocd.add_application("sample-app", wave=1, source={**source, "targetRevision": "v1.4.0"})
    assert world.gaps() == ["Argo CD sample-app: at revision v1.4.0, but clusters.green.gitops_revision is main"]


def test_an_application_of_another_repository_at_another_revision_names_its_own_key(world: World) -> None:
    source = world.argocd.application_source("catalogue")
    world.argocd.add_application("catalogue", wave=1, source={**source, "targetRevision": "catalogue-v1.7.2"})
    assert world.gaps() == [
        "Argo CD catalogue: at revision catalogue-v1.7.2, but clusters.green.applications.catalogue.revision is catalogue-v1.8.0"
    ]


def test_a_child_not_synced_or_whose_last_sync_failed_is_named(world: World) -> None:
    dns = world.argocd.application_source("external-dns")
    world.argocd.add_application("external-dns", wave=0, source=dns, sync="OutOfSync", health="Healthy")
    app = world.argocd.application_source("sample-app")
    world.argocd.add_application("sample-app", wave=1, source=app, health="Healthy", phase="Failed")
    assert world.gaps() == [
        f"Argo CD external-dns: OutOfSync/Healthy, chart {chart('external-dns')}",
        "Argo CD sample-app: its last sync failed: sync failed (Synced/Healthy, revision main)",
    ]


# What Argo CD writes on an Application whose repository refuses it: "Failed to load target state: " (argo-cd
# controller/state.go at v3.5.1), the manifest generation's wrapping (controller/state.go), the repo server's gRPC error,
# util/git/client.go's "failed to list refs: " and go-git's transport.ErrAuthenticationRequired ("authentication
# required"), with GitHub's answer.
CLONE_REFUSED = (
    "Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = "
    "failed to list refs: authentication required: Repository not found."
)


def test_a_repository_argo_cd_cannot_clone_is_named_with_its_message(world: World) -> None:
    """A private repository without (or with a wrong) credential: Argo CD cannot compare, and says why."""
    source = world.argocd.application_source("catalogue")
    condition = {"type": "ComparisonError", "message": CLONE_REFUSED, "lastTransitionTime": "2026-11-24T09:00:00Z"}
    world.argocd.add_application("catalogue", wave=1, source=source, sync="Unknown", conditions=[condition])
    assert world.gaps() == [f"Argo CD cannot reach {source['repoURL']}: {CLONE_REFUSED} (Argo CD catalogue)"]


def test_a_comparison_error_that_is_no_clone_failure_is_not_called_unreachable(world: World) -> None:
    """A chart that does not render is a ComparisonError too, from a repository Argo CD did read."""
    source = world.argocd.application_source("catalogue")
    message = "Failed to load target state: failed to generate manifest for source 1 of 1: `helm template` failed"
    condition = {"type": "ComparisonError", "message": message}
    world.argocd.add_application("catalogue", wave=1, source=source, sync="Unknown", conditions=[condition])
    assert world.gaps() == ["Argo CD catalogue: Unknown/Healthy, revision catalogue-v1.8.0"]


def test_applications_outside_the_release_are_ignored(world: World) -> None:
    world.argocd.add_application("someone-elses-tool", sync="OutOfSync", health="Degraded")
    assert world.gaps() == []


def test_the_children_are_read_at_the_colours_revision(world: World) -> None:
    """The default registry reader: the components argocd/apps renders at a revision of this repository (HEAD here)."""
    names = sorted(c.name for c in registry_at("HEAD"))
    assert names == sorted(c.name for c in COMPONENTS)


def test_a_revision_that_cannot_be_read_is_said(world: World) -> None:
    from model.revisions import RevisionError

    def unreadable(revision: str) -> tuple[Component, ...]:
        raise RevisionError(f"gitops_revision: {revision!r} is no branch, tag or commit of this repository")

    readiness = world.readiness()
    readiness.components = unreadable
    assert missing(readiness.check("green")) == [
        "Argo CD children of green: its children at 'main' cannot be read here (gitops_revision: 'main' is no branch, "
        "tag or commit of this repository)"
    ]


def test_an_unreachable_kubernetes_api_is_one_clear_line_per_check(world: World) -> None:
    world.argocd.close()
    gap, gates = world.gaps()
    assert gates.startswith("readiness gates of green: the cluster's Kubernetes API did not answer (GET http://127.0.0.1:")
    assert gap.startswith("Argo CD applications: the cluster's Kubernetes API did not answer (GET http://127.0.0.1:")
    assert gap.endswith(
        "your identity needs an access entry (the traffic operator's: eks.traffic_operator_role_arn; an admin's: "
        "eks.admin_role_arns) and a route to the endpoint"
    )


def test_readiness_asks_the_kubernetes_api_only_what_the_traffic_operators_role_allows(
    world: World, variant_app: Synthesized
) -> None:
    """The gated shift runs readiness as the traffic operator, whose one Role (as a colour's stack synthesizes it,
    tests/test_traffic_operator_access.py) reads Argo CD's Applications in Argo CD's namespace: every request the
    whole check makes of the fake API server must be one that Role allows, as the API server would judge it."""
    (role,) = variant_app.resources("green", "kubernetes_role_v1").values()
    # And the Roles argocd/apps gives its group in each application's namespace (templates/readers.yaml), as rendered.
    roles = [role, *(as_synthesized(doc) for doc in green_apps_manifests(world.config) if doc["kind"] == "Role")]
    assert len(roles) > 1
    world.argocd.requests.clear()
    assert world.gaps() == []
    made = [(method, path, attributes(method, path)) for method, path in world.argocd.requests]
    assert made  # it did read the cluster
    assert {request.namespace for _, _, request in made if request} > {"argocd"}  # the applications' namespaces too
    refused = [(m, p) for m, p, request in made if request is None or not any(role_allows(r, request) for r in roles)]
    assert refused == []


def green_apps_manifests(config: Config) -> list[dict[str, Any]]:
    """What argocd/apps renders from green's facts (Helm's engine)."""
    facts = cluster_facts(config=config, colour="green", common=sample_for, target_group=lambda app: f"sample-{app}")
    return render("apps", facts, release="apps", namespace="argocd")


def as_synthesized(role: dict[str, Any]) -> dict[str, Any]:
    """A rendered Role in the shape of a synthesized kubernetes_role_v1 (what tests/support/kube_rbac.py reads)."""
    rules = [
        {"api_groups": r["apiGroups"], "resources": r["resources"], "verbs": r["verbs"], "resource_names": r.get("resourceNames")}
        for r in role["rules"]
    ]
    return {"metadata": role["metadata"], "rule": rules}


# --- the pods: each carries the load balancer controller's readiness gate ---------------------------------------------


def test_a_pod_without_the_readiness_gate_is_named_with_what_to_do(world: World) -> None:
    """Made while the controller's webhook (failurePolicy Ignore) did not answer: it is Ready without being healthy in
    the target group, so a rollout would not wait for it."""
    namespace = THREE_APPLICATIONS["orders"].get("namespace", "orders")
    world.argocd.add_pod(namespace, "orders-7d9f-abcde", labels={"app.kubernetes.io/instance": "orders"}, gates=[])
    assert world.gaps() == [
        f"readiness gate of orders in green: pod(s) orders-7d9f-abcde in {namespace} lack the readiness gate "
        "target-health.elbv2.k8s.aws/orders (created while the load balancer controller did not answer): a rollout would "
        f"not wait for their replacements to serve; restart the rollout (kubectl -n {namespace} rollout restart "
        "deployment/<its deployment>)"
    ]


def test_pods_of_another_service_or_finished_are_not_judged(world: World) -> None:
    namespace = THREE_APPLICATIONS["orders"].get("namespace", "orders")
    world.argocd.add_pod(namespace, "batch-job", labels={"app.kubernetes.io/instance": "batch"}, gates=[])
    world.argocd.add_pod(namespace, "orders-old", labels={"app.kubernetes.io/instance": "orders"}, gates=[])
    world.argocd.objects[f"/api/v1/namespaces/{namespace}/pods/orders-old"]["status"]["phase"] = "Succeeded"
    assert world.gaps() == []


def test_an_application_without_its_service_is_named(world: World) -> None:
    namespace = THREE_APPLICATIONS["catalogue"].get("namespace", "catalogue")
    service = THREE_APPLICATIONS["catalogue"].get("service", {}).get("name", "catalogue")
    del world.argocd.objects[f"/api/v1/namespaces/{namespace}/services/{service}"]
    assert world.gaps() == [
        f"readiness gate of catalogue in green: no Service {service} in namespace {namespace} (its chart makes it)"
    ]


# --- EKS: the cluster and fresh insights ---------------------------------------------------------------------------


def test_a_cluster_at_another_version_is_not_ready(world: World) -> None:
    world.config = world.config.model_copy(
        update={
            "clusters": {
                **world.config.clusters,
                "green": world.config.clusters["green"].model_copy(update={"kubernetes_version": "1.35"}),
            }
        }
    )
    findings = world.check()
    assert missing(findings)[0] == (
        "EKS cluster eks-bg-green runs Kubernetes 1.36, but clusters.green.kubernetes_version is 1.35: deploy the colour "
        "(cdktf deploy green) and wait for the update"
    )
    assert len(findings) == 2  # nothing else means anything yet


def test_insights_are_refreshed_and_warnings_are_listed_without_blocking(world: World) -> None:
    world.eks.insights["eks-bg-green"] = [insight("Kube-proxy version skew", "WARNING"), insight("Deprecated APIs", "PASSING")]
    world.eks.refresh_polls = 3
    findings = world.check()
    assert missing(findings) == []
    assert findings[1].notes == ("WARNING: Kube-proxy version skew (UPGRADE_READINESS)",)
    assert "refreshed " in findings[1].detail
    assert world.clock.slept >= 20  # it waited for the refresh to complete


def test_an_insight_in_error_blocks(world: World) -> None:
    world.eks.insights["eks-bg-green"] = [insight("Kubelet version skew", "ERROR")]
    (gap,) = world.gaps()
    assert gap.startswith("EKS upgrade insights of eks-bg-green in ERROR (refreshed ")
    assert gap.endswith(": Kubelet version skew (UPGRADE_READINESS)")


def test_stale_insights_are_not_ready(world: World) -> None:
    """No refresh newer than the cluster's last update completes: the insights speak of a cluster that is gone."""
    world.eks.updates["eks-bg-green"] = [datetime.now(UTC) + timedelta(hours=1)]  # updated after any refresh started
    (gap,) = world.gaps()
    assert gap.startswith("EKS upgrade insights of eks-bg-green: no refresh newer than the cluster's last change (")
    assert f"completed within {REFRESH_TIMEOUT_SECONDS} s" in gap
    assert gap.endswith("run again with --skip-insights-refresh")


@pytest.mark.parametrize("how", ["denied", "failed"])
def test_a_refresh_that_cannot_be_had_says_so_and_how_to_skip(world: World, how: str) -> None:
    world.eks.refresh_denied = how == "denied"
    world.eks.refresh_failure = "internal error" if how == "failed" else ""
    (gap,) = world.gaps()
    said = "could not ask for a refresh (AWS denied StartInsightsRefresh" if how == "denied" else "the refresh failed"
    assert said in gap
    assert gap.endswith("to go on with the insights EKS last computed (about daily), run again with --skip-insights-refresh")
    skipped = world.check(refresh=False)
    assert missing(skipped) == []
    assert skipped[1].detail.endswith("(as EKS last computed them (--skip-insights-refresh: not refreshed))")


# --- the target groups: each application's pods behind the shared load balancer --------------------------------------


def test_an_application_without_targets_in_its_target_group_is_named_alone(world: World) -> None:
    world.aws.deregister_pods("green", "orders")
    assert world.gaps() == [
        "target group of orders in green: no healthy target (no targets registered) (is its TargetGroupBinding there, and "
        "its Service's pods Ready?)"
    ]


def test_without_the_traffic_stack_every_target_group_is_missing(world: World) -> None:
    world.aws.elbv2.delete_load_balancer(LoadBalancerArn=world.aws.shared.load_balancer_arn)  # type: ignore[union-attr]
    (gap,) = [g for g in world.gaps() if g.startswith("target groups")]
    assert gap.startswith("target groups of green: no load balancer eks-bg-traffic in ")


# --- the preview hosts, end to end ---------------------------------------------------------------------------------


def test_the_preview_host_not_resolving_is_dns_not_there_yet(world: World) -> None:
    world.preview.unresolved.add(PREVIEW)
    (gap,) = world.gaps()
    assert gap.startswith(f"https://{PREVIEW}/probe: DNS: {PREVIEW} does not resolve (")
    assert gap.endswith("(after 3 attempts)")
    assert world.clock.slept == 10  # two waits between three attempts, bounded


def test_a_5xx_is_not_ready(world: World) -> None:
    world.preview.answers[PREVIEW].status = 503
    (gap,) = world.gaps()
    assert gap.startswith(f"https://{PREVIEW}/probe: HTTP 503 (")
    assert "sample-app cannot answer (after 3 attempts)" in gap


def test_the_wrong_image_tag_is_not_ready(world: World) -> None:
    world.preview.answers[PREVIEW].image_tag = "0.1.0"
    (gap,) = world.gaps()
    assert gap == (
        f"https://{PREVIEW}/probe: green answered image_tag '0.1.0' (expected '{GREEN_TAG}'); green names image tag "
        f"{GREEN_TAG}: a rollout may still be running (after 3 attempts)"
    )


def test_another_colour_answering_the_preview_host_is_not_ready(world: World) -> None:
    world.preview.answers[PREVIEW].colour = "blue"
    (gap,) = world.gaps()
    assert "answered by colour blue, not green: the preview route points elsewhere" in gap


def test_a_probe_from_outside_the_preview_networks_is_told_so_not_sent_to_rebuild_the_image(world: World) -> None:
    """The load balancer answers a request no preview rule admits with its listener's 404 (model/routes.NOT_FOUND); the
    application's own 404 means another image, this one where readiness runs."""
    world.preview.refused.add(PREVIEW)
    (gap,) = world.gaps()
    assert gap.startswith(
        f"https://{PREVIEW}/probe: HTTP 404 'no application answers at this host', the shared load balancer's own answer: "
        f"no rule of {PREVIEW} takes this request. The preview hosts answer only the networks of traffic.preview_cidrs "
        "(unset: eks.public_access_cidrs): run readiness from one of them"
    )
    assert "build sample-app" not in gap


def test_one_application_answering_another_status_fails_alone(world: World) -> None:
    world.preview.answers[f"catalogue-green.{ZONE_NAME}"].path = "/healthz"  # its image moved the endpoint
    (gap,) = world.gaps()
    assert gap.startswith(f"https://catalogue-green.{ZONE_NAME}/health: HTTP 404, not 200 (applications.catalogue.probe.status)")
    assert "build catalogue of this revision (after 3 attempts)" in gap


def test_a_certificate_not_valid_for_the_host_is_a_tls_failure(world: World) -> None:
    import ssl

    readiness = world.readiness()
    readiness.prober = world.preview.prober(trust=ssl.create_default_context())  # the machine's CAs: not the test's
    gaps = missing(readiness.check("green"))
    assert len(gaps) == len(APPS)
    assert gaps[0].startswith(f"https://{PREVIEW}/probe: TLS: the certificate at 127.0.0.1 is not valid for {PREVIEW} (")


def test_a_rollout_finishing_between_attempts_passes(world: World) -> None:
    world.preview.answers[PREVIEW].image_tag = "0.1.0"
    world.clock.on_sleep.append(lambda *_: setattr(world.preview.answers[PREVIEW], "image_tag", GREEN_TAG))
    assert world.gaps() == []


# --- the command: every line, and one line when it cannot check ------------------------------------------------------


def test_the_command_prints_every_line_and_exits_1_when_not_ready(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.argocd.remove_application("external-dns")
    clients = Aws(REGION, eks=world.eks, elbv2=world.aws.elbv2, ssm=world.aws.ssm, kube=lambda _: world.argocd.api())
    argv = ["green", "--config", str(world.path)]
    status = main(argv, aws=clients, clock=world.clock, prober=world.preview.prober(), components=registry)
    printed = capsys.readouterr()
    assert status == 1
    lines = printed.out.splitlines()
    assert lines[0] == "readiness of green:"
    report = [line for line in lines if line.startswith(("  ok", "  MISSING"))]
    # cluster, insights, parent, each child, then per application its target group, its pods' gate and its preview host
    assert len(report) == 3 + len(config_release(world.config)) + 3 * len(APPS)
    assert [line for line in report if line.startswith("  MISSING")] == [
        "  MISSING  Argo CD external-dns: missing from namespace argocd (green's release at main defines it, at chart "
        f"{chart('external-dns')})"
    ]
    assert printed.err == "failed: green is not ready: 1 check(s) MISSING (above)\n"


def test_the_command_exits_0_when_ready(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    clients = Aws(REGION, eks=world.eks, elbv2=world.aws.elbv2, ssm=world.aws.ssm, kube=lambda _: world.argocd.api())
    argv = ["green", "--config", str(world.path)]
    assert main(argv, aws=clients, clock=world.clock, prober=world.preview.prober(), components=registry) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "green is ready for traffic: python -m tools.shift --to green"


def test_the_command_refuses_an_unknown_colour_and_a_denied_cluster_read_in_one_line(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    from botocore.stub import Stubber

    assert main(["purple", "--config", str(world.path)]) == 2
    assert capsys.readouterr().err == "refused: 'purple' is not a configured colour; use one of blue, green\n"
    with Stubber(world.aws.eks) as stub:
        stub.add_client_error("describe_cluster", service_error_code="AccessDeniedException", service_message="no")
        clients = Aws(REGION, eks=world.aws.eks, elbv2=world.aws.elbv2)
        assert main(["green", "--config", str(world.path)], aws=clients, clock=world.clock) == 2
    err = capsys.readouterr().err
    assert err.startswith("refused: AWS denied DescribeCluster to this identity (AccessDeniedException: no)")
    assert "Traceback" not in err


@pytest.mark.usefixtures("no_aws_credentials")
def test_the_command_without_credentials_says_log_in(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["green", "--config", str(world.path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("refused: no usable AWS credentials (Unable to locate credentials): log in")
