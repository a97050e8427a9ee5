"""A colour is a whole platform release: the `platform` section (the chart versions of the project's release, one
setting per versioned component of the registry, model/platform.py) and each colour's own overrides, resolved into
what the colour runs; the rules that a colour's charts work with its Kubernetes version and that a serving colour
names its whole release; the warnings about a serving colour that a push can change."""

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import Field, create_model

from model.config.applications import applications
from model.config.checks import MOVING, check
from model.config.fields import Section, Shown
from model.platform import ARGOCD_NAMESPACE, PARENT_APPLICATION, VERSIONED, Component
from model.problems import Allowed, Problems
from model.revisions import FULL_SHA, FollowedRevision, RevisionKind, followed_revision

if TYPE_CHECKING:
    from model.config.project import Config


def _chart_versions(component: Component) -> Any:
    """The versions of one chart this project supports (its component.yaml), as the type of its setting."""
    return Annotated[
        Literal[component.versions()],
        Allowed(
            f"use a version of the {component.name} chart from the compatibility table "
            f"(argocd/apps/platform/{component.name}/component.yaml): " + ", ".join(component.versions())
        ),
    ]


def _known(component: Component) -> str:
    listed = ", ".join(f"`{v}`" for v in component.versions())
    return f"one of {listed} (compatibility table: argocd/apps/platform/{component.name}/component.yaml)"


def _installer(component: Component) -> str:
    if component.self_managed:
        return f"bootstrapped by Terraform, then managed by Argo CD itself (wave {component.wave})"
    return "installed by Terraform" if component.wave is None else f"installed by Argo CD (wave {component.wave})"


class PlatformBase(Section):
    """A platform release: the versions of the charts that run on a colour's cluster."""

    def version(self, component: Component) -> str:
        return str(getattr(self, component.key))


class ColourPlatformBase(Section):
    """Any of `platform`'s keys, for one colour only: the release that colour rehearses or keeps."""


# One setting per versioned component of the registry (model/platform.py): a new component is a new key.
if TYPE_CHECKING:
    PlatformConfig: TypeAlias = PlatformBase
    ColourPlatformConfig: TypeAlias = ColourPlatformBase
else:
    PlatformConfig = create_model(
        "PlatformConfig",
        __base__=PlatformBase,
        __doc__=PlatformBase.__doc__,
        **{
            c.key: (
                Annotated[
                    _chart_versions(c),
                    Field(description=f"the `{c.name}` chart: {c.title}, {_installer(c)}; " + _known(c)),
                ],
                c.chart.default,
            )
            for c in VERSIONED
        },
    )
    ColourPlatformConfig = create_model(
        "ColourPlatformConfig",
        __base__=ColourPlatformBase,
        __doc__=ColourPlatformBase.__doc__,
        **{
            c.key: (
                Annotated[
                    _chart_versions(c) | None,
                    Field(description=f"this colour's `{c.name}` chart"),
                    Shown(f"`platform.{c.key}`"),
                ],
                None,
            )
            for c in VERSIONED
        },
    )


@dataclass(frozen=True)
class ApplicationRelease:
    """One application as a colour runs it, resolved: the colour's own choices, else the application's defaults."""

    revision: str | None  # None: from another repository, and neither the colour nor the application names one
    image_tag: str | None  # None: the application has no image of ours (`image` unset)


@dataclass(frozen=True)
class ColourRelease:
    """A colour's platform release, resolved: every value set, whether by the colour or by the project."""

    platform: PlatformConfig
    gitops_revision: str
    applications: Mapping[str, ApplicationRelease]


def platform_rules(c: "Config", p: Problems, colour: str) -> None:
    """Each chart a colour runs must be known to work with the colour's Kubernetes version (the compatibility
    rows of its component, argocd/apps/platform/<name>/component.yaml)."""
    kubernetes = c.clusters[colour].kubernetes_version
    if p.is_bad(f"clusters.{colour}.kubernetes_version"):
        return  # judged against a version that is itself refused: nothing to say
    release = c.release(colour)
    for component in VERSIONED:
        key, top = f"clusters.{colour}.platform.{component.key}", f"platform.{component.key}"
        version = release.platform.version(component)
        known = component.known_kubernetes(version)
        if p.is_bad(key) or p.is_bad(top) or kubernetes in known:
            continue
        inherited = "" if getattr(c.clusters[colour].platform, component.key) is not None else f" (from {top})"
        working = component.working_versions(kubernetes)
        fix = f"use {' or '.join(working)}" if working else f"no {component.name} chart in the table is"
        check(
            p,
            key,
            version,
            False,
            f"{colour} runs Kubernetes {kubernetes}, and the {component.name} chart {version}{inherited} is known to work "
            f"with {', '.join(known)} only; {fix}"
            + ("" if working else f" known to work with {kubernetes}")
            + f" (compatibility table: argocd/apps/platform/{component.name}/component.yaml)",
        )


def serving_release_rules(c: "Config", p: Problems, colour: str) -> None:
    """Beside another colour, a colour with weight names every part of its release in its own entry: what it runs
    then changes only by an edit that names it, never because a project default moved while it serves."""
    cluster = c.clusters[colour]
    if len(c.clusters) < 2 or cluster.weight == 0 or p.is_bad(f"clusters.{colour}.weight"):
        return
    release = c.release(colour)
    inherited: dict[str, str] = {
        f"platform.{component.key}": release.platform.version(component)
        for component in VERSIONED
        if getattr(cluster.platform, component.key) is None
    }
    if cluster.gitops_revision is None:
        inherited["gitops_revision"] = release.gitops_revision
    for app in applications(c):
        own, resolved = cluster.applications.get(app.name), release.applications[app.name]
        if not app.from_this_repository and (own is None or own.revision is None):
            inherited[f"applications.{app.name}.revision"] = resolved.revision or "(none)"
        if app.config.image is not None and (own is None or own.image_tag is None):
            inherited[f"applications.{app.name}.image_tag"] = resolved.image_tag or ""
    check(
        p,
        f"clusters.{colour}",
        inherited,
        not inherited,
        f"{colour} serves traffic (weight {cluster.weight}) beside another colour, so its entry names its whole release "
        f"and nothing but an edit of clusters.{colour} changes what it runs; these keys would be inherited from the "
        f"project (with the values shown). Read what {colour} runs now (its state: `terraform "
        f"-chdir=cdktf.out/stacks/{colour} show`, or `cdktf diff {colour}` once pinned: no change means the pins are "
        f"right) and set each under clusters.{colour}",
    )


def revision_warnings(config: "Config", project: Path) -> list[str]:
    """Each colour with weight that follows a branch of this repository (or a name this clone cannot tell is a tag or
    a commit), and each application of another repository it runs at a revision that may move. A colour at weight 0
    may follow a branch: that is how the colour being built rehearses."""
    warnings = []
    for colour, cluster in config.clusters.items():
        if cluster.weight == 0:
            continue
        followed = followed_revision(config, colour, project=project)
        if not followed.kind.immutable:
            warnings.append(_moving_warning(config, followed))
        warnings += _other_repository_warnings(config, colour)
    return warnings


def _moving_warning(config: "Config", followed: FollowedRevision) -> str:
    colour, revision = followed.colour, followed.revision
    weight = config.clusters[colour].weight
    others = [c for c in config.clusters if c != colour and config.release(c).gitops_revision == revision]
    together = (
        f"{colour} and {', '.join(others)} together, which blue/green exists to prevent"
        if others
        else f"{colour} at once, and every colour later built on it"
    )
    if followed.kind is RevisionKind.BRANCH:
        what = f"is a branch, and {colour} serves traffic (weight {weight}): one push to {revision} reaches {together}"
    else:
        what = (
            f"is no branch, tag or commit this clone knows (a tag not fetched: `git fetch --tags origin`), so synth cannot "
            f"tell that it never moves, and {colour} serves traffic (weight {weight}): if it is a branch, one push to it "
            f"reaches {together}"
        )
    return f"{MOVING}{followed.key} {revision!r} {what}. {pin_advice(colour)}"


def pin_advice(colour: str) -> str:
    """How a colour gets a revision that never moves (the shift's refusal says the same)."""
    running = f"kubectl -n {ARGOCD_NAMESPACE} get application {PARENT_APPLICATION} -o jsonpath='{{.status.sync.revision}}'"
    return (
        f"Tag the commit {colour} runs (`{running}` on {colour}'s cluster): `git tag release-<date> <commit> && git push "
        f'origin release-<date>`, and set clusters.{colour}.gitops_revision to "release-<date>" (docs/upgrade-runbook.md, '
        '"Pin the serving colour")'
    )


def _other_repository_warnings(config: "Config", colour: str) -> list[str]:
    """Another repository's revision cannot be looked up offline: only a full commit SHA is known never to move."""
    warnings = []
    own = config.clusters[colour].applications
    for app in applications(config):
        revision = config.release(colour).applications[app.name].revision
        if app.from_this_repository or revision is None or FULL_SHA.match(revision):
            continue
        entry = own.get(app.name)
        key = (
            f"clusters.{colour}.applications.{app.name}.revision"
            if entry is not None and entry.revision is not None
            else f"applications.{app.name}.source.revision"
        )
        warnings.append(
            f"{key} {revision!r} is a revision of {app.config.source.repo_url}, which synth cannot look into: if it is a "
            f"branch, one push there reaches {colour} while it serves (weight {config.clusters[colour].weight}). Name a tag that "
            "repository never moves, or a full 40-character commit SHA (which silences this)"
        )
    return warnings
