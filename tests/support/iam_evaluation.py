"""Whether identity policies allow one request, decided as IAM decides within one account: an explicit Deny that
matches wins; otherwise an Allow whose action, resource and every condition match allows; otherwise it is denied.
With a permissions boundary (the role's, policies/boundary.json) the request must be allowed by both: "an entity's
permissions boundary allows it to perform only the actions that are allowed by both its identity-based policies and
its permissions boundaries" (IAM User Guide, access_policies_boundaries.html), an explicit Deny in either denying it.

A request is one action on one resource (an ARN, or `*` for an action AWS authorizes on no resource type) with
the condition keys it carries. Matching follows the IAM JSON policy reference: actions case-insensitively with `*`
and `?`; a Resource and the Arn* operators per colon-separated ARN part; String* operators case-sensitively; keys
case-insensitively; `ForAllValues`/`ForAnyValue` over multivalued keys (ForAllValues holds for a missing key),
`...IfExists`, and `Null`; the negated String/Arn operators (`StringNotEquals`, `ArnNotLike`, ...), which hold for a
missing key ("If the policy condition requires that the key is not matched, such as StringNotLike or ArnNotLike, and
the right key is not present, the condition is true": IAM User Guide, reference_policies_elements_condition_operators
.html); `NotAction` and `NotResource` (every action or resource but those named). Anything else (a Principal, policy
variables, another operator) is refused with ValueError, never guessed: a verdict of this module is one IAM would
give.

A role's trust policy is decided by `trusts`: a statement whose Principal names the caller exactly (`{"Federated":
<provider ARN>}`), then as above, on no resource (a trust policy names none) and with the caller's claims as keys.

Used by the call table's test (tests/test_deployer_calls.py) on the deployer policy (policies/deployer.py), and by
tests/test_pipeline_identities.py on the pipeline's roles (policies/pipeline.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

Value = str | Sequence[str]
_UNSUPPORTED = ("NotPrincipal", "Principal")
_OPERATORS = ("StringEquals", "StringLike", "ArnEquals", "ArnLike", "Bool", "Null")
# Each negated operator: the one it negates.
_NEGATED = {
    "StringNotEquals": "StringEquals",
    "StringNotLike": "StringLike",
    "ArnNotEquals": "ArnEquals",
    "ArnNotLike": "ArnLike",
}


@dataclass(frozen=True)
class Request:
    action: str  # service:Action
    resource: str  # the ARN acted on, or "*"
    context: Mapping[str, Value] = field(default_factory=dict)  # condition key -> value(s) the request carries

    def keys(self) -> dict[str, Value]:
        """The request's condition keys, lowercase, with aws:ResourceAccount taken from the ARN when it names one."""
        keys = {key.lower(): value for key, value in self.context.items()}
        parts = self.resource.split(":", 5)
        if len(parts) == 6 and parts[4]:
            keys.setdefault("aws:resourceaccount", parts[4])
        return keys


@dataclass(frozen=True)
class Decision:
    allowed: bool
    why: str  # the deciding statement's Sid, or why nothing allows it


def decide(
    statements: Iterable[Mapping[str, Any]], request: Request, boundary: Iterable[Mapping[str, Any]] | None = None
) -> Decision:
    """statements: every identity policy statement the principal holds; boundary: its permissions boundary's
    statements, when it has one."""
    decision = _decide(statements, request)
    if boundary is None or not decision.allowed:
        return decision
    bounded = _decide(boundary, request)
    return decision if bounded.allowed else Decision(False, f"outside the permissions boundary: {bounded.why}")


def trusts(document: Mapping[str, Any], *, principal: Mapping[str, str], request: Request) -> Decision:
    """Whether a role's trust policy lets `principal` (e.g. {"Federated": <provider ARN>}) make `request` (e.g.
    sts:AssumeRoleWithWebIdentity, its context the token's claims as `<provider>:<claim>` keys). A statement applies
    when its Principal names the caller's exactly; only the principal kinds given are compared."""
    applying = [
        {key: value for key, value in statement.items() if key != "Principal"} | {"Resource": "*"}
        for statement in document["Statement"]
        if _names(statement.get("Principal"), principal)
    ]
    return _decide(applying, Request(request.action, "*", request.context))


def _names(named: Any, principal: Mapping[str, str]) -> bool:
    if named == "*":
        return True
    if not isinstance(named, Mapping):
        raise ValueError(f"a trust statement without a Principal, or NotPrincipal, is not evaluated here: {named!r}")
    return any(value in _listed(named.get(kind, [])) for kind, value in principal.items())


def _decide(statements: Iterable[Mapping[str, Any]], request: Request) -> Decision:
    matching = [s for s in statements if _matches(s, request)]
    denied = [s for s in matching if s["Effect"] == "Deny"]
    if denied:
        return Decision(False, f"denied by {denied[0].get('Sid', 'a Deny statement')}")
    allowed = [s for s in matching if s["Effect"] == "Allow"]
    if allowed:
        return Decision(True, f"allowed by {allowed[0].get('Sid', 'an Allow statement')}")
    return Decision(False, "no statement allows it")


def _matches(statement: Mapping[str, Any], request: Request) -> bool:
    unsupported = [element for element in _UNSUPPORTED if element in statement]
    if unsupported:
        raise ValueError(f"statement {statement.get('Sid')!r}: {unsupported} is not evaluated here")
    return (
        _named(statement, "Action", lambda pattern: _glob(pattern, request.action, fold=True))
        and _named(statement, "Resource", lambda pattern: arn_like(pattern, request.resource))
        and all(_holds(operator, tests, request.keys()) for operator, tests in statement.get("Condition", {}).items())
    )


def _named(statement: Mapping[str, Any], element: str, matches: Callable[[str], bool]) -> bool:
    """Action or Resource: one pattern matches; NotAction or NotResource: none does."""
    if element in statement:
        return any(matches(pattern) for pattern in _listed(statement[element]))
    return not any(matches(pattern) for pattern in _listed(statement[f"Not{element}"]))


def arn_like(pattern: str, arn: str) -> bool:
    """A Resource element or an Arn* condition value against an ARN: `*` alone is anything; otherwise each of the
    six colon-separated parts is matched on its own, so a wildcard never crosses a colon."""
    _no_variables(pattern)
    if pattern == "*":
        return True
    wanted, given = pattern.split(":", 5), arn.split(":", 5)
    return len(wanted) == len(given) == 6 and all(_glob(w, g) for w, g in zip(wanted, given, strict=True))


def _holds(operator: str, tests: Mapping[str, Value], keys: Mapping[str, Value]) -> bool:
    qualifier, _, base = operator.rpartition(":")
    if_exists = base.endswith("IfExists")
    base = base.removesuffix("IfExists")
    if base in _NEGATED and not qualifier:
        # A missing key satisfies a negated operator, with or without IfExists.
        return all(
            key.lower() not in keys or not _holds(_NEGATED[base], {key: expected}, keys) for key, expected in tests.items()
        )
    if base not in _OPERATORS or qualifier not in ("", "ForAllValues", "ForAnyValue"):
        raise ValueError(f"condition operator {operator!r} is not evaluated here")
    return all(
        _key_holds(qualifier, base, if_exists, _listed(expected), keys.get(key.lower())) for key, expected in tests.items()
    )


def _key_holds(qualifier: str, base: str, if_exists: bool, expected: list[str], given: Value | None) -> bool:
    if base == "Null":
        return (given is None) == (expected[0].lower() == "true")
    if given is None:
        return if_exists or qualifier == "ForAllValues"
    values = _listed(given)
    if qualifier == "ForAllValues":
        return all(_one_matches(base, expected, value) for value in values)
    if qualifier == "ForAnyValue":
        return any(_one_matches(base, expected, value) for value in values)
    if len(values) != 1:
        raise ValueError(f"a multivalued key needs ForAllValues or ForAnyValue, not {base}: {values}")
    return _one_matches(base, expected, values[0])


def _one_matches(base: str, expected: list[str], value: str) -> bool:
    for pattern in expected:
        _no_variables(pattern)
    if base == "StringEquals":
        return value in expected
    if base == "StringLike":
        return any(_glob(pattern, value) for pattern in expected)
    if base == "Bool":
        return value.lower() in (pattern.lower() for pattern in expected)
    return any(arn_like(pattern, value) for pattern in expected)  # ArnEquals and ArnLike match alike


def _glob(pattern: str, value: str, *, fold: bool = False) -> bool:
    return _compiled(pattern, fold).fullmatch(value) is not None


@cache
def _compiled(pattern: str, fold: bool) -> re.Pattern[str]:
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile(body, re.IGNORECASE | re.DOTALL if fold else re.DOTALL)


def _no_variables(pattern: str) -> None:
    if "${" in pattern:
        raise ValueError(f"policy variables are not evaluated here: {pattern!r}")


def _listed(value: Value) -> list[str]:
    return [value] if isinstance(value, str) else list(value)
