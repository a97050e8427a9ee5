"""What `make docs` generates: the committed JSON Schema of the config (editors), docs/configuration.md (the
configuration reference and the compatibility table), README's architecture diagram, docs/architecture.md's lists
(shared roles, outputs, sync waves). Each must be current, the schema must judge configs as the models do, and the
diagram and the lists must follow the synthesized stacks and the registry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from model.loading import SCHEMA_KEY, ConfigError, load_config
from model.platform import CHILDREN
from scripts import docs as config_docs
from tests.support.configs import (
    EVERYTHING_ON,
    SAMPLE_APPLICATIONS,
    THREE_APPLICATIONS,
    VARIANT,
    example,
    validated,
    with_api_access,
)
from tests.support.synth import Synthesized

BLUE = {"kubernetes_version": "1.34", "weight": 100}
SHOP = {"host": "shop", "source": {"path": "charts/shop"}}


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(config_docs.SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_committed_schema_is_what_the_models_generate() -> None:
    assert config_docs.SCHEMA_FILE.read_text() == config_docs.schema_text(), "stale: run `make docs`"


def test_the_configuration_reference_is_what_the_models_generate() -> None:
    reference = config_docs.REFERENCE.read_text()
    assert config_docs.with_reference(reference) == reference, "stale: run `make docs`"


def test_every_setting_has_a_description_and_the_reference_names_it() -> None:
    rows = list(config_docs.reference_rows())
    assert [key for key, _, text in rows if not text.strip()] == []
    keys = [key for key, _, _ in rows]
    assert "clusters.<colour>.nodes.capacity_type" in keys
    assert "traffic.shift.allow_idle" in keys
    # A list of sections names the keys of its items.
    assert "traffic.shift.analysis.alarms[].name" in keys
    assert "applications.<name>.analysis.synthetic[].expect_json" in keys
    reference = config_docs.REFERENCE.read_text()
    assert [key for key in keys if f"| `{key}` |" not in reference] == []


@pytest.mark.parametrize(
    "config",
    [
        {},
        EVERYTHING_ON,
        {"applications": SAMPLE_APPLICATIONS, "clusters": {"blue": BLUE}},
        {SCHEMA_KEY: "./config.schema.json", "clusters": {"blue": BLUE}},
        {"eks": {"public_access_cidrs": ["203.0.113.0/24"]}, "tags": {"team": "platform"}},
    ],
    ids=["empty", "everything-on", "sample-app", "with-$schema", "lists-and-tags"],
)
def test_the_schema_and_the_models_accept_the_same_good_configs(
    validator: jsonschema.Draft202012Validator, config: dict[str, Any]
) -> None:
    assert [e.message for e in validator.iter_errors(config)] == []
    validated(config)


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"clusters": {"blue": {**BLUE, "weight": True}}}, "clusters.blue.weight"),
        ({"clusters": {"blue": {**BLUE, "weight": 256}}}, "clusters.blue.weight"),
        ({"clusters": {"blue": {"weight": 1}}}, "clusters.blue.kubernetes_version"),
        ({"clusters": {"blue": {**BLUE, "kubernetes_version": "1.28"}}}, "clusters.blue.kubernetes_version"),
        ({"clusters": {"Blue": BLUE}}, "clusters.Blue"),
        ({"clusters": {"common": BLUE}}, "clusters.common"),
        ({"network": {"cidr_block": "10.0.0.0/16"}}, "network.cidr_block"),
        ({"network": {"flow_log_retention_days": 45}}, "network.flow_log_retention_days"),
        ({"eks": {"public_access_cidrs": "203.0.113.0/24"}}, "eks.public_access_cidrs"),
        ({"tags": {"aws:owner": "me"}}, "tags.aws:owner"),
        # the look-ahead of ECR's length rule
        ({"applications": {"shop": {**SHOP, "image": {"repository": "a" * 257}}}}, "applications.shop.image.repository"),
        ({"applications": {"Shop": SHOP}}, "applications.Shop"),
        ({"applications": {"shop": {**SHOP, "host": "shop.eu"}}}, "applications.shop.host"),
        ({"applications": {"shop": {**SHOP, "source": {"path": "../chart"}}}}, "applications.shop.source.path"),
        ({"applications": {"shop": {**SHOP, "policy": "../policy.json"}}}, "applications.shop.policy"),
        ({"applications": {"shop": {**SHOP, "wave": 0}}}, "applications.shop.wave"),
        ({"clusters": {"traffic": BLUE}}, "clusters.traffic"),
        # the keys of the sample-app era
        ({"app": {"image_tag": "3f2c1a9"}}, "app"),
        ({"dns": {"app_host": "shop"}}, "dns.app_host"),
        ({"clusters": {"blue": {**BLUE, "image_tag": "3f2c1a9"}}}, "clusters.blue.image_tag"),
    ],
)
def test_the_schema_refuses_what_the_models_refuse(
    validator: jsonschema.Draft202012Validator, config: dict[str, Any], key: str
) -> None:
    assert list(validator.iter_errors(config)), f"the schema lets {config} through"
    with pytest.raises(ConfigError) as caught:
        validated(config)
    assert any(problem.startswith(f"{key}:") for problem in caught.value.problems), caught.value.problems


def test_a_config_file_may_name_the_schema(tmp_path: Path) -> None:
    (tmp_path / "prod.json").write_text(json.dumps(with_api_access({SCHEMA_KEY: "./config.schema.json", "project": "prod-bg"})))
    (tmp_path / "cdktf.json").write_text(json.dumps({"context": {"config": "prod.json"}}))
    assert load_config(tmp_path / "cdktf.json").project == "prod-bg"


def test_the_compatibility_table_is_what_the_registry_says() -> None:
    runbook = config_docs.REFERENCE.read_text()
    assert config_docs.with_table(runbook) == runbook, "stale: run `make docs`"
    assert "| Argo CD | `argo-cd` 9.3.7 | v3.2.6 | 1.31, 1.32, 1.33, 1.34 |" in runbook


def test_the_readme_diagram_is_what_the_synthesized_stacks_show(example_app: Synthesized) -> None:
    readme = config_docs.README.read_text()
    assert config_docs.readme_with_diagram(readme, example_app.outdir) == readme, "stale: run `make docs`"
    assert 'blue["blue: Kubernetes 1.35, weight 100"]' in readme
    assert "common -- remote state --> green" in readme


def test_the_diagram_follows_the_data(everything_on: Synthesized) -> None:
    """Three colours and three applications: each application's public host on the shared load balancer, and in every
    colour at the revision that colour runs, in its wave, with the colour's weight."""
    drawn = config_docs.diagram(everything_on.outdir)
    assert "wave -1: aws-load-balancer-controller" in drawn
    for name, app in THREE_APPLICATIONS.items():
        node = name.replace("-", "_")
        assert f'traffic_{node}["{app["host"]}.eks.example.com, and a preview host per colour"]' in drawn
        for colour, cluster in VARIANT["clusters"].items():
            assert f"traffic_{node} -- weight {cluster['weight']} --> {colour}_app_{node}" in drawn
    assert 'purple_app_orders["wave 2: orders @ orders-v4.2.1"]' in drawn  # another repository's, at its revision
    assert 'green_app_sample_app["wave 1: sample-app @ main"]' in drawn  # this repository's, at the colour's


def test_the_architecture_lists_are_what_the_registry_and_the_stacks_say(example_app: Synthesized) -> None:
    architecture = config_docs.ARCHITECTURE.read_text()
    assert config_docs.architecture_with_lists(architecture, example_app.outdir) == architecture, "stale: run `make docs`"


def generated(text: str, markers: tuple[str, str]) -> str:
    begin, end = markers
    return text[text.index(begin) : text.index(end)]


def test_the_roles_list_names_every_pod_identity_role_and_association_the_stacks_make(example_app: Synthesized) -> None:
    """Read from the synthesized stacks, not from model/workloads.py: every role of common a pod may assume (it trusts
    pods.eks.amazonaws.com), and every service account a colour binds, whether by an association or by an add-on."""
    listed = generated(config_docs.ARCHITECTURE.read_text(), config_docs.ROLES)
    prefix = f"{example().project}-"
    pods = [
        role["name"].removeprefix(prefix)
        for role in example_app.resources("common", "aws_iam_role").values()
        if "pods.eks.amazonaws.com" in role["assume_role_policy"]
    ]
    assert len(pods) >= 7, pods  # four components, two add-ons, the sample app
    assert [name for name in pods if f"| `<project>-{name}` |" not in listed] == []
    assert listed.count("| `<project>-") == len(pods), "a row of no role"
    for colour in example_app.colours():
        bound = {
            f"{a['namespace']}/{a['service_account']}"
            for a in example_app.resources(colour, "aws_eks_pod_identity_association").values()
        }
        bound |= {
            f"kube-system/{a['service_account']}"  # an add-on's association: in kube-system, where EKS installs it
            for addon in example_app.resources(colour, "aws_eks_addon").values()
            for a in addon.get("pod_identity_association", [])
        }
        assert sorted(account for account in bound if f"| `{account}` |" not in listed) == [], colour


def test_the_waves_list_puts_each_platform_child_in_its_registry_wave() -> None:
    """The wave each component.yaml names is the row the rendered chart puts its child Application in."""
    rows = {
        int(line.split("|")[1]): line
        for line in generated(config_docs.ARCHITECTURE.read_text(), config_docs.WAVES).splitlines()
        if line.startswith("| ") and line.split("|")[1].strip().lstrip("-").isdigit()
    }
    assert sorted(child.name for child in CHILDREN if f"`{child.name}`" not in rows.get(child.wave or 0, "")) == []
    assert "AppProject: `applications`, `default`, `platform`" in rows[min(rows)], "the projects first"
