"""The rules of the `applications` section (model/config/applications.py holds its settings): each application
against the others, the platform's names and namespaces, and the colours that run it; and the warning about an image
tag no build pushed."""

import re
from typing import TYPE_CHECKING

from model.argocd_access import RESERVED_PROJECTS
from model.config.applications import (
    APPLICATION_PATTERN,
    APPLICATION_POLICY_VALUES,
    BLUE_GREEN,
    DEFAULT_IMAGE_TAG,
    Application,
    applications,
    image_repository_name,
    preview_hostname,
    public_hostname,
)
from model.config.checks import check
from model.config.fields import COLOUR
from model.config.gitops import PLACEHOLDER_REPO_URL
from model.paths import PROJECT_DIR
from model.platform import COMPONENTS, PARENT_APPLICATION
from model.policy_shape import policy_problem
from model.problems import Problems
from model.routes import TRAFFIC_CONSTRUCT_IDS
from model.workloads import ADDON_ROLES

if TYPE_CHECKING:
    from model.config.project import Config


# Names the App of Apps, common's roles and the traffic stack's own parts already use: an application by one of these
# would collide with them.
_RESERVED_APPLICATIONS = frozenset(
    {PARENT_APPLICATION, *(r.name for r in ADDON_ROLES), *(c.name for c in COMPONENTS), *TRAFFIC_CONSTRUCT_IDS}
)
_APPLICATION_RULE = (
    "an application's name is a DNS label of at most 32 characters (lowercase letters, digits, '-', starting with a "
    f"letter), not one of the platform's: {', '.join(sorted(_RESERVED_APPLICATIONS))}"
)
_APPLICATION = re.compile(APPLICATION_PATTERN)


def application_rules(c: "Config", p: Problems) -> None:
    """Each application's own settings against the others', the platform's and the colours'."""
    apps = applications(c)
    hosts: dict[str, str] = {}
    bindings: dict[tuple[str, str], str] = {}
    for app in apps:
        key = f"applications.{app.name}"
        named = bool(_APPLICATION.match(app.name)) and app.name not in _RESERVED_APPLICATIONS
        check(p, key, app.name, named, _APPLICATION_RULE)
        check(
            p,
            f"{key}.host",
            app.config.host,
            bool(app.config.host),
            "every application needs a host: one DNS label, e.g. 'orders'",
        )
        check(
            p,
            f"{key}.source.path",
            app.config.source.path,
            bool(app.config.source.path),
            "name the directory of its Helm chart in its repository",
        )
        if app.config.host:
            if app.config.host in hosts:
                check(
                    p,
                    f"{key}.host",
                    app.config.host,
                    False,
                    f"applications.{hosts[app.config.host]} answers at this host already",
                )
            hosts.setdefault(app.config.host, app.name)
            _host_rules(c, p, key, app)
        _namespace_rules(p, key, app, bindings)
        if app.config.policy:
            problem = policy_problem(PROJECT_DIR / app.config.policy, APPLICATION_POLICY_VALUES)
            check(
                p, f"{key}.policy", app.config.policy, problem is None, f"{problem}; name an IAM policy document in the project"
            )
        _source_rules(c, p, key, app)
        _probe_rules(p, key, app)
        check(
            p,
            f"{key}.group",
            app.config.group,
            app.config.group not in RESERVED_PROJECTS,
            f"{app.config.group} is an Argo CD project of the platform's ({', '.join(RESERVED_PROJECTS)}): name another group",
        )
        check(
            p,
            f"{key}.values.{BLUE_GREEN}",
            app.config.values.get(BLUE_GREEN),
            BLUE_GREEN not in app.config.values,
            "the platform writes this key (the colour's facts about the application: model/values.py) and would "
            "replace it; read it in the chart, or name your own values otherwise",
        )
        if app.config.image is not None and app.config.image.repository:
            check(
                p,
                f"{key}.image.repository",
                app.config.image.repository,
                app.config.image.repository.startswith(f"{c.project}/"),
                f"name it under {c.project}/ (the deployer may manage only the project's repositories), e.g. "
                f"'{c.project}/{app.name}'",
            )
            _repository_rules(c, p, key, app, apps)


def _repository_rules(c: "Config", p: Problems, key: str, app: Application, apps: tuple[Application, ...]) -> None:
    """Common makes one ECR repository per application with an image: two of the same name would fail the deploy."""
    name = image_repository_name(c, app)
    for other in apps:
        if other is not app and other.config.image is not None and image_repository_name(c, other) == name:
            check(
                p,
                f"{key}.image.repository",
                name,
                False,
                f"applications.{other.name}'s image repository is {name} already: give each application its own",
            )


def _host_rules(c: "Config", p: Problems, key: str, app: Application) -> None:
    public = public_hostname(c, app)
    check(p, f"{key}.host", app.config.host, len(public) <= 253, f"{public} is longer than a DNS name may be (253)")
    for colour in c.clusters:
        if not COLOUR.match(colour):
            continue  # the colour's own problem says why
        preview = preview_hostname(c, app, colour)
        check(
            p,
            f"{key}.host",
            app.config.host,
            len(preview.split(".", 1)[0]) <= 63 and len(preview) <= 253,
            f"colour {colour}'s preview host {preview} needs `<host>-<colour>` within one DNS label (63 characters) "
            "and the name within 253: shorten the host or the colour",
        )


def _namespace_rules(p: Problems, key: str, app: Application, bindings: dict[tuple[str, str], str]) -> None:
    platform = _platform_namespaces()
    check(
        p,
        f"{key}.namespace",
        app.namespace,
        app.namespace not in platform,
        f"{app.namespace} is the platform's ({platform.get(app.namespace, '')}): give the application a namespace of its own",
    )
    # One Pod Identity association per service account and cluster, and a role pinned to one (namespace, service
    # account): two applications sharing both would share each other's AWS permissions. Sharing a namespace with
    # different service accounts is fine: each role stays pinned to its own.
    binding = (app.namespace, app.service_account)
    if binding in bindings:
        check(
            p,
            f"{key}.service_account",
            app.service_account,
            False,
            f"applications.{bindings[binding]} runs as {app.namespace}/{app.service_account} already: two applications "
            "sharing a service account would share their AWS permissions; give this one its own",
        )
    bindings.setdefault(binding, app.name)


def _platform_namespaces() -> dict[str, str]:
    """Namespaces the platform runs in, and whose: no application may share them."""
    found = {namespace: "Kubernetes'" for namespace in ("kube-system", "kube-public", "kube-node-lease", "default")}
    for component in COMPONENTS:
        found.setdefault(component.namespace, f"{component.name}'s")  # kube-system stays Kubernetes'
    return found


def _source_rules(c: "Config", p: Problems, key: str, app: Application) -> None:
    for colour, cluster in c.clusters.items():
        own = cluster.applications.get(app.name)
        if own is None:
            continue
        if app.from_this_repository and own.revision is not None:
            check(
                p,
                f"clusters.{colour}.applications.{app.name}.revision",
                own.revision,
                False,
                f"{app.name} comes from this repository, so {colour} runs it at clusters.{colour}.gitops_revision",
            )
        if app.config.image is None and own.image_tag is not None:
            check(
                p,
                f"clusters.{colour}.applications.{app.name}.image_tag",
                own.image_tag,
                False,
                f"applications.{app.name} has no image of the project's (set applications.{app.name}.image)",
            )
    if app.from_this_repository and app.config.source.revision is not None:
        check(
            p,
            f"{key}.source.revision",
            app.config.source.revision,
            False,
            "an application of this repository runs at each colour's gitops_revision",
        )
    if not app.from_this_repository:
        for colour, cluster in c.clusters.items():
            # A colour serving beside another names it in its own entry (serving_release_rules says so); any other
            # colour runs what its entry or the application names, so one of the two must.
            serving_beside = cluster.weight > 0 and len(c.clusters) > 1
            if c.release(colour).applications[app.name].revision is None and not serving_beside:
                check(
                    p,
                    f"clusters.{colour}.applications.{app.name}.revision",
                    None,
                    False,
                    f"{app.name} comes from {app.config.source.repo_url}: name the revision {colour} runs, here or as "
                    f"applications.{app.name}.source.revision",
                )
    if app.config.image is not None and app.config.image.buildspec and c.image.build_connection_arn:
        repo = app.config.source.repo_url or c.gitops.repo_url
        usable = repo.startswith("https://") and repo != PLACEHOLDER_REPO_URL
        source = f"applications.{app.name}.source.repo_url" if app.config.source.repo_url else "gitops.repo_url"
        check(p, source, repo, usable, f"the image build of {app.name} clones it: set it to the https:// URL of its repository")


def _probe_rules(p: Problems, key: str, app: Application) -> None:
    allowed = {"colour"} | ({"image_tag"} if app.config.image is not None else set())
    for field, wanted in app.config.probe.expect_json.items():
        used = set(re.findall(r"\{([^{}]*)\}", wanted))
        check(
            p,
            f"{key}.probe.expect_json.{field}",
            wanted,
            used <= allowed,
            f"placeholders are {', '.join('{' + name + '}' for name in sorted(allowed))}"
            + ("" if app.config.image is not None else " ({image_tag} needs an image)"),
        )


def image_tag_warnings(config: "Config") -> list[str]:
    """Each application with an image whose colours run the default tag, which no build pushed."""
    warnings = []
    for app in applications(config):
        defaults = [c for c in config.clusters if config.release(c).applications[app.name].image_tag == DEFAULT_IMAGE_TAG]
        if defaults:
            warnings.append(
                f"applications.{app.name}.image.tag is the default {DEFAULT_IMAGE_TAG!r} ({', '.join(defaults)} run it): "
                f"build and push its image (docs/applications.md) and set applications.{app.name}.image.tag (or "
                f"clusters.<colour>.applications.{app.name}.image_tag) to the tag the build prints"
            )
    return warnings
