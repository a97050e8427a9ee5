"""The table of policies/README.md: each shared Pod Identity role, who may assume it, what it may do and on
which resources, generated from the roles of model/workloads.py and their documents: the component registry's (each
in its component's folder, argocd/apps/platform/<name>/), and the applications of the shipped example
(examples/blue-green.json; a team's own applications add theirs).

    python -m scripts.policies_readme      # rewrites the table between its markers (`make docs` runs it)

tests/test_policies.py fails when the file differs from what this generates, so the table cannot drift. A docs
generator, so a script (the policies are documents the stacks load: nothing of theirs imports scripts/).
"""

from __future__ import annotations

import json
import re
import sys

from model.config import shared_roles
from model.loading import config_file
from model.paths import EXAMPLE_CONFIG, PROJECT_DIR
from model.workloads import Workload
from scripts.docs import between

README = PROJECT_DIR / "policies" / "README.md"
BEGIN, END = "<!-- roles:begin (generated: python -m scripts.policies_readme) -->", "<!-- roles:end -->"
# What a placeholder stands for once synth fills it.
MEANINGS = {
    "TABLE_ARN": "common's table",
    "ZONE_ARN": "the sub-zone",
    "SECRET_ARNS": "the secrets of `gitops.credentials` and `argocd.sso.client_secret`, by name (none: no policy)",
}
# The resource type of an ARN pattern, as a reader names it.
KINDS = {
    "security-group": "security groups",
    "targetgroup": "target groups",
    "loadbalancer": "load balancers",
    "listener": "listeners",
    "listener-rule": "listener rules",
}
LISTED = 6  # a service with more actions than this is counted, not listed
_ARN_KIND = re.compile(r"^arn:[^:]+:([^:]+):[^:]*:[^:]*:([a-z-]+)/")


def table() -> str:
    """One row per role and kind of grant: actions of one service on the same resources under the same conditions."""
    rows = ["| Role | Assumed by | May do | On | Conditions on |", "| --- | --- | --- | --- | --- |"]
    # The example, as the docs describe it (never the operator's config).
    for role in shared_roles(config_file(EXAMPLE_CONFIG, project_dir=PROJECT_DIR)):
        who = (
            f"`pods.eks.amazonaws.com`, for `{role.namespace}/{role.service_account}` only, "
            "in any cluster `<project>-*` of this account"
        )
        for i, (may, on, when) in enumerate(_grants(role)):
            first = i == 0
            rows.append(f"| {f'`<project>-{role.name}`' if first else ''} | {who if first else ''} | {may} | {on} | {when} |")
    return "\n".join(rows)


def _grants(role: Workload) -> list[tuple[str, str, str]]:
    """(actions, resources, condition keys) of a role, grouped by service, resources and conditions, in document order."""
    if role.policy is None:  # an AWS-managed policy instead
        return [(f"AWS-managed `{role.aws_managed_policy}`, kept in step with its add-on by AWS", "what it names", "")]
    document = json.loads(role.policy.read_text())
    groups: dict[tuple[str, str, str], set[str]] = {}
    for statement in document["Statement"]:
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        on = ", ".join(dict.fromkeys(map(_resource, resources)))
        when = ", ".join(f"`{key}`" for key in sorted({key for test in statement.get("Condition", {}).values() for key in test}))
        for action in actions:
            service, _, name = action.partition(":")
            groups.setdefault((service, on, when), set()).add(name)
    return [(_actions(service, names), on, when) for (service, on, when), names in groups.items()]


def _actions(service: str, names: set[str]) -> str:
    listed = ", ".join(sorted(names)) if len(names) <= LISTED else f"{len(names)} actions"
    return f"{service}: {listed}"


def _resource(resource: str) -> str:
    if resource == "*":
        return "any"
    placeholder = re.fullmatch(r"\{\{([A-Z_]+)\}\}(:\*)?", resource)
    if placeholder:
        return MEANINGS[placeholder.group(1)]
    kind = _ARN_KIND.match(resource)
    if kind:  # a resource type a reader knows by name, or the ARN's own words for it; the project's own by name
        named = KINDS.get(kind.group(2), f"{kind.group(1)} {kind.group(2)}")
        return f"{named} named `<project>-*`" if "/{{PROJECT}}-*" in resource else named
    raise ValueError(f"no reader's name for the resource {resource!r}: add it to scripts/policies_readme.py")


def rewritten(text: str) -> str:
    """The README text with the table between the markers replaced by what the documents say now."""
    return between(text, BEGIN, END, table(), name="policies/README.md")


if __name__ == "__main__":
    README.write_text(rewritten(README.read_text()))
    sys.stdout.write(f"wrote {README}\n")
