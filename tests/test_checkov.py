"""checkov gate on what the project ships: the synthesized Terraform JSON of every stack (common, the traffic stack's
shared load balancer, the colours), every manifest the charts render (the parent and child Applications, the
applications' Namespaces and TargetGroupBindings, the sample app; from the values in the synthesized stacks) and
app/Dockerfile. No failed check but the skips of .checkov.yaml, each justified and each still needed."""

from __future__ import annotations

import json
import re
from concurrent.futures import Future
from typing import Any

import pytest
import yaml

from model.platform import CHILDREN
from tests.support.checkov import CHECKOV_FIXTURES, CONFIG_FILE, FRAMEWORKS, OWN_CHECKS
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


FIXTURES = f"/{CHECKOV_FIXTURES.name}/"  # where checkov names the fixtures' file (tests/support/background_checks.py)


def shipped(checks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Results on what the project ships: not on tests/fixtures/checkov, made to fail the project's own checks."""
    return [c for c in checks if not c["file_path"].startswith(FIXTURES)]


def failures(result: dict[str, Any]) -> list[dict[str, Any]]:
    return shipped(result.get("results", {}).get("failed_checks", []))


def passes(result: dict[str, Any]) -> list[dict[str, Any]]:
    return shipped(result.get("results", {}).get("passed_checks", []))


def scanned(result: dict[str, Any]) -> set[str]:
    return {c["resource"] for c in [*failures(result), *passes(result)]}


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
    assert len(passes(result)) >= 200
    checked = [*failures(result), *passes(result)]
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
        for c in [*failures(result), *passes(result)]
        if c["file_path"] == f"/{name}/stacks/traffic/cdk.tf.json"
    }
    resources = synthesized.json("traffic")["resource"]
    expected = {key for kind in TRAFFIC_TYPES for key in resources[kind]}
    assert expected - checked == set()
    assert resources["aws_lb_listener_rule"]  # there, but no check of checkov reads them


def test_every_rendered_manifest_was_scanned(
    results: dict[str, dict[str, Any]], example_app: Synthesized, everything_on: Synthesized
) -> None:
    """Every manifest of both syntheses, each of their colours (Applications, Namespaces and TargetGroupBindings
    included, which no check looks into; checkov also counts a Deployment's pod template as a resource of its own)."""
    from tests.support.charts import rendered_manifests

    syntheses = [(example_app, example_raw()["applications"]), (everything_on, EVERYTHING_ON["applications"])]
    docs = [doc for app, _ in syntheses for colour in app.colours() for doc in rendered_manifests(app, colour)]
    pod_templates = sum(doc["kind"] == "Deployment" for doc in docs)
    assert results["kubernetes"]["summary"]["resource_count"] == len(docs) + pod_templates
    # Per colour the parent, every platform child and one child per application; a Namespace per namespace name and a
    # TargetGroupBinding per application.
    kinds = [doc["kind"] for doc in docs]
    assert kinds.count("Application") == sum(len(app.colours()) * (1 + len(CHILDREN) + len(apps)) for app, apps in syntheses)
    assert kinds.count("TargetGroupBinding") == sum(len(app.colours()) * len(apps) for app, apps in syntheses)
    namespaces = [(app, {entry.get("namespace", name) for name, entry in apps.items()}) for app, apps in syntheses]
    assert kinds.count("Namespace") == sum(len(app.colours()) * len(names) for app, names in namespaces)
    # The sample app (the one application of this repository) in every colour of both: the variant's three too.
    assert [len(app.colours()) for app, _ in syntheses] == [len(EXAMPLE_COLOURS), len(EVERYTHING_ON["clusters"])]
    assert pod_templates == len(EXAMPLE_COLOURS) + len(EVERYTHING_ON["clusters"])
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


def test_the_projects_own_checks_fail_and_pass_what_they_should(results: dict[str, dict[str, Any]]) -> None:
    """Each of scripts/checkov/checks ran on tests/fixtures/checkov, failing exactly its `fails-*` resources and passing
    its `passes-*` ones: a check that passes everything (or never loads) fails here."""
    own = {path.stem for path in OWN_CHECKS.glob("*.py") if path.stem != "__init__"}
    assert own == {"internet_ingress"}  # a new check: add its fixtures and its expectations here
    checks = [
        (c["check_id"], c["check_result"]["result"], c["resource"].rsplit(".", 1)[-1])
        for kind in ("failed_checks", "passed_checks")
        for c in results["terraform_json"]["results"][kind]
        if c["file_path"].startswith(FIXTURES)
    ]
    verdicts = {name: result for check, result, name in checks if check == "CKV_EKSBG_2"}
    fixture = json.loads((CHECKOV_FIXTURES / "internet-ingress.tf.json").read_text())
    names = [name for bodies in fixture["resource"].values() for name in bodies]
    assert verdicts == {name: "FAILED" if name.startswith("fails-") else "PASSED" for name in names}


def test_the_skipped_internet_checks_are_replaced_by_the_projects_own(
    results: dict[str, dict[str, Any]], example_app: Synthesized, everything_on: Synthesized
) -> None:
    """CKV_AWS_24, 25 and 260 are skipped for misreading a rule that admits a security group (checkov issue 6624); the
    project's CKV_EKSBG_2 ran on every security group and ingress rule of what ships, and failed none."""
    assert {"CKV_AWS_24", "CKV_AWS_25", "CKV_AWS_260"} <= set(skips())
    result = results["terraform_json"]
    own = [c for c in [*failures(result), *passes(result)] if c["check_id"] == "CKV_EKSBG_2"]
    assert [c["resource"] for c in own if c["check_result"]["result"] != "PASSED"] == []
    checked = {(c["file_path"], c["resource"].split(".", 1)[1]) for c in own}
    kinds = ("aws_security_group", "aws_security_group_rule", "aws_vpc_security_group_ingress_rule")
    expected = {
        (f"/{name}/stacks/{stack}/cdk.tf.json", key)
        for name, app in (("example", example_app), ("variant", everything_on))
        for stack in app.stacks()
        for kind in kinds
        for key in app.json(stack).get("resource", {}).get(kind, {})
    }
    assert expected - checked == set()
    # The shared load balancer's two and each colour's admitting it, in both syntheses, at least.
    assert len(expected) >= 2 * 2 + len(EXAMPLE_COLOURS) + len(EVERYTHING_ON["clusters"])
