"""checkov gate on the synthesized Terraform JSON: no failed check, every skip justified and needed."""

from __future__ import annotations

import json
import re
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


def checkov(outdir: Path, *extra: str) -> dict[str, Any]:
    assert CHECKOV.exists(), f"{CHECKOV} is missing: `make test` installs it (tools/checkov/Pipfile)"
    done = subprocess.run(
        [str(CHECKOV), "--config-file", str(CONFIG_FILE), "-d", str(outdir), "-o", "json", *extra],
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
def variant(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    """The optional parts switched on: image build, Terraform-delivered app, extra admins."""
    raw = {**WITH_IMAGE_BUILD, "app": {"delivery": "helm"}, "eks": {"admin_role_arns": ["arn:aws:iam::123456789012:role/admins"]}}
    return synthesize(config_from_dict(raw), tmp_path_factory.mktemp("checkov-variant"))


def skips() -> dict[str, str]:
    """Skipped check id -> its reason, from .checkov.yaml's comments."""
    found = {}
    for line in CONFIG_FILE.read_text().splitlines():
        match = SKIP_LINE.match(line)
        if match:
            found[match.group(1)] = (match.group(3) or "").strip()
    return found


def failed(result: dict[str, Any]) -> list[str]:
    return [f"{c['check_id']} {c['resource']} ({c['file_path']})" for c in result.get("results", {}).get("failed_checks", [])]


@pytest.mark.parametrize("which", ["default", "variant"])
def test_no_failed_checks(default_app: Synthesized, variant: Synthesized, which: str) -> None:
    result = checkov((default_app if which == "default" else variant).outdir)
    assert failed(result) == []
    assert result["summary"]["passed"] >= 100  # the checks really ran on our resources
    assert result["summary"]["parsing_errors"] == 0


def test_every_skip_has_a_reason() -> None:
    configured = yaml.safe_load(CONFIG_FILE.read_text())["skip-check"]
    reasons = skips()
    assert sorted(reasons) == sorted(configured)
    assert [check for check, reason in reasons.items() if len(reason) < 20] == []


def test_every_skip_is_still_needed(default_app: Synthesized, variant: Synthesized) -> None:
    """Without the skip list, each skipped check fails somewhere: none hides nothing (or later, something new)."""
    without = {
        c["check_id"]
        for app in (default_app, variant)
        for c in checkov(app.outdir, "--skip-check", "NONE").get("results", {}).get("failed_checks", [])
    }
    assert set(skips()) <= without
