"""Render this project's Helm charts offline with Helm's own engine (helm-python-sdk)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import helm_python
import yaml

from tools.terraformrc import PROJECT_DIR

CHARTS = PROJECT_DIR / "argocd"
_REFERENCE = re.compile(r"\$\{([^}]*)\}")


def sample_for(reference: str) -> str:
    """A stand-in for a Terraform reference: `data...outputs.vpc_id` -> `sample-vpc_id`."""
    return "sample-" + reference.rsplit(".", 1)[-1]


def values_of_release(release: dict[str, Any]) -> dict[str, Any]:
    """The values a synthesized helm_release passes, with Terraform references replaced by samples."""
    (text,) = release["values"]
    filled = _REFERENCE.sub(lambda m: sample_for(m.group(1)), text)
    values: dict[str, Any] = json.loads(filled)
    return values


def render(chart: str | Path, values: dict[str, Any], *, release: str, namespace: str) -> list[dict[str, Any]]:
    """Every manifest the chart renders, parsed."""
    loaded = helm_python.Chart.load(CHARTS / chart if isinstance(chart, str) else chart)
    try:
        rendered = loaded.render(values, name=release, namespace=namespace)
    finally:
        loaded.close()
    return [doc for text in rendered.values() for doc in yaml.safe_load_all(text) if doc]


def lint_errors(chart: str, values: dict[str, Any]) -> list[str]:
    """helm lint --strict findings of warning level or worse."""
    report = helm_python.lint(CHARTS / chart, values, strict=True)
    return [f"{m['path']}: {m['error']}" for m in report["messages"] if m["severity"] >= 2] + list(report["errors"])


def by_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for doc in docs if doc["kind"] == kind}
