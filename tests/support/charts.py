"""Render this project's Helm charts offline with Helm's own engine (helm-python-sdk)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import helm_python
import yaml

from model.bootstrap import MANIFESTS_CHART, facts_in, parent_application
from model.config import Config
from model.paths import PROJECT_DIR
from model.platform import ARGOCD_NAMESPACE, PARENT_APPLICATION
from model.values import cluster_facts
from tests.support.synth import Synthesized

CHARTS = PROJECT_DIR / "argocd"
_REFERENCE = re.compile(r"\$\{([^}]*)\}")


def sample_for(reference: str) -> str:
    """A stand-in for a Terraform reference to another stack's output, naming the output and the path inside it:
    `data.terraform_remote_state.common.outputs.vpc_id` -> `sample-vpc_id`,
    `data.terraform_remote_state.traffic.outputs.target_groups.green.sample_app` -> `sample-target_groups.green.sample_app`
    (so a colour handed another colour's target group shows)."""
    _, found, output = reference.partition(".outputs.")
    return "sample-" + (output if found else reference.rsplit(".", 1)[-1])


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
    # libyaml's parser (PyYAML's C binding, same YAML 1.1 safe schema): the pure-Python one parsed ~1 CPU-s more.
    return [doc for text in rendered.values() for doc in yaml.load_all(text, Loader=yaml.CSafeLoader) if doc]


def lint_errors(chart: str | Path, values: dict[str, Any]) -> list[str]:
    """helm lint --strict findings of warning level or worse."""
    report = helm_python.lint(CHARTS / chart if isinstance(chart, str) else chart, values, strict=True)
    return [f"{m['path']}: {m['error']}" for m in report["messages"] if m["severity"] >= 2] + list(report["errors"])


def by_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for doc in docs if doc["kind"] == kind}


@dataclass(frozen=True)
class Chain:
    bootstrap_values: dict[str, Any]  # what Terraform hands bootstrap/manifests: {"manifests": [its project, the parent]}
    root_values: dict[str, Any]  # the facts Terraform hands the parent Application
    bootstrap: list[dict[str, Any]]  # what bootstrap/manifests renders: the parent's AppProject, the parent
    parent: dict[str, Any]
    apps_manifests: list[dict[str, Any]]  # everything argocd/apps renders: Applications, Namespaces, TargetGroupBindings
    children: dict[str, dict[str, Any]]  # the child Applications, platform's and applications', by name
    # What each application of this repository renders from its child's values (those of another repository cannot
    # be rendered here: only their child Application is).
    applications: dict[str, list[dict[str, Any]]]
    associations: set[tuple[str, str]]  # (namespace, service account) bound in Terraform


def build_chain(app: Synthesized, colour: str) -> Chain:
    (root,) = [r for r in app.resources(colour, "helm_release").values() if r["name"] == PARENT_APPLICATION]
    bootstrap_values = values_of_release(root)
    bootstrap = render(MANIFESTS_CHART, bootstrap_values, release=root["name"], namespace=root["namespace"])
    (parent,) = [doc for doc in bootstrap if doc["kind"] == "Application"]
    root_values = facts_in(bootstrap_values)
    manifests = render("apps", parent["spec"]["source"]["helm"]["valuesObject"], release="apps", namespace=ARGOCD_NAMESPACE)
    children = by_kind(manifests, "Application")
    associations = {
        (a["namespace"], a["service_account"]) for a in app.resources(colour, "aws_eks_pod_identity_association").values()
    }
    applications = own_charts(root_values, children)
    return Chain(bootstrap_values, root_values, bootstrap, parent, manifests, children, applications, associations)


def own_charts(facts: dict[str, Any], children: dict[str, dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each application of this repository, rendered from its child Application (its chart as the checkout has it)."""
    found = {}
    for name in facts["applications"]:
        source = children[name]["spec"]["source"]
        if source["repoURL"] != facts["git"]["repoURL"]:
            continue
        found[name] = render(
            PROJECT_DIR / source["path"],
            source["helm"]["valuesObject"],
            release=source["helm"]["releaseName"],
            namespace=children[name]["spec"]["destination"]["namespace"],
        )
    return found


def rendered_manifests(app: Synthesized, colour: str) -> list[dict[str, Any]]:
    """Everything the charts render for a colour from its synthesized values: the parent Application and its project, what
    argocd/apps renders, and each application of this repository."""
    chain = build_chain(app, colour)
    return [*chain.bootstrap, *chain.apps_manifests, *(doc for docs in chain.applications.values() for doc in docs)]


def write_manifests(directory: Path, docs: list[dict[str, Any]]) -> None:
    directory.mkdir(parents=True)
    for i, doc in enumerate(docs):
        (directory / f"{i:02d}-{doc['kind'].lower()}-{doc['metadata']['name']}.yaml").write_text(yaml.safe_dump(doc))


def release_applications(config: Config, colour: str) -> list[dict[str, Any]]:
    """The Applications a colour runs, as the charts render them from the facts its stack hands over (no synthesis):
    the parent (bootstrap/manifests) and argocd/apps' children, from the checkout's charts."""
    facts = cluster_facts(config=config, colour=colour, common=sample_for, target_group=lambda app: f"sample-{app}")
    parent = parent_application(facts)
    children = render("apps", parent["spec"]["source"]["helm"]["valuesObject"], release="apps", namespace=ARGOCD_NAMESPACE)
    return [parent, *(doc for doc in children if doc["kind"] == "Application")]
