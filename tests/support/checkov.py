"""Run checkov (its own virtualenv: it pins its dependencies exactly) over what the project ships: the
synthesized Terraform JSON, the Kubernetes manifests the charts render, and the app's Dockerfile."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from model.paths import PROJECT_DIR

CHECKOV = PROJECT_DIR / "scripts" / "checkov" / ".venv" / "bin" / "checkov"  # installed by the Makefile
CONFIG_FILE = PROJECT_DIR / ".checkov.yaml"
# The project's own checks (scripts/checkov/checks/): each is held by tests/test_checkov.py to pass on what ships.
OWN_CHECKS = PROJECT_DIR / "scripts" / "checkov" / "checks"
FRAMEWORKS = ("terraform_json", "kubernetes", "dockerfile")
# What each own check must fail and pass: scanned beside what ships, in a folder of this name, not part of the gate.
CHECKOV_FIXTURES = PROJECT_DIR / "tests" / "fixtures" / "checkov"


def checkov(directory: Path) -> dict[str, dict[str, Any]]:
    """One checkov run with the project's config and no skips, its result per framework: the gate and
    the staleness check both read the failures (the gate is: every failure is a justified skip)."""
    assert CHECKOV.exists(), f"{CHECKOV} is missing: `make test` installs it (scripts/checkov/Pipfile)"
    done = subprocess.run(
        [
            str(CHECKOV),
            *("--config-file", str(CONFIG_FILE), "--external-checks-dir", str(OWN_CHECKS), "--skip-check", "NONE"),
            *("-d", str(directory), "-o", "json"),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    report = json.loads(done.stdout)
    results = {result["check_type"]: dict(result) for result in (report if isinstance(report, list) else [report])}
    assert sorted(results) == sorted(FRAMEWORKS), done.stderr[-2000:]
    return results
