"""Each shared role's policy grants every action upstream's own IAM policy allows, for every version of the table.

The evidence is committed: policies/upstream/ holds upstream's policy document of each app version the compatibility
table (`chart.releases` of the component's component.yaml) names, copied as published (policies/upstream/README.md
names repository, tag, commit and path of each). A row added to the table without its copy fails here, saying where
to read it. The project's document, filled the way synth fills it, must allow each action an upstream Allow
statement names; its resources and conditions may be narrower on purpose (ExternalDNS: the sub-zone only), which is
reported, not failed. The action facts of `identity.upstream` must be those of the copies.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import policies
from model.platform import COMPONENTS, Component, UpstreamPolicy
from tests.test_policies import SAMPLES

UPSTREAM_DIR = Path(policies.__file__).parent / "upstream"
README = UPSTREAM_DIR / "README.md"
# Where each component's upstream policy is published: (repository, file at the tag, how the copy is made).
SOURCES = {
    "aws-load-balancer-controller": (
        "kubernetes-sigs/aws-load-balancer-controller",
        "docs/install/iam_policy.json",
        "the file as is",
    ),
    "external-dns": (
        "kubernetes-sigs/external-dns",
        "docs/tutorials/aws.md",
        'the JSON block of its "IAM Policy" section, as is',
    ),
}
WITH_POLICY = [c for c in COMPONENTS if c.identity and c.chart]


def tag(app_version: str) -> str:
    """Upstream's Git tag of an app version: `v3.5.0` stays, `0.21.0` (ExternalDNS's appVersion) becomes `v0.21.0`."""
    return app_version if app_version.startswith("v") else f"v{app_version}"


def copy_path(component: Component, app_version: str) -> Path:
    return UPSTREAM_DIR / f"{component.name}-{tag(app_version)}.json"


def upstream_document(component: Component, app_version: str) -> dict[str, Any]:
    """The committed copy of upstream's policy for one app version; a missing one fails, saying where to get it."""
    path = copy_path(component, app_version)
    if not path.exists():
        repository, source, how = SOURCES.get(component.name, ("<its upstream repository>", "<its IAM policy>", "it"))
        pytest.fail(
            f"{component.name} {tag(app_version)} is in the table (argocd/apps/platform/{component.name}/component.yaml) "
            f"but policies/upstream/{path.name} is missing: copy {how} from `git show {tag(app_version)}:{source}` of "
            f"https://github.com/{repository}, and name its repository, tag, commit and path in policies/upstream/README.md"
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


def test_the_components_with_a_shared_role_are_the_ones_with_a_known_upstream_policy() -> None:
    assert sorted(c.name for c in WITH_POLICY) == sorted(SOURCES)


@pytest.mark.parametrize(("component", "chart_version", "app_version"), rows(), ids=lambda v: getattr(v, "name", v))
def test_the_project_policy_allows_every_action_of_upstreams_policy(
    component: Component, chart_version: str, app_version: str
) -> None:
    found = coverage(project_document(component), upstream_document(component, app_version))
    assert found.missing == [], (
        f"{component.name} chart {chart_version} (app {tag(app_version)}): upstream's policy "
        f"(policies/upstream/{copy_path(component, app_version).name}) allows {found.missing}, "
        f"argocd/apps/platform/{component.name}/{component.identity.policy if component.identity else '?'} does not"
    )
    for kind in ("narrower", "broader", "different"):  # scoped on purpose: reported, never failed
        if getattr(found, kind):
            print(f"{component.name} {tag(app_version)}: the project's grant is {kind} for {getattr(found, kind)}")


@pytest.mark.parametrize(("component", "chart_version", "app_version"), rows(), ids=lambda v: getattr(v, "name", v))
def test_the_upstream_facts_of_the_registry_are_those_of_the_copies(
    component: Component, chart_version: str, app_version: str
) -> None:
    """`identity.upstream` (what tests/test_pod_identity_roles.py holds the synthesized role to) lists exactly the
    actions of the committed copy, and its `document` cites the tag."""
    entry = _entry(component, chart_version)
    assert entry.action_names() == actions(upstream_document(component, app_version))
    assert tag(app_version) in entry.document


def test_every_copy_is_of_a_table_version_and_cited() -> None:
    """Copies of just those documents: none left over from a dropped row, and each named in the folder's README."""
    wanted = {copy_path(c, app_version).name for c, _, app_version in rows()}
    copies = {p.name for p in UPSTREAM_DIR.glob("*.json")}
    assert copies <= wanted, f"copies of no table version: {sorted(copies - wanted)}"
    readme = README.read_text()
    assert [name for name in sorted(copies) if f"`{name}`" not in readme] == []


def test_the_check_reports_an_action_upstream_allows_and_the_project_does_not() -> None:
    """The check can fail: the project's own document, one action short, misses exactly that action."""
    (component,) = [c for c in WITH_POLICY if c.name == "external-dns"]
    project = project_document(component)
    upstream = upstream_document(component, "0.21.0")
    for statement in project["Statement"]:
        statement["Action"] = [a for a in _listed(statement["Action"]) if a != "route53:ListTagsForResources"]
    assert coverage(project, upstream).missing == ["route53:ListTagsForResources"]


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


def test_a_table_version_without_its_copy_fails_saying_where_to_get_it() -> None:
    (component,) = [c for c in WITH_POLICY if c.name == "aws-load-balancer-controller"]
    with pytest.raises(pytest.fail.Exception) as failed:
        upstream_document(component, "v99.0.0")
    message = str(failed.value)
    assert "aws-load-balancer-controller v99.0.0" in message
    assert (
        "`git show v99.0.0:docs/install/iam_policy.json` of https://github.com/kubernetes-sigs/aws-load-balancer-controller"
        in (message)
    )
