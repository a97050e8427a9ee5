"""Is a file an IAM identity policy this project can fill and attach? Checked at synth for the documents the
configuration names (an application's `policy`), so a missing file, a typo or a trust policy in its place is
refused with the key that names it, before Terraform would fail half-way through `cdktf deploy common`.

The shape IAM's own parser requires of an identity-based policy (IAM User Guide, "IAM JSON policy elements
reference" and "IAM and AWS STS quotas": a managed policy holds at most 6,144 characters, whitespace not counted).
Whether the grants are wise is the author's; `tests/test_policies.py` lints the project's own documents.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

MANAGED_POLICY_CHARACTERS = 6144
_ACTION = re.compile(r"^(\*|[a-z0-9-]+:[A-Za-z0-9*?]+)$")
_PLACEHOLDER = re.compile(r"\{\{([A-Z][A-Z0-9_]*)\}\}")
_STATEMENT_KEYS = {"Sid", "Effect", "Action", "NotAction", "Resource", "NotResource", "Condition"}


def policy_problem(path: Path, placeholders: frozenset[str]) -> str | None:
    """What is wrong with the document at path, in words, or None. placeholders: the `{{NAME}}`s synth fills."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return "no such file in the project"
    except OSError as err:
        return f"cannot be read ({err.strerror})"
    try:
        document = json.loads(text)
    except json.JSONDecodeError as err:
        return f"not valid JSON: line {err.lineno} column {err.colno}: {err.msg}"
    if not isinstance(document, dict) or set(document) - {"Version", "Id", "Statement"}:
        return "not an IAM policy: a JSON object with Version and Statement (and optionally Id) only"
    if document.get("Version") != "2012-10-17":
        return 'not an IAM policy: its Version must be "2012-10-17"'
    statements = document.get("Statement")
    statements = [statements] if isinstance(statements, dict) else statements
    if not isinstance(statements, list) or not statements:
        return "not an IAM policy: Statement must be a statement or a non-empty list of them"
    for number, statement in enumerate(statements, 1):
        if problem := _statement_problem(statement):
            return f"statement {number}: {problem}"
    unknown = set(_PLACEHOLDER.findall(text)) - placeholders
    if unknown:
        return f"unknown placeholder(s) {', '.join(sorted(unknown))}; synth fills {', '.join(sorted(placeholders))}"
    size = len(re.sub(r"\s", "", text))
    if size > MANAGED_POLICY_CHARACTERS:
        return f"{size} characters without whitespace; a managed policy holds at most {MANAGED_POLICY_CHARACTERS}"
    return None


def _statement_problem(statement: Any) -> str | None:
    if not isinstance(statement, dict):
        return "not a JSON object"
    if "Principal" in statement or "NotPrincipal" in statement:
        return "has a Principal: that is a trust or resource policy, not an identity policy for a role"
    if unknown := set(statement) - _STATEMENT_KEYS:
        return f"unknown element(s) {', '.join(sorted(unknown))}"
    if statement.get("Effect") not in ("Allow", "Deny"):
        return 'Effect must be "Allow" or "Deny"'
    for one, other in (("Action", "NotAction"), ("Resource", "NotResource")):
        if (one in statement) == (other in statement):
            return f"needs exactly one of {one} and {other}"
    actions = statement.get("Action", statement.get("NotAction"))
    actions = [actions] if isinstance(actions, str) else actions
    if not isinstance(actions, list) or not actions or not all(isinstance(a, str) and _ACTION.match(a) for a in actions):
        return "every action is `service:Action` (wildcards allowed), e.g. `dynamodb:GetItem`"
    resources = statement.get("Resource", statement.get("NotResource"))
    resources = [resources] if isinstance(resources, str) else resources
    if not isinstance(resources, list) or not resources or not all(isinstance(r, str) and r for r in resources):
        return "Resource must be an ARN (or `*`) or a list of them"
    if "Condition" in statement and not isinstance(statement["Condition"], dict):
        return "Condition must be a JSON object"
    return None
