"""What the API server decides for a request, given a ValidatingAdmissionPolicy and its binding as rendered: written from
the Kubernetes documentation (kubernetes/website, content/en/docs/reference/access-authn-authz/
validating-admission-policy.md; label selectors: concepts/overview/working-with-objects/labels.md), not from its code.

- The policy applies when its `matchConstraints` and its binding's `matchResources` both match the request: a resource
  rule names its API group, version, operation and resource (`*` for any), and a namespaceSelector (the empty
  selector, the default, matches every namespace) matches the labels of the request's namespace.
- A selector matches when every matchLabels pair and every matchExpressions requirement holds: In (the label is set,
  to one of the values), NotIn (unset, or to none of them), Exists, DoesNotExist.
- Every Namespace carries `kubernetes.io/metadata.name: <its name>`, set by the API server
  (docs/reference/labels-annotations-taints/_index.md).
- Each validation's CEL expression is evaluated with `object` (and `oldObject` on UPDATE) bound; the first false one
  refuses the request with its messageExpression's value (else its message). validationActions [Deny] refuses.
CEL is evaluated by cel-python (celpy).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import celpy
from celpy.adapter import json_to_cel

from tests.support.label_selectors import NAMESPACE_NAME_LABEL, selector_matches


@dataclass(frozen=True)
class Request:
    operation: str  # CREATE, UPDATE, DELETE
    object: dict[str, Any]  # a core/v1 Service, say
    resource: str = "services"
    group: str = ""
    version: str = "v1"
    old_object: dict[str, Any] | None = None
    namespace_labels: dict[str, str] = field(default_factory=dict)  # besides the name label the API server sets

    @property
    def namespace(self) -> str:
        namespace: str = self.object["metadata"]["namespace"]
        return namespace


def _named(values: list[str], value: str) -> bool:
    return "*" in values or value in values


def _matches(match: dict[str, Any] | None, request: Request) -> bool:
    match = match or {}
    labels = {**request.namespace_labels, NAMESPACE_NAME_LABEL: request.namespace}
    if not selector_matches(match.get("namespaceSelector"), labels):
        return False
    if not selector_matches(match.get("objectSelector"), request.object["metadata"].get("labels") or {}):
        return False
    rules = match.get("resourceRules")
    if rules is None:  # a binding's matchResources without rules: every resource the policy matches
        return True
    return any(
        _named(rule["apiGroups"], request.group)
        and _named(rule["apiVersions"], request.version)
        and _named(rule["operations"], request.operation)
        and _named(rule["resources"], request.resource)
        for rule in rules
    )


def _evaluate(expression: str, request: Request) -> Any:
    environment = celpy.Environment()
    program = environment.program(environment.compile(expression))
    variables = {"object": json_to_cel(request.object)}
    if request.old_object is not None:
        variables["oldObject"] = json_to_cel(request.old_object)
    return program.evaluate(variables)


def refusal(policy: dict[str, Any], binding: dict[str, Any], request: Request) -> str | None:
    """The message the API server refuses the request with, or None: admitted (or the policy does not apply)."""
    assert binding["spec"]["policyName"] == policy["metadata"]["name"]
    if not (
        _matches(policy["spec"].get("matchConstraints"), request) and _matches(binding["spec"].get("matchResources"), request)
    ):
        return None
    for validation in policy["spec"]["validations"]:
        passed = _evaluate(validation["expression"], request)
        # Anything but true refuses: false, or an error under the policy's failurePolicy Fail.
        if not (isinstance(passed, celpy.celtypes.BoolType) and bool(passed)):
            if "Deny" not in binding["spec"]["validationActions"]:
                return None
            if "messageExpression" in validation:
                return str(_evaluate(validation["messageExpression"], request))
            return str(validation.get("message", "denied"))
    return None


def applies(policy: dict[str, Any], binding: dict[str, Any], request: Request) -> bool:
    """Whether the policy is evaluated for the request at all (its match and its binding's)."""
    return _matches(policy["spec"].get("matchConstraints"), request) and _matches(binding["spec"].get("matchResources"), request)
