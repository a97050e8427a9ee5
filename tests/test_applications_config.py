"""The team's applications as configuration (`applications.<name>`, `clusters.<colour>.applications.<name>`): their
defaults, one `test_fails_...` per rule (model/config/'s patterns, model/config/'s rules, model/policy_shape.py's
document check), each asserting the whole message, and the keys of the sample-app era refused with where they went."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from model.config import (
    ALB_RULES,
    FORWARD_TARGET_GROUPS,
    ApplicationRelease,
    application,
    application_workloads,
    applications,
    image_repository_name,
    preview_hostname,
    public_hostname,
)
from model.paths import PROJECT_DIR
from model.platform import ARGO_CD, COMPONENTS, PARENT_APPLICATION
from model.policy_shape import MANAGED_POLICY_CHARACTERS
from model.routes import TRAFFIC_CONSTRUCT_IDS
from model.rules import config_warnings
from model.workloads import VPC_CNI
from tests.support.configs import CONNECTION_ARN, ORDERS_POLICY, named_release, validated
from tests.support.refusals import one_problem, problems_of

REPO = "https://github.com/acme/shop.git"
SHOP: dict[str, Any] = {"host": "shop", "source": {"path": "charts/shop"}}  # of this repository: all an application needs
LONE: dict[str, Any] = {"blue": {"kubernetes_version": "1.35", "weight": 100}}  # one colour alone names no release
# Names the platform takes: an application by one of them is refused (the registry's components and the App of Apps'
# parent, and the VPC CNI add-on's role).
RESERVED = sorted({PARENT_APPLICATION, VPC_CNI.name, "aws-ebs-csi-driver", *(c.name for c in COMPONENTS)})
NAME_RULE = (
    "an application's name is a DNS label of at most 32 characters (lowercase letters, digits, '-', starting with a "
    f"letter), not one of the platform's: {', '.join(sorted({*RESERVED, *TRAFFIC_CONSTRUCT_IDS}))}"
)
KUBERNETES_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease", "default")


def config(apps: dict[str, Any], colours: dict[str, Any] = LONE, **settings: Any) -> dict[str, Any]:
    return {"applications": apps, "clusters": colours, **settings}


def two_colours(blue: dict[str, Any], green: dict[str, Any] | None = None) -> dict[str, Any]:
    """blue serving (naming the platform and Git parts of its release, and of its applications what blue says) beside
    green, without weight."""
    return {
        "blue": {"kubernetes_version": "1.35", "weight": 100, **named_release(applications=blue)},
        "green": {"kubernetes_version": "1.36", "weight": 0, **({"applications": green} if green else {})},
    }


# --- what an application is, resolved -----------------------------------------------------------------------------


def test_an_application_of_this_repository_needs_a_host_and_its_chart_only() -> None:
    settings = validated(config({"shop": SHOP}, colours=two_colours({})))
    (shop,) = applications(settings)
    assert (shop.namespace, shop.service_account, shop.service_name, shop.config.service.port) == ("shop", "shop", "shop", 80)
    assert (
        shop.config.source.repo_url,
        shop.config.policy,
        shop.config.image,
        shop.config.wave,
        shop.config.health_check_path,
    ) == (None, "", None, 1, "/")
    assert (shop.config.probe.path, shop.config.probe.status, dict(shop.config.probe.expect_json)) == ("/", 200, {})
    assert public_hostname(settings, shop) == "shop.eks.example.com"
    # One label per colour, so the sub-zone's wildcard certificate covers every preview host.
    assert [preview_hostname(settings, shop, c) for c in settings.clusters] == [
        "shop-blue.eks.example.com",
        "shop-green.eks.example.com",
    ]
    # At each colour's own Git revision; no image of ours, no role.
    assert settings.release("green").applications["shop"] == ApplicationRelease(revision="main", image_tag=None)
    assert application_workloads(settings) == ()


def test_an_application_of_another_repository_runs_its_own_revision_and_image() -> None:
    shop = {**SHOP, "source": {"repo_url": REPO, "path": "charts/shop", "revision": "v1"}, "image": {"tag": "1.0"}}
    settings = validated(config({"shop": shop}, colours=two_colours({"shop": {"revision": "v2", "image_tag": "2.0"}})))
    assert settings.release("blue").applications["shop"] == ApplicationRelease(revision="v2", image_tag="2.0")
    assert settings.release("green").applications["shop"] == ApplicationRelease(revision="v1", image_tag="1.0")
    assert image_repository_name(settings, application(settings, "shop")) == "eks-bg/shop"


def test_applications_may_share_a_namespace_with_different_service_accounts() -> None:
    """Each role stays pinned to its own (namespace, service account): sharing the namespace shares no permission."""
    apps = {
        "catalogue": {**SHOP, "host": "catalogue", "namespace": "shop"},
        "orders": {**SHOP, "host": "orders", "namespace": "shop", "service_account": "orders-api", "policy": ORDERS_POLICY},
    }
    settings = validated(config(apps))
    assert [(a.name, a.namespace, a.service_account) for a in applications(settings)] == [
        ("catalogue", "shop", "catalogue"),
        ("orders", "shop", "orders-api"),
    ]
    assert [(w.name, w.namespace, w.service_account) for w in application_workloads(settings)] == [
        ("orders", "shop", "orders-api")
    ]


# --- one test per rule ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["Shop", "1shop", "shop-", "shop_2", "a" * 33])
def test_fails_on_an_application_name_that_is_no_short_dns_label(name: str) -> None:
    assert one_problem(config({name: SHOP})) == f'applications.{name}: "{name}" is not allowed; {NAME_RULE}'


@pytest.mark.parametrize("name", RESERVED)
def test_fails_on_an_application_named_like_a_part_of_the_platform(name: str) -> None:
    # In a namespace of its own: a component's name is also its namespace (external-dns), refused on its own.
    problem = one_problem(config({name: {**SHOP, "namespace": "shop"}}))
    assert problem == f'applications.{name}: "{name}" is not allowed; {NAME_RULE}'


def test_a_name_of_32_characters_is_an_application() -> None:
    assert list(validated(config({"a" * 32: SHOP})).applications) == ["a" * 32]


def test_fails_on_an_application_without_a_host() -> None:
    problem = one_problem(config({"shop": {"source": {"path": "charts/shop"}}}))
    assert problem == "applications.shop.host: \"\" is not allowed; every application needs a host: one DNS label, e.g. 'orders'"


@pytest.mark.parametrize("host", ["Shop", "shop.eu", "-shop"])
def test_fails_on_a_host_that_is_no_dns_label(host: str) -> None:
    problem = one_problem(config({"shop": {**SHOP, "host": host}}))
    assert problem == f"applications.shop.host: \"{host}\" is not allowed; use one DNS label: lowercase letters, digits, '-'"


def test_fails_on_an_application_without_its_chart() -> None:
    problem = one_problem(config({"shop": {"host": "shop"}}))
    assert problem == 'applications.shop.source.path: "" is not allowed; name the directory of its Helm chart in its repository'


@pytest.mark.parametrize("path", ["../shop/chart", "charts/../../chart", "..", "/charts/shop", "charts/shop/"])
def test_fails_on_a_chart_path_that_leaves_the_repository_or_is_not_relative(path: str) -> None:
    problem = one_problem(config({"shop": {**SHOP, "source": {"path": path}}}))
    assert problem == (
        f'applications.shop.source.path: "{path}" is not allowed; name the chart\'s directory in the repository, '
        "relative, without '..', e.g. 'deploy/chart'"
    )


def test_fails_on_two_applications_at_one_host() -> None:
    problem = one_problem(config({"shop": SHOP, "orders": {**SHOP, "source": {"path": "charts/orders"}}}))
    assert problem == 'applications.orders.host: "shop" is not allowed; applications.shop answers at this host already'


@pytest.mark.parametrize("order", [("shop", "outlet"), ("outlet", "shop")])
def test_fails_on_a_host_that_is_another_applications_preview_host(order: tuple[str, str]) -> None:
    """`shop-green` is shop's preview host in green: the outlet may not answer there, whichever is listed first."""
    apps = {"shop": SHOP, "outlet": {**SHOP, "host": "shop-green"}}
    problem = one_problem(config({name: apps[name] for name in order}, colours=two_colours({})))
    assert problem == (
        'applications.outlet.host: "shop-green" is not allowed; it is applications.shop\'s preview host in colour green '
        "(shop-green); choose another label"
    )


def test_fails_on_two_preview_hosts_that_spell_the_same_name() -> None:
    """shop in colour rebuild-green and shop-rebuild in colour green are both `shop-rebuild-green`."""
    colours = {
        "green": {"kubernetes_version": "1.35", "weight": 100, **named_release(applications={})},
        "rebuild-green": {"kubernetes_version": "1.36", "weight": 0},
    }
    apps = {"shop": SHOP, "refurbished": {**SHOP, "host": "shop-rebuild"}}
    problem = one_problem(config(apps, colours=colours))
    assert problem == (
        'applications.refurbished.host: "shop-rebuild" is not allowed; its preview host in colour green '
        "(shop-rebuild-green) is applications.shop's preview host in colour rebuild-green; choose another label"
    )


def test_fails_on_a_preview_host_longer_than_one_dns_label() -> None:
    """`<host>-<colour>` is one DNS label (at most 63 characters): a 50-character host and an 18-character colour are 69."""
    host = "a" * 50
    colours = {"green-rebuild-2026": {"kubernetes_version": "1.35", "weight": 100}}
    problem = one_problem(config({"shop": {**SHOP, "host": host}}, colours=colours))
    assert problem == (
        f'applications.shop.host: "{host}" is not allowed; colour green-rebuild-2026\'s preview host '
        f"{host}-green-rebuild-2026.eks.example.com needs `<host>-<colour>` within one DNS label (63 characters) and "
        "the name within 253: shorten the host or the colour"
    )
    assert validated(config({"shop": {**SHOP, "host": host}})).applications["shop"].host == host  # blue: 55


def test_fails_on_a_public_host_longer_than_a_dns_name() -> None:
    parent = ".".join(["p" * 63] * 3)  # eks.<parent>: 195 characters, and the host's 60 and a dot
    host = "h" * 60
    problem = one_problem(config({"shop": {**SHOP, "host": host}}, dns={"parent_zone": parent}))
    assert problem == (
        f'applications.shop.host: "{host}" is not allowed; {host}.eks.{parent} is longer than a DNS name may be (253)'
    )


PLATFORM_NAMESPACES = [(n, "Kubernetes'") for n in KUBERNETES_NAMESPACES] + [
    (c.namespace, f"{c.name}'s") for c in COMPONENTS if c.namespace not in KUBERNETES_NAMESPACES
]


@pytest.mark.parametrize(("namespace", "whose"), PLATFORM_NAMESPACES)
def test_fails_on_an_application_in_a_namespace_of_the_platform(namespace: str, whose: str) -> None:
    problem = one_problem(config({"shop": {**SHOP, "namespace": namespace}}))
    assert problem == (
        f'applications.shop.namespace: "{namespace}" is not allowed; {namespace} is the platform\'s ({whose}): give the '
        "application a namespace of its own"
    )


def test_fails_on_an_application_whose_name_makes_it_run_in_a_namespace_of_the_platform() -> None:
    """Its namespace defaults to its name: an application named like Argo CD's namespace would run there."""
    name = ARGO_CD.namespace
    problem = one_problem(config({name: SHOP}))
    assert problem == (
        f"applications.{name}.namespace: \"{name}\" is not allowed; {name} is the platform's ({ARGO_CD.name}'s): give "
        "the application a namespace of its own"
    )


def test_fails_on_two_applications_sharing_a_namespace_and_a_service_account() -> None:
    apps = {
        "catalogue": {**SHOP, "host": "catalogue", "namespace": "shop", "service_account": "api"},
        "orders": {**SHOP, "host": "orders", "namespace": "shop", "service_account": "api", "policy": ORDERS_POLICY},
    }
    problem = one_problem(config(apps))
    assert problem == (
        'applications.orders.service_account: "api" is not allowed; applications.catalogue runs as shop/api already: two '
        "applications sharing a service account would share their AWS permissions; give this one its own"
    )


# A policy document as a file, and what is wrong with it (model/policy_shape.py).
STATEMENT: dict[str, Any] = {"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": "*"}
DOCUMENT: dict[str, Any] = {"Version": "2012-10-17", "Statement": [STATEMENT]}
TOO_LARGE = {
    **DOCUMENT,
    "Statement": [{**STATEMENT, "Resource": [f"arn:{{{{PARTITION}}}}:s3:::{'b' * 60}-{n}" for n in range(99)]}],
}
BAD_DOCUMENTS: list[tuple[str, str | None, str]] = [
    ("missing", None, "no such file in the project"),
    (
        "not-json",
        '{"Version": "2012-10-17",}',
        "not valid JSON: line 1 column 26: Expecting property name enclosed in double quotes",
    ),
    ("a-list", "[]", "not an IAM policy: a JSON object with Version and Statement (and optionally Id) only"),
    ("old-version", json.dumps({**DOCUMENT, "Version": "2008-10-17"}), 'not an IAM policy: its Version must be "2012-10-17"'),
    (
        "no-statement",
        json.dumps({"Version": "2012-10-17", "Statement": []}),
        "not an IAM policy: Statement must be a statement or a non-empty list of them",
    ),
    (
        "trust-policy",
        json.dumps({**DOCUMENT, "Statement": [{**STATEMENT, "Principal": {"Service": "pods.eks.amazonaws.com"}}]}),
        "statement 1: has a Principal: that is a trust or resource policy, not an identity policy for a role",
    ),
    (
        "no-effect",
        json.dumps({**DOCUMENT, "Statement": [{k: v for k, v in STATEMENT.items() if k != "Effect"}]}),
        'statement 1: Effect must be "Allow" or "Deny"',
    ),
    (
        "action-and-not-action",
        json.dumps({**DOCUMENT, "Statement": [{**STATEMENT, "NotAction": "s3:*"}]}),
        "statement 1: needs exactly one of Action and NotAction",
    ),
    (
        "malformed-action",
        json.dumps({**DOCUMENT, "Statement": [{**STATEMENT, "Action": "GetItem"}]}),
        "statement 1: every action is `service:Action` (wildcards allowed), e.g. `dynamodb:GetItem`",
    ),
    (
        "unknown-placeholder",
        json.dumps({**DOCUMENT, "Statement": [{**STATEMENT, "Resource": "{{ZONE_ARN}}"}]}),
        "unknown placeholder(s) ZONE_ARN; synth fills ACCOUNT_ID, PARTITION, REGION, TABLE_ARN",
    ),
    (
        "too-large",
        json.dumps(TOO_LARGE, indent=2),
        f"{len(json.dumps(TOO_LARGE, separators=(',', ':')))} characters without whitespace; a managed policy holds at "
        f"most {MANAGED_POLICY_CHARACTERS}",
    ),
]


@pytest.mark.parametrize(("case", "text", "problem"), BAD_DOCUMENTS, ids=[case for case, _, _ in BAD_DOCUMENTS])
def test_fails_on_a_policy_that_is_not_an_identity_policy_synth_can_fill(
    inside_project: Path, case: str, text: str | None, problem: str
) -> None:
    """Refused at synth, naming the key, before Terraform would fail half-way through `cdktf deploy common`."""
    path = inside_project / "policies" / f"{case}.json"
    path.parent.mkdir(exist_ok=True)
    if text is not None:
        path.write_text(text)
    policy = path.relative_to(PROJECT_DIR).as_posix()
    assert one_problem(config({"shop": {**SHOP, "policy": policy}})) == (
        f'applications.shop.policy: "{policy}" is not allowed; {problem}; name an IAM policy document in the project'
    )


def test_an_identity_policy_of_the_project_with_the_placeholders_synth_fills_is_accepted() -> None:
    settings = validated(config({"shop": {**SHOP, "policy": ORDERS_POLICY}}))
    assert [w.policy for w in application_workloads(settings)] == [PROJECT_DIR / ORDERS_POLICY]


@pytest.mark.parametrize("policy", ["../outside.json", "policies/../../outside.json", "/etc/policy.json", "policy.yaml"])
def test_fails_on_a_policy_path_outside_the_project_or_not_json(policy: str) -> None:
    assert one_problem(config({"shop": {**SHOP, "policy": policy}})) == (
        f'applications.shop.policy: "{policy}" is not allowed; name a .json file in the project, relative, without '
        "'..', e.g. 'argocd/applications/orders/policy.json'"
    )


def test_fails_on_a_revision_for_an_application_of_this_repository() -> None:
    """It runs at each colour's gitops_revision, like the App of Apps: a revision of its own would be ignored."""
    problems = problems_of(
        config(
            {"shop": {**SHOP, "source": {"path": "charts/shop", "revision": "v1"}}},
            colours=two_colours({}, {"shop": {"revision": "v2"}}),
        )
    )
    assert problems == (
        'applications.shop.source.revision: "v1" is not allowed; an application of this repository runs at each '
        "colour's gitops_revision",
        'clusters.green.applications.shop.revision: "v2" is not allowed; shop comes from this repository, so green runs '
        "it at clusters.green.gitops_revision",
    )


def test_fails_on_an_image_tag_for_an_application_without_an_image() -> None:
    problem = one_problem(config({"shop": SHOP}, colours=two_colours({}, {"shop": {"image_tag": "1.0"}})))
    assert problem == (
        'clusters.green.applications.shop.image_tag: "1.0" is not allowed; applications.shop has no image of the '
        "project's (set applications.shop.image)"
    )


# From another repository, without a default revision.
ELSEWHERE: dict[str, Any] = {**SHOP, "source": {"repo_url": REPO, "path": "charts/shop"}}


def test_fails_on_an_application_of_another_repository_without_a_revision_for_a_colour_without_weight() -> None:
    problem = one_problem(config({"shop": ELSEWHERE}, colours=two_colours({"shop": {"revision": "v1"}})))
    assert problem == (
        f"clusters.green.applications.shop.revision: null is not allowed; shop comes from {REPO}: name the revision "
        "green runs, here or as applications.shop.source.revision"
    )


def test_fails_on_an_application_of_another_repository_without_a_revision_for_a_colour_alone() -> None:
    """Alone, a colour with weight may inherit its release, but there is no revision to inherit."""
    problem = one_problem(config({"shop": ELSEWHERE}))
    assert problem == (
        f"clusters.blue.applications.shop.revision: null is not allowed; shop comes from {REPO}: name the revision "
        "blue runs, here or as applications.shop.source.revision"
    )
    alone = validated(config({"shop": {**ELSEWHERE, "source": {**ELSEWHERE["source"], "revision": "v1"}}}))
    assert alone.release("blue").applications["shop"].revision == "v1"


@pytest.mark.parametrize(
    ("source", "inherited"),
    [
        ({"repo_url": REPO, "path": "charts/shop", "revision": "v1"}, {"revision": "v1", "image_tag": "1.0"}),
        ({"repo_url": REPO, "path": "charts/shop"}, {"revision": "(none)", "image_tag": "1.0"}),
        ({"path": "charts/shop"}, {"image_tag": "1.0"}),  # of this repository: it follows blue's gitops_revision
    ],
    ids=["another-repository", "another-repository-without-a-default", "this-repository"],
)
def test_fails_on_a_colour_serving_beside_another_that_inherits_its_applications_release(
    source: dict[str, Any], inherited: dict[str, str]
) -> None:
    colours = two_colours({})
    colours["green"] = {
        **colours["blue"],
        "kubernetes_version": "1.36",
        "weight": 1,
        "applications": {"shop": {"revision": "v1", "image_tag": "1.0"}},
    }
    if "repo_url" not in source:
        colours["green"]["applications"] = {"shop": {"image_tag": "1.0"}}
    problem = one_problem(config({"shop": {**SHOP, "source": source, "image": {"tag": "1.0"}}}, colours=colours))
    named = {f"applications.shop.{key}": value for key, value in inherited.items()}
    assert problem == (
        f"clusters.blue: {json.dumps(named)} is not allowed; blue serves traffic (weight 100) beside another colour, so "
        "its entry names its whole release and nothing but an edit of clusters.blue changes what it runs; these keys "
        "would be inherited from the project (with the values shown). Read what blue runs now (its state: `terraform "
        "-chdir=cdktf.out/stacks/blue show`, or `cdktf diff blue` once pinned: no change means the pins are right) and "
        "set each under clusters.blue"
    )


def test_fails_on_a_colour_entry_for_an_application_that_is_not_configured() -> None:
    """A misspelt (or removed) application's entry would otherwise be ignored, and the colour run the defaults."""
    problem = one_problem(
        config(
            {"shop": {**SHOP, "image": {}}}, colours=two_colours({"shop": {"image_tag": "1.0"}}, {"shpo": {"image_tag": "2.0"}})
        )
    )
    assert problem == (
        'clusters.green.applications.shpo: {"image_tag": "2.0"} is not allowed; no application shpo in applications '
        "(configured: shop); name one of them, or remove the entry"
    )


@pytest.mark.parametrize(
    ("image", "allowed"),
    [(None, "{colour} ({image_tag} needs an image)"), ({"tag": "1.0"}, "{colour}, {image_tag}")],
    ids=["without-image", "with-image"],
)
def test_fails_on_an_expected_answer_with_a_placeholder_synth_does_not_fill(image: dict[str, Any] | None, allowed: str) -> None:
    shop = {**SHOP, "probe": {"expect_json": {"colour": "{colour}", "release": "{version}"}}}
    problem = one_problem(config({"shop": {**shop, **({"image": image} if image else {})}}))
    assert problem == f'applications.shop.probe.expect_json.release: "{{version}}" is not allowed; placeholders are {allowed}'


def test_fails_on_an_image_tag_placeholder_for_an_application_without_an_image() -> None:
    problem = one_problem(config({"shop": {**SHOP, "probe": {"expect_json": {"release": "{image_tag}"}}}}))
    assert problem == (
        'applications.shop.probe.expect_json.release: "{image_tag}" is not allowed; placeholders are {colour} '
        "({image_tag} needs an image)"
    )


def test_fails_on_an_image_repository_outside_the_project() -> None:
    problem = one_problem(config({"shop": {**SHOP, "image": {"repository": "team/shop"}}}))
    assert problem == (
        'applications.shop.image.repository: "team/shop" is not allowed; name it under eks-bg/ (the deployer may '
        "manage only the project's repositories), e.g. 'eks-bg/shop'"
    )


def test_fails_on_two_applications_with_one_image_repository() -> None:
    """Common makes one repository per application with an image: outlet's name is shop's by default."""
    apps = {"shop": {**SHOP, "image": {}}, "outlet": {**SHOP, "host": "outlet", "image": {"repository": "eks-bg/shop"}}}
    problem = one_problem(config(apps))
    assert problem == (
        'applications.outlet.image.repository: "eks-bg/shop" is not allowed; applications.shop\'s image repository is '
        "eks-bg/shop already: give each application its own"
    )


def test_fails_on_an_image_build_from_another_repository_it_cannot_clone() -> None:
    shop = {**SHOP, "source": {"repo_url": "git@github.com:acme/shop.git", "path": "charts/shop", "revision": "v1"}}
    raw = config({"shop": {**shop, "image": {"buildspec": "buildspec.yml"}}}, image={"build_connection_arn": CONNECTION_ARN})
    assert one_problem(raw) == (
        'applications.shop.source.repo_url: "git@github.com:acme/shop.git" is not allowed; the image build of shop '
        "clones it: set it to the https:// URL of its repository"
    )


@pytest.mark.parametrize(
    ("setting", "value", "allowed"),
    [
        ("service", {"port": 0}, ("service.port", 0, "use a port 1-65535")),
        ("service", {"name": "Web"}, ("service.name", "Web", "use a Kubernetes Service name: lowercase letters, digits or '-'")),
        (
            "service_account",
            "Api",
            ("service_account", "Api", "use a Kubernetes ServiceAccount name: lowercase letters, digits or '-'"),
        ),
        (
            "namespace",
            "a" * 64,
            ("namespace", "a" * 64, "use a Kubernetes namespace name: 1-63 lowercase letters, digits or '-'"),
        ),
        ("health_check_path", "healthz", ("health_check_path", "healthz", "use an absolute URL path such as '/healthz'")),
        ("probe", {"status": 500}, ("probe.status", 500, "use an HTTP status 200-399")),
        ("wave", 51, ("wave", 51, "use a sync wave 1-50")),
        ("min_requests", -1, ("min_requests", -1, "use 0 or more requests")),
        ("image", {"tag": ":latest"}, ("image.tag", ":latest", "use an image tag (letters, digits, '._-')")),
    ],
)
def test_fails_on_an_applications_own_setting_out_of_its_range(setting: str, value: Any, allowed: tuple[str, Any, str]) -> None:
    key, bad, text = allowed
    problem = one_problem(config({"shop": {**SHOP, setting: value}}))
    assert problem == f"applications.shop.{key}: {json.dumps(bad)} is not allowed; {text}"


def test_fails_on_more_applications_than_the_shared_load_balancers_rules_allow() -> None:
    """A public host per application and a preview host per application and colour: 17 applications in 5 colours
    need 102 rules, 16 need 96."""
    colours = {"blue": {"kubernetes_version": "1.35", "weight": 100, **named_release(applications={})}}
    colours |= {f"c{n}": {"kubernetes_version": "1.35"} for n in range(2, FORWARD_TARGET_GROUPS + 1)}
    apps = {f"app{n}": {**SHOP, "host": f"app{n}"} for n in range(17)}
    problem = one_problem(config(apps, colours=colours))
    assert problem == (
        f'applications: "17 applications, 5 colours" is not allowed; they need 102 listener rules (a public host per '
        "application, and per application and colour a preview host: 1 rule(s), 3 networks of eks.public_access_cidrs a "
        f"rule) on the shared load balancer, which allows {ALB_RULES} (AWS's default quota 'Rules per Application Load "
        "Balancer'): split the applications between projects, run fewer colours at once, or name fewer preview networks"
    )
    del apps["app16"]
    assert len(validated(config(apps, colours=colours)).applications) == 16


def test_fails_on_values_under_the_key_the_platform_writes() -> None:
    problem = one_problem(config({"shop": {**SHOP, "values": {"replicaCount": 2, "blueGreen": {"colour": "red"}}}}))
    assert problem == (
        'applications.shop.values.blueGreen: {"colour": "red"} is not allowed; the platform writes this key (the '
        "colour's facts about the application: model/values.py) and would replace it; read it in the chart, or name "
        "your own values otherwise"
    )


def test_fails_on_more_colours_than_a_weighted_forward_holds() -> None:
    colours = {"blue": {"kubernetes_version": "1.35", "weight": 100, **named_release(applications={})}}
    colours |= {f"c{n}": {"kubernetes_version": "1.35"} for n in range(2, FORWARD_TARGET_GROUPS + 2)}
    problem = one_problem(config({"shop": SHOP}, colours=colours))
    assert problem == (
        f"clusters: {json.dumps(list(colours))} is not allowed; a weighted forward holds at most 5 target groups, one per "
        "colour (AWS quota 'Target groups per action'): retire a colour first"
    )
    # Without applications there is no forward: the colours are not bounded by it.
    assert len(validated(config({}, colours=colours)).clusters) == FORWARD_TARGET_GROUPS + 1


def test_fails_on_a_colour_named_like_the_traffic_stack() -> None:
    problem = one_problem({"clusters": {"traffic": {"kubernetes_version": "1.35", "weight": 100}}})
    assert problem == (
        'clusters.traffic: "traffic" is not allowed; a colour is a stack name and DNS label: 1-20 lowercase letters, '
        "digits or '-', starting with a letter, not 'common' or 'traffic'"
    )


def test_warns_while_an_application_runs_the_default_image_tag_naming_the_colours() -> None:
    settings = validated(config({"shop": {**SHOP, "image": {}}}, colours=two_colours({"shop": {"image_tag": "1.0"}})))
    assert [w for w in config_warnings(settings) if "image" in w] == [
        "applications.shop.image.tag is the default '0.1.0' (green run it): build and push its image "
        "(docs/applications.md) and set applications.shop.image.tag (or clusters.<colour>.applications.shop.image_tag) "
        "to the tag the build prints"
    ]


# --- the keys of the sample-app era -------------------------------------------------------------------------------

MOVED = "(docs/upgrading.md: applications as data)"


# Written out here, not imported: the message a deployment from before #29/#30 meets, as docs/upgrading.md promises it.
CONTRACT_1_GONE = (
    "contract 1 is no longer written: retire that colour with the release before this one (docs/upgrading.md: "
    "applications as data, traffic outside the clusters) first"
)


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (
            {"dns": {"app_host": "shop"}},
            "dns.app_host: \"shop\" is not allowed; the sample app's host is now an application's: applications.<name>.host "
            + MOVED,
        ),
        (
            {"app": {"image_tag": "3f2c1a9"}},
            'app: {"image_tag": "3f2c1a9"} is not allowed; the sample app is now an application (applications.<name>): '
            "app.image_tag is applications.<name>.image.tag; app.delivery is gone (Argo CD delivers every application) " + MOVED,
        ),
        (
            {"app": {"delivery": "helm"}},
            'app: {"delivery": "helm"} is not allowed; the sample app is now an application (applications.<name>): '
            "app.image_tag is applications.<name>.image.tag; app.delivery is gone (Argo CD delivers every application) " + MOVED,
        ),
        (
            {"clusters": {"blue": {"kubernetes_version": "1.35", "weight": 100, "image_tag": "3f2c1a9"}}},
            'clusters.blue.image_tag: "3f2c1a9" is not allowed; a colour\'s image tag is now per application: '
            "clusters.<colour>.applications.<name>.image_tag " + MOVED,
        ),
        (
            {"image": {"repository": "eks-bg/sample-app"}},
            'image.repository: "eks-bg/sample-app" is not allowed; an application\'s ECR repository is '
            "applications.<name>.image.repository " + MOVED,
        ),
        (
            {"clusters": {"blue": {"kubernetes_version": "1.35", "weight": 100, "legacy_application": "sample-app"}}},
            'clusters.blue.legacy_application: "sample-app" is not allowed; ' + CONTRACT_1_GONE,
        ),
        (
            {"traffic": {"record_ttl": 60}},
            "traffic.record_ttl: 60 is not allowed; it was the TTL of the records a colour with legacy_application had "
            "its ExternalDNS write: remove the key; " + CONTRACT_1_GONE,
        ),
    ],
    ids=[
        "dns.app_host",
        "app.image_tag",
        "app.delivery",
        "clusters.colour.image_tag",
        "image.repository",
        "clusters.colour.legacy_application",
        "traffic.record_ttl",
    ],
)
def test_fails_on_a_retired_key_saying_where_it_moved(raw: dict[str, Any], problem: str) -> None:
    assert one_problem(raw) == problem
