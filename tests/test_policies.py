"""IAM policy gate: every document the project fills (those of policies/, each platform component's, in its folder of
argocd/apps/platform/, and each application's the suite's configurations name: the shipped example's and the
variant's), filled the way synth fills it, passes parliament with nothing above LOW, unless the finding is justified
below, next to its allow-list entry."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import pytest

import policies
from model.config import APPLICATION_POLICY_VALUES, application_workloads
from model.paths import PROJECT_DIR
from model.platform import COMPONENTS, REGISTRY
from model.policy_shape import policy_problem
from tests.support.configs import CONNECTION_ARN, VARIANT, example, validated

with warnings.catch_warnings():  # parliament imports the deprecated pkg_resources
    warnings.simplefilter("ignore")
    import parliament

POLICY_DIR = Path(policies.__file__).parent
NOT_IAM = {"ecr_lifecycle"}  # an ECR lifecycle policy, not an IAM document
# Each component's role policy, by its path under argocd/apps/platform/ (`external-dns/policy.json`): the registry says
# which components have one.
COMPONENT_POLICIES: dict[str, Path] = {
    c.policy.relative_to(REGISTRY).as_posix(): c.policy for c in COMPONENTS if c.policy is not None
}
# Each application's policy, by its path in the project (`argocd/applications/sample-app/policy.json`): the documents
# the configurations the suite synthesizes name (a team's own applications' are linted by their own `make test` only
# when a configuration of the suite names them).
APPLICATION_POLICIES: dict[str, Path] = {
    w.policy.relative_to(PROJECT_DIR).as_posix(): w.policy
    for config in (example(), validated(VARIANT))
    for w in application_workloads(config)
    if w.policy is not None
}
# Realistic values for every placeholder, as synth would fill them.
SAMPLES = {
    "ACCOUNT_ID": "123456789012",
    "PARTITION": "aws",
    "REGION": "ap-northeast-1",
    "TABLE_ARN": "arn:aws:dynamodb:ap-northeast-1:123456789012:table/eks-bg-users",
    "TOPIC_ARN": "arn:aws:sns:ap-northeast-1:123456789012:eks-bg-shift-events",
    "ZONE_ARN": "arn:aws:route53:::hostedzone/Z0123456789ABCDEFGHIJ",
    "LOG_GROUP_ARN": "arn:aws:logs:ap-northeast-1:123456789012:log-group:/vpc/eks-bg/flow-logs",
    "KEY_ARN": "arn:aws:kms:ap-northeast-1:123456789012:key/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b",
    "REPOSITORY_ARN": "arn:aws:ecr:ap-northeast-1:123456789012:repository/eks-bg/sample-app",
    "CONNECTION_ARN": CONNECTION_ARN,
    "CONNECTION_SERVICE": "codeconnections",
    "NAMESPACE": "kube-system",
    "SERVICE_ACCOUNT": "aws-load-balancer-controller",
    "CLUSTER_NAMES": "eks-bg-*",
    "PROJECT": "eks-bg",
    "TRAFFIC_STACK": "traffic",
    "STATE_BUCKET": "eks-bg-terraform-state",
    "STATE_KEY_PREFIX": "eks-bg",
    "SUB_ZONE": "eks.example.com",
    "TABLE_NAME": "eks-bg-users",
    "DEPLOYER_ROLE_ARN": "arn:aws:iam::123456789012:role/platform-deployer",
    "BOUNDARY_ARN": "arn:aws:iam::123456789012:policy/boundary-eks-bg",
    "GITHUB_SUBJECT": "repo:example-corporation/platform:environment:deploy",
    # A list: each configured secret by name, with the suffix Secrets Manager appends (model/external_secrets.py).
    "SECRET_ARNS": [
        "arn:aws:secretsmanager:ap-northeast-1:123456789012:secret:eks-bg/argocd/github-??????",
        "arn:aws:secretsmanager:ap-northeast-1:123456789012:secret:eks-bg/argocd/gitlab-??????",
    ],
}
TRUST_POLICY = (
    "a trust (resource-based) policy names a Principal and never a Resource; "
    "parliament reads every document as an identity policy"
)
# (document, parliament issue) -> why that finding is right for this document.
JUSTIFIED = {
    ("pod_identity_trust", "MALFORMED"): TRUST_POLICY,
    ("eks_cluster_trust", "MALFORMED"): TRUST_POLICY,
    ("ec2_trust", "MALFORMED"): TRUST_POLICY,
    ("flow_logs_trust", "MALFORMED"): TRUST_POLICY,
    ("codebuild_trust", "MALFORMED"): TRUST_POLICY,
    ("github_trust", "MALFORMED"): TRUST_POLICY,
    ("github_trust", "UNKNOWN_FEDERATION_SOURCE"): (
        "parliament knows the federation sources of its own list only; GitHub's OIDC provider is the one the workflows "
        "assume roles through, and tests/test_pipeline_identities.py decides which tokens each trust lets in"
    ),
    ("aws-load-balancer-controller/policy.json", "UNKNOWN_CONDITION_FOR_ACTION"): (
        "elasticloadbalancing:CreateAction is AWS's tag-on-create condition key, newer than parliament's action "
        "database; the document is the controller's upstream policy, kept unchanged"
    ),
    ("kms_key", "UNKNOWN_CONDITION_FOR_ACTION"): (
        "kms:EncryptionContext:aws:logs:arn is the encryption context CloudWatch Logs sends; the statement is AWS's "
        "documented key policy for encrypted log groups"
    ),
    ("kms_key", "MISMATCHED_TYPE"): "ArnLike on the logs encryption context is the form AWS documents for it",
    ("deployer", "RESOURCE_MISMATCH"): (
        "parliament wants every resource type an action may take in one statement: the shared load balancer's parts "
        "are named as application load balancer ARNs only (`/app/`, never `/net/`), and a new security group rule is "
        "allowed by its request tag in a statement of its own while its group needs the Project resource tag in "
        "another. IAM judges each resource of a request on its own; tests/test_deployer_calls.py proves every call"
    ),
    ("boundary", "UNKNOWN_CONDITION_FOR_ACTION"): (
        "iam:AWSServiceName is sent by iam:CreateServiceLinkedRole only: on every other iam:Create* action the key is "
        "missing, and a negated operator holds for a missing key (IAM's condition operators reference), so the Deny "
        "refuses every IAM create but the load balancers' service-linked role, and any create action AWS adds later; "
        "tests/test_deployer_boundary.py proves it on every IAM write parliament knows"
    ),
    ("traffic_operator", "RESOURCE_MISMATCH"): (
        "ModifyRule names the project's application load balancer's rules only (`listener-rule/app/...`), never a "
        "network load balancer's, which parliament also wants; tests/test_traffic_operator.py proves the calls"
    ),
}
ABOVE_LOW = {"MEDIUM", "HIGH", "CRITICAL"}


def every_document() -> dict[str, policies.Document]:
    """Every document the project fills, by the name this module gives it: those of policies/ by their name
    (`kms_key`), each component's by its path in the registry (`external-dns/policy.json`), each application's by its
    path in the project."""
    return {p.stem: p.stem for p in sorted(POLICY_DIR.glob("*.json"))} | dict(COMPONENT_POLICIES) | dict(APPLICATION_POLICIES)


def documents() -> list[str]:
    """The IAM documents among them."""
    return sorted(name for name in every_document() if name not in NOT_IAM)


def findings(name: str) -> list[tuple[str, str, Any]]:
    """(issue, severity, detail) of every finding above LOW."""
    document = every_document()[name]
    filled = policies.render(document, **{key: SAMPLES[key] for key in policies.placeholders(document)})
    analysed = parliament.analyze_policy_string(filled)
    severity = {f.issue: parliament.config.get(f.issue, {}).get("severity", "UNKNOWN") for f in analysed.findings}
    return [(f.issue, severity[f.issue], f.detail) for f in analysed.findings if severity[f.issue] in ABOVE_LOW]


def test_every_placeholder_has_a_sample() -> None:
    used = set().union(*(policies.placeholders(every_document()[name]) for name in documents()))
    assert used == set(SAMPLES)


@pytest.mark.parametrize("name", documents())
def test_policy_passes_parliament(name: str) -> None:
    unjustified = [(issue, severity, detail) for issue, severity, detail in findings(name) if (name, issue) not in JUSTIFIED]
    assert unjustified == []


def test_every_justification_is_still_needed() -> None:
    """An allow-list entry whose finding no longer occurs is removed, not left to hide a later one."""
    stale = [key for key in JUSTIFIED if key[1] not in {issue for issue, _, _ in findings(key[0])}]
    assert stale == []


@pytest.mark.parametrize("name", sorted(every_document()))
def test_no_document_names_a_partition(name: str) -> None:
    """ARNs take the partition the stack runs in ({{PARTITION}}), so aws-cn and aws-us-gov work too."""
    document = every_document()[name]
    path = document if isinstance(document, Path) else POLICY_DIR / f"{document}.json"
    assert re.findall(r"arn:aws[a-z-]*:", path.read_text()) == []


def test_the_applications_policies_are_linted_and_filled_with_what_synth_fills() -> None:
    """The sample app's (the example's) and the variant's orders; each one's placeholders are those synth fills for an
    application, and each passes the shape check synth runs (model/policy_shape.py)."""
    assert len(APPLICATION_POLICIES) >= 2, APPLICATION_POLICIES
    for name, path in APPLICATION_POLICIES.items():
        assert policies.placeholders(path) <= APPLICATION_POLICY_VALUES, name
        assert policy_problem(path, APPLICATION_POLICY_VALUES) is None, name


def test_every_document_of_a_component_folder_is_its_roles_policy() -> None:
    """A component's folder holds one document to fill, the one `identity.policy` names: none lies there unlinted, and
    each named one exists (upstream's copies, in upstream/, are data: tests/test_upstream_policies.py)."""
    in_folders = {p.relative_to(REGISTRY).as_posix() for p in REGISTRY.glob("*/*.json")}
    assert in_folders == set(COMPONENT_POLICIES)


def test_parliament_does_flag_a_broken_policy() -> None:
    broken = json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:dynamodb:::table/x"}],
        }
    )
    assert {f.issue for f in parliament.analyze_policy_string(broken).findings} == {"RESOURCE_MISMATCH"}


def test_render_refuses_missing_or_extra_values() -> None:
    with pytest.raises(ValueError, match=r"^policies/flow_logs_publish\.json needs \['LOG_GROUP_ARN'\], was given \[\]$"):
        policies.render("flow_logs_publish")
    with pytest.raises(ValueError, match="was given"):
        policies.render("pod_identity_trust", TABLE_ARN="x")


def test_a_document_given_by_its_path_is_checked_the_same_way(tmp_path: Path) -> None:
    """Any file, named by its path: a value missing or extra is refused, naming the file (by its place in the project:
    a component's policy)."""
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"Statement": [{"Resource": "{{ZONE_ARN}}"}, {"Resource": "arn:{{PARTITION}}:x"}]}))
    assert policies.placeholders(path) == {"ZONE_ARN", "PARTITION"}
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))} needs \['PARTITION', 'ZONE_ARN'\], was given \['EXTRA', "):
        policies.render(path, ZONE_ARN="z", PARTITION="aws", EXTRA="x")
    with pytest.raises(ValueError, match=r"needs \['ZONE_ARN'\], which are not available$"):
        policies.render_from(path, {"PARTITION": "aws"})
    filled = policies.render_from(path, {"PARTITION": "aws", "ZONE_ARN": "z", "TABLE_ARN": "t"})
    assert json.loads(filled) == {"Statement": [{"Resource": "z"}, {"Resource": "arn:aws:x"}]}
    name, component_policy = next((n, p) for n, p in COMPONENT_POLICIES.items() if policies.placeholders(p))
    with pytest.raises(ValueError, match=rf"^argocd/apps/platform/{re.escape(name)} needs "):
        policies.render_from(component_policy, {})


def test_the_roles_table_in_policies_readme_is_what_the_documents_say() -> None:
    """Regenerate it with `make docs` (python -m scripts.policies_readme) after changing a role or a document."""
    from scripts.policies_readme import README, rewritten

    text = README.read_text()
    assert "| `<project>-vpc-cni` |" in text
    assert text == rewritten(text)


# --- the deploying identity's policy: tests/test_deployer_documents.py and tests/test_deployer_calls.py -------------
