"""The identities GitHub Actions runs the pipeline as, filled for this project:

    .venv/bin/python -m policies.pipeline --account 123456789012 --github-repository example-corp/platform \\
        --out pipeline-identities

writes into the directory the trust policy of each of the three roles the workflows assume through GitHub's OIDC
provider (`trust-<role>.json`) and the plan role's policy (`plan-<project>.json`), and prints the `aws iam` commands
that create the OIDC provider (once per account), the roles and the plan role's policy, and the `gh variable set`
commands that give the workflows each role's ARN. Without `--out` it prints the documents as one JSON object.

- `plan-<project>` (PLAN_ROLE_ARN): a pull request's job, `repo:<owner>/<repo>:pull_request`; may only read what
  `terraform plan -lock=false` of every stack reads (policies/plan.json).
- the deployer (DEPLOY_ROLE_ARN; `deployer-<project>` unless `--deployer-role-name`): a job in the deploy
  environment, `repo:<owner>/<repo>:environment:<deploy>`; its policies are policies.deployer's.
- `traffic-operator-<project>` (TRAFFIC_ROLE_ARN): a job in the traffic environment (protected, approval needed),
  `repo:<owner>/<repo>:environment:<traffic>`; its policy is policies.deployer's traffic-operator-<project>; in each
  colour's cluster it reads Argo CD's Applications only (`eks.traffic_operator_role_arn`).

The deployer and the traffic operator allow sessions of four hours (MAX_SESSION_SECONDS), what their longest jobs ask
for (a retire, a gated shift); the plan role keeps IAM's one hour.

Subjects, from GitHub's "OpenID Connect reference", example subject claims (docs.github.com/en/actions/reference/
security/oidc): a job that names an environment gets `repo:ORG/REPO:environment:NAME`, a pull_request event's job
(naming none) `repo:ORG/REPO:pull_request`, a branch's job naming none `repo:ORG/REPO:ref:refs/heads/BRANCH`. The
audience is `sts.amazonaws.com` with aws-actions/configure-aws-credentials, and IAM keys the claims as
`token.actions.githubusercontent.com:aud` and `:sub` (GitHub's "Configuring OpenID Connect in Amazon Web Services";
IAM User Guide, "Create a role for OpenID Connect federation", which asks for the `sub` condition). Each trust pins
both with StringEquals: one repository and one context, no wildcard. AWS supports no custom claims (GitHub's AWS
page), so `sub` is the only pin on the job; GitHub's own rules on the environment do the rest.

Why the deployer trusts the environment and not `ref:refs/heads/main`: the ref subject is issued to every job on
main that names no environment, in every workflow, the test job running `make test` and its third-party packages
among them; the environment subject only to a job that names it, and GitHub starts such a job only when the
environment's protection rules pass (deployment branches: main only; reviewers if wanted). So the environment is
the narrower set of jobs, and the branch is pinned by GitHub before the token exists. Configure the deploy
environment with "Deployment branches: main", the traffic environment with required reviewers.

Why plans run `-lock=false`: a plan writes no state, and an S3 object is replaced whole, so a plan without the lock
reads the state before or after a concurrent apply, never half of it; the deploy on merge plans again under the
lock. Without the lock the plan role writes nothing at all: no pull request can hold a `.tflock` that blocks a deploy
or delete the deployer's. A plan that takes the lock is refused (AccessDenied on `<key>.tflock`).

None of the three roles carries the project's permissions boundary: the boundary caps what the deployer may grant
the roles it creates (`<project>-*`), and these are created by an administrator, named outside `<project>-*`, so
the deployer can neither create nor change them (tests/test_pipeline_identities.py). The plan role's own policy
is its cap: reads only, proven against the call table.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import policies
from policies.deployer import (
    OPERATOR_PREFIX,
    UNUSED,
    Deployer,
    config_unless_refused,
    operator_policy_name,
    partition,
    values,
)

PLAN_TEMPLATE = "plan"
TRUST_TEMPLATE = "github_trust"
PLAN_PREFIX = "plan-"
DEPLOYER_ROLE_PREFIX = "deployer-"
PROVIDER_HOST = "token.actions.githubusercontent.com"
AUDIENCE = "sts.amazonaws.com"
DEFAULT_DEPLOY_ENVIRONMENT = "deploy"
DEFAULT_TRAFFIC_ENVIRONMENT = "traffic"
DEFAULT_CONFIG = Path("cdktf.json")
# The plan role, the deployer, the traffic operator: the repository variable each role's ARN goes to (the workflows
# read them).
VARIABLES = {"plan": "PLAN_ROLE_ARN", "deployer": "DEPLOY_ROLE_ARN", "traffic": "TRAFFIC_ROLE_ARN"}
# The longest session each role's jobs ask for (configure-aws-credentials' `role-duration-seconds` in the workflows,
# where the numbers are argued), and so the role's `MaxSessionDuration`: STS refuses a longer DurationSeconds than the
# role allows, and a role allows one hour unless told otherwise, at most 43200 s (IAM API reference, CreateRole
# MaxSessionDuration; STS AssumeRoleWithWebIdentity DurationSeconds). The plan role keeps the hour: a plan takes minutes.
# Four hours each: a retire's teardown at its longest (traffic.teardown_timeout_seconds 7200) and Terraform's deletes of
# the node group and cluster after it (up to 60 and 15 minutes); a gated shift of 25 steps of up to 9 minutes after
# readiness (traffic.shift.step 4), where the default 5 steps of ~7 minutes already crowd the hour.
MAX_SESSION_SECONDS = {"deployer": 4 * 3600, "traffic": 4 * 3600}
# Statements needed only with the S3 backend (a local state is read from the runner's disk).
S3_STATEMENTS = ("ReadTheStacksStatesNeverTheirLockFiles", "ListTheStateBucket")
_REPOSITORY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$")
_ENVIRONMENT = re.compile(r"^[A-Za-z0-9._-]{1,255}$")
_ROLE_NAME = re.compile(r"^[\w+=,.@-]{1,64}$")


@dataclass(frozen=True)
class Pipeline:
    """The project's deployer facts, the GitHub repository and its two environments, and the deployer role's name."""

    deployer: Deployer
    repository: str  # owner/repo
    deploy_environment: str = DEFAULT_DEPLOY_ENVIRONMENT
    traffic_environment: str = DEFAULT_TRAFFIC_ENVIRONMENT
    deployer_role: str = ""  # default: deployer-<project>

    def role_names(self) -> dict[str, str]:
        project = self.deployer.config.project
        return {
            "plan": plan_policy_name(project),
            "deployer": self.deployer_role or f"{DEPLOYER_ROLE_PREFIX}{project}",
            "traffic": f"{OPERATOR_PREFIX}{project}",
        }

    def subjects(self) -> dict[str, str]:
        """The one `sub` claim each role trusts."""
        repo = f"repo:{self.repository}"
        return {
            "plan": f"{repo}:pull_request",
            "deployer": f"{repo}:environment:{self.deploy_environment}",
            "traffic": f"{repo}:environment:{self.traffic_environment}",
        }

    def role_arn(self, role: str) -> str:
        return f"arn:{partition(self.deployer.config.region)}:iam::{self.deployer.account}:role/{self.role_names()[role]}"


def plan_policy_name(project: str) -> str:
    return f"{PLAN_PREFIX}{project}"


def provider_arn(deployer: Deployer) -> str:
    return f"arn:{partition(deployer.config.region)}:iam::{deployer.account}:oidc-provider/{PROVIDER_HOST}"


def plan_document(deployer: Deployer) -> dict[str, Any]:
    """policies/plan.json filled for the project; the state's statements only with the S3 backend."""
    filled: dict[str, Any] = json.loads(policies.render_from(PLAN_TEMPLATE, values(deployer)))
    if not deployer.state_in_s3:
        filled["Statement"] = [s for s in filled["Statement"] if s["Sid"] not in S3_STATEMENTS]
    if UNUSED in json.dumps(filled):
        raise ValueError(f"{PLAN_TEMPLATE}: a statement holds a value of an option the project does not use")
    return filled


def trust_document(deployer: Deployer, subject: str) -> dict[str, Any]:
    """policies/github_trust.json: GitHub's OIDC provider of this account, for tokens of one `sub` only."""
    filled: dict[str, Any] = json.loads(
        policies.render(
            TRUST_TEMPLATE,
            PARTITION=partition(deployer.config.region),
            ACCOUNT_ID=deployer.account,
            GITHUB_SUBJECT=subject,
        )
    )
    return filled


def written_documents(pipeline: Pipeline) -> dict[str, dict[str, Any]]:
    """What `--out` writes, by file name (without .json): each role's trust, then the plan role's policy."""
    names, subjects = pipeline.role_names(), pipeline.subjects()
    project = pipeline.deployer.config.project
    return {f"trust-{names[role]}": trust_document(pipeline.deployer, subjects[role]) for role in VARIABLES} | {
        plan_policy_name(project): plan_document(pipeline.deployer)
    }


def commands(pipeline: Pipeline, written: Mapping[str, Path], config_file: Path = DEFAULT_CONFIG) -> list[str]:
    """The one-time commands: the OIDC provider (IAM verifies GitHub's certificate through its own trusted CAs, so
    no thumbprint: IAM API reference, CreateOpenIDConnectProvider, ThumbprintList), the three roles (the deployer's and
    the operator's with the sessions their jobs ask for, MAX_SESSION_SECONDS), the plan role's policy; the deployer's
    and the operator's policies are policies.deployer's (for the same project file); the variables the workflows read;
    and, when the project file does not name them yet, the deployer role as every cluster's admin
    (`eks.deployer_role_arn`: a plan as the plan role would otherwise replace the deployer's access) and the traffic
    operator's read-only access (`eks.traffic_operator_role_arn`: the gated shift's readiness reads Argo CD)."""
    deployer = pipeline.deployer
    project = deployer.config.project
    names = pipeline.role_names()
    plan_arn = f"arn:{partition(deployer.config.region)}:iam::{deployer.account}:policy/{plan_policy_name(project)}"

    def file(name: str) -> str:
        return shlex.quote(f"file://{written[name]}")

    config_option = "" if config_file == DEFAULT_CONFIG else f" --config {shlex.quote(str(config_file))}"
    deployer_arn, operator_arn = pipeline.role_arn("deployer"), pipeline.role_arn("traffic")
    eks = deployer.config.eks
    settings = []
    if eks.deployer_role_arn != deployer_arn:
        settings.append(
            f'# and in {config_file}\'s configuration: "eks": {{"deployer_role_arn": "{deployer_arn}"}} (now '
            f"{eks.deployer_role_arn or 'unset'}): the deployer stays every cluster's admin whoever plans"
        )
    if eks.traffic_operator_role_arn != operator_arn:
        settings.append(
            f'# and in {config_file}\'s configuration: "eks": {{"traffic_operator_role_arn": "{operator_arn}"}} (now '
            f"{eks.traffic_operator_role_arn or 'unset'}): the gated shift's readiness reads each colour's Argo CD "
            "Applications as the traffic operator, and nothing else in the cluster"
        )

    def longest(role: str) -> str:
        return f" --max-session-duration {MAX_SESSION_SECONDS[role]}" if role in MAX_SESSION_SECONDS else ""

    return [
        f"aws iam create-open-id-connect-provider --url https://{PROVIDER_HOST} --client-id-list {AUDIENCE}"
        "  # once per account; skip if it exists",
        *(
            f"aws iam create-role --role-name {names[role]} --assume-role-policy-document {file(f'trust-{names[role]}')}"
            f"{longest(role)}"
            for role in VARIABLES
        ),
        *(
            f"# a role created before: aws iam update-role --role-name {names[role]}{longest(role)}"
            for role in MAX_SESSION_SECONDS
        ),
        f"aws iam create-policy --policy-name {plan_policy_name(project)} --policy-document {file(plan_policy_name(project))}",
        f"aws iam attach-role-policy --role-name {names['plan']} --policy-arn {plan_arn}",
        f"python -m policies.deployer --account {deployer.account} --deployer-role-arn {pipeline.role_arn('deployer')} "
        f"--traffic-operator-role-arn {pipeline.role_arn('traffic')}{config_option} --out deployer-policies"
        f"  # then run what it prints: {operator_policy_name(project)} and the deployer's policies, attached",
        *(f"gh variable set {VARIABLES[role]} --body {pipeline.role_arn(role)}" for role in VARIABLES),
        *settings,
    ]


def write(pipeline: Pipeline, directory: Path) -> dict[str, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, document in written_documents(pipeline).items():
        path = directory / f"{name}.json"
        path.write_text(json.dumps(document, indent=2) + "\n")
        written[name] = path
    return written


def problems(args: argparse.Namespace) -> list[str]:
    checks = [
        ("account", args.account, re.compile(r"^\d{12}$"), "the 12-digit account ID"),
        ("github-repository", args.github_repository, _REPOSITORY, "<owner>/<repo>, as GitHub spells it"),
        ("deploy-environment", args.deploy_environment, _ENVIRONMENT, "letters, digits, '.', '_' and '-'"),
        ("traffic-environment", args.traffic_environment, _ENVIRONMENT, "letters, digits, '.', '_' and '-'"),
        ("deployer-role-name", args.deployer_role_name or "x", _ROLE_NAME, "an IAM role name (1-64 of [\\w+=,.@-])"),
    ]
    found = [
        f"--{flag}: {value!r} is not allowed; use {allowed}"
        for flag, value, pattern, allowed in checks
        if not pattern.match(value)
    ]
    if args.deploy_environment == args.traffic_environment:
        found.append(
            f"--traffic-environment: {args.traffic_environment!r} is the deploy environment too; "
            "use another, so a deploy job can never assume the traffic operator"
        )
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m policies.pipeline", description=__doc__.split("\n\n")[0])
    parser.add_argument("--account", required=True, help="the AWS account ID (12 digits)")
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG, help="the project file (default: cdktf.json)")
    parser.add_argument("--github-repository", required=True, help="owner/repo whose workflows assume the roles")
    parser.add_argument(
        "--deploy-environment",
        default=DEFAULT_DEPLOY_ENVIRONMENT,
        help=f"the GitHub environment of the deploy job, deployment branches main only (default: {DEFAULT_DEPLOY_ENVIRONMENT})",
    )
    parser.add_argument(
        "--traffic-environment",
        default=DEFAULT_TRAFFIC_ENVIRONMENT,
        help=f"the protected GitHub environment of the shift, with reviewers (default: {DEFAULT_TRAFFIC_ENVIRONMENT})",
    )
    parser.add_argument("--deployer-role-name", default="", help="the deployer role's name (default: deployer-<project>)")
    parser.add_argument("--out", type=Path, help="write one file per document into this directory and print the commands")
    args = parser.parse_args(argv)
    config = config_unless_refused(problems(args), args.config)
    if config is None:
        return 2
    pipeline = Pipeline(
        Deployer(config, args.account),
        args.github_repository,
        args.deploy_environment,
        args.traffic_environment,
        args.deployer_role_name,
    )
    if args.out is None:
        print(json.dumps(written_documents(pipeline), indent=2))
        return 0
    print("\n".join(commands(pipeline, write(pipeline, args.out), args.config)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
