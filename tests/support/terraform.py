"""Run the real Terraform CLI on a synthesized stack directory."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def run(stack_dir: Path, *args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """env: the whole environment of the run (default: this process's)."""
    return subprocess.run(["terraform", *args], cwd=stack_dir, capture_output=True, text=True, check=False, env=env)


def init_and_validate(stack_dir: Path) -> dict[str, Any]:
    """`terraform init` (no backend: validation needs none) and `terraform validate -json`."""
    init = run(stack_dir, "init", "-backend=false", "-input=false", "-no-color")
    assert init.returncode == 0, init.stdout + init.stderr
    validate = run(stack_dir, "validate", "-json", "-no-color")
    result: dict[str, Any] = json.loads(validate.stdout)
    return result


def provider_versions(stack_dir: Path) -> dict[str, str]:
    """Provider versions Terraform selected for an initialised directory."""
    out = run(stack_dir, "version", "-json")
    selections: dict[str, str] = json.loads(out.stdout)["provider_selections"]
    return selections
