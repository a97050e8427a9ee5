"""A colour is a whole platform release: green can run a newer Argo CD, newer controllers, another
Git revision and another image while blue's synthesized stack stays byte-for-byte what it was.

The variant is the project's own configuration with green's release changed in every key; the
values reach the children through Helm's engine, as on a cluster.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from model.loading import ConfigError, config_from_dict
from model.paths import CHARTS_DIR, PROJECT_DIR
from model.platform import ARGO_CD, COMPATIBILITY, CURRENT, EXTERNAL_DNS, LOAD_BALANCER_CONTROLLER
from model.workloads import PARENT_APPLICATION
from scripts.docs import diagram
from tests.support.charts import Chain, build_chain
from tests.support.synth import Synthesized, synthesize

# Green rehearses a release with other versions than the project's current ones, on its own branch and image.
GREEN_RELEASE: dict[str, Any] = {
    "platform": {"argo_cd": "9.4.18", "aws_load_balancer_controller": "3.4.3", "external_dns": "1.20.0"},
    "gitops_revision": "platform-b",
    "image_tag": "4f9c2e1",
}


def project_config() -> dict[str, Any]:
    """cdktf.json's configuration, with its state where load_config puts it (so the state paths match)."""
    raw: dict[str, Any] = json.loads((PROJECT_DIR / "cdktf.json").read_text())["context"]["config"]
    return {**raw, "state": {"directory": str(PROJECT_DIR / "terraform-state")}}


@pytest.fixture(scope="module")
def green_release(inside_project: Path) -> Synthesized:
    raw = project_config()
    raw["clusters"] = {**raw["clusters"], "green": {**raw["clusters"]["green"], **GREEN_RELEASE}}
    return synthesize(config_from_dict(raw), inside_project / "green-release" / "cdktf.out")


@pytest.fixture(scope="module")
def chains(default_app: Synthesized, green_release: Synthesized) -> dict[str, Chain]:
    return {
        "blue": build_chain(green_release, "blue"),
        "green": build_chain(green_release, "green"),
        "green-before": build_chain(default_app, "green"),
    }


def test_the_variant_really_changes_every_key_of_greens_release() -> None:
    """Else the isolation test below would prove nothing."""
    assert set(GREEN_RELEASE["platform"]) == {c.key for c in (ARGO_CD, LOAD_BALANCER_CONTROLLER, EXTERNAL_DNS)}
    assert all(GREEN_RELEASE["platform"][c.key] != CURRENT[c] for c in CURRENT)
    assert (GREEN_RELEASE["gitops_revision"], GREEN_RELEASE["image_tag"]) != ("main", "0.1.0")


@pytest.mark.parametrize("stack", ["blue", "common"])
def test_changing_greens_release_leaves_the_other_stacks_byte_for_byte_identical(
    default_app: Synthesized, green_release: Synthesized, stack: str
) -> None:
    assert green_release.text(stack) == default_app.text(stack)


def test_greens_argo_cd_release_runs_greens_chart(default_app: Synthesized, green_release: Synthesized) -> None:
    def argo_cd(app: Synthesized, colour: str) -> tuple[str, str]:
        release = app.resource(colour, "helm_release", "argocd/release")
        return release["chart"], release["version"]

    assert argo_cd(green_release, "green") == ("argo-cd", "9.4.18")
    assert argo_cd(green_release, "blue") == argo_cd(default_app, "green") == ("argo-cd", CURRENT[ARGO_CD])


def test_each_colours_parent_follows_its_own_revision(chains: dict[str, Chain]) -> None:
    assert chains["green"].parent["spec"]["source"]["targetRevision"] == "platform-b"
    assert chains["blue"].parent["spec"]["source"]["targetRevision"] == "main"


@pytest.mark.parametrize(
    ("child", "component"), [("aws-load-balancer-controller", LOAD_BALANCER_CONTROLLER), ("external-dns", EXTERNAL_DNS)]
)
def test_each_colours_children_install_its_own_chart_versions(chains: dict[str, Chain], child: str, component: Any) -> None:
    def installed(chain: Chain) -> tuple[str, str]:
        source = chain.children[child]["spec"]["source"]
        return source["chart"], source["targetRevision"]

    assert installed(chains["green"]) == (component.chart, GREEN_RELEASE["platform"][component.key])
    assert installed(chains["blue"]) == installed(chains["green-before"]) == (component.chart, CURRENT[component])


def test_the_sample_app_follows_the_colours_revision_and_image(chains: dict[str, Chain]) -> None:
    def app(chain: Chain) -> tuple[str, str]:
        child = chain.children["sample-app"]["spec"]["source"]
        (deployment,) = [d for d in chain.sample_app if d["kind"] == "Deployment"]
        return child["targetRevision"], deployment["spec"]["template"]["spec"]["containers"][0]["image"].rsplit(":", 1)[1]

    assert app(chains["green"]) == ("platform-b", "4f9c2e1")
    assert app(chains["blue"]) == ("main", "0.1.0")


def test_a_platform_bump_changes_only_argo_cd_and_the_root_release(default_app: Synthesized, green_release: Synthesized) -> None:
    """What `cdktf diff green` shows for green's new release (docs/upgrade-runbook.md says the same)."""
    before, after = default_app.json("green")["resource"], green_release.json("green")["resource"]
    changed = sorted(
        f"{kind}.{body['//']['metadata']['path'].split('/', 1)[1]}"
        for kind, bodies in after.items()
        for name, body in bodies.items()
        if before.get(kind, {}).get(name) != body
    )
    assert changed == sorted(["helm_release.argocd/release", f"helm_release.{PARENT_APPLICATION}/release"])


def test_the_app_of_apps_names_no_chart_version(project_dir: Path) -> None:
    """Versions flow as data: a version written into argocd/apps would reach every colour following that revision."""
    children = yaml.safe_load((CHARTS_DIR / "apps" / "values.yaml").read_text())["applications"]
    assert [c["name"] for c in children if "targetRevision" in c["source"]] == []
    text = "\n".join(p.read_text() for p in (CHARTS_DIR / "apps").rglob("*.yaml"))
    assert [r.version for r in COMPATIBILITY if r.version in text] == []


def test_the_runbooks_cycle_is_valid_data_at_every_step() -> None:
    """docs/upgrade-runbook.md: blue pinned to platform A, green added on platform B, green alone."""
    platform_a = {"argo_cd": "9.3.7", "aws_load_balancer_controller": "3.4.3", "external_dns": "1.20.0"}
    blue = {"kubernetes_version": "1.34", "weight": 100, "gitops_revision": "platform-a", "image_tag": "3f2c1a9"}
    blue["platform"] = platform_a
    today = config_from_dict({"clusters": {"blue": blue}})
    green = {"kubernetes_version": "1.35", "weight": 0, "gitops_revision": "platform-b", "image_tag": "8d4e0b2"}
    step_1 = config_from_dict({"clusters": {"blue": blue, "green": green}})
    assert step_1.release("blue") == today.release("blue")
    assert step_1.release("green").platform.model_dump() == {c.key: CURRENT[c] for c in CURRENT}
    done = config_from_dict({"clusters": {"green": {**green, "weight": 100}}})
    assert done.release("green") == step_1.release("green")
    with pytest.raises(
        ConfigError, match=r'clusters\.green\.platform\.argo_cd: "9\.3\.7" is not allowed; green runs Kubernetes 1\.35'
    ):
        config_from_dict({"clusters": {"blue": blue, "green": {**green, "platform": platform_a}}})


def test_the_readme_diagram_shows_each_colours_own_release(green_release: Synthesized) -> None:
    drawn = diagram(green_release.outdir)
    assert 'green_argocd["Argo CD (argo-cd 9.4.18)"]' in drawn
    assert 'green_external_dns["wave 0: external-dns 1.20.0"]' in drawn
    assert 'green_sample_app["wave 1: sample-app @ platform-b"]' in drawn
    assert f'blue_argocd["Argo CD (argo-cd {CURRENT[ARGO_CD]})"]' in drawn
