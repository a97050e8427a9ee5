"""A colour deployed before applications were data, still following a revision of that release
(`clusters.<colour>.legacy_application`): Terraform keeps handing it the facts its charts read (values contract 1, to
the key: tests/fixtures/previous-release/facts-blue.json, written by that release's own code), its charts at that
revision still render from them, and Terraform binds its pods into the shared load balancer beside its own."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from model.bootstrap import facts_in
from model.platform import component
from model.revisions import files_at
from tests.support.charts import by_kind, render, values_of_release
from tests.support.configs import example_raw, validated
from tests.support.synth import Synthesized, synthesize

# The release before applications as data (the commit that wrote the fixtures); a fresh clone has it.
PREVIOUS_RELEASE = "20995b5"
FIXTURES = Path(__file__).parent / "fixtures" / "previous-release"


def legacy_config() -> dict[str, Any]:
    """The example, upgraded as docs/upgrading.md says: both colours still at the release before, following the
    revision they followed then (the facts it wrote record it; the example's blue is on a tag of a later release)."""
    raw = example_raw()
    followed = json.loads((FIXTURES / "facts-blue.json").read_text())["git"]["targetRevision"]
    for colour in raw["clusters"].values():
        colour["legacy_application"] = "sample-app"
        colour["gitops_revision"] = followed
    return raw


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    return synthesize(validated(legacy_config()), tmp_path_factory.mktemp("legacy"))


def root_values(app: Synthesized, colour: str) -> str:
    (values,) = root_release(app, colour)["values"]
    return str(values)


def root_release(app: Synthesized, colour: str) -> dict[str, Any]:
    (root,) = [r for r in app.resources(colour, "helm_release").values() if r["name"] == "app-of-apps"]
    return root


def test_the_facts_are_what_the_release_before_handed_the_colour(app: Synthesized) -> None:
    facts = facts_in(json.loads(root_values(app, "blue")))
    before = json.loads((FIXTURES / "facts-blue.json").read_text())
    # The one difference is where the image repository's URL is read: its output is named after the application now
    # (common moves the repository itself, so the value, and with it the colour's plan, does not change).
    before["sampleApp"]["image"]["repository"] = "${data.terraform_remote_state.common.outputs.sample_app_image_repository_url}"
    # And the components added since (External Secrets Operator, Cluster Autoscaler): their versions and identities,
    # which the charts of the revision before do not read (their registry has no such folder). Terraform bootstraps
    # External Secrets Operator in every colour; the others wait for a revision that has their folders.
    added = {"external-secrets": "2.9.0", "cluster-autoscaler": "9.59.0"}
    assert sorted(set(facts["platform"]) - set(before["platform"])) == sorted(added)
    for name, version in added.items():
        assert facts["platform"].pop(name) == version
        assert facts["identities"].pop(name) == {"namespace": component(name).namespace, "serviceAccount": name}
    assert facts == before


def test_its_weight_is_still_its_external_dns_records(app: Synthesized) -> None:
    raw = legacy_config()
    raw["clusters"]["blue"]["weight"] = 0
    raw["clusters"]["green"]["weight"] = 0  # allowed while colours run the old way: every answer to the shared records
    facts = facts_in(json.loads(root_values(app, "blue")))
    assert facts["ingress"]["weight"] == 100
    validated(raw)


@pytest.fixture(scope="module")
def rendered(app: Synthesized) -> dict[str, list[dict[str, Any]]]:
    """blue's charts as its revision has them (the release before), rendered from the facts this release hands it."""
    facts = facts_in(
        values_of_release(next(r for r in app.resources("blue", "helm_release").values() if r["name"] == "app-of-apps"))
    )
    charts = files_at(PREVIOUS_RELEASE, "argocd", key="test")
    children = by_kind(render(charts / "apps", facts, release="apps", namespace="argocd"), "Application")
    child = children["sample-app"]
    sample = render(
        charts / "sample-app",
        child["spec"]["source"]["helm"]["valuesObject"],
        release="sample-app",
        namespace=child["spec"]["destination"]["namespace"],
    )
    return {"children": list(children.values()), "sample-app": sample}


def test_its_revisions_charts_still_render_its_app_with_its_own_load_balancer(rendered: dict[str, list[dict[str, Any]]]) -> None:
    assert sorted(c["metadata"]["name"] for c in rendered["children"]) == [
        "argo-cd",
        "aws-load-balancer-controller",
        "external-dns",
        "sample-app",
    ]
    (ingress,) = [doc for doc in rendered["sample-app"] if doc["kind"] == "Ingress"]
    annotations = ingress["metadata"]["annotations"]
    assert annotations["external-dns.alpha.kubernetes.io/aws-weight"] == "100"
    assert annotations["external-dns.alpha.kubernetes.io/hostname"] == "app.eks.example.com,app-blue.eks.example.com"
    (service,) = [doc for doc in rendered["sample-app"] if doc["kind"] == "Service"]
    assert (service["metadata"]["name"], service["spec"]["ports"][0]["port"]) == ("sample-app", 80)  # what the binding names


def test_this_releases_charts_refuse_contract_1(app: Synthesized) -> None:
    """Why the old facts must go to the old revision only: this release's argocd/apps reads contract 2."""
    facts = facts_in(
        values_of_release(next(r for r in app.resources("blue", "helm_release").values() if r["name"] == "app-of-apps"))
    )
    with pytest.raises(Exception, match="argocd/apps was written for values contract 2, but Terraform handed it contract 1"):
        render("apps", facts, release="apps", namespace="argocd")


def test_terraform_binds_its_pods_into_its_target_group_of_the_shared_load_balancer(app: Synthesized) -> None:
    releases = {r["name"]: r for r in app.resources("blue", "helm_release").values()}
    binding_release = releases["legacy-binding"]
    assert binding_release["max_history"] == 5  # like every release Terraform installs (tests/test_cluster_eks.py)
    (manifest,) = json.loads(binding_release["values"][0])["manifests"]
    assert manifest["kind"] == "TargetGroupBinding"
    assert manifest["metadata"] == {"name": "sample-app", "namespace": "sample-app"}
    assert manifest["spec"]["serviceRef"] == {"name": "sample-app", "port": 80}
    assert manifest["spec"]["targetGroupARN"] == "${data.terraform_remote_state.traffic.outputs.target_groups.blue.sample_app}"
    assert manifest["spec"]["targetType"] == "ip"
    root = next(address for address in binding_release["depends_on"] if "app-of-apps" in address)
    assert root.startswith("helm_release.")


def test_a_colour_of_this_release_gets_no_legacy_binding(variant_app: Synthesized) -> None:
    names = {r["name"] for r in variant_app.resources("blue", "helm_release").values()}
    assert "legacy-binding" not in names
    assert not re.search(r'"contractVersion": 1\b', root_values(variant_app, "blue"))


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("nope", 'clusters.blue.legacy_application: "nope" is not allowed; name the entry of applications that blue'),
        ("catalogue", 'clusters.blue.legacy_application: "catalogue" is not allowed; name the entry of applications that'),
    ],
)
def test_fails_a_legacy_application_that_is_not_one_of_this_repository_with_an_image(entry: str, message: str) -> None:
    from model.loading import ConfigError
    from tests.support.configs import THREE_APPLICATIONS

    raw = legacy_config()
    raw["applications"] = {**raw["applications"], "catalogue": THREE_APPLICATIONS["catalogue"]}
    raw["clusters"]["blue"]["legacy_application"] = entry
    raw["clusters"]["blue"]["applications"]["catalogue"] = {"revision": "catalogue-v1.8.0"}
    raw["clusters"]["green"]["applications"]["catalogue"] = {"revision": "catalogue-v1.8.0"}
    with pytest.raises(ConfigError, match=re.escape(message)):
        validated(raw)
