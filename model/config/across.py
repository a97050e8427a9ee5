"""Rules whose problem is a combination of sections, not one section's setting: each repository against every
credential (gitops x applications), every host of every application in every colour against the others' (applications
x clusters), a colour's entry against the applications (clusters x applications), and the shared load balancer's
quotas (applications x clusters x traffic.preview_cidrs)."""

from typing import TYPE_CHECKING

from model.config.applications import Application, applications
from model.config.checks import check, is_network
from model.config.fields import COLOUR
from model.preview_access import SOURCE_IPS_PER_RULE, networks_key, preview_networks, source_groups
from model.problems import Problems

if TYPE_CHECKING:
    from model.config.project import Config


# AWS's default quotas of an Application Load Balancer (Elastic Load Balancing, "Quotas for your Application Load
# Balancers"): rules per load balancer not counting the default rules (target groups per load balancer is 100 too),
# and target groups per action (a weighted forward).
ALB_RULES = 100
FORWARD_TARGET_GROUPS = 5


def credential_rules(c: "Config", p: Problems) -> None:
    """Each repository Argo CD clones (this project's and each application's own) is opened by at most one credential:
    Argo CD would take the longest matching prefix, and which secret opens a repository should not depend on that."""
    repositories = {"gitops.repo_url": c.gitops.repo_url}
    repositories.update(
        {
            f"applications.{app.name}.source.repo_url": app.config.source.repo_url
            for app in applications(c)
            if app.config.source.repo_url is not None
        }
    )
    for key, url in repositories.items():
        matching = [
            name for name, credential in sorted(c.gitops.credentials.items()) if credential.url and url.startswith(credential.url)
        ]
        check(
            p,
            f"gitops.credentials.{matching[-1]}.url" if matching else key,
            c.gitops.credentials[matching[-1]].url if matching else url,
            len(matching) <= 1,
            f"{key} ({url}) is matched by {len(matching)} credentials ({', '.join(matching)}): give each repository at "
            "most one, by narrowing a credential's URL prefix",
        )


def shared_host_rules(c: "Config", p: Problems, apps: tuple[Application, ...]) -> None:
    """Every host is one listener rule and one record of the shared load balancer: a public host that is another
    application's preview host, or two applications' preview hosts in two colours that spell the same name
    (`shop` in `rebuild-green`, `shop-rebuild` in `green`), would be answered twice."""
    colours = [colour for colour in c.clusters if COLOUR.match(colour)]
    for index, app in enumerate(apps):
        for other_index, other in enumerate(apps):
            if not app.config.host or not other.config.host or other is app:
                continue
            for colour in colours:
                check(
                    p,
                    f"applications.{app.name}.host",
                    app.config.host,
                    f"{other.config.host}-{colour}" != app.config.host,
                    f"it is applications.{other.name}'s preview host in colour {colour} ({other.config.host}-{colour}); "
                    "choose another label",
                )
                for own in colours:  # reported once, on the later of the two
                    check(
                        p,
                        f"applications.{app.name}.host",
                        app.config.host,
                        other_index > index or own == colour or f"{app.config.host}-{own}" != f"{other.config.host}-{colour}",
                        f"its preview host in colour {own} ({app.config.host}-{own}) is applications.{other.name}'s preview host "
                        f"in colour {colour}; choose another label",
                    )


def colour_entry_rules(c: "Config", p: Problems) -> None:
    """A colour's entry names applications of `applications` only: a misspelt or removed one would be ignored."""
    configured = ", ".join(c.applications) or "none"
    for colour, cluster in c.clusters.items():
        for name, entry in cluster.applications.items():
            check(
                p,
                f"clusters.{colour}.applications.{name}",
                entry.model_dump(exclude_none=True),
                name in c.applications,
                f"no application {name} in applications (configured: {configured}); name one of them, or remove the entry",
            )


def load_balancer_limits(c: "Config", p: Problems) -> None:
    """Every host of every colour is a listener rule of the one shared load balancer, every application in every colour
    a target group, and a weighted forward holds one target group per colour: AWS's default quotas bound them. The
    target groups (applications x colours) are always fewer than the rules (applications x (1 + colours)) and their
    quota is the same, so the rules' check bounds both. Without applications there is no rule and no forward. A
    preview host takes a rule per SOURCE_IPS_PER_RULE of its networks (model/preview_access.py)."""
    apps, colours = len(c.applications), len(c.clusters)
    networks = preview_networks(c)
    per_preview = max(1, len(source_groups(networks))) if all(map(is_network, networks)) else 1
    rules = apps * (1 + colours * per_preview)
    check(
        p,
        "applications",
        f"{apps} applications, {colours} colours",
        rules <= ALB_RULES,
        f"they need {rules} listener rules (a public host per application, and per application and colour a preview "
        f"host: {per_preview} rule(s), {SOURCE_IPS_PER_RULE} networks of {networks_key(c)} a rule) on the shared load "
        f"balancer, which allows {ALB_RULES} (AWS's default quota 'Rules per Application Load Balancer'): split the "
        "applications between projects, run fewer colours at once, or name fewer preview networks",
    )
    check(
        p,
        "clusters",
        list(c.clusters),
        colours <= FORWARD_TARGET_GROUPS or not apps,
        f"a weighted forward holds at most {FORWARD_TARGET_GROUPS} target groups, one per colour (AWS quota 'Target groups "
        "per action'): retire a colour first",
    )
