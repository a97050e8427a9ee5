"""A colour is a whole platform release: green can run a newer Argo CD, newer controllers, another
Git revision and another image of each application while blue's synthesized stack stays byte-for-byte what it was.

The variant is the project's own configuration with green's release changed in every key; the
values reach the children through Helm's engine, as on a cluster.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from model.loading import ConfigError
from model.platform import ARGO_CD, ARGOCD_NAMESPACE, CHILDREN, PARENT_APPLICATION, VERSIONED, Component
from scripts.docs import diagram
from tests.support.charts import Chain, build_chain, render
from tests.support.configs import SAMPLE_APP, SAMPLE_APPLICATIONS, example_raw, validated
from tests.support.synth import Synthesized, synthesize

GREEN_VERSION = example_raw()["clusters"]["green"]["kubernetes_version"]
BLUE_REVISION = example_raw()["clusters"]["blue"]["gitops_revision"]  # serving: a tag (tests/test_immutable_revisions.py)


def another_version(component: Component) -> str | None:
    """A chart version other than the project's known to work with green's Kubernetes, if the table has one."""
    default = component.chart.default if component.chart else None
    return next((v for v in component.working_versions(GREEN_VERSION) if v != default), None)


# Green rehearses a release in which every key it can change differs from the project's: its revision, the sample
# app's image and each component with another chart version in the table (at least the three the project started with).
GREEN_RELEASE: dict[str, Any] = {
    "platform": {c.key: version for c in VERSIONED if (version := another_version(c))},
    "gitops_revision": "platform-b",
    "applications": {SAMPLE_APP: {"image_tag": "4f9c2e1"}},
}
CHANGED = [c for c in CHILDREN if c.key in GREEN_RELEASE["platform"]]


@pytest.fixture(scope="module")
def green_release(inside_project: Path, project_dir: Path) -> Synthesized:
    raw = {**example_raw(), "state": {"directory": str(project_dir / "terraform-state")}}  # where the example's goes
    raw["clusters"] = {**raw["clusters"], "green": {**raw["clusters"]["green"], **GREEN_RELEASE}}
    return synthesize(validated(raw), inside_project / "green-release" / "cdktf.out")


@pytest.fixture(scope="module")
def chains(example_app: Synthesized, green_release: Synthesized) -> dict[str, Chain]:
    return {
        "blue": build_chain(green_release, "blue"),
        "green": build_chain(green_release, "green"),
        "green-before": build_chain(example_app, "green"),
    }


@pytest.mark.parametrize("stack", ["blue", "common", "traffic"])
def test_changing_greens_release_leaves_the_other_stacks_byte_for_byte_identical(
    example_app: Synthesized, green_release: Synthesized, stack: str
) -> None:
    assert green_release.text(stack) == example_app.text(stack)


def test_greens_argo_cd_release_runs_greens_chart(example_app: Synthesized, green_release: Synthesized) -> None:
    def argo_cd(app: Synthesized, colour: str) -> tuple[str, str]:
        release = app.resource(colour, "helm_release", "argocd/release")
        return release["chart"], release["version"]

    assert argo_cd(green_release, "green") == ("argo-cd", GREEN_RELEASE["platform"]["argo_cd"])
    assert argo_cd(green_release, "blue") == argo_cd(example_app, "blue")
    assert argo_cd(example_app, "green") == ("argo-cd", ARGO_CD.chart.default)


def test_each_colours_parent_follows_its_own_revision(chains: dict[str, Chain]) -> None:
    assert chains["green"].parent["spec"]["source"]["targetRevision"] == "platform-b"
    assert chains["blue"].parent["spec"]["source"]["targetRevision"] == BLUE_REVISION


@pytest.mark.parametrize("component", CHANGED, ids=lambda c: c.name)
def test_each_colours_children_install_its_own_chart_versions(chains: dict[str, Chain], component: Any) -> None:
    def installed(chain: Chain) -> tuple[str, str]:
        source = chain.children[component.name]["spec"]["source"]
        return source["chart"], source["targetRevision"]

    assert installed(chains["green"]) == (component.name, GREEN_RELEASE["platform"][component.key])
    assert installed(chains["green-before"]) == (component.name, example_raw()["clusters"]["green"]["platform"][component.key])
    assert installed(chains["blue"]) == (component.name, example_raw()["clusters"]["blue"]["platform"][component.key])


def test_the_sample_app_follows_the_colours_revision_and_image(chains: dict[str, Chain]) -> None:
    """Its child reads its chart at the colour's revision (this repository's), and the chart runs the colour's tag."""

    def app(chain: Chain) -> tuple[str, str]:
        child = chain.children[SAMPLE_APP]["spec"]["source"]
        (deployment,) = [d for d in chain.applications[SAMPLE_APP] if d["kind"] == "Deployment"]
        return child["targetRevision"], deployment["spec"]["template"]["spec"]["containers"][0]["image"].rsplit(":", 1)[1]

    assert app(chains["green"]) == ("platform-b", "4f9c2e1")
    assert app(chains["green-before"]) == ("main", "0.1.0")
    assert app(chains["blue"]) == (BLUE_REVISION, "0.1.0")


def test_a_platform_bump_changes_only_argo_cd_and_the_root_release(example_app: Synthesized, green_release: Synthesized) -> None:
    """What `cdktf diff green` shows for green's new release (docs/upgrade-runbook.md says the same)."""
    before, after = example_app.json("green")["resource"], green_release.json("green")["resource"]
    changed = sorted(
        f"{kind}.{body['//']['metadata']['path'].split('/', 1)[1]}"
        for kind, bodies in after.items()
        for name, body in bodies.items()
        if before.get(kind, {}).get(name) != body
    )
    # External Secrets Operator's bootstrap release too: GREEN_RELEASE moves every versioned component's chart.
    assert changed == sorted(
        ["helm_release.argocd/release", "helm_release.external-secrets/release", f"helm_release.{PARENT_APPLICATION}/release"]
    )


def test_the_app_of_apps_takes_every_chart_version_from_the_facts(chains: dict[str, Chain]) -> None:
    """Versions flow as data: the registry's rows (in argocd/apps itself) only say what is supported. Rendered with
    versions no row names, every child installs exactly those."""
    facts = chains["green"].parent["spec"]["source"]["helm"]["valuesObject"]
    unheard_of = {name: f"0.0.{i}-test" for i, name in enumerate(facts["platform"], 1)}
    children = render("apps", {**facts, "platform": unheard_of}, release="apps", namespace=ARGOCD_NAMESPACE)
    installed = {
        c["metadata"]["name"]: c["spec"]["source"].get("targetRevision")
        for c in children
        if c["kind"] == "Application" and "chart" in c["spec"]["source"]
    }
    assert installed == unheard_of


def test_the_runbooks_cycle_is_valid_data_at_every_step() -> None:
    """docs/upgrade-runbook.md: blue pinned to platform A, green added on platform B, green alone."""
    # Platform A: each chart at the oldest version of its table that runs blue's 1.34 (Argo CD's 9.3.7 does not run
    # green's 1.35). Blue serves beside green, so it names every key.
    platform_a = {c.key: c.working_versions("1.34")[-1] for c in VERSIONED}
    assert platform_a[ARGO_CD.key] == "9.3.7"
    blue = {"kubernetes_version": "1.34", "weight": 100, "gitops_revision": "platform-a"}
    blue["platform"] = platform_a
    blue["applications"] = {SAMPLE_APP: {"image_tag": "3f2c1a9"}}
    apps = {"applications": SAMPLE_APPLICATIONS}  # each colour names its image of the sample app
    today = validated({**apps, "clusters": {"blue": blue}})
    green = {"kubernetes_version": "1.35", "weight": 0, "gitops_revision": "platform-b"}
    green["applications"] = {SAMPLE_APP: {"image_tag": "8d4e0b2"}}
    step_1 = validated({**apps, "clusters": {"blue": blue, "green": green}})
    assert step_1.release("blue") == today.release("blue")
    assert step_1.release("green").platform.model_dump() == {c.key: c.chart.default for c in VERSIONED if c.chart}
    assert step_1.release("green").applications[SAMPLE_APP].image_tag == "8d4e0b2"
    done = validated({**apps, "clusters": {"green": {**green, "weight": 100}}})
    assert done.release("green") == step_1.release("green")
    with pytest.raises(
        ConfigError, match=r'clusters\.green\.platform\.argo_cd: "9\.3\.7" is not allowed; green runs Kubernetes 1\.35'
    ):
        validated({**apps, "clusters": {"blue": blue, "green": {**green, "platform": platform_a}}})


def test_the_readme_diagram_shows_each_colours_own_release(green_release: Synthesized) -> None:
    drawn = diagram(green_release.outdir)
    green = GREEN_RELEASE["platform"]
    assert f'green_argocd["Argo CD (argo-cd {green["argo_cd"]})"]' in drawn
    assert 'green_external_dns["wave 0: external-dns ' in drawn
    assert 'green_app_sample_app["wave 1: sample-app @ platform-b"]' in drawn
    assert f'blue_app_sample_app["wave 1: sample-app @ {BLUE_REVISION}"]' in drawn
    blue = example_raw()["clusters"]["blue"]["platform"]
    assert f'blue_argocd["Argo CD (argo-cd {blue["argo_cd"]})"]' in drawn
