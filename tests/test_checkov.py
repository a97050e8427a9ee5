"""checkov gate on what the project ships: the synthesized Terraform JSON of every stack (common, the traffic stack's
shared load balancer, the colours), every manifest the charts render (the parent and child Applications, the
applications' Namespaces and TargetGroupBindings, the sample app; from the values in the synthesized stacks) and
app/Dockerfile. No failed check but the skips of .checkov.yaml, each justified and each still needed."""

from __future__ import annotations

import re
from concurrent.futures import Future
from typing import Any

import pytest
import yaml

from model.platform import CHILDREN
from tests.support.checkov import CONFIG_FILE, FRAMEWORKS
from tests.support.configs import EVERYTHING_ON, EXAMPLE_COLOURS, example_raw
from tests.support.synth import Synthesized

# checkov runs in the background from the session's start (tests/support/background_checks.py).
pytestmark = [pytest.mark.background("checkov_report")]

SKIP_LINE = re.compile(r"^\s*-\s*(CKV2?_[A-Z0-9_]+)\s*(#\s*(.*))?$")


@pytest.fixture(scope="module")
def results(checkov_report: Future[dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """checkov's result per framework, from one run (tests/support/background_checks.py)."""
    return checkov_report.result()


def skips() -> dict[str, str]:
    """Skipped check id -> its reason, from .checkov.yaml's comments."""
    found = {}
    for line in CONFIG_FILE.read_text().splitlines():
        match = SKIP_LINE.match(line)
        if match:
            found[match.group(1)] = (match.group(3) or "").strip()
    return found


def failures(result: dict[str, Any]) -> list[dict[str, Any]]:
    return list(result.get("results", {}).get("failed_checks", []))


def scanned(result: dict[str, Any]) -> set[str]:
    checks = [*failures(result), *result.get("results", {}).get("passed_checks", [])]
    return {c["resource"] for c in checks}


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_no_failed_checks_but_the_justified_skips(results: dict[str, dict[str, Any]], framework: str) -> None:
    result = results[framework]
    unjustified = [
        f"{c['check_id']} {c['resource']} ({c['file_path']})" for c in failures(result) if c["check_id"] not in skips()
    ]
    assert unjustified == []
    assert result["summary"]["parsing_errors"] == 0


def test_terraform_of_both_syntheses_was_scanned(results: dict[str, dict[str, Any]]) -> None:
    result = results["terraform_json"]
    assert result["summary"]["passed"] >= 200
    checked = [*failures(result), *result["results"]["passed_checks"]]
    stacks = {tuple(c["file_path"].split("/")[1:4:2]) for c in checked}
    colours = {"example": EXAMPLE_COLOURS, "variant": tuple(EVERYTHING_ON["clusters"])}
    assert stacks == {(name, stack) for name, own in colours.items() for stack in ("common", "traffic", *own)}


# What checkov 3.3 has checks for in the traffic stack (none looks at aws_lb_listener_rule: the rules are parsed, with
# the rest of the file, but no check reads them).
TRAFFIC_TYPES = (
    "aws_lb",
    "aws_lb_listener",
    "aws_lb_target_group",
    "aws_ssm_parameter",
    "aws_route53_record",
    "aws_security_group",
    "aws_vpc_security_group_ingress_rule",
    "aws_vpc_security_group_egress_rule",
)


@pytest.mark.parametrize(("name", "fixture"), [("example", "example_app"), ("variant", "everything_on")])
def test_every_resource_of_the_traffic_stack_was_checked(
    results: dict[str, dict[str, Any]], request: pytest.FixtureRequest, name: str, fixture: str
) -> None:
    """The shared load balancer, its listeners, every target group, the weights parameter, the records and the security
    group's rules: each of them had checks run on it (checkov names a resource `<type>.<id>` or `resource.<id>`)."""
    synthesized: Synthesized = request.getfixturevalue(fixture)
    result = results["terraform_json"]
    checked = {
        c["resource"].split(".", 1)[1]
        for c in [*failures(result), *result["results"]["passed_checks"]]
        if c["file_path"] == f"/{name}/stacks/traffic/cdk.tf.json"
    }
    resources = synthesized.json("traffic")["resource"]
    expected = {key for kind in TRAFFIC_TYPES for key in resources[kind]}
    assert expected - checked == set()
    assert resources["aws_lb_listener_rule"]  # there, but no check of checkov reads them


def test_every_rendered_manifest_was_scanned(
    results: dict[str, dict[str, Any]], example_app: Synthesized, everything_on: Synthesized
) -> None:
    """Every manifest of both syntheses, every colour the scan renders (Applications, Namespaces and
    TargetGroupBindings included, which no check looks into; checkov also counts a Deployment's pod template as a
    resource of its own)."""
    from tests.support.charts import rendered_manifests

    docs = [doc for app in (example_app, everything_on) for colour in EXAMPLE_COLOURS for doc in rendered_manifests(app, colour)]
    pod_templates = sum(doc["kind"] == "Deployment" for doc in docs)
    assert results["kubernetes"]["summary"]["resource_count"] == len(docs) + pod_templates
    # Per colour the parent, every platform child and one child per application; a Namespace per namespace name and a
    # TargetGroupBinding per application.
    applications = [example_raw()["applications"], EVERYTHING_ON["applications"]]
    kinds = [doc["kind"] for doc in docs]
    assert kinds.count("Application") == len(EXAMPLE_COLOURS) * sum(1 + len(CHILDREN) + len(apps) for apps in applications)
    assert kinds.count("TargetGroupBinding") == len(EXAMPLE_COLOURS) * sum(len(apps) for apps in applications)
    namespaces = [{entry.get("namespace", app) for app, entry in apps.items()} for apps in applications]
    assert kinds.count("Namespace") == len(EXAMPLE_COLOURS) * sum(len(names) for names in namespaces)
    assert pod_templates == 4  # the sample app (the one application of this repository) in both colours of both
    assert {"Deployment.sample-app.sample-app", "Service.sample-app.sample-app"} <= scanned(results["kubernetes"])


def test_no_ingress_was_scanned(results: dict[str, dict[str, Any]]) -> None:
    """The shared load balancer is the traffic stack's: no chart renders an Ingress any more."""
    assert [r for r in scanned(results["kubernetes"]) if r.startswith("Ingress.")] == []


def test_the_dockerfile_was_scanned(results: dict[str, dict[str, Any]]) -> None:
    assert results["dockerfile"]["summary"]["passed"] >= 10
    assert {c["file_path"] for c in results["dockerfile"]["results"]["passed_checks"]} == {"/Dockerfile"}


def test_every_skip_has_a_reason() -> None:
    configured = yaml.safe_load(CONFIG_FILE.read_text())["skip-check"]
    reasons = skips()
    assert sorted(reasons) == sorted(configured)
    assert [check for check, reason in reasons.items() if len(reason) < 20] == []


def test_every_skip_is_still_needed(results: dict[str, dict[str, Any]]) -> None:
    """Each skipped check fails somewhere without its skip: none hides nothing (or, later, something new)."""
    failed = {c["check_id"] for result in results.values() for c in failures(result)}
    assert set(skips()) <= failed
