"""The config's rules that relate settings to each other or to derived names (the models in
model/config.py hold each setting's own type, range, choice and pattern). Each rule adds a problem
naming the key, the bad value and what is allowed; a key that already failed is not reported again.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import ipaddress
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from model.applications import Application, applications, image_repository_name, preview_hostname, public_hostname
from model.argocd_access import RESERVED_PROJECTS
from model.config import (
    APPLICATION_PATTERN,
    COLOUR_PATTERN,
    COMMON_STACK,
    CREDENTIAL_PATTERN,
    DEFAULT_IMAGE_TAG,
    MIN_SUBNET_PREFIX,
    PLACEHOLDER_API_NETWORK,
    PLACEHOLDER_REPO_URL,
    REGION_ALLOWED,
    REGION_PATTERN,
    SSO_FIELDS,
    SUPPORTED_KUBERNETES_VERSIONS,
    Config,
    EksConfig,
    NodeGroupConfig,
    split_bits,
)
from model.eks_addons import MINIMUM_VERSIONS, minimum_reason, oldest
from model.eks_calendar import CALENDAR, CALENDAR_NAME, WARN_DAYS
from model.paths import PROJECT_DIR
from model.platform import ARGOCD_NAMESPACE, COMPONENTS, PARENT_APPLICATION, VERSIONED
from model.policy_shape import policy_problem
from model.preview_access import FALLBACK_KEY, KEY, SOURCE_IPS_PER_RULE, networks_key, preview_networks, source_groups
from model.problems import Problems
from model.revisions import FULL_SHA, FollowedRevision, RevisionKind, followed_revision
from model.routes import TRAFFIC_CONSTRUCT_IDS, TRAFFIC_STACK
from model.values import BLUE_GREEN
from model.workloads import ADDON_ROLES

_COLOUR = re.compile(COLOUR_PATTERN)
_VERSION = re.compile(r"^1\.\d{2}$")
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_REGION = re.compile(REGION_PATTERN)
_APPLICATION = re.compile(APPLICATION_PATTERN)
_CREDENTIAL = re.compile(CREDENTIAL_PATTERN)
_CREDENTIAL_RULE = (
    "a credential's name is a DNS label of at most 40 characters (lowercase letters, digits, '-', starting with a letter): "
    "its Secret in argocd is repo-creds-<name>"
)
# Names the App of Apps, common's roles and the traffic stack's own parts already use: an application by one of these
# would collide with them.
_RESERVED_APPLICATIONS = frozenset(
    {PARENT_APPLICATION, *(r.name for r in ADDON_ROLES), *(c.name for c in COMPONENTS), *TRAFFIC_CONSTRUCT_IDS}
)
_APPLICATION_RULE = (
    "an application's name is a DNS label of at most 32 characters (lowercase letters, digits, '-', starting with a "
    f"letter), not one of the platform's: {', '.join(sorted(_RESERVED_APPLICATIONS))}"
)
# What synth fills in an application's policy document (stacks/common.py).
APPLICATION_POLICY_VALUES = frozenset({"TABLE_ARN", "PARTITION", "REGION", "ACCOUNT_ID"})
# AWS's default quotas of an Application Load Balancer (Elastic Load Balancing, "Quotas for your Application Load
# Balancers"): rules per load balancer not counting the default rules (target groups per load balancer is 100 too),
# and target groups per action (a weighted forward).
ALB_RULES = 100
FORWARD_TARGET_GROUPS = 5
_COLOUR_RULE = (
    "a colour is a stack name and DNS label: 1-20 lowercase letters, digits or '-', starting with a letter, not "
    f"'{COMMON_STACK}' or '{TRAFFIC_STACK}'"
)


def check_all(config: Config, problems: Problems) -> None:
    for rule in RULES:
        rule(config, problems)


def _check(problems: Problems, key: str, value: Any, ok: bool, allowed: str) -> None:
    if not ok and not problems.is_bad(key):
        problems.add(key, value, allowed)


def _check_each(problems: Problems, key: str, items: tuple[str, ...], ok: Callable[[str], bool], allowed: str) -> None:
    """One problem per bad item of a list, each named by its index: `key[i]`."""
    for i, item in enumerate(items):
        _check(problems, f"{key}[{i}]", item, ok(item), allowed)


def _credential_rules(c: Config, p: Problems) -> None:
    """Each repository Argo CD clones (this project's and each application's own) is opened by at most one credential:
    Argo CD would take the longest matching prefix, and which secret opens a repository should not depend on that."""
    for name, credential in c.gitops.credentials.items():
        key = f"gitops.credentials.{name}"
        _check(p, key, name, bool(_CREDENTIAL.match(name)), _CREDENTIAL_RULE)
        _check(p, f"{key}.url", credential.url, bool(credential.url), "name the URL prefix of the repositories it opens")
        _check(p, f"{key}.secret", credential.secret, bool(credential.secret), "name its AWS Secrets Manager secret")
    repositories = {"gitops.repo_url": c.gitops.repo_url}
    repositories.update(
        {f"applications.{app.name}.source.repo_url": app.repo_url for app in applications(c) if app.repo_url is not None}
    )
    for key, url in repositories.items():
        matching = [
            name for name, credential in sorted(c.gitops.credentials.items()) if credential.url and url.startswith(credential.url)
        ]
        _check(
            p,
            f"gitops.credentials.{matching[-1]}.url" if matching else key,
            c.gitops.credentials[matching[-1]].url if matching else url,
            len(matching) <= 1,
            f"{key} ({url}) is matched by {len(matching)} credentials ({', '.join(matching)}): give each repository at "
            "most one, by narrowing a credential's URL prefix",
        )


def _network_rules(c: Config, p: Problems) -> None:
    n = c.network
    try:
        vpc = ipaddress.IPv4Network(n.cidr)
    except ValueError as err:
        _check(p, "network.cidr", n.cidr, False, f"use an IPv4 network such as '10.0.0.0/16' ({err})")
        return
    _check(p, "network.cidr", n.cidr, 16 <= vpc.prefixlen <= 28, "a VPC CIDR must be between /16 and /28")
    if not p.is_bad("network.az_count") and not p.is_bad("network.cidr"):
        holds = vpc.prefixlen + split_bits(n.az_count) <= MIN_SUBNET_PREFIX
        needed = MIN_SUBNET_PREFIX - split_bits(n.az_count)
        why = f"it cannot hold {2 * n.az_count} subnets (2 per AZ) of /{MIN_SUBNET_PREFIX} or larger"
        _check(
            p, "network.cidr", n.cidr, holds, f"{why}; use /{needed} or larger (nodes and pods take their IPs from the subnets)"
        )


def _application_rules(c: Config, p: Problems) -> None:
    """Each application's own settings against the others', the platform's and the colours'."""
    apps = applications(c)
    hosts: dict[str, str] = {}
    bindings: dict[tuple[str, str], str] = {}
    for app in apps:
        key = f"applications.{app.name}"
        named = bool(_APPLICATION.match(app.name)) and app.name not in _RESERVED_APPLICATIONS
        _check(p, key, app.name, named, _APPLICATION_RULE)
        _check(p, f"{key}.host", app.host, bool(app.host), "every application needs a host: one DNS label, e.g. 'orders'")
        _check(p, f"{key}.source.path", app.path, bool(app.path), "name the directory of its Helm chart in its repository")
        if app.host:
            if app.host in hosts:
                _check(p, f"{key}.host", app.host, False, f"applications.{hosts[app.host]} answers at this host already")
            hosts.setdefault(app.host, app.name)
            _host_rules(c, p, key, app)
        _namespace_rules(p, key, app, bindings)
        if app.policy:
            problem = policy_problem(PROJECT_DIR / app.policy, APPLICATION_POLICY_VALUES)
            _check(p, f"{key}.policy", app.policy, problem is None, f"{problem}; name an IAM policy document in the project")
        _source_rules(c, p, key, app)
        _probe_rules(p, key, app)
        _check(
            p,
            f"{key}.values.{BLUE_GREEN}",
            app.values.get(BLUE_GREEN),
            BLUE_GREEN not in app.values,
            "the platform writes this key (the colour's facts about the application: model/values.py) and would "
            "replace it; read it in the chart, or name your own values otherwise",
        )
        if app.image is not None and app.image.repository:
            _check(
                p,
                f"{key}.image.repository",
                app.image.repository,
                app.image.repository.startswith(f"{c.project}/"),
                f"name it under {c.project}/ (the deployer may manage only the project's repositories), e.g. "
                f"'{c.project}/{app.name}'",
            )
            _repository_rules(c, p, key, app, apps)
    _shared_host_rules(c, p, apps)
    _colour_entry_rules(c, p)
    _load_balancer_limits(c, p)


def _shared_host_rules(c: Config, p: Problems, apps: tuple[Application, ...]) -> None:
    """Every host is one listener rule and one record of the shared load balancer: a public host that is another
    application's preview host, or two applications' preview hosts in two colours that spell the same name
    (`shop` in `rebuild-green`, `shop-rebuild` in `green`), would be answered twice."""
    colours = [colour for colour in c.clusters if _COLOUR.match(colour)]
    for index, app in enumerate(apps):
        for other_index, other in enumerate(apps):
            if not app.host or not other.host or other is app:
                continue
            for colour in colours:
                _check(
                    p,
                    f"applications.{app.name}.host",
                    app.host,
                    f"{other.host}-{colour}" != app.host,
                    f"it is applications.{other.name}'s preview host in colour {colour} ({other.host}-{colour}); "
                    "choose another label",
                )
                for own in colours:  # reported once, on the later of the two
                    _check(
                        p,
                        f"applications.{app.name}.host",
                        app.host,
                        other_index > index or own == colour or f"{app.host}-{own}" != f"{other.host}-{colour}",
                        f"its preview host in colour {own} ({app.host}-{own}) is applications.{other.name}'s preview host "
                        f"in colour {colour}; choose another label",
                    )


def _repository_rules(c: Config, p: Problems, key: str, app: Application, apps: tuple[Application, ...]) -> None:
    """Common makes one ECR repository per application with an image: two of the same name would fail the deploy."""
    name = image_repository_name(c, app)
    for other in apps:
        if other is not app and other.image is not None and image_repository_name(c, other) == name:
            _check(
                p,
                f"{key}.image.repository",
                name,
                False,
                f"applications.{other.name}'s image repository is {name} already: give each application its own",
            )


def _colour_entry_rules(c: Config, p: Problems) -> None:
    """A colour's entry names applications of `applications` only: a misspelt or removed one would be ignored."""
    configured = ", ".join(c.applications) or "none"
    for colour, cluster in c.clusters.items():
        for name, entry in cluster.applications.items():
            _check(
                p,
                f"clusters.{colour}.applications.{name}",
                entry.model_dump(exclude_none=True),
                name in c.applications,
                f"no application {name} in applications (configured: {configured}); name one of them, or remove the entry",
            )


def _host_rules(c: Config, p: Problems, key: str, app: Application) -> None:
    public = public_hostname(c, app)
    _check(p, f"{key}.host", app.host, len(public) <= 253, f"{public} is longer than a DNS name may be (253)")
    for colour in c.clusters:
        if not _COLOUR.match(colour):
            continue  # the colour's own problem says why
        preview = preview_hostname(c, app, colour)
        _check(
            p,
            f"{key}.host",
            app.host,
            len(preview.split(".", 1)[0]) <= 63 and len(preview) <= 253,
            f"colour {colour}'s preview host {preview} needs `<host>-<colour>` within one DNS label (63 characters) "
            "and the name within 253: shorten the host or the colour",
        )


def _namespace_rules(p: Problems, key: str, app: Application, bindings: dict[tuple[str, str], str]) -> None:
    platform = _platform_namespaces()
    _check(
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
        _check(
            p,
            f"{key}.service_account",
            app.service_account,
            False,
            f"applications.{bindings[binding]} runs as {app.namespace}/{app.service_account} already: two applications "
            "sharing a service account would share their AWS permissions; give this one its own",
        )
    bindings.setdefault(binding, app.name)


def _source_rules(c: Config, p: Problems, key: str, app: Application) -> None:
    for colour, cluster in c.clusters.items():
        own = cluster.applications.get(app.name)
        if own is None:
            continue
        if app.from_this_repository and own.revision is not None:
            _check(
                p,
                f"clusters.{colour}.applications.{app.name}.revision",
                own.revision,
                False,
                f"{app.name} comes from this repository, so {colour} runs it at clusters.{colour}.gitops_revision",
            )
        if app.image is None and own.image_tag is not None:
            _check(
                p,
                f"clusters.{colour}.applications.{app.name}.image_tag",
                own.image_tag,
                False,
                f"applications.{app.name} has no image of the project's (set applications.{app.name}.image)",
            )
    if app.from_this_repository and c.applications[app.name].source.revision is not None:
        _check(
            p,
            f"{key}.source.revision",
            c.applications[app.name].source.revision,
            False,
            "an application of this repository runs at each colour's gitops_revision",
        )
    if not app.from_this_repository:
        for colour, cluster in c.clusters.items():
            # A colour serving beside another names it in its own entry (_serving_release_rules says so); any other
            # colour runs what its entry or the application names, so one of the two must.
            serving_beside = cluster.weight > 0 and len(c.clusters) > 1
            if c.release(colour).applications[app.name].revision is None and not serving_beside:
                _check(
                    p,
                    f"clusters.{colour}.applications.{app.name}.revision",
                    None,
                    False,
                    f"{app.name} comes from {app.repo_url}: name the revision {colour} runs, here or as "
                    f"applications.{app.name}.source.revision",
                )
    if app.image is not None and app.image.buildspec and c.image.build_connection_arn:
        repo = app.repo_url or c.gitops.repo_url
        usable = repo.startswith("https://") and repo != PLACEHOLDER_REPO_URL
        source = f"applications.{app.name}.source.repo_url" if app.repo_url else "gitops.repo_url"
        _check(p, source, repo, usable, f"the image build of {app.name} clones it: set it to the https:// URL of its repository")


def _probe_rules(p: Problems, key: str, app: Application) -> None:
    allowed = {"colour"} | ({"image_tag"} if app.image is not None else set())
    for field, wanted in app.probe.expect_json.items():
        used = set(re.findall(r"\{([^{}]*)\}", wanted))
        _check(
            p,
            f"{key}.probe.expect_json.{field}",
            wanted,
            used <= allowed,
            f"placeholders are {', '.join('{' + name + '}' for name in sorted(allowed))}"
            + ("" if app.image is not None else " ({image_tag} needs an image)"),
        )


def _load_balancer_limits(c: Config, p: Problems) -> None:
    """Every host of every colour is a listener rule of the one shared load balancer, every application in every colour
    a target group, and a weighted forward holds one target group per colour: AWS's default quotas bound them. The
    target groups (applications x colours) are always fewer than the rules (applications x (1 + colours)) and their
    quota is the same, so the rules' check bounds both. Without applications there is no rule and no forward. A
    preview host takes a rule per SOURCE_IPS_PER_RULE of its networks (model/preview_access.py)."""
    apps, colours = len(c.applications), len(c.clusters)
    networks = preview_networks(c)
    per_preview = max(1, len(source_groups(networks))) if all(map(_is_network, networks)) else 1
    rules = apps * (1 + colours * per_preview)
    _check(
        p,
        "applications",
        f"{apps} applications, {colours} colours",
        rules <= ALB_RULES,
        f"they need {rules} listener rules (a public host per application, and per application and colour a preview "
        f"host: {per_preview} rule(s), {SOURCE_IPS_PER_RULE} networks of {networks_key(c)} a rule) on the shared load "
        f"balancer, which allows {ALB_RULES} (AWS's default quota 'Rules per Application Load Balancer'): split the "
        "applications between projects, run fewer colours at once, or name fewer preview networks",
    )
    _check(
        p,
        "clusters",
        list(c.clusters),
        colours <= FORWARD_TARGET_GROUPS or not apps,
        f"a weighted forward holds at most {FORWARD_TARGET_GROUPS} target groups, one per colour (AWS quota 'Target groups "
        "per action'): retire a colour first",
    )


def _platform_namespaces() -> dict[str, str]:
    """Namespaces the platform runs in, and whose: no application may share them."""
    found = {namespace: "Kubernetes'" for namespace in ("kube-system", "kube-public", "kube-node-lease", "default")}
    for component in COMPONENTS:
        found.setdefault(component.namespace, f"{component.name}'s")  # kube-system stays Kubernetes'
    return found


def _eks_rules(c: Config, p: Problems) -> None:
    e = c.eks
    reachable = e.endpoint_public_access or e.endpoint_private_access
    _check(p, "eks.endpoint_public_access", e.endpoint_public_access, reachable, "public and private access cannot both be off")
    _check_each(p, "eks.public_access_cidrs", e.public_access_cidrs, _is_network, "use an IPv4 network such as '198.51.100.0/24'")
    # No default: a public endpoint open to the internet was one (#31). Refused rather than made private silently: a
    # colour deployed open before would lose its API to the Terraform that deploys it in the middle of an apply.
    _check(
        p,
        "eks.public_access_cidrs",
        list(e.public_access_cidrs),
        bool(e.public_access_cidrs) or not e.endpoint_public_access,
        "while eks.endpoint_public_access is true (the default), list the IPv4 networks the Kubernetes API may be reached "
        "from: where `cdktf deploy` runs and your operators work (offices, VPN, CI runners' egress addresses), e.g. "
        "['198.51.100.0/24']; or set eks.endpoint_public_access to false and deploy from inside the VPC",
    )
    # EKS keeps one access entry per principal and cluster (User Guide, "Create access entries"): the operator's own
    # entry beside an admin's would fail the apply with ResourceInUseException.
    admins = {*e.admin_role_arns, *([e.deployer_role_arn] if e.deployer_role_arn else [])}
    _check(
        p,
        "eks.traffic_operator_role_arn",
        e.traffic_operator_role_arn,
        e.traffic_operator_role_arn not in admins,
        "use the traffic operator's own role, not one of eks.admin_role_arns or eks.deployer_role_arn (a principal has "
        "one access entry per cluster, and an admin reads Argo CD's Applications anyway); or leave it unset",
    )
    _service_cidr_rules(c, p)


def _preview_rules(c: Config, p: Problems) -> None:
    """The networks the preview hosts answer (model/preview_access.py): IPv4 (the shared load balancer has no IPv6),
    at least one, and none by default only where the operators named none (a private API endpoint)."""
    own = c.traffic.preview_cidrs
    for i, cidr in enumerate(own or ()):
        try:
            ipaddress.IPv4Network(cidr)
        except ValueError as err:
            _check(p, f"{KEY}[{i}]", cidr, False, f"use an IPv4 network such as '198.51.100.0/24' ({err})")
    _check(
        p,
        KEY,
        [],
        own != (),
        f"list at least one IPv4 network the preview hosts answer, or leave {KEY} unset for {FALLBACK_KEY}'s",
    )
    if own is None and c.applications:
        _check(
            p,
            KEY,
            None,
            bool(c.eks.public_access_cidrs),
            f"{FALLBACK_KEY} is empty (a private API endpoint), so the preview hosts have no networks to default to: list "
            "the IPv4 networks readiness and your team reach them from (CI runners' and offices' egress; from inside "
            "the VPC, common's NAT addresses, `terraform output nat_public_ips` of common, each as /32), e.g. "
            "['198.51.100.0/24']",
        )


def _service_cidr_rules(c: Config, p: Problems) -> None:
    """EKS takes the Service CIDR from a private range, /12 to /24, apart from the VPC's addresses."""
    key, cidr = "eks.service_ipv4_cidr", c.eks.service_ipv4_cidr
    allowed = "use a private IPv4 network, /12 to /24, that does not overlap network.cidr (e.g. '172.20.0.0/16')"
    if not _is_network(cidr):
        _check(p, key, cidr, False, allowed)
        return
    network = ipaddress.IPv4Network(cidr)
    private = any(network.subnet_of(ipaddress.IPv4Network(r)) for r in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))
    _check(p, key, cidr, private and 12 <= network.prefixlen <= 24, allowed)
    if _is_network(c.network.cidr):
        overlaps = network.overlaps(ipaddress.IPv4Network(c.network.cidr))
        _check(p, key, cidr, not overlaps, f"it overlaps network.cidr {c.network.cidr}; {allowed}")


def _covers_the_internet(cidrs: Iterable[str]) -> bool:
    """The valid networks among `cidrs`, merged, are 0.0.0.0/0 (however it is split: two /1s count too)."""
    networks = [ipaddress.IPv4Network(cidr) for cidr in cidrs if _is_network(cidr)]
    return ipaddress.IPv4Network("0.0.0.0/0") in ipaddress.collapse_addresses(networks)


def _is_network(cidr: str) -> bool:
    try:
        ipaddress.IPv4Network(cidr)
    except ValueError:
        return False
    return True


def _state_rules(c: Config, p: Problems) -> None:
    s = c.state
    if s.backend == "local":
        _check(p, "state.directory", s.directory, bool(s.directory.strip()), "name a directory for the local state files")
        return
    _check(p, "state.bucket", s.bucket, bool(_BUCKET.match(s.bucket)), "the s3 backend needs an existing S3 bucket name")
    _check(p, "state.region", s.region, bool(_REGION.match(s.region)), REGION_ALLOWED)
    prefix_ok = not s.key_prefix.startswith("/") and not s.key_prefix.endswith("/")
    _check(p, "state.key_prefix", s.key_prefix, prefix_ok, "use a key prefix without a leading or trailing '/'")


def _cluster_rules(c: Config, p: Problems) -> None:
    _check(
        p,
        "clusters",
        dict(c.clusters),
        bool(c.clusters),
        'name at least one colour, e.g. {"blue": {"kubernetes_version": "1.35", "weight": 100}}',
    )
    for colour, cluster in c.clusters.items():
        key = f"clusters.{colour}"
        _check(p, key, colour, bool(_COLOUR.match(colour)), _COLOUR_RULE)
        _version_rules(p, key, cluster.kubernetes_version)
        # A release is judged against the colour's version only when that version itself stands.
        version_known = not p.is_bad(f"{key}.kubernetes_version")
        _node_rules(p, f"{key}.nodes", cluster.nodes, cluster.kubernetes_version if version_known else None)
        _addon_rules(p, f"{key}.addon_versions", cluster.addon_versions)
        _platform_rules(c, p, colour)
        _serving_release_rules(c, p, colour)
        _legacy_rules(c, p, colour)
    weights_known = not any(p.is_bad(f"clusters.{colour}.weight") for colour in c.clusters)
    all_zero = bool(c.clusters) and all(cluster.weight == 0 for cluster in c.clusters.values())
    # While colours still run the old way their weight is their ExternalDNS records' (docs/upgrading.md): 0 for all of
    # them is the step that hands every answer to the shared load balancer's records.
    moving = any(cluster.legacy_application for cluster in c.clusters.values())
    if weights_known and not moving:
        _check(
            p,
            "clusters.*.weight",
            c.weights,
            not all_zero,
            "at least one colour needs a weight above 0 (the shared load balancer starts at these weights: all 0 would "
            "send no request anywhere)",
        )


def _legacy_rules(c: Config, p: Problems, colour: str) -> None:
    """A colour whose revision predates applications as data runs one application of this repository with an image
    (contract 1's charts know no other: model/legacy_facts.py)."""
    name = c.clusters[colour].legacy_application
    if name is None:
        return
    app = c.applications.get(name)
    usable = app is not None and app.source.repo_url is None and app.image is not None
    _check(
        p,
        f"clusters.{colour}.legacy_application",
        name,
        usable,
        f"name the entry of applications that {colour}'s revision runs: one of this repository with an image"
        + (f" ({', '.join(c.applications)})" if c.applications else " (there is none)"),
    )


def _version_rules(p: Problems, key: str, version: str) -> None:
    """One of the versions EKS offers (the calendar's rows). Two colours may share one: a platform-only or a
    cluster-replacing rebuild is a new colour on the same version."""
    key = f"{key}.kubernetes_version"
    allowed = f"use one of {', '.join(SUPPORTED_KUBERNETES_VERSIONS)}"
    _check(p, key, version, bool(version), f"required for every colour; {allowed}")
    _check(p, key, version, bool(_VERSION.match(version)), f"use the form '1.NN'; {allowed}")
    _check(
        p,
        key,
        version,
        version in SUPPORTED_KUBERNETES_VERSIONS,
        f"not in the EKS calendar ({CALENDAR_NAME}); {allowed}. A version EKS has started to offer is a row there "
        "plus rows in the compatibility table (argocd/apps/platform/*/component.yaml)",
    )


def _platform_rules(c: Config, p: Problems, colour: str) -> None:
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
        _check(
            p,
            key,
            version,
            False,
            f"{colour} runs Kubernetes {kubernetes}, and the {component.name} chart {version}{inherited} is known to work "
            f"with {', '.join(known)} only; {fix}"
            + ("" if working else f" known to work with {kubernetes}")
            + f" (compatibility table: argocd/apps/platform/{component.name}/component.yaml)",
        )


def _serving_release_rules(c: Config, p: Problems, colour: str) -> None:
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
    legacy = cluster.legacy_application  # runs that one only (model/legacy_facts.py)
    for app in applications(c):
        if legacy is not None and app.name != legacy:
            continue
        own, resolved = cluster.applications.get(app.name), release.applications[app.name]
        if not app.from_this_repository and (own is None or own.revision is None):
            inherited[f"applications.{app.name}.revision"] = resolved.revision or "(none)"
        if app.image is not None and (own is None or own.image_tag is None):
            inherited[f"applications.{app.name}.image_tag"] = resolved.image_tag or ""
    _check(
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


def _addon_rules(p: Problems, key: str, pins: Mapping[str, str]) -> None:
    """A pinned add-on is at least the version that works with what the project gives it (MINIMUM_VERSIONS)."""
    for name, version in pins.items():
        minimum = MINIMUM_VERSIONS.get(name)
        if minimum is None or p.is_bad(f"{key}.{name}"):
            continue
        _check(
            p,
            f"{key}.{name}",
            version,
            _minor(version)[:3] >= minimum,
            f"use {oldest(name)} or newer: {minimum_reason(name)} (`python -m tools.patch <colour>` lists the versions "
            "EKS offers)",
        )


def _node_rules(p: Problems, key: str, nodes: NodeGroupConfig, kubernetes_version: str | None) -> None:
    """kubernetes_version: the colour's; None when it is refused itself (its release is then not judged)."""
    release = nodes.release_version
    if release is not None and kubernetes_version is not None:
        # EKS refuses a release of another minor than the group's version (UpdateNodegroupVersion: the AMI release must
        # match the Kubernetes version); said at synth, naming the key, not at apply after the control plane moved.
        _check(
            p,
            f"{key}.release_version",
            release,
            release.startswith(f"{kubernetes_version}."),
            f"use an EKS-optimized AMI release of Kubernetes {kubernetes_version} (the colour's kubernetes_version), "
            f"'{kubernetes_version}.<patch>-<YYYYMMDD>': `python -m tools.patch <colour>` lists the newest",
        )
    if p.is_bad(f"{key}.max_size"):
        return  # the sizes below are judged against max_size
    _check(p, f"{key}.min_size", nodes.min_size, 0 <= nodes.min_size <= nodes.max_size, f"use 0-{nodes.max_size} (max_size)")
    if not p.is_bad(f"{key}.min_size"):
        desired_ok = nodes.min_size <= nodes.desired_size <= nodes.max_size
        _check(
            p, f"{key}.desired_size", nodes.desired_size, desired_ok, f"use {nodes.min_size}-{nodes.max_size} (min_size-max_size)"
        )
    unavailable_ok = 1 <= nodes.max_unavailable <= nodes.max_size
    _check(p, f"{key}.max_unavailable", nodes.max_unavailable, unavailable_ok, f"use 1-{nodes.max_size} (max_size)")


_CA_DATA_RULE = "use the base64 of the provider's PEM certificate, BEGIN and END lines included (`base64 -w0 cert.pem`)"


def _pem_certificate(data: str) -> bool:
    """Whether data is the base64 of a PEM certificate, as Dex's SAML connector reads `caData` (connector/saml/saml.go,
    dex v2.45.1: PEM blocks, else "no certificates found in ca data" when Dex starts)."""
    try:
        decoded = base64.b64decode(data, validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError):
        return False
    return "-----BEGIN CERTIFICATE-----" in decoded and "-----END CERTIFICATE-----" in decoded


def _shown(value: Any) -> Any:
    """A setting's value as a message shows it (a read-only mapping as the object it came from)."""
    return dict(value) if isinstance(value, Mapping) else value


def _argocd_rules(c: Config, p: Problems) -> None:
    """Single sign-on and its admins go together: the groups come from the provider, and with SSO the local admin is
    off, so without an admin group nobody could administer Argo CD but through kubectl."""
    access = c.argocd
    if access.sso is None:
        _check(
            p,
            "argocd.admin_groups",
            list(access.admin_groups),
            not access.admin_groups,
            "admin groups are the identity provider's: set argocd.sso too, or leave argocd.admin_groups empty",
        )
    else:
        sso = access.sso
        required = {
            "issuer": "the provider's https:// issuer URL",
            "client_id": "the client ID the provider gave Argo CD",
            "client_secret": "the name of the Secrets Manager secret holding the client secret",
            "orgs": "the GitHub organisations whose members may log in",
            "sso_url": "the provider's SAML sign-in URL",
            "ca_data": "the provider's certificate, its PEM file in base64",
        }
        for field, what in required.items():
            if field in SSO_FIELDS[sso.kind]:
                value = getattr(sso, field)
                _check(p, f"argocd.sso.{field}", _shown(value), bool(value), f"argocd.sso ({sso.kind}) needs {what}")
        # One kind at once: a field of another kind would be silently ignored, so it is refused.
        for field in sorted(sso.model_fields_set - {"kind", "name", *SSO_FIELDS[sso.kind]}):
            kinds = " or ".join(kind for kind, fields in SSO_FIELDS.items() if field in fields)
            _check(
                p,
                f"argocd.sso.{field}",
                _shown(getattr(sso, field)),
                False,
                f"a field of kind {kinds}, and argocd.sso.kind is {sso.kind}: remove it, or set the kind it belongs to",
            )
        if sso.kind == "saml" and sso.ca_data:
            _check(p, "argocd.sso.ca_data", "(not shown)", _pem_certificate(sso.ca_data), _CA_DATA_RULE)
        _check(
            p,
            "argocd.admin_groups",
            [],
            bool(access.admin_groups),
            "with argocd.sso set the local admin is disabled: name at least one group of the provider to be Argo CD's admins",
        )
    for app in applications(c):
        _check(
            p,
            f"applications.{app.name}.group",
            app.group,
            app.group not in RESERVED_PROJECTS,
            f"{app.group} is an Argo CD project of the platform's ({', '.join(RESERVED_PROJECTS)}): name another group",
        )


def _waf_rules(c: Config, p: Problems) -> None:
    groups = c.traffic.waf.managed_rule_groups
    repeated = sorted({group for group in groups if groups.count(group) > 1})
    key = "traffic.waf.managed_rule_groups"
    _check(p, key, [], bool(groups), "name at least one, e.g. 'AWSManagedRulesCommonRuleSet'")
    _check(p, key, list(groups), not repeated, f"name each rule group once ({', '.join(repeated)} twice)")


RULES: tuple[Callable[[Config, Problems], None], ...] = (
    _network_rules,
    _credential_rules,
    _application_rules,
    _argocd_rules,
    _eks_rules,
    _preview_rules,
    _state_rules,
    _cluster_rules,
    _waf_rules,
)


def config_warnings(config: Config, *, today: dt.date | None = None, project: Path = PROJECT_DIR) -> list[str]:
    """Things that synthesize but would not work once deployed, or will cost or change soon.
    today: the day the EKS calendar is read for (default: today, UTC, as AWS bills).
    project: the Git repository the colours' revisions are of (default: this one)."""
    warnings = _revision_warnings(config, project) + _calendar_warnings(config, today or dt.datetime.now(dt.UTC).date())
    if config.gitops.repo_url == PLACEHOLDER_REPO_URL:
        warnings.append(
            f"gitops.repo_url is the placeholder {PLACEHOLDER_REPO_URL!r}: set it to a Git URL of this project "
            "that Argo CD can read before `cdktf deploy <colour>`, or Argo CD cannot sync the App of Apps"
        )
    for app in applications(config):
        defaults = [c for c in config.clusters if config.release(c).applications[app.name].image_tag == DEFAULT_IMAGE_TAG]
        if defaults:
            warnings.append(
                f"applications.{app.name}.image.tag is the default {DEFAULT_IMAGE_TAG!r} ({', '.join(defaults)} run it): "
                f"build and push its image (docs/applications.md) and set applications.{app.name}.image.tag (or "
                f"clusters.<colour>.applications.{app.name}.image_tag) to the tag the build prints"
            )
    return warnings + _api_warnings(config.eks) + _preview_warnings(config)


# A warning that starts so is about a door open to the internet: main.py frames it so it cannot be missed.
LOUD = "OPEN TO THE INTERNET: "
# ... or about a serving colour that one push can change together with the others: framed the same way.
MOVING = "ONE PUSH REACHES A SERVING COLOUR: "
LOUD_PREFIXES = (LOUD, MOVING)


def _revision_warnings(config: Config, project: Path) -> list[str]:
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


def _moving_warning(config: Config, followed: FollowedRevision) -> str:
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


def _other_repository_warnings(config: Config, colour: str) -> list[str]:
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
            f"{key} {revision!r} is a revision of {app.repo_url}, which synth cannot look into: if it is a branch, one "
            f"push there reaches {colour} while it serves (weight {config.clusters[colour].weight}). Name a tag that "
            "repository never moves, or a full 40-character commit SHA (which silences this)"
        )
    return warnings


def _api_warnings(eks: EksConfig) -> list[str]:
    """The public endpoint's networks while it is on: the documentation placeholder, or the whole internet."""
    if not eks.endpoint_public_access:
        return []
    warnings = []
    if PLACEHOLDER_API_NETWORK in eks.public_access_cidrs:
        warnings.append(
            f"eks.public_access_cidrs names {PLACEHOLDER_API_NETWORK}, the documentation placeholder: nobody reaches the "
            "Kubernetes API from there, so `cdktf deploy <colour>` cannot install Argo CD; replace it with the networks "
            "you deploy from (or set eks.endpoint_public_access to false and deploy from inside the VPC)"
        )
    if _covers_the_internet(eks.public_access_cidrs):
        warnings.append(
            f"{LOUD}eks.public_access_cidrs {list(eks.public_access_cidrs)} lets the whole internet reach the Kubernetes "
            "API endpoint of every colour (only its authentication stands in the way): list the networks you deploy "
            "from instead, or set eks.endpoint_public_access to false"
        )
    return warnings


def _preview_warnings(config: Config) -> list[str]:
    """The preview hosts' networks: the documentation placeholder (readiness cannot reach them), or the whole internet."""
    networks, key = preview_networks(config), networks_key(config)
    if not config.applications:
        return []
    warnings = []
    if PLACEHOLDER_API_NETWORK in networks:
        warnings.append(
            f"{key} names {PLACEHOLDER_API_NETWORK}, the documentation placeholder, and the preview hosts answer only "
            f"those networks: readiness (`python -m tools.readiness <colour>`) and the shift's proof cannot reach them "
            f"from anywhere; set {KEY} (or {FALLBACK_KEY}) to where they run"
        )
    if _covers_the_internet(networks):
        warnings.append(
            f"{LOUD}{key} {list(networks)} lets the whole internet reach every preview host <host>-<colour>, whose "
            f"colour may follow a branch nobody reviewed: set {KEY} to the networks readiness and your team use"
        )
    return warnings


def _calendar_warnings(config: Config, today: dt.date) -> list[str]:
    """Each colour within WARN_DAYS of, or past, the end of standard support of its version, and what happens
    then; a colour older than the one serving (a new colour should be the upgrade, not a step back)."""
    warnings = []
    for colour, cluster in config.clusters.items():
        found = CALENDAR.find(cluster.kubernetes_version)
        if found is None:
            continue  # refused by the rules already
        days = found.days_to_standard_end(today)
        if days > WARN_DAYS:
            continue
        end = found.end_of_standard_support.isoformat()
        if cluster.support_type == "EXTENDED":
            then = (
                f"the control plane is billed at the extended rate (${CALENDAR.price_per_hour.extended:.2f}/h instead of "
                f"${CALENDAR.price_per_hour.standard:.2f}/h) until {found.end_of_extended_support.isoformat()}"
            )
        else:
            then = "support_type is STANDARD: AWS upgrades its control plane in place to the next version"
        when = f"ends on {end}, in {days} days" if days > 0 else f"ended on {end}, {-days} days ago"
        warnings.append(
            f"clusters.{colour}: Kubernetes {found.version}'s EKS standard support {when}; from then {then}. Build the "
            f"next colour on a newer version (`python -m tools.calendar`, {CALENDAR_NAME})"
        )
    serving = [c for c in config.clusters.values() if c.weight > 0]
    if serving:
        newest_serving = max((c.kubernetes_version for c in serving), key=_minor)
        for colour, cluster in config.clusters.items():
            if cluster.weight == 0 and _minor(cluster.kubernetes_version) < _minor(newest_serving):
                warnings.append(
                    f"clusters.{colour} runs Kubernetes {cluster.kubernetes_version}, older than the {newest_serving} "
                    "that serves now: shifting to it would be a downgrade"
                )
    return warnings


def _minor(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))
