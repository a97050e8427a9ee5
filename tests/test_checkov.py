"""checkov gate on what the project ships: the synthesized Terraform JSON, every manifest the charts
render (parent and child Applications, the sample app in both delivery modes, every colour, from the
values in the synthesized stacks) and app/Dockerfile. No failed check but the skips of .checkov.yaml,
each justified and each still needed."""

from __future__ import annotations

import re
from concurrent.futures import Future
from typing import Any

import pytest
import yaml

from model.platform import CHILDREN
from tests.support.checkov import CONFIG_FILE, FRAMEWORKS, OWN_CHECKS
from tests.support.configs import EXAMPLE_COLOURS
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
    files = {c["file_path"].split("/")[1] for c in [*failures(result), *result["results"]["passed_checks"]]}
    assert files == {"example", "variant"}


def test_every_rendered_manifest_was_scanned(
    results: dict[str, dict[str, Any]], example_app: Synthesized, everything_on: Synthesized
) -> None:
    """Every manifest of both syntheses, every colour (Applications included, which no check looks into;
    checkov also counts a Deployment's pod template as a resource of its own)."""
    from tests.support.charts import rendered_manifests

    docs = [doc for app in (example_app, everything_on) for colour in EXAMPLE_COLOURS for doc in rendered_manifests(app, colour)]
    pod_templates = sum(doc["kind"] == "Deployment" for doc in docs)
    assert results["kubernetes"]["summary"]["resource_count"] == len(docs) + pod_templates
    # Per colour the parent and every child; the variant's app is Terraform's, not a child.
    assert sum(doc["kind"] == "Application" for doc in docs) == len(EXAMPLE_COLOURS) * (2 * (1 + len(CHILDREN)) - 1)
    assert pod_templates == 4  # the app, delivered both ways, in both colours
    assert {"Deployment.sample-app.sample-app", "Service.sample-app.sample-app"} <= scanned(results["kubernetes"])


def test_the_projects_own_check_ran_on_each_ingress_and_passed(results: dict[str, dict[str, Any]]) -> None:
    """scripts/checkov/checks/ingress_hosts.py: the sample app's Ingress routes exactly the hosts it publishes (the
    weighted one and the colour's preview host), in every colour and both deliveries."""
    (check_id,) = re.findall(r'^CHECK_ID = "([A-Z0-9_]+)"$', (OWN_CHECKS / "ingress_hosts.py").read_text(), re.MULTILINE)
    result = results["kubernetes"]["results"]
    ran = [c for c in [*result["passed_checks"], *result["failed_checks"]] if c["check_id"] == check_id]
    assert {c["resource"] for c in ran} == {"Ingress.sample-app.sample-app"}
    assert len(ran) == 2 * len(EXAMPLE_COLOURS)  # both syntheses
    assert [c for c in ran if c["check_result"]["result"] != "PASSED"] == []


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
