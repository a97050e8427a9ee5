"""Each shared role's policy grants every action upstream's own IAM policy allows, for every version of the table.

The evidence is committed, in each component's folder (argocd/apps/platform/<name>/upstream/): upstream's policy
document of each app version the compatibility table (`chart.releases` of its component.yaml) names, copied as
published (`<tag>.json`), and `sources.yaml`, which names the repository, the path, how the copies are made and the
commit of each tag. Which components need them comes from the registry: every one with a chart and a Pod Identity
binding. A row added to the table without its copy fails here, saying where to read it. The project's document, filled
the way synth fills it, must allow each action an upstream Allow statement names; its resources and conditions may be
narrower on purpose (ExternalDNS: the sub-zone only), which is reported, not failed, unless the component's sources.yaml
names its narrowings (`narrowed`, each action with why): then exactly those may be narrower. The action facts of
`identity.upstream` must be those of the copies.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, StringConstraints

import policies
from model.paths import PROJECT_DIR
from model.platform import COMPONENTS, REGISTRY, Component, UpstreamPolicy, load
from tests.test_policies import SAMPLES

UPSTREAM = "upstream"  # the folder of a component's copies
SOURCES = "sources.yaml"  # where they come from, in that folder
WITH_POLICY = [c for c in COMPONENTS if c.identity and c.chart]


class Sources(BaseModel):
    """A component's upstream/sources.yaml: where upstream publishes its policy, and the copies made of it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    repository: str  # owner/name on GitHub
    path: str  # the file that holds the policy, at each tag
    copied: str  # how a copy is made of it ("the file as is")
    read: dt.date  # when the copies were read
    copies: dict[str, Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{40}$")]]  # tag -> the commit it named
    # action -> why the project grants it on less than upstream: when given, every narrower grant must be named here
    # (and each named one be narrower), so a scoping is a decision written down, never an accident.
    narrowed: dict[str, str] | None = None


def tag(app_version: str) -> str:
    """Upstream's Git tag of an app version: `v3.5.0` stays, `0.21.0` (ExternalDNS's appVersion) becomes `v0.21.0`."""
    return app_version if app_version.startswith("v") else f"v{app_version}"


def shown(path: Path) -> str:
    """A path as messages name it: from the project's root when it is in the project."""
    return path.relative_to(PROJECT_DIR).as_posix() if path.is_relative_to(PROJECT_DIR) else str(path)


def copy_path(component: Component, app_version: str) -> Path:
    return component.folder / UPSTREAM / f"{tag(app_version)}.json"


def sources(component: Component) -> Sources | None:
    """The component's upstream/sources.yaml, or None when it has none yet."""
    path = component.folder / UPSTREAM / SOURCES
    return Sources.model_validate(yaml.safe_load(path.read_text())) if path.is_file() else None


def sources_of(component: Component) -> Sources:
    """The component's upstream/sources.yaml; a missing one fails, naming it."""
    found = sources(component)
    if found is None:
        pytest.fail(
            f"{shown(component.folder / UPSTREAM / SOURCES)} is missing: write where upstream publishes its IAM policy "
            "(repository, path, how it is copied) and the commit of each tag copied (see another component's)"
        )
    return found


def upstream_document(component: Component, app_version: str) -> dict[str, Any]:
    """The committed copy of upstream's policy for one app version; a missing one fails, saying where to get it."""
    path = copy_path(component, app_version)
    if not path.exists():
        where = shown(component.folder / UPSTREAM / SOURCES)
        found = sources(component)
        how = (
            f"copy {found.copied} from `git show {tag(app_version)}:{found.path}` of https://github.com/{found.repository}, "
            f"and name the commit it was read at under `copies` in {where}"
            if found
            else f"copy upstream's IAM policy document at {tag(app_version)} as published, and write {where}: its "
            "repository, path, how it is copied and the commit of each tag (see another component's)"
        )
        pytest.fail(
            f"{component.name} {tag(app_version)} is in the table ({shown(component.folder / 'component.yaml')}) "
            f"but {shown(path)} is missing: {how}"
        )
    document: dict[str, Any] = json.loads(path.read_text())
    return document


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _allows(pattern: str, action: str) -> bool:
    """IAM's action match: case-insensitive, `*` and `?` wildcards."""
    return fnmatch.fnmatchcase(action.lower(), pattern.lower())


def _covers(pattern: str, resource: str) -> bool:
    return fnmatch.fnmatchcase(resource, pattern)


@dataclass
class Coverage:
    """How a project document covers an upstream one: what it lacks (fails), and where its grant differs (notes)."""

    missing: list[str] = field(default_factory=list)
    narrower: list[str] = field(default_factory=list)
    broader: list[str] = field(default_factory=list)
    different: list[str] = field(default_factory=list)


def coverage(project: dict[str, Any], upstream: dict[str, Any]) -> Coverage:
    """Compare action coverage: each action of an upstream Allow statement must be allowed by some project Allow
    statement and denied by none. Where it is, compare the project's resources and conditions with upstream's."""
    grants = [s for s in project["Statement"] if s["Effect"] == "Allow" and "Action" in s]
    denials = [s for s in project["Statement"] if s["Effect"] == "Deny" and "Action" in s]
    found = Coverage()
    for wanted in (s for s in upstream["Statement"] if s["Effect"] == "Allow"):
        for action in _listed(wanted.get("Action", [])):
            granting = [s for s in grants if any(_allows(p, action) for p in _listed(s["Action"]))]
            if not granting or any(any(_allows(p, action) for p in _listed(s["Action"])) for s in denials):
                found.missing.append(action)
                continue
            scope = _scope(wanted, granting)
            if scope:
                getattr(found, scope).append(action)
    return found


def _scope(wanted: dict[str, Any], granting: list[dict[str, Any]]) -> str | None:
    """None: some project statement grants the action on upstream's resources under upstream's conditions; otherwise
    how the best project grant compares (narrower: fewer resources and at least upstream's conditions)."""
    theirs = set(_listed(wanted.get("Resource", [])))
    their_conditions = wanted.get("Condition", {})
    verdicts = set()
    for statement in granting:
        ours = set(_listed(statement.get("Resource", [])))
        our_conditions = statement.get("Condition", {})
        if ours == theirs and our_conditions == their_conditions:
            return None
        within = all(any(_covers(t, o) for t in theirs) for o in ours)
        beyond = all(any(_covers(o, t) for o in ours) for t in theirs)
        stricter = _includes(our_conditions, their_conditions)
        looser = _includes(their_conditions, our_conditions)
        if within and stricter:
            verdicts.add("narrower")
        elif beyond and looser:
            verdicts.add("broader")
        else:
            verdicts.add("different")
    return next(v for v in ("broader", "different", "narrower") if v in verdicts)


def _includes(conditions: dict[str, Any], others: dict[str, Any]) -> bool:
    """Every test of `others` is in `conditions` with the same values."""
    return all(conditions.get(op, {}).get(key) == value for op, tests in others.items() for key, value in tests.items())


def scoping_problem(declared: dict[str, str] | None, found: Coverage) -> str | None:
    """None when the grant's scoping is what sources.yaml names: anything, when it names no `narrowed`; otherwise
    exactly its actions narrower than upstream's, and nothing broader or different."""
    if declared is None:
        return None
    if sorted(found.narrower) != sorted(declared):
        return f"the grant is narrower than upstream's for {sorted(found.narrower)}, `narrowed` names {sorted(declared)}"
    if found.broader or found.different:
        return f"the grant is broader for {found.broader} and different for {found.different}; `narrowed` allows neither"
    return None


def project_document(component: Component) -> dict[str, Any]:
    """The component's policy as synth writes it: its folder's policy.json filled with realistic values."""
    path = component.policy
    assert path
    document: dict[str, Any] = json.loads(policies.render(path, **{k: SAMPLES[k] for k in policies.placeholders(path)}))
    return document


def rows() -> list[tuple[Component, str, str]]:
    """(component, chart version, app version) of every row of every table with a shared role."""
    return [(c, r.version, r.app_version) for c in WITH_POLICY if c.chart for r in c.chart.releases]


def _entry(component: Component, chart_version: str) -> UpstreamPolicy:
    assert component.identity
    (found,) = [u for u in component.identity.upstream if chart_version in u.releases]
    return found


def actions(document: dict[str, Any]) -> set[str]:
    return {a for s in document["Statement"] if s["Effect"] == "Allow" for a in _listed(s.get("Action", []))}


@pytest.mark.parametrize("component", WITH_POLICY, ids=lambda c: c.name)
def test_every_component_with_a_shared_role_names_where_upstreams_policy_is(component: Component) -> None:
    """Each component the registry gives a chart and a role has its upstream/sources.yaml, which names a GitHub
    repository (owner/name), a file in it and the tags copied from it; and each `identity.upstream` entry of its
    component.yaml cites that same repository and file."""
    found = sources_of(component)
    assert re.fullmatch(r"[\w.-]+/[\w.-]+", found.repository), f"repository {found.repository!r}: owner/name on GitHub"
    assert found.path.strip(), "path: the file of the repository that holds the policy"
    assert not found.path.startswith("/"), f"path {found.path!r}: relative to the repository's root"
    assert found.copies, "copies: the tags copied, each with the commit it named"
    assert component.identity
    assert component.identity.upstream, "identity.upstream: what upstream's policy grants"
    uncited = [
        e.document for e in component.identity.upstream if found.repository not in e.document or found.path not in e.document
    ]
    assert uncited == [], f"cite {found.repository} {found.path}, where {shown(component.folder / UPSTREAM / SOURCES)} says"


def test_only_components_with_a_shared_role_keep_upstream_copies() -> None:
    """A copies folder of a component with no chart or no role (or of no component) is evidence of nothing."""
    with_copies = {p.parent.name for p in REGISTRY.glob(f"*/{UPSTREAM}")}
    assert with_copies <= {c.name for c in WITH_POLICY}


@pytest.mark.parametrize(("component", "chart_version", "app_version"), rows(), ids=lambda v: getattr(v, "name", v))
def test_the_project_policy_allows_every_action_of_upstreams_policy(
    component: Component, chart_version: str, app_version: str
) -> None:
    found = coverage(project_document(component), upstream_document(component, app_version))
    assert found.missing == [], (
        f"{component.name} chart {chart_version} (app {tag(app_version)}): upstream's policy "
        f"({shown(copy_path(component, app_version))}) allows {found.missing}, "
        f"{shown(component.policy) if component.policy else '?'} does not"
    )
    problem = scoping_problem(sources_of(component).narrowed, found)
    assert problem is None, f"{component.name} {tag(app_version)}: {problem} ({shown(component.folder / UPSTREAM / SOURCES)})"
    for kind in ("narrower", "broader", "different"):  # scoped on purpose: reported
        if getattr(found, kind):
            print(f"{component.name} {tag(app_version)}: the project's grant is {kind} for {getattr(found, kind)}")


@pytest.mark.parametrize(("component", "chart_version", "app_version"), rows(), ids=lambda v: getattr(v, "name", v))
def test_the_upstream_facts_of_the_registry_are_those_of_the_copies(
    component: Component, chart_version: str, app_version: str
) -> None:
    """`identity.upstream` (what tests/test_pod_identity_roles.py holds the synthesized role to) lists exactly the
    actions of the committed copy, and its `document` cites the tag, the repository and the path of sources.yaml."""
    entry = _entry(component, chart_version)
    assert entry.action_names() == actions(upstream_document(component, app_version))
    found = sources_of(component)
    assert [cited for cited in (tag(app_version), found.repository, found.path) if cited not in entry.document] == []


@pytest.mark.parametrize("component", WITH_POLICY, ids=lambda c: c.name)
def test_every_copy_is_of_a_table_version_and_cited(component: Component) -> None:
    """Copies of just those documents: none left over from a dropped row, and each listed in sources.yaml with its
    commit (and nothing listed there that is not copied)."""
    assert component.chart
    wanted = {copy_path(component, r.app_version).name for r in component.chart.releases}
    copies = {p.name for p in (component.folder / UPSTREAM).glob("*.json")}
    assert sorted(copies - wanted) == [], "copies of no table version"
    found = sources_of(component)
    assert sorted(f"{t}.json" for t in found.copies) == sorted(copies), (
        f"{shown(component.folder / UPSTREAM / SOURCES)}: `copies`"
    )


@pytest.mark.parametrize(("component", "chart_version", "app_version"), rows(), ids=lambda v: getattr(v, "name", v))
def test_the_check_reports_an_action_upstream_allows_and_the_project_does_not(
    component: Component, chart_version: str, app_version: str
) -> None:
    """The check can fail: the project's own document, without what grants one of upstream's actions, misses it."""
    project = project_document(component)
    upstream = upstream_document(component, app_version)
    assert coverage(project, upstream).missing == []
    victim = sorted(actions(upstream))[0]
    for statement in project["Statement"]:  # every pattern that grants it: its name, or a wildcard
        statement["Action"] = [a for a in _listed(statement["Action"]) if not _allows(a, victim)]
    assert victim in coverage(project, upstream).missing


def test_the_check_honours_wildcards_denials_and_reports_scoping() -> None:
    upstream = {
        "Statement": [
            {"Effect": "Allow", "Action": ["ec2:DescribeVpcs", "ec2:CreateTags"], "Resource": "*"},
            {"Effect": "Deny", "Action": "ec2:DeleteVpc", "Resource": "*"},  # not a grant: not wanted
        ]
    }
    wildcard = {"Statement": [{"Effect": "Allow", "Action": "EC2:describe*", "Resource": "*"}]}
    assert coverage(wildcard, upstream).missing == ["ec2:CreateTags"]
    denied = {
        "Statement": [
            {"Effect": "Allow", "Action": "ec2:*", "Resource": "*"},
            {"Effect": "Deny", "Action": "ec2:CreateTags", "Resource": "*"},
        ]
    }
    assert coverage(denied, upstream).missing == ["ec2:CreateTags"]
    scoped = {
        "Statement": [
            {"Effect": "Allow", "Action": "ec2:DescribeVpcs", "Resource": "*"},
            {"Effect": "Allow", "Action": "ec2:CreateTags", "Resource": "arn:aws:ec2:*:*:security-group/*"},
        ]
    }
    found = coverage(scoped, upstream)
    assert (found.missing, found.narrower, found.broader) == ([], ["ec2:CreateTags"], [])


@pytest.mark.parametrize("component", WITH_POLICY, ids=lambda c: c.name)
def test_a_table_version_without_its_copy_fails_saying_where_to_get_it(component: Component) -> None:
    found = sources_of(component)
    with pytest.raises(pytest.fail.Exception) as failed:
        upstream_document(component, "v99.0.0")
    message = str(failed.value)
    assert message.startswith(
        f"{component.name} v99.0.0 is in the table (argocd/apps/platform/{component.name}/component.yaml) but "
        f"argocd/apps/platform/{component.name}/upstream/v99.0.0.json is missing: copy {found.copied} from "
    )
    assert f"`git show v99.0.0:{found.path}` of https://github.com/{found.repository}" in message
    assert f"under `copies` in argocd/apps/platform/{component.name}/upstream/sources.yaml" in message


def test_a_new_component_without_its_sources_fails_saying_what_to_write(tmp_path: Path) -> None:
    """A component added with a chart and a role, and no upstream/ yet: its first row fails, naming the file to write."""
    folder = tmp_path / "cert-manager"
    folder.mkdir()
    entry = {
        "name": "cert-manager",
        "title": "cert-manager",
        "namespace": "cert-manager",
        "chart": {
            "repository": "https://charts.jetstack.io",
            "default": "v1.19.1",
            "releases": [{"version": "v1.19.1", "appVersion": "v1.19.1", "kubernetes": ["1.35"], "evidence": "-"}],
        },
        "identity": {"serviceAccount": "cert-manager", "policy": "policy.json", "description": "-"},
    }
    (folder / "component.yaml").write_text(yaml.safe_dump(entry))
    (component,) = load(tmp_path)
    with pytest.raises(pytest.fail.Exception) as failed:
        upstream_document(component, "v1.19.1")
    assert f"{folder / UPSTREAM / 'v1.19.1.json'} is missing" in str(failed.value)
    assert f"and write {folder / UPSTREAM / SOURCES}: its repository, path, how it is copied" in str(failed.value)


def test_a_named_narrowing_is_checked_both_ways() -> None:
    """The load balancer controller names its narrowings (its targets: issue #45). Upstream's own statement back in
    place narrows nothing named, and a scoping of another action is not named: each fails."""
    (lbc,) = [c for c in WITH_POLICY if c.name == "aws-load-balancer-controller"]
    declared = sources_of(lbc).narrowed
    assert declared
    upstream = upstream_document(lbc, "v3.5.0")
    project = project_document(lbc)
    assert scoping_problem(declared, coverage(project, upstream)) is None
    targets = {"elasticloadbalancing:RegisterTargets", "elasticloadbalancing:DeregisterTargets"}
    (theirs,) = [s for s in upstream["Statement"] if set(_listed(s["Action"])) == targets]
    unscoped = [s for s in project["Statement"] if set(_listed(s["Action"])) != targets] + [theirs]
    widened = coverage({"Statement": unscoped}, upstream)
    assert scoping_problem(declared, widened) == (
        f"the grant is narrower than upstream's for [], `narrowed` names {sorted(declared)}"
    )
    health = "elasticloadbalancing:DescribeTargetHealth"
    for statement in project["Statement"]:
        if health in _listed(statement["Action"]):
            statement["Action"] = [a for a in _listed(statement["Action"]) if a != health]
    project["Statement"].append(
        {"Effect": "Allow", "Action": health, "Resource": "arn:aws:elasticloadbalancing:*:*:targetgroup/eks-bg-*/*"}
    )
    assert health in (scoping_problem(declared, coverage(project, upstream)) or "")
