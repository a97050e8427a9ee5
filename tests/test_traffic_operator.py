"""The identity that may only move traffic (issue #30 item 8): policies/traffic_operator.json, filled for a project and
written by `python -m policies.deployer` beside the deployer's policies as `traffic-operator-<project>`.

Proven the way the deployer's policy is (tests/support/iam_evaluation.py decides as IAM does): every row the call table
(tests/support/deployer_calls.yaml) lists for `python -m tools.shift --status`, `--now`, the gated shift and readiness is
allowed; a deploy's calls and anything outside this project's rules, weights and lock are refused. The rehearsal
(tests/test_rehearsal.py) runs `--now` and `--status` as an IAM user holding only this policy, with IAM enforced.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from model.routes import (
    PREVIEW,
    PUBLIC,
    ROUTE_TAG,
    events_topic_name,
    load_balancer_name,
    lock_path,
    shift_record_log_group,
    weights_parameter,
)
from policies.deployer import MANAGED_POLICY_LIMIT, Deployer, operator_document, operator_policy_name, size
from tests.support.deployer_calls import calls, default_tags, known_values
from tests.support.iam_evaluation import Request, decide
from tests.test_deployer_documents import ACCOUNT, minimal, realistic

DEPLOYERS = {"realistic": realistic, "defaults": minimal}
# The table's entries the operator runs: the shift's four modes (--history stands for --report too), readiness (the
# gated shift's check, which an on-call may run alone: python -m tools.readiness <colour>), and the shift job's
# reachability check before it.
SMALL_SET = ("commands.tools.shift --status", "commands.tools.shift --now", "commands.tools.shift --history")
GATED = ("commands.tools.shift", "commands.tools.readiness", "commands.scripts.ci.reach_cluster")


def statements(deployer: Deployer) -> list[dict[str, Any]]:
    return list(operator_document(deployer)["Statement"])


def refused(deployer: Deployer, policy: list[dict[str, Any]], owners: tuple[str, ...]) -> list[str]:
    tags = default_tags(deployer)
    return [
        f"{call.name()} on {request.resource}: {decision.why}"
        for call in calls(deployer)
        if call.owner in owners
        for request in call.requests(tags)
        if not (decision := decide(policy, request)).allowed
    ]


@pytest.mark.parametrize("name", DEPLOYERS)
def test_the_drain_and_the_status_are_allowed_by_the_small_set(name: str) -> None:
    """`--now` and `--status` need no statement but the load balancer's reads, the public rules, the weights and the
    lock: without the readiness statement (EKS) they still pass."""
    deployer = DEPLOYERS[name]()
    small = [s for s in statements(deployer) if s["Sid"] != "ReadinessOfTheProjectsClustersForTheGatedShift"]
    assert len(small) == len(statements(deployer)) - 1
    assert refused(deployer, small, SMALL_SET) == []


@pytest.mark.parametrize("name", DEPLOYERS)
def test_the_gated_shift_and_readiness_are_allowed(name: str) -> None:
    deployer = DEPLOYERS[name]()
    assert refused(deployer, statements(deployer), GATED) == []
    small = [s for s in statements(deployer) if s["Sid"] != "ReadinessOfTheProjectsClustersForTheGatedShift"]
    assert any(":eks:" in row or "eks:" in row for row in refused(deployer, small, GATED))  # the readiness statement is why


def test_every_mode_of_the_shift_is_in_the_table() -> None:
    owners = {call.owner for call in calls(realistic())}
    assert set(SMALL_SET) | set(GATED) <= owners


@pytest.mark.parametrize("name", DEPLOYERS)
def test_nothing_a_deploy_does_is_allowed_but_what_the_shift_does_itself(name: str) -> None:
    """Of every call the table lists (each resource type's create, update, delete and tags, every command's), the
    operator may make only actions the shift's own rows make: reads, the weighted rules, the weights and the lock."""
    deployer = DEPLOYERS[name]()
    tags = default_tags(deployer)
    shifts = {call.action for call in calls(deployer) if call.owner in SMALL_SET + GATED}
    beyond = sorted(
        {
            f"{call.owner}: {call.action}"
            for call in calls(deployer)
            if call.owner not in SMALL_SET + GATED
            for request in call.requests(tags)
            if decide(statements(deployer), request).allowed and call.action not in shifts
        }
    )
    assert beyond == []
    creates = [call for call in calls(deployer) if call.when == "create" and not call.action.split(":")[1].startswith("Describe")]
    allowed = [call.name() for call in creates if any(decide(statements(deployer), r).allowed for r in call.requests(tags))]
    assert allowed == []  # no create of any resource type, the load balancer's included


def refused_requests(deployer: Deployer) -> dict[str, Request]:
    """What a deploy, or a mistake, would ask: each must be denied."""
    known = known_values(deployer)
    elb = f"arn:aws:elasticloadbalancing:{known['REGION']}:{ACCOUNT}"
    project = deployer.config.project
    ssm = f"arn:aws:ssm:{known['REGION']}:{ACCOUNT}:parameter"
    logs = f"arn:aws:logs:{known['REGION']}:{ACCOUNT}"
    ours = {"aws:ResourceTag/Project": project, "aws:ResourceTag/ManagedBy": "cdktf"}
    listener = f"{elb}:listener/app/{project}-traffic/50dc6c495c0c9188/f2f7dc8efc522ab2"
    rule = f"{elb}:listener-rule/app/{project}-traffic/50dc6c495c0c9188/f2f7dc8efc522ab2/9683b2d02a6cabee"
    return {
        "create the load balancer": Request(
            "elasticloadbalancing:CreateLoadBalancer",
            f"{elb}:loadbalancer/app/{project}-traffic/50dc6c495c0c9188",
            {"aws:RequestTag/Project": project},
        ),
        "add a listener rule": Request("elasticloadbalancing:CreateRule", listener, {"aws:RequestTag/Project": project}),
        "delete a public rule": Request(
            "elasticloadbalancing:DeleteRule", rule, {**ours, f"aws:ResourceTag/{ROUTE_TAG}": PUBLIC}
        ),
        "change the HTTPS listener": Request("elasticloadbalancing:ModifyListener", listener, ours),
        "register a target": Request(
            "elasticloadbalancing:RegisterTargets", f"{elb}:targetgroup/{project}-sample-app-blue/73e2d6bc24d8a067", ours
        ),
        "modify a preview rule": Request(
            "elasticloadbalancing:ModifyRule", rule, {**ours, f"aws:ResourceTag/{ROUTE_TAG}": PREVIEW}
        ),
        "modify a rule not tagged with the project": Request(
            "elasticloadbalancing:ModifyRule", rule, {f"aws:ResourceTag/{ROUTE_TAG}": PUBLIC}
        ),
        "modify another load balancer's rule": Request(
            "elasticloadbalancing:ModifyRule",
            f"{elb}:listener-rule/app/k8s-shop-checkout-5f4e3d2c1b/0a1b2c3d4e5f6071/8192a3b4c5d6e7f8/9a0b1c2d3e4f5061",
            {**ours, f"aws:ResourceTag/{ROUTE_TAG}": PUBLIC},
        ),
        "write another project's weights": Request("ssm:PutParameter", f"{ssm}/another-team/traffic/weights"),
        "write another parameter of the project": Request("ssm:PutParameter", f"{ssm}/{project}/database/password"),
        "read another parameter of the project": Request("ssm:GetParameter", f"{ssm}/{project}/database/password"),
        "delete the weights": Request("ssm:DeleteParameter", f"{ssm}/{project}/traffic/weights"),
        "create the weights parameter with tags": Request(
            "ssm:PutParameter",
            f"{ssm}/{project}/traffic/weights",
            {"aws:RequestTag/Project": project, "aws:TagKeys": ["ManagedBy", "Project"]},
        ),
        "upgrade a cluster": Request(
            "eks:UpdateClusterVersion", f"arn:aws:eks:{known['REGION']}:{ACCOUNT}:cluster/{project}-blue"
        ),
        "describe another team's cluster": Request(
            "eks:DescribeCluster", f"arn:aws:eks:{known['REGION']}:{ACCOUNT}:cluster/another-teams-cluster"
        ),
        "pass a role": Request(
            "iam:PassRole", f"arn:aws:iam::{ACCOUNT}:role/{project}-sample-app", {"iam:PassedToService": "pods.eks.amazonaws.com"}
        ),
        "change a record": Request("route53:ChangeResourceRecordSets", "arn:aws:route53:::hostedzone/Z0123456789SUBZONE"),
        "write into another log group of the project": Request(
            "logs:PutLogEvents", f"{logs}:log-group:/aws/eks/{project}-blue/cluster:log-stream:kube-apiserver-1"
        ),
        "read another log group of the project": Request(
            "logs:GetLogEvents", f"{logs}:log-group:/vpc/{project}/flow-logs:log-stream:eni-0a1b2c3d4e5f60718-all"
        ),
        "delete the shift record": Request("logs:DeleteLogGroup", f"{logs}:log-group:{shift_record_log_group(project)}"),
        "shorten the shift record's retention": Request(
            "logs:PutRetentionPolicy", f"{logs}:log-group:{shift_record_log_group(project)}"
        ),
        "delete a run from the shift record": Request(
            "logs:DeleteLogStream", f"{logs}:log-group:{shift_record_log_group(project)}:log-stream:20261129T045600Z-1a2b3c4d"
        ),
    }


@pytest.mark.parametrize("name", DEPLOYERS)
@pytest.mark.parametrize("what", list(refused_requests(realistic())))
def test_a_deploy_or_a_mistake_is_refused(name: str, what: str) -> None:
    deployer = DEPLOYERS[name]()
    assert not decide(statements(deployer), refused_requests(deployer)[what]).allowed


def test_the_weighted_rule_of_the_table_is_allowed_only_with_its_tags() -> None:
    """The proof is not vacuous: the shift's ModifyRule row is allowed because the rule carries the Project and Route
    tags, and refused the moment either is missing."""
    deployer = realistic()
    (modify,) = [c for c in calls(deployer) if c.owner == "commands.tools.shift --now" and c.action.endswith(":ModifyRule")]
    (request,) = modify.requests(default_tags(deployer))
    assert decide(statements(deployer), request).allowed
    for key in ("aws:ResourceTag/Project", f"aws:ResourceTag/{ROUTE_TAG}"):
        without = Request(request.action, request.resource, {k: v for k, v in request.context.items() if k != key})
        assert not decide(statements(deployer), without).allowed, key


@pytest.mark.parametrize("name", DEPLOYERS)
def test_the_policy_is_one_small_managed_policy_of_the_projects_names(name: str) -> None:
    """Its literal names are the ones the code gives: the load balancer, the parameters, the public rules' tag, the
    events topic, the shift record."""
    deployer = DEPLOYERS[name]()
    document = operator_document(deployer)
    # Small: within half of a managed policy's limit (the gated shift's analysis, alarms and Prometheus, and the events
    # topic took it past a third), so one policy holds it with room to spare.
    assert size(document) < MANAGED_POLICY_LIMIT // 2
    text = json.dumps(document)
    project = deployer.config.project
    assert f"listener-rule/app/{load_balancer_name(project)}/*" in text
    assert f"parameter{weights_parameter(project)}" in text
    assert f"parameter{lock_path(project)}" in text
    assert f'"aws:ResourceTag/{ROUTE_TAG}": "{PUBLIC}"' in text
    assert f':sns:{deployer.config.region}:{deployer.account}:{events_topic_name(project)}"' in text
    assert f':logs:{deployer.config.region}:{deployer.account}:log-group:{shift_record_log_group(project)}"' in text
    assert operator_policy_name(project) == f"traffic-operator-{project}"
    assert "deployer-" not in operator_policy_name(project)
