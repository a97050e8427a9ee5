"""Rehearsal: the user's own `cdktf deploy common` and `cdktf deploy traffic` through the pinned CLI, the traffic
moved, and the way out (`cdktf destroy` refused while protected, then destroyed as the deployer), against an AWS API
emulator (moto). Terraform and the AWS APIs act on what we generate: the result is read back with boto3, re-planned
for drift, used by the cluster stacks' plans, and destroyed.

Deployments of the same configuration (the shipped example's applications and colours), each on an emulator of its
own, side by side (most of each is the AWS provider's own waits, ~60 s of them the load balancer's): `project` is
deployed by `cdktf deploy common` and `cdktf deploy traffic`, read back, re-planned, used by the colours' plans and
refused a destroy of either stack while protected; `retirement` runs on a thread meanwhile, on an emulator that
enforces IAM: common and traffic applied as the deployer (an IAM user that holds only the deployer's managed
policies, policies/deployer.py, as README tells a user to create them), the traffic drained to the colour without
weight by the traffic operator (an IAM user holding only policies/traffic_operator.json) with `python -m tools.shift
--now`, a plan of traffic that wants nothing back, then the way out: the deploy workflow's step (`python -m
scripts.ci.deploy_stacks common traffic`, a deploy from Git after the shift, which must leave the live weights alone)
lifts common's protection (traffic is deployed unprotected there: `retirement` says why), and `terraform destroy` of
traffic. common's own way out, as the deployer too, runs on a third emulator from the start (`retirement` says why):
applied unprotected, an image pushed to its repository, destroyed. A further thread runs a pull request's pipeline
scripts in a depth-1 clone against `project`'s emulator and state (`pull_request`).

The two ways out are scenarios (tests/support/scenario.py): each step has a name, a test reads the steps it checks,
and a step that fails stops its scenario and fails every test of a later step with "step X failed earlier: ...". What
starts when is explicit: `deployment` takes `ways_out` (the longer path starts first), and everything that runs during
the AWS provider's waits runs on the module's one pool of threads (`beside`), for the rehearsal's time budget.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from cdktf import App

from model.config import applications, image_repository_name, shared_roles
from model.loading import load_config
from model.paths import PROJECT_DIR
from model.routes import (
    APPLICATION_TAG,
    COLOUR_TAG,
    PREVIEW,
    PUBLIC,
    ROUTE_TAG,
    SET_IDENTIFIER,
    load_balancer_name,
    target_group_name,
    weights_parameter,
)
from policies.deployer import Deployer
from scripts import rehearse
from scripts.emulator import MotoProcess, client
from scripts.rehearse import (
    DEPLOYER_USER,
    EMULATOR_ACCOUNT,
    OPERATOR_USER,
    Identities,
    Rehearsal,
    StepFailedError,
    Traffic,
    calls_of,
    create_parent_zone,
    drain_target,
    enforce_deployer,
    expected_hosts,
    live_weights,
    read_traffic,
    register_pod,
    scheme,
    shift_now,
    shift_status,
)
from scripts.scratch_project import Project, Run, write_project_file
from stacks.common import CommonStack
from tests.support.configs import EXAMPLE_FILE, example_raw, validated, write_project
from tests.support.deployer_calls import calls
from tests.support.git import git
from tests.support.project_copy import INSTALLED, tracked_copy
from tests.support.scenario import Scenario, succeeded
from tests.support.synth import synthesize

pytestmark = pytest.mark.rehearsal

REGION = "ap-northeast-1"
PARENT = "example.com"
SUB_ZONE = "eks.example.com"
PROJECT = "eks-bg"
# The shipped example (its applications, its colours: blue serving, green without weight), protected.
CONFIG: dict[str, Any] = {
    **example_raw(),
    "project": PROJECT,
    "region": REGION,
    "dns": {"parent_zone": PARENT, "sub_domain": "eks"},
    "deletion_protection": True,
}
SETTINGS_OF_CONFIG = validated(CONFIG)
UNPROTECTED = {**CONFIG, "deletion_protection": False}
# role -> (namespace, service account) it trusts, and the policy attached to it (README: roles are `<project>-<name>`)
ROLES = {
    f"{PROJECT}-{w.name}": (w.namespace, w.service_account, w.aws_managed_policy or f"{PROJECT}-{w.name}")
    for w in shared_roles(SETTINGS_OF_CONFIG)
}
# The applications with an image: common makes a repository for each.
REPOSITORIES = [image_repository_name(SETTINGS_OF_CONFIG, app) for app in applications(SETTINGS_OF_CONFIG) if app.config.image]
IMAGE_TAG = "0123abc"  # what a build pushes, tagged with its commit
OTHER = "arn:aws:iam::123456789012:role/platform-admins"  # an admin role listed beside the CI role
# Every role common makes, and the boundary each must carry (created by the admin: policies/README.md).
COMMON_ROLES = [*ROLES, f"{PROJECT}-vpc-flow-logs"]
BOUNDARY = f"arn:aws:iam::{EMULATOR_ACCOUNT}:policy/boundary-{PROJECT}"


# The emulators issue certificates at once and hold AWS's managed policies (the vpc-cni role takes AmazonEKS_CNI_Policy).
SETTINGS = {"MOTO_ACM_VALIDATION_WAIT": "0", "MOTO_IAM_LOAD_MANAGED_POLICIES": "true"}
# The niceness of what neither of the two longest paths waits on (the retirement's, and `project`'s deploys and the
# colours' plans after them): the network edits' plans, the drift plans, the pull request's jobs, the refused destroys
# and common's way out. Most of it starts when common is deployed, all at once, while traffic's deploys need a CPU too.
SLACK = 5


@dataclass(frozen=True)
class Emulators:
    """AWS emulators, each a process of its own."""

    project: MotoProcess
    retirement: MotoProcess  # enforces IAM: common and traffic deployed, traffic shifted and destroyed
    commons_way_out: MotoProcess  # enforces IAM: common deployed and destroyed

    def all(self) -> tuple[MotoProcess, ...]:
        return (self.project, self.retirement, self.commons_way_out)


@pytest.fixture(scope="module")
def emulators() -> Iterator[Emulators]:
    servers = Emulators(MotoProcess(SETTINGS), MotoProcess(SETTINGS, iam=True), MotoProcess(SETTINGS, iam=True))
    for server in servers.all():
        server.ready()
    yield servers
    for server in servers.all():
        server.stop()


@pytest.fixture(scope="module")
def emulator(emulators: Emulators) -> str:
    return emulators.project.endpoint


@pytest.fixture(scope="module")
def aws(emulator: str) -> Callable[[str], Any]:
    def on_the_emulator(service: str) -> Any:
        return client(service, emulator, REGION)

    return on_the_emulator


@pytest.fixture(scope="module")
def protected_synthesis(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """CONFIG synthesized once, as `make synth` writes it (cdktf.out beside a terraform-state directory): both
    deployments deploy a copy (its paths are relative to each stack's directory)."""
    root = tmp_path_factory.mktemp("protected")
    write_project_file(root, {**CONFIG, "state": {"directory": str(root / "terraform-state")}})
    return synthesize(load_config(root / "cdktf.json"), root / "cdktf.out").outdir


@dataclass
class Deployment:
    """`project`'s deployment as it goes, on a thread: `cdktf deploy common`, then `cdktf deploy traffic`."""

    project: Project
    common: Future[Run]  # `cdktf deploy common`
    traffic: Future[Run]  # `cdktf deploy traffic`, once common is deployed

    def reads(self, stack: str) -> Run:
        """Wait for the deploys whose state a command on stack reads: common's for common; traffic's (after common's)
        for traffic and a colour."""
        return (self.common if stack == "common" else self.traffic).result()


@pytest.fixture(scope="module")
def beside() -> Iterator[ThreadPoolExecutor]:
    """The module's one pool of threads, for the rehearsal's time budget: its two longest paths (the retirement's, and
    `project`'s deploys with the colours' plans after them) are mostly the AWS provider's own waits, and everything
    else (the network edits' and drift plans, the pull request, the refused destroys, common's way out) runs on a thread
    during them instead of after them. Each task mostly waits, on a process or on another task's result: more workers
    than tasks can be under way at once (~24), so that none queues behind one that waits."""
    with ThreadPoolExecutor(max_workers=32, thread_name_prefix="rehearsal") as pool:
        yield pool


@pytest.fixture(scope="module")
def deployment(
    ways_out: WaysOut,
    emulator: str,
    protected_synthesis: Path,
    beside: ThreadPoolExecutor,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Deployment]:
    """The parent zone a user already has, then `cdktf deploy common` and `cdktf deploy traffic` through the CLI, on a
    thread from the module's first moments, after the ways out have started (`ways_out`, a parameter for that reason
    alone: the retirement's path is the longer): the rest (the syntheses of the other fixtures, what reads only common)
    runs during the AWS provider's waits. The CLI deploys
    what `make synth` writes, synthesized in this process (`--skip-synth`): tests/test_cli.py runs `cdktf synth` itself
    and finds its output the same, so the deploy does not wait a CLI synth's seconds."""
    project = Project.create(tmp_path_factory.mktemp("rehearsal") / "project", emulator, CONFIG)
    steps: list[str] = []
    show = Rehearsal(steps.append)
    try:
        show.step(f"create the parent zone {PARENT}", lambda: create_parent_zone(project, PARENT))
        shutil.copytree(protected_synthesis, project.root / "cdktf.out")
        show.step("terraform init common", lambda: project.init("common"))
        show.step("terraform init traffic", lambda: project.init("traffic"))
    except StepFailedError as failed:
        pytest.fail(f"{failed.step}: {failed.output[-6000:]}")

    def deploy(stack: str) -> Run:
        return project.run("cdktf", "deploy", stack, "--skip-synth", "--auto-approve")

    common = beside.submit(deploy, "common")
    # After common's: traffic reads common's state.
    traffic = beside.submit(lambda: deploy("traffic") if common.result().returncode == 0 else common.result())
    yield Deployment(project, common, traffic)
    wait([common, traffic])
    project.cleanup()


@pytest.fixture(scope="module")
def common_deployed(deployment: Deployment) -> Project:
    """The project with common deployed (traffic may still be deploying)."""
    deployed = deployment.common.result()
    if deployed.returncode != 0:
        pytest.fail(f"the deployment: step 'cdktf deploy common' failed: {deployed.output[-6000:]}", pytrace=False)
    return deployment.project


@pytest.fixture(scope="module")
def project(deployment: Deployment) -> Project:
    """The project with common and traffic deployed."""
    deployed = deployment.traffic.result()
    if deployment.common.result().returncode != 0:
        pytest.fail(f"the deployment: step 'cdktf deploy common' failed earlier: {deployed.output[-6000:]}", pytrace=False)
    if deployed.returncode != 0:
        pytest.fail(f"the deployment: step 'cdktf deploy traffic' failed: {deployed.output[-6000:]}", pytrace=False)
    return deployment.project


def test_cdktf_deploys_common_with_the_pinned_node(common_deployed: Project, deployment: Deployment) -> None:
    """`cdktf deploy common` exits 0 (`common_deployed` fails with its output otherwise), on the pinned Node."""
    assert "end-of-life" not in deployment.common.result().output


def test_cdktf_deploys_traffic(project: Project, deployment: Deployment) -> None:
    """`cdktf deploy traffic` exits 0 (`project` fails with its output otherwise), after common's."""
    assert deployment.traffic.result().returncode == 0


# The steps of the two ways out (tests read each by its name: Scenario.of).
INIT = "terraform init"
APPLY_COMMON, APPLY_TRAFFIC = "apply common as the deployer", "apply traffic as the deployer"
BOUNDARIES = "read the boundary each role of common carries"
READ_TRAFFIC = "read back what traffic made"
DRAIN = "drain to the colour without weight as the traffic operator"
STATUS = "shift --status as the traffic operator"
OPERATOR_DELETES = "the traffic operator deletes a public rule"
PLAN_AFTER_DRAIN = "plan traffic after the drain"
UNPROTECT = "deploy common and traffic from Git, deletion_protection off"
DESTROY_TRAFFIC = "destroy traffic as the deployer"
HELD_AFTER = "read what the emulator holds after the destroy"
IAM_PROBES = "calls outside each identity's policy"
CALLS = "the calls the emulator judged"
PUSH = "push an image to common's repository"
DESTROY_COMMON = "destroy common as the deployer"


def as_deployer(project: Project, stack: str, command: str, identities: Identities, *, nice: int = 0) -> Run:
    """`terraform apply` or `terraform destroy` of one stack, approved, with the deployer's credentials."""
    where = project.stack_dir(stack)
    approved = ("-auto-approve", "-input=false", "-no-color")
    return project.run("terraform", command, *approved, cwd=where, env=identities.deployer, nice=nice)


def commons_way_out(project: Project, server: MotoProcess, identities: Identities, init: Future[Run], scenario: Scenario) -> None:
    """common applied unprotected as the deployer, an image pushed by the admin (a build), common destroyed."""
    scenario.step(INIT, lambda: succeeded(init.result()))
    scenario.step(APPLY_COMMON, lambda: succeeded(as_deployer(project, "common", "apply", identities, nice=SLACK)))
    scenario.step(PUSH, lambda: push_image(client("ecr", server.endpoint, REGION, identities.admin)))
    scenario.step(DESTROY_COMMON, lambda: succeeded(as_deployer(project, "common", "destroy", identities, nice=SLACK)))
    scenario.step(HELD_AFTER, lambda: aws_holds(lambda service: client(service, server.endpoint, REGION, identities.admin)))
    scenario.step(CALLS, lambda: {"deployer": calls_of(server, DEPLOYER_USER)})


@dataclass(frozen=True)
class WaysOut:
    """The two ways out, each a scenario running on a thread of the module's pool (`beside`)."""

    retirement: Future[Scenario]  # common and traffic deployed, traffic shifted, deployed from Git, destroyed
    commons: Future[Scenario]  # common deployed and destroyed, on an emulator of its own


@pytest.fixture(scope="module")
def ways_out(
    emulators: Emulators, protected_synthesis: Path, beside: ThreadPoolExecutor, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WaysOut]:
    """The same deployment on the second emulator, with IAM enforced, its shift, then the way out, on a thread from
    here on (the synthesis of the unprotected configuration, which needs the jsii runtime, is done first on this one;
    the protected one is `protected_synthesis`, copied). Every Terraform run is the deployer's, Terraform's own applies
    and destroys (`project` rehearses the CLI's deploys and its refusal to destroy while protected; `make rehearse` its
    destroys); the shift is the traffic operator's; AWS is read back with the admin's credentials.

    common's way out runs from the start on a third emulator, beside: applied unprotected as the deployer, an image
    pushed, destroyed. It is common's destroy the suite proves either way (the deployer's calls, ECR's force delete,
    nothing left), and after the shift it was the last ~40 s of the suite's longest path (two Route53 changes the
    provider waits on, one after the other: the records, then the zone). What traffic's destroy leaves of it is checked
    on the second emulator, down to the records it made in common's zone.

    common is deployed protected and its protection lifted by the deploy workflow's step (the table's UpdateTable,
    ECR's force delete); traffic is deployed unprotected from the start: its only protection is an attribute of the load
    balancer, which the deployer sets at create anyway (ModifyLoadBalancerAttributes), and lifting it costs the
    provider's 30 s wait for an active load balancer again, on the suite's longest path. Its refusal while protected
    is `project`'s (test_destroy_is_refused_while_protected_and_its_last_lines_say_why)."""
    server = emulators.retirement
    identities: Identities = enforce_deployer(server, CONFIG)  # first: nothing else may run before IAM is enforced
    common_server = emulators.commons_way_out
    common_identities = enforce_deployer(common_server, CONFIG)
    project = Project.create(tmp_path_factory.mktemp("retirement") / "project", server.endpoint, CONFIG, identities.admin)
    create_parent_zone(project, PARENT)
    shutil.copytree(protected_synthesis, project.root / "cdktf.out")
    project.write_config(UNPROTECTED)
    unprotected = synthesize(load_config(project.root / "cdktf.json"), project.root / "unprotected")  # as deep as cdktf.out
    shutil.copyfile(unprotected.stack_dir("traffic") / "cdk.tf.json", project.stack_dir("traffic") / "cdk.tf.json")
    common_root = project.root.with_name("commons-way-out")
    common_project = Project.create(common_root, common_server.endpoint, UNPROTECTED, common_identities.admin)
    create_parent_zone(common_project, PARENT)
    shutil.copytree(unprotected.stack_dir("common"), common_project.stack_dir("common"))  # its state path is relative
    deployer, as_operator = identities.deployer, identities.operator

    def aws(service: str) -> Any:
        return client(service, server.endpoint, REGION, identities.admin)

    # The three inits at once, from here (they share nothing: scripts/terraformrc.py); each way out's first step waits.
    inits = [beside.submit(project.init, stack) for stack in ("common", "traffic")]
    common_init = beside.submit(common_project.init, "common")

    def way_out(scenario: Scenario) -> None:
        scenario.step(INIT, lambda: [succeeded(init.result()) for init in inits])
        scenario.step(APPLY_COMMON, lambda: succeeded(as_deployer(project, "common", "apply", identities)))
        scenario.step(APPLY_TRAFFIC, lambda: succeeded(as_deployer(project, "traffic", "apply", identities)))
        scenario.step(
            BOUNDARIES,
            lambda: {
                "roles": {
                    role: aws("iam").get_role(RoleName=role)["Role"].get("PermissionsBoundary", {}).get("PermissionsBoundaryArn")
                    for role in COMMON_ROLES
                },
                "attachments": aws("iam").get_policy(PolicyArn=BOUNDARY)["Policy"]["AttachmentCount"],
            },
        )
        deployed = scenario.step(READ_TRAFFIC, lambda: read_traffic(project))
        scenario.step(PUSH, lambda: push_image(aws("ecr")))

        def drain() -> dict[str, Any]:
            target = drain_target(project)
            register_pod(project, target)  # what the target colour's load balancer controller does for a ready pod
            before = live_weights(project)
            run = succeeded(shift_now(project, target, as_operator))
            return {"run": run, "before": before, "drained": live_weights(project)}

        scenario.step(DRAIN, drain)
        scenario.step(STATUS, lambda: succeeded(shift_status(project, as_operator)))

        def operator_deletes() -> str:
            public_rule = next(rule.arn for rule in deployed.rules if rule.tags.get(ROUTE_TAG) == PUBLIC)
            operator = client("elbv2", server.endpoint, REGION, as_operator)
            return refused_code(lambda: operator.delete_rule(RuleArn=public_rule))

        scenario.step(OPERATOR_DELETES, operator_deletes)
        plan = ("terraform", "plan", "-detailed-exitcode", "-input=false", "-no-color")
        scenario.step(PLAN_AFTER_DRAIN, lambda: project.run(*plan, cwd=project.stack_dir("traffic"), env=deployer))

        def unprotect() -> dict[str, Any]:
            # The unprotected config's synthesis takes the place of the protected one's, as `make synth` would; then the
            # deploy workflow's own step deploys from Git after the shift: it must leave the live weights as the drain set them.
            for stack in ("common", "traffic"):
                (unprotected.stack_dir(stack) / "cdk.tf.json").replace(project.stack_dir(stack) / "cdk.tf.json")
            summary = project.root / "deploy-summary.md"
            deploy = ("python", "-m", "scripts.ci.deploy_stacks", "common", "traffic", "--project-dir", str(project.root))
            run = succeeded(project.run(*deploy, env={**deployer, "GITHUB_STEP_SUMMARY": str(summary)}))
            return {"run": run, "summary": summary.read_text() if summary.exists() else "", "weights": live_weights(project)}

        scenario.step(UNPROTECT, unprotect)
        scenario.step(DESTROY_TRAFFIC, lambda: succeeded(as_deployer(project, "traffic", "destroy", identities)))
        scenario.step(HELD_AFTER, lambda: aws_holds(aws))

        def probes() -> dict[str, str]:
            intruder = client("iam", server.endpoint, REGION, deployer)
            forger = client("route53", server.endpoint, REGION, {**deployer, "AWS_SECRET_ACCESS_KEY": "not-the-secret"})
            answered: list[bytes] = []  # moto answers in IAM's error format, which Route53's parser cannot read: the raw body
            forger.meta.events.register(
                "before-parse.route53.*", lambda response_dict, **_: answered.append(response_dict["body"])
            )
            return {
                "outside_the_policy": refused_code(lambda: intruder.create_user(UserName="not-the-deployers-to-make")),
                "wrong_secret": f"{refused_code(forger.list_hosted_zones)}: {b''.join(answered).decode(errors='replace')}",
                # The explicit Deny answers (authorized before the role is looked up).
                "removing_a_boundary": refused_code(lambda: intruder.delete_role_permissions_boundary(RoleName=COMMON_ROLES[0])),
            }

        scenario.step(CALLS, lambda: {"deployer": calls_of(server, DEPLOYER_USER), "operator": calls_of(server, OPERATOR_USER)})
        scenario.step(IAM_PROBES, probes)

    started = WaysOut(
        retirement=beside.submit(Scenario("the retirement").run, way_out),
        commons=beside.submit(
            Scenario("common's way out").run,
            lambda scenario: commons_way_out(common_project, common_server, common_identities, common_init, scenario),
        ),
    )
    yield started
    wait([started.retirement, started.commons])
    project.cleanup()
    common_project.cleanup()


@pytest.fixture(scope="module")
def retirement(ways_out: WaysOut) -> Scenario:
    """The retirement's scenario, once it ended (at its last step or its first failure)."""
    return ways_out.retirement.result()


@pytest.fixture(scope="module")
def commons(ways_out: WaysOut) -> Scenario:
    """common's way out, once it ended."""
    return ways_out.commons.result()


def refused_code(call: Callable[[], Any]) -> str:
    """The error code the emulator answers a call with, and its HTTP status."""
    try:
        call()
    except ClientError as error:
        return f"HTTP {error.response['ResponseMetadata']['HTTPStatusCode']} {error.response['Error'].get('Code', '')}".strip()
    return "none: the call was allowed"


def push_image(ecr: Any) -> None:
    """A build has pushed an application's image: its repository is no longer empty when common is destroyed."""
    if ecr.list_images(repositoryName=REPOSITORIES[0])["imageIds"]:
        return  # pushed already (tags are immutable)
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json", "layers": []}
    ecr.put_image(repositoryName=REPOSITORIES[0], imageManifest=json.dumps(manifest), imageTag=IMAGE_TAG)


def aws_holds(aws: Callable[[str], Any]) -> dict[str, Any]:
    """What the emulator holds of this project, as the destroy tests read it."""
    route53 = aws("route53")
    zones = route53.list_hosted_zones()["HostedZones"]
    (parent,) = [z for z in zones if z["Name"] == f"{PARENT}."]
    parent_records = route53.list_resource_record_sets(HostedZoneId=parent["Id"])["ResourceRecordSets"]
    tables = aws("dynamodb").list_tables()["TableNames"]
    sub_zone = [z["Id"] for z in zones if z["Name"] == f"{SUB_ZONE}."]
    records = route53.list_resource_record_sets(HostedZoneId=sub_zone[0])["ResourceRecordSets"] if sub_zone else None
    repositories = [r["repositoryName"] for r in aws("ecr").describe_repositories()["repositories"]]
    return {
        "vpcs": tagged(aws("ec2").describe_vpcs()["Vpcs"]),
        "nat_gateways": [
            n for n in aws("ec2").describe_nat_gateways()["NatGateways"] if n["State"] not in ("deleted", "deleting")
        ],
        "addresses": tagged(aws("ec2").describe_addresses()["Addresses"]),
        "zones": [z["Name"] for z in zones],
        "delegation": [r["Type"] for r in parent_records if r["Name"] == f"{SUB_ZONE}."],
        "records": None if records is None else sorted({r["Type"] for r in records} - {"NS", "SOA"}),
        "certificates": aws("acm").list_certificates()["CertificateSummaryList"],
        "table": aws("dynamodb").describe_table(TableName=f"{PROJECT}-users")["Table"]["TableStatus"]
        if f"{PROJECT}-users" in tables
        else None,
        "images": [i.get("imageTag") for i in aws("ecr").list_images(repositoryName=REPOSITORIES[0])["imageIds"]]
        if REPOSITORIES[0] in repositories
        else None,
        "repositories": repositories,
        "roles": [r["RoleName"] for r in aws("iam").list_roles()["Roles"] if r["RoleName"].startswith(PROJECT)],
        "policies": [
            p["PolicyName"] for p in aws("iam").list_policies(Scope="Local")["Policies"] if p["PolicyName"].startswith(PROJECT)
        ],
        "log_groups": [g["logGroupName"] for g in aws("logs").describe_log_groups()["logGroups"] if PROJECT in g["logGroupName"]],
        "load_balancers": [lb["LoadBalancerName"] for lb in aws("elbv2").describe_load_balancers()["LoadBalancers"]],
        "target_groups": [g["TargetGroupName"] for g in aws("elbv2").describe_target_groups()["TargetGroups"]],
        "parameters": [p["Name"] for p in aws("ssm").describe_parameters()["Parameters"]],
        "security_groups": [g["GroupName"] for g in tagged(aws("ec2").describe_security_groups()["SecurityGroups"])],
    }


def tagged(resources: list[dict[str, Any]], key: str = "Tags") -> list[dict[str, Any]]:
    """Resources carrying this project's default tags."""
    return [r for r in resources if {"Key": "Project", "Value": PROJECT} in r.get(key, [])]


# --- what the deploy created, read back from the emulator ------------------------------------------


def test_network(common_deployed: Project, aws: Callable[[str], Any]) -> None:
    ec2 = aws("ec2")
    (vpc,) = tagged(ec2.describe_vpcs()["Vpcs"])
    assert vpc["CidrBlock"] == "10.0.0.0/16"
    subnets = ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc["VpcId"]]}])["Subnets"]
    roles = sorted(t["Key"] for s in subnets for t in s["Tags"] if t["Key"].startswith("kubernetes.io/role/"))
    assert roles == ["kubernetes.io/role/elb"] * 3 + ["kubernetes.io/role/internal-elb"] * 3
    assert len({s["AvailabilityZone"] for s in subnets}) == 3
    nats = [n for n in ec2.describe_nat_gateways()["NatGateways"] if n["VpcId"] == vpc["VpcId"] and n["State"] == "available"]
    assert len(nats) == 1
    flow_logs = ec2.describe_flow_logs(Filters=[{"Name": "resource-id", "Values": [vpc["VpcId"]]}])["FlowLogs"]
    assert [f["TrafficType"] for f in flow_logs] == ["ALL"]


# --- common's network is never replaced under the colours (components/network.py) -----------------------------------

# Each edit of the example's network (10.0.0.0/16 over 3 zones) that would replace what the deploy made, and the whole
# refusal it gets, worked out by hand from the subnets the deploy made (3 pairs of /19: public 0, 32, 64; private 96,
# 128, 160) and those the edit would carve.
WAY_OUT = (
    "A network of another shape is a new project beside this one "
    '(docs/upgrade-runbook.md, "What cannot change under running colours").'
)
NETWORK_EDITS: dict[str, tuple[dict[str, Any], str]] = {
    "az_count-4": (
        {"az_count": 4},
        "network.az_count is 4, but the VPC eks-bg was built with 3 subnet pair(s): this change would replace its subnets "
        "under every colour and the shared load balancer: eks-bg-private-0 from 10.0.96.0/19 to 10.0.128.0/19; "
        "eks-bg-private-1 from 10.0.128.0/19 to 10.0.160.0/19; eks-bg-private-2 from 10.0.160.0/19 to 10.0.192.0/19. "
        "A subnet's CIDR cannot change in place, and the network outlives the colours: keep network.az_count at 3. " + WAY_OUT,
    ),
    "az_count-2": (
        {"az_count": 2},
        "network.az_count is 2, but the VPC eks-bg was built with 3 subnet pair(s): this change would replace its subnets "
        "under every colour and the shared load balancer: eks-bg-private-0 from 10.0.96.0/19 to 10.0.128.0/18; "
        "eks-bg-private-1 from 10.0.128.0/19 to 10.0.192.0/18; eks-bg-private-2 (10.0.160.0/19) removed; "
        "eks-bg-public-0 from 10.0.0.0/19 to 10.0.0.0/18; eks-bg-public-1 from 10.0.32.0/19 to 10.0.64.0/18; "
        "eks-bg-public-2 (10.0.64.0/19) removed. A subnet's CIDR cannot change in place, and the network outlives the "
        "colours: keep network.az_count at 3. " + WAY_OUT,
    ),
    "cidr": (
        {"cidr": "10.1.0.0/16"},
        "network.cidr is 10.1.0.0/16, but the VPC eks-bg runs 10.0.0.0/16: this change would replace the VPC and every "
        "subnet in it under every colour and the shared load balancer. A VPC's CIDR cannot change in place, and the "
        "network outlives the colours: keep network.cidr at 10.0.0.0/16. " + WAY_OUT,
    ),
}
# The emulator's ap-northeast-1 has 3 zones: a fourth pair fails the zones' own check too (tests/test_availability_zones.py).
TOO_FEW_ZONES = "network.az_count is 4, but ap-northeast-1 offers 3 usable availability zone(s)"
# Each edit that would replace what holds common's data (components/sub_zone.py, components/table.py), and its whole
# refusal, worked out by hand from what the deploy made: the sub-zone eks.example.com and the table eks-bg-users, found by
# the tags the deploy gave them. tests/test_data_replacement.py plans the same against zones and tables tagged by hand.
RUNBOOK = '(docs/upgrade-runbook.md, "What cannot change under running colours").'
DATA_EDITS: dict[str, tuple[dict[str, Any], str]] = {
    "sub_domain": (
        {"dns": {"parent_zone": PARENT, "sub_domain": "shop"}},
        "dns.sub_domain is shop and dns.parent_zone example.com (the sub-zone shop.example.com), but the project's "
        "sub-zone is eks.example.com: this change would replace the hosted zone, its NS delegation in the parent zone and "
        "the certificate, and every public and preview host of every application would stop answering. A hosted zone's "
        "name cannot change in place: keep dns.sub_domain at eks and dns.parent_zone at example.com. Other host names are "
        f"a new project beside this one {RUNBOOK}",
    ),
    "table_name": (
        {"table": {"name": "eks-bg-orders"}},
        "table.name is eks-bg-orders, but the project's table is eks-bg-users: this change would replace the DynamoDB "
        "table, deleting eks-bg-users and every item in it (whatever deletion_protection says: with it on, the apply fails "
        "half-way instead). DynamoDB renames no table: keep table.name at eks-bg-users. A table of another name is a new "
        f"project beside this one, its items moved by the team {RUNBOOK}",
    ),
}


@pytest.fixture(scope="module", autouse=True)
def network_edits(deployment: Deployment, beside: ThreadPoolExecutor) -> Iterator[Future[dict[str, Run]]]:
    """`terraform plan` of common with each edit (of the network, and of what holds data), against the state the deploy
    wrote, on a thread beside the rest. Only common is synthesized (the edits change no other stack), beside cdktf.out
    (the state's relative path is the same), from the module's start; each init and plan on a thread of its own (inits
    share nothing: scripts/terraformrc.py), the plans once common is deployed.
    `-refresh=false`: the guard's data sources are read at every plan, and nothing it checks needs the managed
    resources refreshed; `-lock=false`: the plans only read the state."""
    project = deployment.project
    stack_dirs = {}
    edits = {edit: {"network": network} for edit, (network, _) in NETWORK_EDITS.items()}
    for edit, overrides in {**edits, **{edit: overrides for edit, (overrides, _) in DATA_EDITS.items()}}.items():
        config = validated({**CONFIG, **overrides, "state": {"directory": str(project.state_dir)}})
        app = App(outdir=str(project.root / f"edit-{edit}"))
        CommonStack(app, config=config)
        app.synth()
        stack_dirs[edit] = project.root / f"edit-{edit}" / "stacks" / "common"
    init = ("terraform", "init", "-input=false", "-no-color")
    plan = ("terraform", "plan", "-refresh=false", "-lock=false", "-input=false", "-no-color")

    def init_and_plan(stack_dir: Path) -> Run:
        initialised = project.run(*init, cwd=stack_dir, nice=SLACK)
        deployment.common.result()
        return initialised if initialised.returncode != 0 else project.run(*plan, cwd=stack_dir, nice=SLACK)

    planned = {edit: beside.submit(init_and_plan, stack_dir) for edit, stack_dir in stack_dirs.items()}
    yield (gathered := beside.submit(lambda: {edit: future.result() for edit, future in planned.items()}))
    wait([gathered])  # before the deployment's directory goes


@pytest.mark.parametrize("edit", NETWORK_EDITS)
def test_an_edit_that_would_replace_commons_network_is_refused_at_plan_naming_the_key_and_what_moves(
    network_edits: Future[dict[str, Run]], edit: str
) -> None:
    done = network_edits.result()[edit]
    assert done.returncode == 1, done.output[-6000:]
    flat = " ".join(done.output.split())  # Terraform wraps long messages
    assert NETWORK_EDITS[edit][1] in flat, done.output[-6000:]
    others = [TOO_FEW_ZONES] if edit == "az_count-4" else []
    assert flat.count("Error: Resource precondition failed") == 1, done.output[-6000:]
    assert flat.count("Error:") == 1 + len(others), done.output[-6000:]
    assert all(other in flat for other in others)


@pytest.mark.parametrize("edit", DATA_EDITS)
def test_an_edit_that_would_replace_commons_sub_zone_or_table_is_refused_at_plan_with_both_names(
    network_edits: Future[dict[str, Run]], edit: str
) -> None:
    done = network_edits.result()[edit]
    assert done.returncode == 1, done.output[-6000:]
    flat = " ".join(done.output.split())  # Terraform wraps long messages
    assert DATA_EDITS[edit][1] in flat, done.output[-6000:]
    assert flat.count("Error:") == flat.count("Error: Resource precondition failed") == 1, done.output[-6000:]


def test_a_fresh_account_passes_the_network_guard(common_deployed: Project) -> None:
    """`cdktf deploy common` on the empty emulator passed the guard: its listings, as the deploy's plan read them and
    the state keeps them, found no VPC or subnet of the project's names, so none was read (the deploy made them all)."""
    state = json.loads((common_deployed.state_dir / "common.tfstate").read_text())
    guard: dict[str, list[dict[str, Any]]] = {kind: [] for kind in ("aws_vpcs", "aws_vpc", "aws_subnets", "aws_subnet")}
    for resource in state["resources"]:
        if resource["mode"] == "data" and resource["type"] in guard:
            guard[resource["type"]] += [instance["attributes"] for instance in resource["instances"]]
    assert [vpcs["ids"] for vpcs in guard["aws_vpcs"]] == [[], []]  # by name, and by name and CIDR
    assert [subnets["ids"] for subnets in guard["aws_subnets"]] == [[]]
    assert (guard["aws_vpc"], guard["aws_subnet"]) == ([], [])


def test_sub_zone_is_delegated_in_the_parent(common_deployed: Project, aws: Callable[[str], Any]) -> None:
    route53 = aws("route53")
    zones = {z["Name"]: z["Id"] for z in route53.list_hosted_zones()["HostedZones"]}
    assert {f"{PARENT}.", f"{SUB_ZONE}."} <= set(zones)
    delegation = route53.list_resource_record_sets(HostedZoneId=zones[f"{PARENT}."])["ResourceRecordSets"]
    (ns,) = [r for r in delegation if r["Name"] == f"{SUB_ZONE}." and r["Type"] == "NS"]
    servers = route53.get_hosted_zone(Id=zones[f"{SUB_ZONE}."])["DelegationSet"]["NameServers"]
    assert sorted(r["Value"].rstrip(".") for r in ns["ResourceRecords"]) == sorted(s.rstrip(".") for s in servers)


def test_certificate_is_issued_for_apex_and_wildcard(common_deployed: Project, aws: Callable[[str], Any]) -> None:
    acm = aws("acm")
    (summary,) = acm.list_certificates()["CertificateSummaryList"]
    cert = acm.describe_certificate(CertificateArn=summary["CertificateArn"])["Certificate"]
    assert cert["Status"] == "ISSUED"
    assert sorted(cert["SubjectAlternativeNames"]) == sorted([SUB_ZONE, f"*.{SUB_ZONE}"])


def test_table(common_deployed: Project, aws: Callable[[str], Any]) -> None:
    dynamodb = aws("dynamodb")
    table = dynamodb.describe_table(TableName=f"{PROJECT}-users")["Table"]
    assert table["KeySchema"] == [{"AttributeName": "UserId", "KeyType": "HASH"}]
    assert table["DeletionProtectionEnabled"] is True
    assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    backups = dynamodb.describe_continuous_backups(TableName=f"{PROJECT}-users")["ContinuousBackupsDescription"]
    assert backups["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "ENABLED"


@pytest.mark.parametrize("role", ROLES)
def test_pod_identity_roles_and_their_policies(common_deployed: Project, aws: Callable[[str], Any], role: str) -> None:
    iam = aws("iam")
    trust = iam.get_role(RoleName=role)["Role"]["AssumeRolePolicyDocument"]
    trust = json.loads(trust) if isinstance(trust, str) else trust
    (statement,) = trust["Statement"]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert sorted(statement["Action"]) == ["sts:AssumeRole", "sts:TagSession"]
    namespace, service_account, policy = ROLES[role]
    assert statement["Condition"] == {
        "StringEquals": {
            "aws:RequestTag/kubernetes-namespace": namespace,
            "aws:RequestTag/kubernetes-service-account": service_account,
        },
        "StringLike": {"aws:RequestTag/eks-cluster-name": f"{PROJECT}-*"},
    }
    (attached,) = iam.list_attached_role_policies(RoleName=role)["AttachedPolicies"]
    assert attached["PolicyName"] == policy


def test_every_role_common_made_carries_the_boundary(common_deployed: Project, aws: Callable[[str], Any]) -> None:
    """The emulator stores each role's boundary (it neither checks the policy exists nor applies it: what the boundary
    allows is tests/test_deployer_boundary.py's)."""
    iam = aws("iam")
    carried = {role: iam.get_role(RoleName=role)["Role"].get("PermissionsBoundary", {}) for role in COMMON_ROLES}
    assert {role: b.get("PermissionsBoundaryArn") for role, b in carried.items()} == dict.fromkeys(COMMON_ROLES, BOUNDARY)


def test_app_role_reads_the_real_table_only(common_deployed: Project, aws: Callable[[str], Any]) -> None:
    iam = aws("iam")
    (attached,) = iam.list_attached_role_policies(RoleName=f"{PROJECT}-sample-app")["AttachedPolicies"]
    policy = iam.get_policy(PolicyArn=attached["PolicyArn"])["Policy"]
    document = iam.get_policy_version(PolicyArn=attached["PolicyArn"], VersionId=policy["DefaultVersionId"])["PolicyVersion"][
        "Document"
    ]
    document = json.loads(document) if isinstance(document, str) else document
    table_arn = aws("dynamodb").describe_table(TableName=f"{PROJECT}-users")["Table"]["TableArn"]
    assert [s["Resource"] for s in document["Statement"]] == [table_arn]


def test_image_repositories(common_deployed: Project, aws: Callable[[str], Any]) -> None:
    """One per application with an image, named under the project's prefix (the deployer may manage only those)."""
    assert REPOSITORIES
    assert all(name.startswith(f"{PROJECT}/") for name in REPOSITORIES)
    for repo in aws("ecr").describe_repositories(repositoryNames=REPOSITORIES)["repositories"]:
        assert repo["imageTagMutability"] == "IMMUTABLE"
        assert repo["imageScanningConfiguration"] == {"scanOnPush": True}


@pytest.fixture(scope="module")
def traffic(project: Project) -> Traffic:
    return read_traffic(project)


def test_the_shared_load_balancer_and_its_listeners(
    traffic: Traffic, common_outputs: dict[str, Any], aws: Callable[[str], Any]
) -> None:
    """Internet-facing in common's public subnets, behind its own group; HTTPS with common's certificate, HTTP 301 to it."""
    balancer = traffic.load_balancer
    assert (balancer["LoadBalancerName"], scheme(balancer), balancer["Type"]) == (
        load_balancer_name(PROJECT),
        "internet-facing",
        "application",
    )
    outputs = common_outputs
    assert sorted(zone["SubnetId"] for zone in balancer["AvailabilityZones"]) == sorted(outputs["public_subnet_ids"])
    (group,) = aws("ec2").describe_security_groups(GroupIds=balancer["SecurityGroups"])["SecurityGroups"]
    assert group["GroupName"] == f"{load_balancer_name(PROJECT)}-alb"
    assert sorted(traffic.listeners) == [80, 443]
    assert [c["CertificateArn"] for c in traffic.listeners[443]["Certificates"]] == [outputs["certificate_arn"]]
    (redirect,) = traffic.listeners[80]["DefaultActions"]
    assert redirect["RedirectConfig"]["StatusCode"] == "HTTP_301"


def test_a_target_group_per_application_and_colour(traffic: Traffic) -> None:
    wanted = {
        target_group_name(PROJECT, app.name, colour): {APPLICATION_TAG: app.name, COLOUR_TAG: colour, "Project": PROJECT}
        for app in applications(SETTINGS_OF_CONFIG)
        for colour in SETTINGS_OF_CONFIG.clusters
    }
    assert {
        name: {k: tags.get(k) for k in (APPLICATION_TAG, COLOUR_TAG, "Project")} for name, tags in traffic.target_groups.items()
    } == (wanted)


def test_public_and_preview_rules_with_their_hosts_and_records(project: Project, traffic: Traffic) -> None:
    """A public rule per application forwarding to every colour at the configured weights, and each colour's preview
    rule to that colour's target group; every host a weighted alias of the load balancer in the sub-zone."""
    hosts = expected_hosts(project)
    assert sorted(rule.host for rule in traffic.rules) == sorted(hosts)
    for rule in traffic.rules:
        colour = hosts[rule.host]
        assert rule.tags[ROUTE_TAG] == (PUBLIC if colour is None else PREVIEW)
        if colour is None:
            assert {traffic.target_groups[g][COLOUR_TAG]: w for g, w in rule.forwards.items()} == SETTINGS_OF_CONFIG.weights
        else:
            assert [traffic.target_groups[g][COLOUR_TAG] for g in rule.forwards] == [colour]
    assert sorted(traffic.records) == sorted(hosts)
    dns_name = traffic.load_balancer["DNSName"].lower()
    for record in traffic.records.values():
        assert record["SetIdentifier"] == SET_IDENTIFIER
        assert record["AliasTarget"]["DNSName"].rstrip(".").lower().removeprefix("dualstack.") == dns_name


def test_the_weights_parameter_holds_the_configured_weights(traffic: Traffic) -> None:
    assert traffic.weights == SETTINGS_OF_CONFIG.weights


# --- the deployed state is stable and serves the cluster stacks ------------------------------------


@pytest.fixture(scope="module")
def common_outputs(common_deployed: Project) -> dict[str, Any]:
    """`terraform output -json` of common, read once."""
    shown = common_deployed.run("terraform", "output", "-json", cwd=common_deployed.stack_dir("common"))
    return {name: output["value"] for name, output in json.loads(shown.output).items()}


def of_type(planned: dict[str, dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [values for address, values in planned.items() if address.startswith(f"{kind}.")]


@pytest.fixture(scope="module", autouse=True)
def drift(deployment: Deployment, beside: ThreadPoolExecutor) -> Iterator[Future[list[Run]]]:
    """`terraform plan -detailed-exitcode` of common and of traffic (0: no change), on a thread from the module's start:
    common's once common is deployed (traffic's deploy changes nothing of it), during traffic's deploy; traffic's once
    traffic is, beside the colours' plans (`plans`, which only read their states)."""
    project = deployment.project
    command = ("terraform", "plan", "-detailed-exitcode", "-lock=false", "-input=false", "-no-color")

    def plan_both() -> list[Run]:
        deployment.common.result()
        common = project.run(*command, cwd=project.stack_dir("common"), nice=SLACK)
        deployment.traffic.result()
        return [common, project.run(*command, cwd=project.stack_dir("traffic"), nice=SLACK)]

    yield (planned := beside.submit(plan_both))
    wait([planned])  # before the deployment's directory goes


@pytest.fixture(scope="module")
def ci_role(aws: Callable[[str], Any]) -> dict[str, Any]:
    """A CI job's role, with a path (which the ARN of a session of it leaves out)."""
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]}
    role: dict[str, Any] = aws("iam").create_role(RoleName="deployer", Path="/ci/", AssumeRolePolicyDocument=json.dumps(trust))[
        "Role"
    ]
    return role


@pytest.fixture(scope="module", autouse=True)
def colour_plans(
    deployment: Deployment, aws: Callable[[str], Any], ci_role: dict[str, Any], beside: ThreadPoolExecutor
) -> Iterator[Future[tuple[Run, dict[str, dict[str, dict[str, Any]]]]]]:
    """Each colour's AWS part planned against common's and traffic's real state, in one Terraform run (each a module
    of one root, Project.plan_aws_parts), in a session of a CI job's role: blue and green as configured, and `ci`:
    blue with that role listed in eks.admin_role_arns too, the API endpoint public only and narrowed to the operators.
    Synthesized here (jsii runs on the main thread), planned on a thread once traffic is deployed."""
    project, role = deployment.project, ci_role
    session = aws("sts").assume_role(RoleArn=role["Arn"], RoleSessionName="ci-job")["Credentials"]
    eks = {"endpoint_private_access": False, "public_access_cidrs": ["203.0.113.0/24"], "admin_role_arns": [role["Arn"], OTHER]}
    config = validated({**CONFIG, "eks": eks, "state": {"directory": str(project.state_dir)}})
    public_only = synthesize(config, project.root / "public-only")  # beside cdktf.out: the same relative paths
    as_the_job = {
        "AWS_ACCESS_KEY_ID": session["AccessKeyId"],
        "AWS_SECRET_ACCESS_KEY": session["SecretAccessKey"],
        "AWS_SESSION_TOKEN": session["SessionToken"],
    }
    stacks = {"blue": project.stack_dir("blue"), "green": project.stack_dir("green"), "ci": public_only.stack_dir("blue")}

    def plan() -> tuple[Run, dict[str, dict[str, dict[str, Any]]]]:
        deployment.traffic.result()
        return project.plan_aws_parts(stacks, as_the_job)

    yield (planned := beside.submit(plan))
    wait([planned])  # before the deployment's directory goes


@pytest.fixture(scope="module")
def plans(colour_plans: Future[tuple[Run, dict[str, dict[str, dict[str, Any]]]]]) -> dict[str, dict[str, dict[str, Any]]]:
    """What each colour's plan (`colour_plans`) will do, by resource address."""
    run, planned = colour_plans.result()
    assert run.returncode == 0, run.output[-3000:]
    return planned


@pytest.mark.parametrize("colour", ["blue", "green"])  # the colours of CONFIG (the defaults)
def test_cluster_stack_reads_every_output_from_commons_real_state(
    plans: dict[str, dict[str, dict[str, Any]]], common_outputs: dict[str, Any], colour: str
) -> None:
    planned, outputs = plans[colour], common_outputs
    (cluster,) = of_type(planned, "aws_eks_cluster")
    assert cluster["vpc_config"][0]["subnet_ids"] == sorted(outputs["private_subnet_ids"])
    role_arns = sorted(v["role_arn"] for v in of_type(planned, "aws_eks_pod_identity_association"))
    assert role_arns == sorted(outputs[w.output] for w in shared_roles(SETTINGS_OF_CONFIG) if not w.aws_managed_policy)
    (cni,) = [v for v in of_type(planned, "aws_eks_addon") if v["addon_name"] == "vpc-cni"]
    assert cni["pod_identity_association"] == [{"role_arn": outputs["vpc_cni_role_arn"], "service_account": "aws-node"}]


def test_a_ci_role_that_is_also_listed_is_one_admin_and_nodes_reach_a_public_only_endpoint(
    plans: dict[str, dict[str, dict[str, Any]]], ci_role: dict[str, Any], common_outputs: dict[str, Any]
) -> None:
    """Planned by the CI job of the `plans` fixture: the role it assumed, listed as an admin too, gets one access
    entry; with the endpoint public only, the nodes' NAT address is allowed beside the operators'."""
    planned, role = plans["ci"], ci_role
    assert role["Arn"] == "arn:aws:iam::123456789012:role/ci/deployer"  # the path the session's ARN leaves out
    assert sorted(v["principal_arn"] for v in of_type(planned, "aws_eks_access_entry")) == sorted([role["Arn"], OTHER])
    assert sorted(v["principal_arn"] for v in of_type(planned, "aws_eks_access_policy_association")) == sorted(
        [role["Arn"], OTHER]
    )
    (cluster,) = of_type(planned, "aws_eks_cluster")
    (nat,) = common_outputs["nat_public_ips"]
    assert sorted(cluster["vpc_config"][0]["public_access_cidrs"]) == sorted(["203.0.113.0/24", f"{nat}/32"])


@pytest.mark.parametrize("colour", ["blue", "green"])
def test_each_colour_admits_the_shared_load_balancer_from_traffics_real_state(
    traffic: Traffic, plans: dict[str, dict[str, dict[str, Any]]], colour: str
) -> None:
    """The colour's rule on its cluster security group names the load balancer's group the traffic stack made."""
    (rule,) = of_type(plans[colour], "aws_vpc_security_group_ingress_rule")
    assert rule["referenced_security_group_id"] == traffic.load_balancer["SecurityGroups"][0]


def test_no_drift_after_deploy(drift: Future[list[Run]]) -> None:
    for plan in drift.result():
        assert plan.returncode == 0, plan.output[-6000:]


def test_the_unchanged_network_plans_clean_having_read_every_subnet(drift: Future[list[Run]]) -> None:
    """The plan of the deployed configuration (no change, above) passed the network guard having read each subnet the
    deploy made, and read no VPC whole: none runs another CIDR."""
    common = drift.result()[0].output
    assert sorted(set(read(common, "aws_subnet", "existing-subnet"))) == [str(i) for i in range(6)], common[-6000:]
    assert read(common, "aws_vpc", "running-vpc") == []


def read(output: str, kind: str, construct: str) -> list[str]:
    """The index of each read of a data source of the network Terraform's output reports."""
    return re.findall(rf"data\.{kind}\.network_{construct}_\w+\[(\d+)\]: Read complete", output)


# --- a pull request, as the pipeline plans it: its scripts in a depth-1 clone, against the deployed emulator ---------

PR_TAGS = {"cost-centre": "platform"}  # the pull request's edit: a tag every stack carries
PR_BRANCH = "tag-every-stack"


@dataclass
class PullRequest:
    """What .github/workflows/pull-request.yml's changes and plan jobs did, run as a runner runs them."""

    shallow: str  # `git rev-parse --is-shallow-repository` of the clone, as checked out
    check: Run  # `python3 -m scripts.ci.changed_stacks --check-clone`
    changed: Run  # `python -m scripts.ci.changed_stacks` (GitHub's base branch)
    outputs: str  # what the changes job's steps wrote to $GITHUB_OUTPUT
    summary: str  # what the changes job's steps wrote to $GITHUB_STEP_SUMMARY
    plans: dict[str, Run]  # `python -m scripts.ci.plan_stacks <stack>`, each stack changed_stacks listed
    plan_summaries: dict[str, str]  # what each plan job wrote to its $GITHUB_STEP_SUMMARY


@pytest.fixture(scope="module", autouse=True)
def pull_request(
    deployment: Deployment, beside: ThreadPoolExecutor, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Future[PullRequest]]:
    """A team's repository (the project's files, the rehearsal's configuration with its state, blue's release tagged),
    a pull request that tags every stack, checked out one commit deep as actions/checkout does by default; then the
    workflow's steps on a thread beside the rest (each is another program): the clone check, `make synth`'s two
    commands, changed_stacks, and plan_stacks of each stack it lists, side by side as the plan job's matrix runs them
    (each job with a summary of its own), against the deployed emulator. Started with the module (autouse) so it runs
    while the load balancers are waited for: common's plan runs then, the others' wait for traffic's deploy (traffic's
    state, which they read)."""
    root = tmp_path_factory.mktemp("pull-request")
    yield (opened := beside.submit(open_pull_request, deployment, root, beside))
    wait([opened])  # before the deployment's directory goes


def open_pull_request(deployment: Deployment, root: Path, beside: ThreadPoolExecutor) -> PullRequest:
    project = deployment.project
    origin, clone = root / "origin", root / "clone"
    tracked_copy(PROJECT_DIR, origin)
    config = {**CONFIG, "state": {"directory": str(project.state_dir)}}  # the deployed state
    write_project_file(origin, config)  # in place of the checkout's
    git(origin, "init", "-q", "-b", "main")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "base")
    git(origin, "tag", str(CONFIG["clusters"]["blue"]["gitops_revision"]))  # blue serves on a release tag
    git(origin, "checkout", "-q", "-b", PR_BRANCH)
    write_project_file(origin, {**config, "tags": PR_TAGS})
    git(origin, "commit", "-q", "-am", "tag every stack")
    git(root, "clone", "-q", "--depth", "1", "--no-tags", "--branch", PR_BRANCH, f"file://{origin}", str(clone))
    for installed in INSTALLED:  # what `make synth` installs
        (clone / installed).symlink_to(PROJECT_DIR / installed)
    github = {
        "GITHUB_BASE_REF": "main",
        "GITHUB_OUTPUT": str(root / "output"),
        "GITHUB_STEP_SUMMARY": str(root / "summary"),
    }
    shallow = git(clone, "rev-parse", "--is-shallow-repository").strip()
    check = project.run("python3", "-m", "scripts.ci.changed_stacks", "--check-clone", cwd=clone, env=github, nice=SLACK)
    for command in (("python", "-m", "scripts.cdktf_json"), ("cdktf", "synth")):
        synth = project.run(*command, cwd=clone, env=github, nice=SLACK)
        assert synth.returncode == 0, synth.output[-3000:]
    changed = project.run("python", "-m", "scripts.ci.changed_stacks", cwd=clone, env=github, nice=SLACK)
    listed = json.loads(changed.output.strip().splitlines()[-1]) if changed.returncode == 0 else {"deploy": [], "named": []}
    stacks, named = listed["deploy"], json.dumps(listed["named"])

    def plan_job(stack: str) -> Run:
        deployment.reads(stack)
        job = {**github, "GITHUB_STEP_SUMMARY": str(root / f"summary-{stack}")}
        return project.run("python", "-m", "scripts.ci.plan_stacks", stack, "--named", named, cwd=clone, env=job, nice=SLACK)

    # Side by side, as the plan job's matrix runs them.
    plans = dict(zip(stacks, [job.result() for job in [beside.submit(plan_job, stack) for stack in stacks]], strict=True))
    return PullRequest(
        shallow=shallow,
        check=check,
        changed=changed,
        outputs=read_if_written(root / "output"),
        summary=read_if_written(root / "summary"),
        plans=plans,
        plan_summaries={stack: read_if_written(root / f"summary-{stack}") for stack in stacks},
    )


def read_if_written(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def test_a_pull_request_in_a_depth_one_clone_fetches_what_it_needs_and_lists_the_changed_stacks(
    pull_request: Future[PullRequest],
) -> None:
    """The tag changes every stack and names no colour's entry: which colour serves is the live weights' to say, when
    a job with AWS credentials runs (the plan, below; the deploy)."""
    done = pull_request.result()
    assert done.shallow == "true"
    assert done.check.returncode == 0, done.check.output  # blue's tag and green's `main`, fetched one commit each
    assert done.changed.returncode == 0, done.changed.output[-3000:]
    assert json.loads(done.changed.output.strip().splitlines()[-1]) == {
        "deploy": ["common", "traffic", "blue", "green"],
        "named": [],
        "removed": [],
    }
    assert 'stacks=["common","traffic","blue","green"]' in done.outputs.splitlines()
    assert "- blue: changed, its entry `clusters.blue` unchanged: deployed only if it has no live weight" in done.summary


def test_a_pull_request_gets_a_plan_of_each_changed_stack_in_the_job_summary(pull_request: Future[PullRequest]) -> None:
    """common and traffic: their tags change in place, nothing replaced; the colours (never deployed here): their AWS
    part created, their in-cluster part named and left out (the plan role has no access to a cluster); blue, which the
    live weights (the traffic stack's, as deployed: blue 100) say serves, is frozen: the plan says a merge would not
    deploy it."""
    done = pull_request.result()
    colours = ("blue", "green")
    assert list(done.plans) == ["common", "traffic", *colours]
    for stack, run in done.plans.items():
        assert run.returncode == 0, run.output[-3000:]
        (verdict,) = re.findall(rf"^### Plan of `{stack}`: (.*)$", done.plan_summaries[stack], flags=re.M)
        counts = re.fullmatch(r"Plan: (\d+) to add, (\d+) to change, (\d+) to destroy\.", verdict)
        assert counts, verdict
        add, change, destroy = map(int, counts.groups())
        wanted = (True, 0, 0) if stack in colours else (False, True, 0)  # (adds, changes, destroys)
        assert (add > 0, change if stack in colours else change > 0, destroy) == wanted, verdict
    assert (
        "**blue serves now (live weight 100) and this change does not edit its entry `clusters.blue`"
        in (done.plan_summaries["blue"])
    )
    assert "A merge deploys green." in done.plan_summaries["green"]
    green = done.plan_summaries["green"]
    assert "Not planned here, the in-cluster part: " in green
    left_out = green.split("Not planned here, the in-cluster part: ")[1].split(" (the plan role")[0].split(", ")
    assert left_out
    assert all(address.startswith(("helm_release.", "kubernetes_namespace_v1.")) for address in left_out), left_out
    assert "helm_release" not in green.split("<details>")[1]  # nothing of it in Terraform's plan


# --- destroy: refused while protected, complete once it is not, with an image in the repository ----------------------


# What each stack's protection keeps, as its refusal names it.
KEEPS = {"traffic": "the load balancer every application is reached through", "common": "the DynamoDB table eks-bg-users"}


@pytest.fixture(scope="module", autouse=True)
def refused_destroys(
    deployment: Deployment, aws: Callable[[str], Any], beside: ThreadPoolExecutor
) -> Iterator[dict[str, Future[Run]]]:
    """`cdktf destroy <stack>` while protected, each on a thread as soon as its stack is deployed: common's during
    traffic's deploy, traffic's beside the plans after it. A build has pushed the app image first. Each runs in a copy
    of the deployment (refusing_copy): Terraform writes a local state file in place at the end of every apply, a
    refused destroy's too, and the plans beside it read these states."""
    copies: list[Project] = []

    def push() -> None:
        deployment.common.result()  # the repository is common's
        push_image(aws("ecr"))

    image = beside.submit(push)

    def refuse(stack: str) -> Run:
        deployment.reads(stack)
        image.result()
        copies.append(refusing_copy(deployment.project, stack))
        destroy = ("cdktf", "destroy", stack, "--skip-synth", "--auto-approve")  # of the deploy's synth
        return copies[-1].run(*destroy, nice=SLACK)

    refusals = {stack: beside.submit(refuse, stack) for stack in KEEPS}
    yield refusals
    pending: list[Future[Any]] = [image, *refusals.values()]
    wait(pending)
    for copy in copies:
        copy.cleanup()


def refusing_copy(project: Project, stack: str) -> Project:
    """project's deployment of stack, copied: the synthesis (the CLI reads every stack's), stack's Terraform working
    directory and the states it reads (its own; common's, which traffic's reads), on the same emulator."""
    copy = Project.create(project.root.with_name(f"refusing-{stack}"), project.endpoint, project.config)
    shutil.copytree(
        project.root / "cdktf.out", copy.root / "cdktf.out", ignore=shutil.ignore_patterns(".terraform*", "aws-parts")
    )
    shutil.copytree(project.stack_dir(stack), copy.stack_dir(stack), symlinks=True, dirs_exist_ok=True)
    copy.state_dir.mkdir()
    for state in {"common", stack}:
        shutil.copy(project.state_dir / f"{state}.tfstate", copy.state_dir)
    return copy


@pytest.mark.parametrize(("stack", "keeps"), KEEPS.items())
def test_destroy_is_refused_while_protected_and_its_last_lines_say_why(
    project: Project, refused_destroys: dict[str, Future[Run]], aws: Callable[[str], Any], stack: str, keeps: str
) -> None:
    destroy = refused_destroys[stack].result()
    assert destroy.returncode != 0
    last = "\n".join(destroy.output.splitlines()[-25:])
    assert f"deletion_protection is on: {stack} keeps {keeps}" in last, last
    assert 'set "deletion_protection": false in the config' in last, last
    assert f"then `cdktf destroy {stack}` again" in last, last
    held = aws_holds(aws)
    assert (held["table"], held["images"]) == ("ACTIVE", [IMAGE_TAG])
    assert held["vpcs"], "nothing else may be half-destroyed either"
    assert f"{SUB_ZONE}." in held["zones"]
    assert held["load_balancers"] == [load_balancer_name(PROJECT)]
    assert weights_parameter(PROJECT) in held["parameters"]


# --- the traffic moved by the identity that may only move traffic, and no deploy from Git moves it back ----------------


def test_the_deployer_applies_common_and_traffic_with_iam_enforced(retirement: Scenario) -> None:
    """Terraform's applies of the protected common and the unprotected traffic, as an identity holding only the deployer
    policy: each exits 0 (the step fails with Terraform's own output otherwise)."""
    for step in (APPLY_COMMON, APPLY_TRAFFIC):
        assert retirement.of(step).returncode == 0


def test_the_deployer_deployed_traffic_as_the_example_asks(retirement: Scenario) -> None:
    deployed = retirement.of(READ_TRAFFIC)
    assert deployed.load_balancer["LoadBalancerName"] == load_balancer_name(PROJECT)
    assert deployed.weights == SETTINGS_OF_CONFIG.weights


def test_the_traffic_operator_drains_to_the_colour_without_weight(retirement: Scenario) -> None:
    """`python -m tools.shift --to green --now` as an IAM user holding only the traffic operator's policy, IAM enforced:
    the weights parameter and every public rule move in one change; `--status` reads them back."""
    drain = retirement.of(DRAIN)
    target = drain_target_of_config()
    total = sum(SETTINGS_OF_CONFIG.weights.values())
    moved = {colour: total if colour == target else 0 for colour in SETTINGS_OF_CONFIG.weights}
    assert drain["before"]["parameter"] == SETTINGS_OF_CONFIG.weights
    assert drain["drained"] == {
        "parameter": moved,
        "rules": {app.name: moved for app in applications(SETTINGS_OF_CONFIG)},
    }
    assert "done in 1 rule change(s)" in drain["run"].output, drain["run"].output
    status = retirement.of(STATUS)
    assert "lock: free" in status.output, status.output
    # And it may change nothing else: DeleteRule refused.
    assert retirement.of(OPERATOR_DELETES) == "HTTP 403 AccessDenied"


def test_no_deploy_reverts_the_shift(retirement: Scenario) -> None:
    """Issue #30's done-when: after the drain, a plan of traffic wants no change, and the deploy workflow's step
    applying common and traffic from Git (here: lifting the protection) leaves the weights parameter and every public
    rule as the drain set them; its job summary says what it applied."""
    plan = retirement.of(PLAN_AFTER_DRAIN)
    assert plan.returncode == 0, plan.output[-6000:]
    unprotect = retirement.of(UNPROTECT)
    verdicts = re.findall(r"^### Deploy of `(\w+)`: (.*)$", unprotect["summary"], flags=re.M)
    assert [stack for stack, _ in verdicts] == ["common", "traffic"], unprotect["summary"]
    assert all(verdict.startswith("Apply complete!") for _, verdict in verdicts), unprotect["summary"]
    assert unprotect["weights"] == retirement.of(DRAIN)["drained"]


def drain_target_of_config() -> str:
    return next(colour for colour, weight in SETTINGS_OF_CONFIG.weights.items() if weight == 0)


# --- the way out: traffic, then common, once unprotected -----------------------------------------------------------


# What the traffic stack makes, as aws_holds reads it: after its destroy, none of it is left, and common stands.
TRAFFIC_HOLDS = ("load_balancers", "target_groups", "parameters")


def test_destroying_traffic_after_the_shift_leaves_nothing_of_it(retirement: Scenario) -> None:
    """Traffic after the shift (a target group a rule forwards to cannot go: the rules go first): nothing of it is
    left, down to its records in common's zone (the certificate's validation CNAMEs are common's)."""
    assert retirement.of(DESTROY_TRAFFIC).returncode == 0
    after_traffic = retirement.of(HELD_AFTER)
    assert {key: after_traffic[key] for key in TRAFFIC_HOLDS} == {key: [] for key in TRAFFIC_HOLDS}
    assert after_traffic["records"] == ["CNAME"]
    assert after_traffic["security_groups"] == ["default"]  # common's: the VPC's, emptied (components/network.py)
    assert (after_traffic["table"], after_traffic["zones"]) == ("ACTIVE", [f"{PARENT}.", f"{SUB_ZONE}."])


def test_destroying_common_once_unprotected_leaves_nothing_of_it(commons: Scenario) -> None:
    """common, applied unprotected: its repository still holds the image, and goes with it (ECR's force delete)."""
    assert commons.of(DESTROY_COMMON).returncode == 0
    assert commons.of(HELD_AFTER) == {
        "vpcs": [],
        "nat_gateways": [],
        "addresses": [],
        "zones": [f"{PARENT}."],
        "delegation": [],
        "records": None,
        "certificates": [],
        "table": None,
        "images": None,
        "repositories": [],
        "roles": [],
        "policies": [],
        "log_groups": [],
        "load_balancers": [],
        "target_groups": [],
        "parameters": [],
        "security_groups": [],
    }


def test_the_deployer_made_its_roles_with_the_boundary_the_admin_created_and_cannot_remove_it(
    retirement: Scenario,
) -> None:
    """With IAM enforced: the admin created the boundary first and attached it to no one; every role the deployer made
    carries it; the deployer's DeleteRolePermissionsBoundary is refused (the unconditioned Deny the emulator keeps)."""
    boundaries = retirement.of(BOUNDARIES)
    assert boundaries["roles"] == dict.fromkeys(COMMON_ROLES, BOUNDARY)
    assert boundaries["attachments"] == 0
    assert retirement.of(IAM_PROBES)["removing_a_boundary"] == "HTTP 403 AccessDenied"


def test_the_way_out_ran_as_the_deployer_with_iam_enforced_and_no_call_refused(retirement: Scenario, commons: Scenario) -> None:
    """Deploy, update and destroy of common and traffic as an identity holding only the deployer policy, the drain as
    one holding only the traffic operator's (each Allow widened to Resource `*`: the emulator knows no request's ARN,
    so this proves the actions; tests/test_deployer_calls.py and tests/test_traffic_operator.py prove the scoping).
    The emulator does refuse each what its policy does not allow."""
    deployer_calls = retirement.of(CALLS)["deployer"] + commons.of(CALLS)["deployer"]
    operator_calls = retirement.of(CALLS)["operator"]
    assert len(deployer_calls) > 100, "IAM was not enforced on the deployer's calls"
    assert sorted({action for outcome, action in deployer_calls if outcome != "allowed"}) == []
    assert len(operator_calls) > 10, "IAM was not enforced on the operator's calls"
    refused = sorted({action for outcome, action in operator_calls if outcome != "allowed"})
    assert refused == ["elasticloadbalancing:DeleteRule"]  # the one call made to prove it is refused
    probes = retirement.of(IAM_PROBES)
    assert probes["outside_the_policy"] == "HTTP 403 AccessDenied"
    # Route53's GETs pass the emulator's signature check only through scripts/emulator.py's workaround: it still
    # refuses a wrong secret.
    assert probes["wrong_secret"].startswith("HTTP 403: ")
    assert "<Code>SignatureDoesNotMatch</Code>" in probes["wrong_secret"]


def test_every_call_the_deployer_and_the_operator_made_is_in_the_call_table(retirement: Scenario, commons: Scenario) -> None:
    """What the emulator saw Terraform (and the deletion guards) call is listed in tests/support/deployer_calls.yaml, and
    what the traffic operator called is listed for `tools.shift --now` and `--status`: the table is not missing a call a
    real run makes, at least where the emulator can tell."""
    table = calls(Deployer(validated(CONFIG), EMULATOR_ACCOUNT))
    made = {action for _, action in retirement.of(CALLS)["deployer"] + commons.of(CALLS)["deployer"]}
    assert sorted(made - {call.action for call in table}) == []
    shifts = {call.action for call in table if call.owner in ("commands.tools.shift --now", "commands.tools.shift --status")}
    operator_made = {action for outcome, action in retirement.of(CALLS)["operator"] if outcome == "allowed"}
    assert sorted(operator_made - shifts) == []
    assert "elasticloadbalancing:ModifyRule" in operator_made


# --- `make rehearse`: one line per step, and the first failure ends it with its output -----------------


def test_a_failing_step_ends_the_rehearsal_with_the_end_of_its_output(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines: list[str] = []
    show = Rehearsal(lines.append)
    show.step("fine", lambda: "what it did")
    with pytest.raises(StepFailedError) as failed:
        show.step("cdktf deploy common", lambda: Run("cdktf deploy common", 1, "Error: creating VPC: boom", 0.1))
    assert lines[0].endswith("] ok    fine: what it did")
    assert lines[1].endswith("] FAIL  cdktf deploy common: `cdktf deploy common` exited 1")

    def fails(config: dict[str, Any], scratch: Path, out: Callable[[str], None] = print) -> None:
        raise failed.value

    monkeypatch.setattr(rehearse, "rehearse", fails)
    project_file = write_project(tmp_path, json.loads(EXAMPLE_FILE.read_text()))
    assert rehearse.main(["--config", str(project_file)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("rehearsal FAILED at: cdktf deploy common; the end of its output:\nError: creating VPC: boom")
    assert "the scratch copy stays for a look: " in err
    shutil.rmtree(err.rsplit("the scratch copy stays for a look: ", 1)[1].strip())
