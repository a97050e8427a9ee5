"""What an Argo CD AppProject lets an Application deploy, decided as Argo CD decides it (argo-cd v3.5.1,
pkg/apis/application/v1alpha1/app_project_types.go: IsSourcePermitted, isDestinationMatched, IsGroupKindNamePermitted;
types.go isNamedResourceInList; util/git NormalizeGitURL). Written from reading that code, not copied from it.

- A source is permitted when some entry of `sourceRepos` matches its normalized URL (a glob, `/` its separator) and
  no deny entry (`!...`) rejects it; as for destinations, an unmatched deny entry counts as a match.
- A destination is permitted when some entry matches both its server and its namespace; a deny entry (`!`) that fails
  to match on one side, while the other side matches, refuses it outright. An unmatched deny entry counts as a match:
  `{server: X, namespace: "!kube-system"}` admits every other namespace of X.
- A cluster-scoped kind is permitted when `clusterResourceWhitelist` lists it (group, kind and, when set, name, as
  filepath.Match patterns) and `clusterResourceBlacklist` does not; namespaced kinds by the namespace lists, by group
  and kind only (types.go isResourceInList): all when no whitelist is set, none when it is set but empty.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any

# Kinds argocd/apps and bootstrap/manifests render that are cluster-scoped (everything else they render is namespaced).
CLUSTER_SCOPED = {
    ("", "Namespace"),
    ("external-secrets.io", "ClusterSecretStore"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
}


def glob_match(pattern: str, value: str, *, separator: str = "") -> bool:
    """gobwas/glob as Argo CD compiles it: `**` any run, `*` any run without the separator, `?` one such character."""
    out = []
    for token in re.findall(r"\*\*|\*|\?|.", pattern, flags=re.S):
        if token == "**":
            out.append(".*")
        elif token == "*":
            out.append(f"[^{re.escape(separator)}]*" if separator else ".*")
        elif token == "?":
            out.append(f"[^{re.escape(separator)}]" if separator else ".")
        else:
            out.append(re.escape(token))
    return re.fullmatch("".join(out), value, flags=re.S) is not None


def _allow_or_deny(pattern: str, value: str, *, separator: str = "") -> bool:
    """globMatch with negation: a deny pattern matches what its pattern does not."""
    if pattern.startswith("!"):
        return not glob_match(pattern[1:], value, separator=separator)
    return pattern == "*" or glob_match(pattern, value, separator=separator)


def normalize_git_url(url: str) -> str:
    """NormalizeGitURL for the https:// and ssh:// URLs the configuration allows (git@host:path as ssh)."""
    url = url.strip().lower()
    if re.match(r"^[\w.-]+@[\w.-]+:", url):
        url = "ssh://" + url.replace(":", "/", 1)
    url = url.removesuffix(".git")
    return url.removeprefix("ssh://")


def source_permitted(project: dict[str, Any], repo_url: str) -> bool:
    source = normalize_git_url(repo_url)
    matched = False
    for entry in project["spec"].get("sourceRepos") or []:
        pattern = "!" + normalize_git_url(entry[1:]) if entry.startswith("!") else normalize_git_url(entry)
        if _allow_or_deny(pattern, source, separator="/"):
            matched = True
        elif pattern.startswith("!"):
            return False
    return matched


def destination_permitted(project: dict[str, Any], server: str, namespace: str) -> bool:
    matched = False
    for entry in project["spec"].get("destinations") or []:
        server_ok = "server" in entry and _allow_or_deny(entry["server"], server)
        namespace_ok = _allow_or_deny(entry.get("namespace", ""), namespace)
        if server_ok and namespace_ok:
            matched = True
        elif (not server_ok and entry.get("server", "").startswith("!") and namespace_ok) or (
            not namespace_ok and entry.get("namespace", "").startswith("!") and server_ok
        ):
            return False
    return matched


def _listed(group: str, kind: str, name: str, entries: list[dict[str, Any]]) -> bool:
    for entry in entries:
        if not (fnmatch.fnmatchcase(kind, entry["kind"]) and fnmatch.fnmatchcase(group, entry["group"])):
            continue
        if not entry.get("name") or fnmatch.fnmatchcase(name, entry["name"]):
            return True
    return False


def cluster_kind_permitted(project: dict[str, Any], group: str, kind: str, name: str) -> bool:
    spec = project["spec"]
    allowed = _listed(group, kind, name, spec.get("clusterResourceWhitelist") or [])
    return allowed and not _listed(group, kind, name, spec.get("clusterResourceBlacklist") or [])


def namespaced_kind_permitted(project: dict[str, Any], group: str, kind: str) -> bool:
    spec = project["spec"]
    whitelist = spec.get("namespaceResourceWhitelist")
    allowed = whitelist is None or _listed(group, kind, "", whitelist)
    return allowed and not _listed(group, kind, "", spec.get("namespaceResourceBlacklist") or [])


def refusals(project: dict[str, Any], application: dict[str, Any]) -> list[str]:
    """Why the project refuses the Application's source and destination (none: permitted)."""
    spec = application["spec"]
    found = []
    if spec["project"] != project["metadata"]["name"]:
        found.append(f"the Application names project {spec['project']}, not {project['metadata']['name']}")
    for source in spec.get("sources") or [spec["source"]]:
        if not source_permitted(project, source["repoURL"]):
            found.append(f"source {source['repoURL']} is not permitted")
    destination = spec["destination"]
    if not destination_permitted(project, destination["server"], destination["namespace"]):
        found.append(f"namespace {destination['namespace']} is not permitted")
    return found


def resource_refusals(project: dict[str, Any], manifest: dict[str, Any], *, server: str) -> list[str]:
    """Why the project refuses one manifest an Application of it renders (validateSyncPermissions)."""
    group = manifest["apiVersion"].rpartition("/")[0]
    kind, name = manifest["kind"], manifest["metadata"]["name"]
    if (group, kind) in CLUSTER_SCOPED:
        return [] if cluster_kind_permitted(project, group, kind, name) else [f"{group}/{kind} {name} is not permitted"]
    namespace = manifest["metadata"]["namespace"]
    found = [] if namespaced_kind_permitted(project, group, kind) else [f"{group}/{kind} is not permitted"]
    if not destination_permitted(project, server, namespace):
        found.append(f"namespace {namespace} is not permitted")
    return found
