"""Each colour's AWS Load Balancer Controller registers and deregisters targets only in this project's target groups
(issue #45). Decided as IAM decides (tests/support/iam_evaluation.py) on the controller's role policy as common synthesizes it,
for the groups the synthesized traffic stack makes (their names and tags, default tags included): every call the
controller makes here (upstream/calls.yaml of its component, read from its source) is allowed, and the same calls on
another project's groups are refused, where upstream's own policy would allow them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

import policies
from model.config import Config, cluster_name
from model.platform import component
from model.workloads import WORKLOADS
from tests.support.configs import EVERYTHING_ON, example, validated
from tests.support.iam_evaluation import Request, decide
from tests.support.synth import Synthesized

LBC = component("aws-load-balancer-controller")
CALLS: list[dict[str, Any]] = yaml.safe_load((LBC.folder / "upstream" / "calls.yaml").read_text())["calls"]
TARGET_CALLS = [row for row in CALLS if row["acts_on"] != ["any"]]
# The configuration each synthesized fixture holds.
CONFIGS: dict[str, Config] = {"example_app": example(), "everything_on": validated(EVERYTHING_ON)}
# What a deploy reads from the two data sources common's policies name: AWS's partition and the account.
PARTITION, ACCOUNT = "aws", "123456789012"
FILLED = {"${data.aws_partition.partition.partition}": PARTITION, "${data.aws_caller_identity.account.account_id}": ACCOUNT}
# The tag the controller puts on what it creates: its cluster's name (upstream's iam_policy.json conditions on it).
CLUSTER_TAG = "elbv2.k8s.aws/cluster"


@dataclass(frozen=True)
class Group:
    """A target group as IAM sees it: its ARN and its tags."""

    arn: str
    tags: dict[str, str]

    def request(self, call: str) -> Request:
        return Request(call, self.arn, {f"aws:ResourceTag/{key}": value for key, value in self.tags.items()})


def group_arn(region: str, name: str, account: str = ACCOUNT) -> str:
    return f"arn:{PARTITION}:elasticloadbalancing:{region}:{account}:targetgroup/{name}/0f1e2d3c4b5a6978"


def statements(app: Synthesized) -> list[dict[str, Any]]:
    """The controller's role policy as common synthesizes it, its data-source references read as a deploy reads them."""
    (role,) = [w for w in WORKLOADS if w.name == LBC.name]
    text = app.resource("common", "aws_iam_policy", f"{role.construct_id}/policy")["policy"]
    for reference, value in FILLED.items():
        text = text.replace(reference, value)
    assert "${" not in text, text
    found: list[dict[str, Any]] = json.loads(text)["Statement"]
    return found


def upstreams_statements() -> list[dict[str, Any]]:
    """Upstream's own policy (the committed copy of v3.5.0), which the project's was, statement for statement, before
    #45."""
    document: dict[str, Any] = json.loads((LBC.folder / "upstream" / "v3.5.0.json").read_text())
    return list(document["Statement"])


def shared_groups(app: Synthesized) -> list[Group]:
    """Every target group the traffic stack makes, with the tags AWS will hold on it (default tags and its own)."""
    traffic = app.json("traffic")
    (provider,) = traffic["provider"]["aws"]
    default = provider["default_tags"][0]["tags"]
    return [
        Group(group_arn(provider["region"], body["name"]), {**default, **body.get("tags", {})})
        for body in app.resources("traffic", "aws_lb_target_group").values()
    ]


def made_groups(config: Config) -> list[Group]:
    """A group each colour's controller makes for an Ingress (a colour at a revision from before #30; the policy still
    allows it: model/migrations, lbc-controller-made-groups): a name of its own
    (`k8s-<namespace>-<service>-<hash>`) and its cluster's name in elbv2.k8s.aws/cluster."""
    return [
        Group(group_arn(config.region, f"k8s-sampleap-sampleap-{i:010d}"), {CLUSTER_TAG: cluster_name(config, colour)})
        for i, colour in enumerate(config.clusters)
    ]


def foreign_groups(config: Config) -> dict[str, Group]:
    """Groups of the same account that are not this project's, each as it would be named and tagged."""
    project, region = config.project, config.region
    theirs = {"Project": "payments", "Stack": "traffic", "ManagedBy": "cdktf"}
    longer = f"{project}-x"  # a project whose name begins with this one's
    return {
        "another project's shared group": Group(group_arn(region, "payments-shop-blue"), theirs),
        "the group of a project whose name begins with this one's": Group(
            group_arn(region, f"{longer}-shop-blue"), {**theirs, "Project": longer}
        ),
        "another project's group its controller made": Group(
            group_arn(region, "k8s-shop-web-5f4e3d2c1b"), {CLUSTER_TAG: "payments-blue"}
        ),
        # Upstream lets every controller of the account tag any controller-made group (any key but the cluster's):
        # this project's tags on another project's group do not make it this project's.
        "another project's group tagged with this project's tags": Group(
            group_arn(region, "k8s-shop-web-5f4e3d2c1b"),
            {CLUSTER_TAG: "payments-blue", "Project": project, "Stack": "traffic"},
        ),
        "a group of this project that is not the shared load balancer's": Group(
            group_arn(region, f"{project}-shop-blue"), {"Project": project, "Stack": "blue", "ManagedBy": "cdktf"}
        ),
        "a group named like this project's in another account": Group(
            group_arn(region, f"{project}-shop-blue", account="210987654321"), {"Project": project, "Stack": "traffic"}
        ),
    }


def resources(row: dict[str, Any], app: Synthesized, config: Config) -> list[Request]:
    """The requests of one row of calls.yaml in this project: one per resource it acts on."""
    by_kind = {"shared": shared_groups(app), "made": made_groups(config)}
    requests = [Request(row["call"], "*") for kind in row["acts_on"] if kind == "any"]
    return requests + [group.request(row["call"]) for kind in row["acts_on"] if kind != "any" for group in by_kind[kind]]


@pytest.mark.parametrize("fixture", list(CONFIGS))
def test_every_call_the_controller_makes_here_is_allowed(fixture: str, request: pytest.FixtureRequest) -> None:
    app: Synthesized = request.getfixturevalue(fixture)
    config = CONFIGS[fixture]
    assert len(shared_groups(app)) == len(config.applications) * len(config.clusters)
    denied = [
        (asked.action, asked.resource, decision.why)
        for row in CALLS
        for asked in resources(row, app, config)
        if not (decision := decide(statements(app), asked)).allowed
    ]
    assert denied == []


@pytest.mark.parametrize("fixture", list(CONFIGS))
def test_another_projects_target_groups_are_refused(fixture: str, request: pytest.FixtureRequest) -> None:
    """Refused by the project's policy; allowed by upstream's (the check can fail: before #45 each was open)."""
    app: Synthesized = request.getfixturevalue(fixture)
    config = CONFIGS[fixture]
    ours, theirs = statements(app), upstreams_statements()
    for case, group in foreign_groups(config).items():
        for row in TARGET_CALLS:
            asked = group.request(row["call"])
            assert not decide(ours, asked).allowed, (case, row["call"])
            assert decide(theirs, asked).allowed, (case, row["call"])


def test_the_two_target_statements_are_the_documents_own() -> None:
    """The policy file names the tags and the name pattern by placeholders synth fills (PROJECT, TRAFFIC_STACK,
    CLUSTER_NAMES), none typed in: filled for another project, it admits that project's groups and not these."""
    from tests.test_policies import SAMPLES

    assert LBC.policy
    assert {"PROJECT", "TRAFFIC_STACK", "CLUSTER_NAMES"} <= policies.placeholders(LBC.policy)
    other = {**SAMPLES, "PROJECT": "payments", "CLUSTER_NAMES": "payments-*", "ACCOUNT_ID": ACCOUNT}
    document = json.loads(policies.render(LBC.policy, **{k: other[k] for k in policies.placeholders(LBC.policy)}))
    region = str(SAMPLES["REGION"])
    payments = Group(group_arn(region, "payments-shop-blue"), {"Project": "payments", "Stack": "traffic"})
    eks_bg = Group(group_arn(region, "eks-bg-shop-blue"), {"Project": "eks-bg", "Stack": "traffic"})
    assert decide(document["Statement"], payments.request("elasticloadbalancing:RegisterTargets")).allowed
    assert not decide(document["Statement"], eks_bg.request("elasticloadbalancing:RegisterTargets")).allowed
