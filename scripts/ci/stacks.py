"""What the workflows share: a checkout's stacks as `cdktf synth` wrote them, its raw configuration, and GitHub's
files (the job summary, the step outputs), which a shell run without GitHub simply does not have.

Standard library only: the workflows run these with the runner's python3 before (or beside) the virtualenv.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from model.paths import PROJECT_DIR
from model.routes import TRAFFIC_STACK

# model/config/'s COMMON_STACK and Config.project default, spelled again: that module needs pydantic, and the clone
# check runs on the runner's bare python3 (tests/test_workflows.py holds them equal).
COMMON = "common"
DEFAULT_PROJECT = "eks-bg"
TRAFFIC = TRAFFIC_STACK
STACKS_DIR = Path("cdktf.out") / "stacks"
STACK_FILE = "cdk.tf.json"
# What runs inside a colour's cluster: Terraform reaches it through these providers (components/kube_providers.py).
IN_CLUSTER = ("helm", "kubernetes")


def raw_config(project: Path = PROJECT_DIR) -> dict[str, Any]:
    """cdktf.json's `context.config`: inline, or the JSON file it names (as model/loading.py reads it, unvalidated)."""
    context = json.loads((project / "cdktf.json").read_text()).get("context", {})
    section = context.get("config", {})
    if isinstance(section, str):
        section = json.loads((project / section).read_text())
    return dict(section)


def project_name(config: Mapping[str, Any]) -> str:
    return str(config.get("project", DEFAULT_PROJECT))


def colours(config: Mapping[str, Any]) -> list[str]:
    return list(config.get("clusters", {}))


def stack_file(project: Path, stack: str) -> Path:
    return project / STACKS_DIR / stack / STACK_FILE


def summary(markdown: str) -> None:
    """Append to the job summary when GitHub gives one ($GITHUB_STEP_SUMMARY); at a shell, print it."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a", encoding="utf-8") as out:
            out.write(markdown.rstrip("\n") + "\n")
    else:
        print(markdown)


def outputs(values: Mapping[str, Any]) -> None:
    """Step outputs ($GITHUB_OUTPUT): a string as it is, anything else as JSON (fromJSON in the workflow); at a shell,
    nothing."""
    target = os.environ.get("GITHUB_OUTPUT")
    if target:
        with open(target, "a", encoding="utf-8") as out:
            for key, value in values.items():
                text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
                out.write(f"{key}={text}\n")


def terraform(project: Path, stack: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Terraform in the stack's synthesized directory (where its destroy hooks find the project's .venv upwards)."""
    return terraform_in(project / STACKS_DIR / stack, *args)


def terraform_in(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["terraform", *args, "-input=false", "-no-color"], cwd=directory, capture_output=True, text=True, check=False
    )


def details(title: str, text: str, *, limit: int = 60_000) -> str:
    """A collapsed block of Terraform's output for markdown; the tail kept when long (GitHub caps a comment at 65,536)."""
    body = text if len(text) <= limit else "... (cut: the full output is in the job's log)\n" + text[-limit:]
    return f"<details><summary>{title}</summary>\n\n```\n{body.rstrip()}\n```\n\n</details>"


def aws_part(document: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A copy of a synthesized stack without the helm/kubernetes providers and their resources, and the addresses
    removed; references to them from what remains (depends_on) are dropped too. What can be planned without reaching
    the cluster: the AWS part."""
    doc = json.loads(json.dumps(document))
    removed = [
        f"{kind}.{name}" for kind, items in doc.get("resource", {}).items() if kind.startswith(IN_CLUSTER) for name in items
    ]
    doc["resource"] = {k: v for k, v in doc["resource"].items() if not k.startswith(IN_CLUSTER)}
    for name in IN_CLUSTER:
        doc.get("provider", {}).pop(name, None)
        doc["terraform"]["required_providers"].pop(name, None)
    for items in doc["resource"].values():
        for body in items.values():
            if "depends_on" in body:
                body["depends_on"] = [d for d in body["depends_on"] if d not in removed]
    return doc, removed


if __name__ == "__main__":
    # `python3 -m scripts.ci.stacks`: the project's name as a step output, for the workflows' concurrency groups.
    outputs({"project": project_name(raw_config())})
    print(project_name(raw_config()))
