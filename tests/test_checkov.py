"""checkov gate on the synthesized Terraform JSON: no failed check but the skips of .checkov.yaml,
each justified and each still needed."""

from __future__ import annotations

import re
from concurrent.futures import Future
from typing import Any

import pytest
import yaml

from tests.checkov import CONFIG_FILE

# checkov runs in the background from the session's start (tests/background_checks.py).
pytestmark = [pytest.mark.slow, pytest.mark.background("checkov_report")]

SKIP_LINE = re.compile(r"^\s*-\s*(CKV2?_[A-Z0-9_]+)\s*(#\s*(.*))?$")


@pytest.fixture(scope="module")
def result(checkov_report: Future[dict[str, Any]]) -> dict[str, Any]:
    """checkov over the project's synth and a variant with the optional parts switched on
    (image build, Terraform-delivered app, extra admins), in one run."""
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


def test_no_failed_checks_but_the_justified_skips(result: dict[str, Any]) -> None:
    unjustified = [
        f"{c['check_id']} {c['resource']} ({c['file_path']})" for c in failures(result) if c["check_id"] not in skips()
    ]
    assert unjustified == []
    assert result["summary"]["passed"] >= 200  # the checks really ran on both synth outputs
    assert result["summary"]["parsing_errors"] == 0
    assert {c["file_path"].split("/")[1] for c in failures(result)} == {"default", "variant"}


def test_every_skip_has_a_reason() -> None:
    configured = yaml.safe_load(CONFIG_FILE.read_text())["skip-check"]
    reasons = skips()
    assert sorted(reasons) == sorted(configured)
    assert [check for check, reason in reasons.items() if len(reason) < 20] == []


def test_every_skip_is_still_needed(result: dict[str, Any]) -> None:
    """Each skipped check fails somewhere without its skip: none hides nothing (or, later, something new)."""
    assert set(skips()) <= {c["check_id"] for c in failures(result)}
