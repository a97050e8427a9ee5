"""What Kubernetes authorizes a request as, and whether a namespaced Role (as synthesized: a `kubernetes_role_v1` body)
allows it, the way the API server decides: enough to hold every request a command makes against the Role it is given.

The request's attributes follow k8s.io/apiserver pkg/endpoints/request/requestinfo.go (NewRequestInfo): `/api/<v>` is
the core group, `/apis/<group>/<v>` another; `namespaces/<ns>/` scopes the rest; a GET of a collection is `list`, of
one object `get`, with `?watch=true` `watch`; a DELETE of a collection is `deletecollection` (also kubernetes/website,
docs/reference/access-authn-authz/authorization.md, "Determine the request verb"). A rule allows a request when its
verbs, API groups and resources (`*` for any) name the request's, and its resourceNames, if any, its object
(k8s.io/kubernetes pkg/apis/rbac/v1/evaluation_helpers.go, RuleAllows). A Role grants in its own namespace only.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from typing import Any

_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


@dataclass(frozen=True)
class Attributes:
    verb: str
    api_group: str
    namespace: str  # "" for a cluster-scoped request
    resource: str  # with its subresource: `applications/status`
    name: str  # "" for a collection


def attributes(method: str, path: str) -> Attributes | None:
    """A resource request's attributes; None for a non-resource request (`/healthz`, `/version`)."""
    url = urllib.parse.urlsplit(path)
    parts = [p for p in url.path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 2:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        group, rest = parts[1], parts[3:]
    else:
        return None
    namespace = ""
    if rest[:1] == ["namespaces"] and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2:  # a namespace's objects, not the Namespace itself
            rest = rest[2:]
    resource = rest[0] if rest else ""
    name = rest[1] if len(rest) > 1 else ""
    if len(rest) > 2:
        resource = f"{resource}/{rest[2]}"
    verb = _VERBS.get(method.upper(), method.lower())
    watching = urllib.parse.parse_qs(url.query).get("watch", [""])[0] in ("true", "1")
    if verb == "get" and watching:
        verb = "watch"
    elif verb == "get" and not name:
        verb = "list"
    elif verb == "delete" and not name:
        verb = "deletecollection"
    return Attributes(verb, group, namespace, resource, name)


def role_allows(role: dict[str, Any], request: Attributes) -> bool:
    """Whether a namespaced Role, as synthesized (metadata, rule: api_groups, resources, verbs, resource_names), allows
    the request: in the Role's namespace only, by one of its rules."""
    if request.namespace != role["metadata"]["namespace"]:
        return False
    return any(_rule_allows(rule, request) for rule in role["rule"])


def _rule_allows(rule: dict[str, Any], request: Attributes) -> bool:
    def names(values: list[str], value: str) -> bool:
        return "*" in values or value in values

    return (
        names(rule.get("verbs", []), request.verb)
        and names(rule.get("api_groups", []), request.api_group)
        and names(rule.get("resources", []), request.resource)
        and (not rule.get("resource_names") or request.name in rule["resource_names"])
    )
