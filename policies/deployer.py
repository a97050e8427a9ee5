"""The IAM policies the identity that runs `cdktf deploy` (and the shift, the retirement, the destroy hook) needs,
filled for this project, as managed-policy documents split by concern:

    .venv/bin/python -m policies.deployer --account 123456789012 \\
        --deployer-role-arn arn:aws:iam::123456789012:role/platform-deployer --out deployer-policies

writes `deployer-<project>-<concern>.json` into the directory and prints the `aws iam create-policy` and
`attach-role-policy` (or, with `--user`, `attach-user-policy`) commands for them. Without `--out` it prints the
documents as one JSON object, by policy name.

First it writes `boundary-<project>.json` (policies/boundary.json, filled: policies/boundary.py), the permissions
boundary every role of the project carries; an administrator creates it once, before the first deploy, and attaches it
to nobody: the deployer may create roles only with it and can never change it.

Beside them it writes `traffic-operator-<project>.json` (policies/traffic_operator.json, filled): the identity that may
only move traffic (`python -m tools.shift`, `--now`, `--status`) and nothing else, for an on-call engineer or a CI job
in a protected environment; `--traffic-operator-role-arn` (or `--traffic-operator-user`) names who gets it.

Reads project, region, names and state backend from cdktf.json (`--config`). The statements for the S3 state, the
image build and the deploying role's session lookup are left out when the project does not use them. Every
document stays under IAM's limit for one managed policy (MANAGED_POLICY_LIMIT, counted without whitespace).
The template is policies/deployer.json; what each statement is for, and why some name any resource, is in
policies/README.md. tests/support/deployer_calls.yaml lists the AWS calls the policy must allow, by resource type and
operator command (tests/test_deployer_calls.py evaluates each against the filled policy).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import policies
from model.config import Config, applications
from model.loading import ConfigError, load_config
from policies import boundary

TEMPLATE = "deployer"
# The traffic operator's policy: the shift's calls on this project's load balancer rules, weights and lock only.
OPERATOR_TEMPLATE = "traffic_operator"
OPERATOR_PREFIX = "traffic-operator-"
# IAM's limit for one customer managed policy: 6,144 characters, whitespace not counted.
MANAGED_POLICY_LIMIT = 6144
# Policy names start with this, never with `<project>-`: the deployer manages `<project>-*` policies, and must not be
# able to rewrite its own (a Deny statement in the template names this prefix too).
NAME_PREFIX = "deployer-"
# A value no real deployment has, for placeholders of statements left out (they are dropped before output).
UNUSED = "UNUSED"
_ROLE_ARN = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:role/(?:[\w+=,.@-]+/)*[\w+=,.@-]{1,64}$")

# Each document: what it is for, and the statements of the template it holds. Every statement is in exactly one.
DOCUMENTS: dict[str, tuple[str, ...]] = {
    "read": ("ReadsAwsAuthorizesOnlyOnAnyResource",),
    "network": (
        "CreateNetworkAndLaunchTemplatesTaggedWithTheProject",
        "TagOnCreateOrWithTheProjectTag",
        "ChangeNetworkAndLaunchTemplatesTaggedWithTheProject",
        "FreeTheNatAddressFromTheInterfaceAwsMadeForIt",
        "EksChecksNodesMayLaunchFromTheProjectsLaunchTemplates",
        "WhatANodeFromALaunchTemplateUses",
        "NewRulesOfTheProjectsSecurityGroupsTaggedWithTheProject",
        "AdmitTheSharedLoadBalancerToTheProjectsClusterSecurityGroups",
    ),
    "dns": (
        "ZonesAndRecordsAnyHostedZoneId",
        "TagZonesTheCallNamesHealthChecksToo",
        "CreateHostedZoneNamesNoResource",
        "WaitForRecordChanges",
        "ChangeOnlyTheSubZonesDelegationAndValidationRecords",
        "TheApplicationsAliasRecordsInTheSubZone",
        "RequestCertificatesTaggedWithTheProject",
        "CertificatesOfThisAccount",
        "DeleteCertificatesTaggedWithTheProject",
    ),
    "identity": (
        "RolesAndPoliciesNamedForTheProject",
        "CreateRolesAndPutTheirPoliciesOnlyWithTheBoundary",
        "AttachOnlyTheProjectsAndTheEksManagedPolicies",
        "DetachTheProjectsAndTheEksManagedPolicies",
        "PassClusterAndNodeRolesToEks",
        "PassNodeRolesToTheInstancesEksLaunches",
        "PassSharedRolesToPodIdentityAssociations",
        "PassTheFlowLogRoleToVpcFlowLogs",
        "ServiceLinkedRolesEksAndElbCreateOnFirstUse",
        "SessionContextReadsTheDeployingRole",
        "NeverChangeTheDeployersOrTheTrafficOperatorsPolicies",
        "NeverChangeOrDeleteTheBoundary",
        "NeverRemoveARolesBoundary",
        "NeverARoleWithoutTheBoundary",
        "NeverAttachAnotherPolicy",
        "NeverPassARoleToAnotherService",
    ),
    "clusters": (
        "CreateClustersTaggedWithTheProject",
        "ClustersOfTheProjectAndWhatIsBoundToThem",
        "GrantOnlyTheClusterAdminAccessPolicy",
        "DescribeEveryClusterCommonsGuardLooksAt",
        "ReadTheEksOptimizedAmiReleasesAwsPublishes",
        "CreateKeysTaggedWithTheProject",
        "KeysOfThisAccountNotByTagTagsReachKmsLate",
        "EksGrantsItselfTheClusterKey",
        "LogGroupsOfTheProject",
    ),
    "data": (
        "TheSampleTable",
        "TheImageRepositories",
        "TheImageBuildProject",
        "PassTheImageBuildRolesToCodeBuild",
        "UseTheConfiguredConnection",
        "PassTheConfiguredConnection",
        "StateObjectsAndTheirLockFiles",
        "ListTheStateBucket",
    ),
    "traffic": (
        "CreateTheSharedLoadBalancerAndItsPartsTaggedWithTheProject",
        "ChangeTheSharedLoadBalancerAndItsPartsTaggedWithTheProject",
        "ReorderTheSharedLoadBalancersRulesItsNameOnly",
        "TheLiveWeightsAndTheTrafficLock",
        "TheShiftsEventsTopicItsPolicyAndItsEvents",
        "TheShiftRecordsRunsWrittenAndRead",
        "TheSharedLoadBalancersWebAclAndTheManagedRuleGroupsItNames",
        "PutTheWebAclInFrontOfTheSharedLoadBalancer",
        "WafAttachesAndLogsOnNoResourceType",
    ),
}


@dataclass(frozen=True)
class Deployer:
    """What the policy is filled for: the project's configuration, its account, and who deploys."""

    config: Config
    account: str
    role_arns: tuple[str, ...] = ()  # the roles that run cdktf (their sessions are looked up with iam:GetRole)

    @property
    def builds_images(self) -> bool:
        """Common makes an image build: the connection is set and an application names a buildspec."""
        return bool(self.config.image.build_connection_arn) and any(
            app.config.image is not None and app.config.image.buildspec for app in applications(self.config)
        )

    @property
    def state_in_s3(self) -> bool:
        return self.config.state.backend == "s3"

    @property
    def guards_with_waf(self) -> bool:
        """The traffic stack puts a web ACL in front of the shared load balancer (traffic.waf.enabled)."""
        return self.config.traffic.waf.enabled


# Statements a project needs only with an option; every other statement is always written.
OPTIONAL: dict[str, Callable[[Deployer], bool]] = {
    "SessionContextReadsTheDeployingRole": lambda d: bool(d.role_arns),
    "TheImageBuildProject": lambda d: d.builds_images,
    "PassTheImageBuildRolesToCodeBuild": lambda d: d.builds_images,
    "UseTheConfiguredConnection": lambda d: d.builds_images,
    "PassTheConfiguredConnection": lambda d: d.builds_images,
    "StateObjectsAndTheirLockFiles": lambda d: d.state_in_s3,
    "ListTheStateBucket": lambda d: d.state_in_s3,
    "TheSharedLoadBalancersWebAclAndTheManagedRuleGroupsItNames": lambda d: d.guards_with_waf,
    "PutTheWebAclInFrontOfTheSharedLoadBalancer": lambda d: d.guards_with_waf,
    "WafAttachesAndLogsOnNoResourceType": lambda d: d.guards_with_waf,
}


def partition(region: str) -> str:
    return "aws-cn" if region.startswith("cn-") else "aws-us-gov" if region.startswith("us-gov-") else "aws"


def policy_name(project: str, concern: str) -> str:
    return f"{NAME_PREFIX}{project}-{concern}"


def values(deployer: Deployer) -> dict[str, str]:
    """Every placeholder of the template, filled for the project (UNUSED for an option it does not use)."""
    config = deployer.config
    connection = config.image.build_connection_arn
    return {
        "ACCOUNT_ID": deployer.account,
        "PARTITION": partition(config.region),
        "PROJECT": config.project,
        "REGION": config.region,
        "SUB_ZONE": config.dns.zone_name,
        "TABLE_NAME": config.table.name,
        "STATE_BUCKET": config.state.bucket or UNUSED,
        "STATE_KEY_PREFIX": config.state.key_prefix or UNUSED,
        "CONNECTION_ARN": connection or UNUSED,
        # The action prefix matches the ARN's: codeconnections, or codestar-connections for older connections.
        "CONNECTION_SERVICE": connection.split(":")[2] if connection else "codeconnections",
        "DEPLOYER_ROLE_ARN": deployer.role_arns[0] if deployer.role_arns else UNUSED,
        "BOUNDARY_ARN": boundary.policy_arn(
            partition=partition(config.region), account_id=deployer.account, project=config.project
        ),
    }


def needed(sid: str, deployer: Deployer) -> bool:
    return sid not in OPTIONAL or OPTIONAL[sid](deployer)


def statements(deployer: Deployer) -> dict[str, dict[str, Any]]:
    """The template's statements this project needs, filled, by Sid."""
    filled = json.loads(policies.render(TEMPLATE, **values(deployer)))
    kept = {s["Sid"]: s for s in filled["Statement"] if needed(s["Sid"], deployer)}
    if deployer.role_arns and "SessionContextReadsTheDeployingRole" in kept:
        kept["SessionContextReadsTheDeployingRole"]["Resource"] = list(deployer.role_arns)
    left = [sid for sid, statement in kept.items() if UNUSED in json.dumps(statement)]
    if left:
        raise ValueError(f"statements {left} hold a value of an option the project does not use")
    return kept


def operator_policy_name(project: str) -> str:
    return f"{OPERATOR_PREFIX}{project}"


def operator_document(deployer: Deployer) -> dict[str, Any]:
    """The traffic operator's policy (policies/traffic_operator.json), filled for the project."""
    config = deployer.config
    filled: dict[str, Any] = json.loads(
        policies.render(
            OPERATOR_TEMPLATE,
            ACCOUNT_ID=deployer.account,
            PARTITION=partition(config.region),
            PROJECT=config.project,
            REGION=config.region,
        )
    )
    return filled


def boundary_document(deployer: Deployer) -> dict[str, Any]:
    """The project's permissions boundary (policies/boundary.json), filled for the project."""
    config = deployer.config
    return boundary.document(partition=partition(config.region), account_id=deployer.account, project=config.project)


def written_documents(deployer: Deployer) -> dict[str, dict[str, Any]]:
    """What `--out` writes: the permissions boundary, the deployer's managed policies, then the traffic operator's."""
    return {
        boundary.policy_name(deployer.config.project): boundary_document(deployer),
        **documents(deployer),
        operator_policy_name(deployer.config.project): operator_document(deployer),
    }


def documents(deployer: Deployer) -> dict[str, dict[str, Any]]:
    """Each managed policy of the deployer, by name: `deployer-<project>-<concern>` -> its document."""
    kept = statements(deployer)
    return {
        policy_name(deployer.config.project, concern): {
            "Version": "2012-10-17",
            "Statement": [kept[sid] for sid in sids if sid in kept],
        }
        for concern, sids in DOCUMENTS.items()
    }


def size(document: Mapping[str, Any]) -> int:
    """Characters IAM counts against a managed policy's limit: the JSON without whitespace."""
    return len(re.sub(r"\s", "", json.dumps(document)))


@dataclass(frozen=True)
class Holders:
    """Who a policy is attached to: IAM roles (by ARN), or one IAM user."""

    role_arns: tuple[str, ...] = ()
    user: str | None = None

    def attach(self, arn: str, placeholder: str) -> list[str]:
        if self.user:
            return [f"aws iam attach-user-policy --user-name {shlex.quote(self.user)} --policy-arn {arn}"]
        roles = [role.rsplit("/", 1)[1] for role in self.role_arns] or [placeholder]
        return [f"aws iam attach-role-policy --role-name {role} --policy-arn {arn}" for role in roles]


def commands(
    deployer: Deployer, written: Mapping[str, Path], user: str | None = None, operators: Holders = Holders()
) -> list[str]:
    """The AWS CLI commands that create each written document and attach the deployer's to the deploying roles (or the
    user), the traffic operator's to the operators; the boundary's is created first and attached to no one (each role
    of the project names it as its permissions boundary)."""
    config = deployer.config
    created = [
        f"aws iam create-policy --policy-name {name} --policy-document {shlex.quote(f'file://{path}')}"
        for name, path in written.items()
    ]
    arns = {name: f"arn:{partition(config.region)}:iam::{deployer.account}:policy/{name}" for name in written}
    operator = operator_policy_name(config.project)
    deployers = Holders(deployer.role_arns, user)
    attached = [
        line
        for name, arn in arns.items()
        if name not in (operator, boundary.policy_name(config.project))
        for line in deployers.attach(arn, "<the-deploying-role-name>")
    ]
    if operator in arns:
        attached += operators.attach(arns[operator], "<the-traffic-operator-role-name>")
    return created + attached


def write(deployer: Deployer, directory: Path) -> dict[str, Path]:
    """Each document (the deployer's, the traffic operator's) as `<directory>/<name>.json`; refuses a document above the
    managed-policy limit."""
    directory.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, document in written_documents(deployer).items():
        if size(document) >= MANAGED_POLICY_LIMIT:
            raise ValueError(f"{name} is {size(document)} characters without whitespace; IAM allows {MANAGED_POLICY_LIMIT}")
        path = directory / f"{name}.json"
        path.write_text(json.dumps(document, indent=2) + "\n")
        written[name] = path
    return written


def config_unless_refused(problems: Sequence[str], path: Path) -> Config | None:
    """The project's configuration, or None once the problems with the command line, or the configuration's own,
    are printed (the commands then exit 2)."""
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return None
    try:
        return load_config(path)
    except ConfigError as err:
        print(err, file=sys.stderr)
        return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m policies.deployer", description=__doc__.split("\n\n")[0])
    parser.add_argument("--account", required=True, help="the AWS account ID (12 digits)")
    parser.add_argument("--config", type=Path, default=Path("cdktf.json"), help="the project file (default: cdktf.json)")
    parser.add_argument(
        "--deployer-role-arn",
        action="append",
        default=[],
        help="a role that runs cdktf (an SSO or CI role; repeat for more): a colour's plan looks its session up with "
        "iam:GetRole, and the printed commands attach the policies to it. Leave out when an IAM user deploys",
    )
    parser.add_argument("--user", help="attach the policies to this IAM user instead of the roles")
    parser.add_argument(
        "--traffic-operator-role-arn",
        action="append",
        default=[],
        help="a role that may only move traffic (an on-call role, a protected CI job's role; repeat for more): the "
        "printed commands attach traffic-operator-<project> to it",
    )
    parser.add_argument("--traffic-operator-user", help="attach traffic-operator-<project> to this IAM user instead")
    parser.add_argument("--out", type=Path, help="write one file per policy into this directory and print the commands")
    args = parser.parse_args(argv)
    problems = (
        []
        if re.fullmatch(r"\d{12}", args.account)
        else [f"--account: {args.account!r} is not allowed; use the 12-digit account ID"]
    )
    problems += [
        f"--{flag}: {arn!r} is not allowed; use a role ARN: arn:aws:iam::<account>:role/<path/><name>"
        for flag, arns in (
            ("deployer-role-arn", args.deployer_role_arn),
            ("traffic-operator-role-arn", args.traffic_operator_role_arn),
        )
        for arn in arns
        if not _ROLE_ARN.match(arn)
    ]
    config = config_unless_refused(problems, args.config)
    if config is None:
        return 2
    deployer = Deployer(config, args.account, tuple(args.deployer_role_arn))
    if args.out is None:
        print(json.dumps(written_documents(deployer), indent=2))
        return 0
    written = write(deployer, args.out)
    for name, path in written.items():
        print(f"# {name}: {size(json.loads(path.read_text()))} of {MANAGED_POLICY_LIMIT} characters", file=sys.stderr)
    operators = Holders(tuple(args.traffic_operator_role_arn), args.traffic_operator_user)
    print("\n".join(commands(deployer, written, args.user, operators)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
