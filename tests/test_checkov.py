"""checkov gate on the synthesized Terraform JSON: no failed check but the skips of .checkov.yaml,
each justified and each still needed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from stacks.config import config_from_dict
from tests.samples import WITH_IMAGE_BUILD
from tests.synth import Synthesized, synthesize
from tools.terraformrc import PROJECT_DIR

pytestmark = pytest.mark.slow

CHECKOV = PROJECT_DIR / "tools" / "checkov" / ".venv" / "bin" / "checkov"  # installed by the Makefile
CONFIG_FILE = PROJECT_DIR / ".checkov.yaml"
SKIP_LINE = re.compile(r"^\s*-\s*(CKV2?_[A-Z0-9_]+)\s*(#\s*(.*))?$")


def checkov(directory: Path) -> dict[str, Any]:
    """One checkov run with the project's config and no skips: the gate and the staleness
    check both read its failures (the gate is: every failure is a justified skip)."""
    assert CHECKOV.exists(), f"{CHECKOV} is missing: `make test` installs it (tools/checkov/Pipfile)"
    done = subprocess.run(
        [str(CHECKOV), "--config-file", str(CONFIG_FILE), "--skip-check", "NONE", "-d", str(directory), "-o", "json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    report = json.loads(done.stdout)
    (result,) = report if isinstance(report, list) else [report]
    assert result["check_type"] == "terraform_json"
    return dict(result)


@pytest.fixture(scope="module")
def result(default_app: Synthesized, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """checkov over the project's synth and a variant with the optional parts switched on
    (image build, Terraform-delivered app, extra admins), in one run."""
    both = tmp_path_factory.mktemp("checkov")
    shutil.copytree(default_app.outdir, both / "default")
    raw = {**WITH_IMAGE_BUILD, "app": {"delivery": "helm"}, "eks": {"admin_role_arns": ["arn:aws:iam::123456789012:role/admins"]}}
    synthesize(config_from_dict(raw), both / "variant")
    return checkov(both)


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
