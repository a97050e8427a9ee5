"""The configurations the suite synthesizes and loads, all committed and owned by the project: the shipped
example (examples/blue-green.json, what README documents and a new project starts from) and the variants
below. Never the operator's cdktf.json: a team edits that and runs `make test` in CI.

No jsii import here: config tests stay fast.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from model.config import DEFAULT_IMAGE_TAG, INTERFACE_ENDPOINTS, Config
from model.loading import config_file, config_from_dict, raw_config_file
from model.paths import EXAMPLE_CONFIG, PROJECT_DIR

EXAMPLE_FILE = EXAMPLE_CONFIG  # the configuration the project ships: README's diagram comes from it

# The network the suite's configurations let reach the clusters' API, as an operator's would be: a documentation range
# (RFC 5737 TEST-NET-2), not the shipped placeholder (TEST-NET-3), which synth warns about. A configuration with the
# public endpoint must name its networks (model/config/); one of the suite that says nothing of them names this one.
OPERATORS_NETWORK = "198.51.100.0/24"


def with_api_access(raw: Any) -> Any:
    """raw, its `eks.public_access_cidrs` the operators' network unless it names its own or turns the public endpoint
    off (anything but a JSON object as it is: the refusal tests' bad input)."""
    eks = raw.get("eks", {}) if isinstance(raw, Mapping) else None
    if not isinstance(eks, Mapping) or "public_access_cidrs" in eks or eks.get("endpoint_public_access") is False:
        return raw
    return {**raw, "eks": {**eks, "public_access_cidrs": [OPERATORS_NETWORK]}}


def validated(raw: Any, *, source: str = "config") -> Config:
    """A configuration of the suite, validated as synth does (model.loading.config_from_dict), with the operators'
    network unless it says otherwise."""
    return config_from_dict(with_api_access(raw), source=source)


def example_raw() -> dict[str, Any]:
    """The shipped example as data, without its `$schema` (a variant is this with keys replaced)."""
    return raw_config_file(EXAMPLE_FILE)


def example() -> Config:
    """The shipped example, validated as `cdktf synth` in the project would (state beside the project)."""
    return config_file(EXAMPLE_FILE, project_dir=PROJECT_DIR)


# The example's colours, for tests that run once per colour.
EXAMPLE_COLOURS = tuple(example().clusters)


def release_of(applications: Mapping[str, Any]) -> dict[str, Any]:
    """What a colour serving beside another names of these applications in its entry (model/config/), at each one's
    own defaults: its image tag (an application with `image`) and its revision (one from another repository)."""
    named: dict[str, Any] = {}
    for name, app in applications.items():
        entry = {}
        if "image" in app:
            entry["image_tag"] = app["image"].get("tag", DEFAULT_IMAGE_TAG)
        if "repo_url" in app.get("source", {}) and "revision" in app["source"]:
            entry["revision"] = app["source"]["revision"]
        if entry:
            named[name] = entry
    return named


# A revision a serving colour may follow without synth's warning or the shift's refusal: a full commit SHA never moves,
# so model/revisions.py needs no lookup to know it (this one is the commit the shipped example's tag points at).
PINNED_COMMIT = "ab5ebe726ffff1786bf1da0e6f832ebc527f2827"


def named_release(**overrides: Any) -> dict[str, Any]:
    """Every part of a colour's release, named in its entry as a serving colour's must be (model/config/):
    today's platform defaults, `main`, and the example's applications at their defaults, unless overridden."""
    serving = Config().clusters["blue"].model_dump(mode="json", exclude_unset=True)
    release = {key: serving[key] for key in ("platform", "gitops_revision")}
    return {**release, "applications": release_of(SAMPLE_APPLICATIONS), **overrides}


def retiring_blue() -> dict[str, Any]:
    """The shipped example once green has taken all the traffic: blue without weight, about to be retired, following
    the checkout's own commit (HEAD), which Git has wherever the suite runs, so that what Argo CD renders of blue's
    release at its revision exists (tests/support/fake_clusters.py)."""
    from model.revisions import commit_of

    raw = example_raw()
    head = commit_of("HEAD", key="clusters.blue.gitops_revision")
    blue = {**raw["clusters"]["blue"], "weight": 0, "gitops_revision": head}
    return {**raw, "clusters": {"blue": blue, "green": {**raw["clusters"]["green"], "weight": 100}}}


# The example's applications (the sample app): what a config of the tests runs unless it says otherwise.
SAMPLE_APPLICATIONS: dict[str, Any] = example_raw()["applications"]
SAMPLE_APP = "sample-app"
# Three applications, as a team has them: the sample app; one from another Git repository without AWS permissions,
# in a namespace it shares with the next; one from another repository with a policy of its own and an image.
ANOTHER_REPO = "https://github.com/acme/shop.git"
ORDERS_POLICY = "tests/fixtures/applications/orders/policy.json"
THREE_APPLICATIONS: dict[str, Any] = {
    SAMPLE_APP: SAMPLE_APPLICATIONS[SAMPLE_APP],  # three whatever else the example runs
    "catalogue": {
        "host": "catalogue",
        "source": {"repo_url": ANOTHER_REPO, "path": "charts/catalogue", "revision": "catalogue-v1.8.0"},
        "namespace": "shop",
        "service": {"name": "catalogue-web", "port": 8080},
        "health_check_path": "/health",
        "probe": {"path": "/health"},
        "min_requests": 0,
        "values": {"replicaCount": 3},
        "group": "shop",  # its own Argo CD project, with orders
    },
    "orders": {
        "host": "orders",
        "source": {"repo_url": ANOTHER_REPO, "path": "charts/orders", "revision": "orders-v4.2.1"},
        "namespace": "shop",
        "service_account": "orders-api",
        "policy": ORDERS_POLICY,
        "probe": {"path": "/status", "expect_json": {"colour": "{colour}", "release": "{image_tag}"}},
        "image": {"tag": "4.2.1"},
        "wave": 2,
        "group": "shop",
    },
}


# Single sign-on to Argo CD: the Secrets Manager secret's name (never a value) and the admin groups.
SSO_SECRET_NAME = "eks-bg/argocd-sso-client"
ARGOCD_SSO: dict[str, Any] = {
    "url": "https://argocd.acme.internal",
    "sso": {
        "name": "Okta",
        "issuer": "https://acme.okta.com",
        "client_id": "0oa8f2acme",
        "client_secret": SSO_SECRET_NAME,
        "requested_scopes": ["openid", "profile", "email", "groups"],
    },
    "admin_groups": ["platform-admins", "sre on call"],
}

# The other side of the example's switches, in one synthesis (each costs a second or two): per-AZ NAT in two AZs,
# deletion protection off, the load balancer's access logs on, a private-only API endpoint with an extra admin and the
# traffic operator's read-only access, a third colour, one colour with pinned add-ons and spot ARM nodes, three
# applications in two groups, an image and a Git URL of its own, Argo CD behind single sign-on.
ADMIN_ROLE = "arn:aws:iam::123456789012:role/platform-admins"
DEPLOYER_ROLE = "arn:aws:iam::123456789012:role/ci/deployer-eks-bg"  # the pipeline's deployer, with a path
TRAFFIC_OPERATOR_ROLE = "arn:aws:iam::123456789012:role/traffic-operator-eks-bg"  # the pipeline's traffic operator
PINNED_ADDONS = {"vpc-cni": "v1.20.4-eksbuild.2", "coredns": "v1.12.4-eksbuild.1"}
REPO_URL = "https://github.com/acme/eks-blue-green.git"
ACME_SECRET = "acme/argocd/github"  # the Secrets Manager secret of the variant's repository credential


def _serving(image_tag: str) -> dict[str, Any]:
    # Every application of the variant, the sample app at image_tag.
    return named_release(applications={**release_of(THREE_APPLICATIONS), SAMPLE_APP: {"image_tag": image_tag}})


VARIANT_PREVIEW_CIDRS = ["198.51.100.0/24", "192.0.2.0/25", "192.0.2.128/25", "100.64.10.0/24", "100.64.99.8/29"]
VARIANT: dict[str, Any] = {
    "applications": {
        **THREE_APPLICATIONS,
        SAMPLE_APP: {**SAMPLE_APPLICATIONS[SAMPLE_APP], "image": {"tag": "4d5e6f7a", "buildspec": "app/buildspec.yml"}},
    },
    # One credential opens this project's repository and the shop's (both under github.com/acme/).
    "gitops": {"repo_url": REPO_URL, "credentials": {"acme": {"url": "https://github.com/acme/", "secret": ACME_SECRET}}},
    "argocd": ARGOCD_SSO,
    "network": {"nat": "per_az", "az_count": 2, "cidr": "10.8.0.0/20", "interface_endpoints": list(INTERFACE_ENDPOINTS)},
    "deletion_protection": False,
    "traffic": {
        "access_logs_bucket": "acme-log-archive",
        "waf": {"enabled": True, "count_only": False},
        "stickiness_seconds": 600,
        # A private API endpoint gives the preview hosts no networks to default to. Five that merge into four: two
        # rules per preview host (three networks a rule, model/preview_access.py).
        "preview_cidrs": VARIANT_PREVIEW_CIDRS,
    },
    "eks": {
        "admin_role_arns": [ADMIN_ROLE],
        "deployer_role_arn": DEPLOYER_ROLE,
        "traffic_operator_role_arn": TRAFFIC_OPERATOR_ROLE,
        "endpoint_public_access": False,
        "public_access_cidrs": [],
    },
    "clusters": {
        "blue": {
            "kubernetes_version": "1.33",
            "weight": 10,
            **_serving("4d5e6f7a"),
            "addon_versions": PINNED_ADDONS,
            "nodes": {
                "capacity_type": "SPOT",
                "instance_types": ["m7g.large", "m6g.large"],
                "ami_type": "AL2023_ARM_64_STANDARD",
            },
        },
        "green": {"kubernetes_version": "1.34", "weight": 200, **_serving("4d5e6f7a")},
        "purple": {"kubernetes_version": "1.35", "weight": 0},
    },
}
# The variant with every optional part on as well: the image build (a made-up connection). All else is the variant's.
CONNECTION_ARN = "arn:aws:codeconnections:ap-northeast-1:123456789012:connection/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"
EVERYTHING_ON: dict[str, Any] = {**VARIANT, "image": {"build_connection_arn": CONNECTION_ARN}}


def write_project(directory: Path, config: Any, *, in_file: bool = False) -> Path:
    """directory/cdktf.json holding config (with the operators' network unless it says otherwise: with_api_access) as
    `context.config`, or, with in_file, naming directory/config.json that holds it. Returns the cdktf.json path."""
    config = with_api_access(config)
    cdktf = {"language": "python", "app": "python main.py", "context": {"config": "config.json" if in_file else config}}
    if in_file:
        (directory / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    path = directory / "cdktf.json"
    path.write_text(json.dumps(cdktf, indent=2) + "\n")
    return path


def suite_inputs() -> dict[str, Any]:
    """What the suite synthesizes and loads, and what the generated docs say, as data: the same in every copy of
    the project whatever its cdktf.json says (tests/test_operator_edits.py). Paths relative to the project."""
    from scripts import docs
    from scripts.policies_readme import table

    def as_data(config: Config) -> dict[str, Any]:
        data = config.model_dump(mode="json")
        data["state"]["directory"] = str(Path(data["state"]["directory"]).relative_to(PROJECT_DIR))
        return data

    return {
        "example": as_data(example()),
        "example_colours": list(EXAMPLE_COLOURS),
        "everything_on": config_from_dict(EVERYTHING_ON).model_dump(mode="json"),
        "docs_from": str(docs.DOCUMENTED.relative_to(PROJECT_DIR)),
        "schema": docs.schema_text(),
        "reference": docs.reference_table(),
        "compatibility": docs.compatibility_table(),
        "roles": table(),
    }
