"""`make rehearse`: the first deploy, rehearsed against an AWS emulator in a scratch copy of the project, as an
identity that holds only the deployer policy (policies/deployer.py), with IAM enforced.

    make rehearse        # or: python -m scripts.rehearse [--keep]

One line per step with its time; exit 1 at the first failing step, with the end of its output.
The copy has its own cdktf.json, cdktf.out and state: the project's terraform-state/ and cdktf.out/
are never touched, and nothing can reach a real account (every AWS_* variable points at the
emulator). Steps: start the emulator (moto, certificates issued at once) on a free loopback port;
create the parent zone and the deployer (an IAM user holding the deployer's managed policies), then
enforce IAM; `cdktf synth`; `cdktf deploy common` as the deployer; read back what it made; `terraform
plan` with no drift; plan each colour's AWS part against common's state; `cdktf destroy common`; every
call the deployer made was allowed.

What the enforced emulator proves is action coverage: moto authorizes most services against Resource `*` (it
knows no request's ARN) and evaluates no condition, so the deployer holds the policy with every Allow's
resource widened to `*` there. Scoping is proven call by call in tests/test_deployer_calls.py.

A colour cannot be applied to the emulator (it has no EKS add-ons, access entries or Pod Identity),
so each colour's AWS part (cluster, nodes, add-ons, access, Pod Identity associations) is planned
against common's real state instead, without its helm/kubernetes part (those providers need a
cluster to talk to).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model.config import COMMON_STACK
from model.loading import ConfigError, config_from_dict, load_config
from model.paths import PROJECT_DIR
from policies.deployer import Deployer, documents
from scripts.emulator import CREDENTIALS, MotoProcess, client
from scripts.scratch_project import Project, Run

# The emulator issues certificates at once and has AWS's managed policies to attach.
EMULATOR_SETTINGS = {"MOTO_ACM_VALIDATION_WAIT": "0", "MOTO_IAM_LOAD_MANAGED_POLICIES": "true"}
EMULATOR_ACCOUNT = "123456789012"  # moto's default account
DEPLOYER_USER = "deployer"
ADMIN_USER = "emulator-admin"  # reads back what the deployer made, and sets up what a user already has
ALLOW_ALL = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}


class StepFailedError(Exception):
    def __init__(self, step: str, output: str) -> None:
        super().__init__(step)
        self.step, self.output = step, output


class Rehearsal:
    """Runs the steps in order, one line each: `[  12.3 s] ok    what it did`."""

    def __init__(self, out: Callable[[str], None] = print) -> None:
        self.say = out
        self.started = time.monotonic()

    def step(self, name: str, action: Callable[[], str | Run]) -> None:
        """action: returns what to print after the name, or a Run that must have exited 0."""
        start = time.monotonic()
        result = action()
        seconds = time.monotonic() - start
        if isinstance(result, Run):
            if result.returncode != 0:
                self.say(f"  [{seconds:6.1f} s] FAIL  {name}: `{result.command}` exited {result.returncode}")
                raise StepFailedError(name, result.output)
            result = ""
        self.say(f"  [{seconds:6.1f} s] ok    {name}{': ' + result if result else ''}")


def rehearse(config: dict[str, Any], scratch: Path, out: Callable[[str], None] = print) -> None:
    """Every step against a fresh emulator in scratch; raises StepFailedError at the first failure."""
    show = Rehearsal(out)
    server = MotoProcess(EMULATOR_SETTINGS, iam=True)
    try:
        show.step("start the AWS emulator", lambda: f"moto on {server.ready()}, certificates issued at once")
        identities: list[Identities] = []
        show.step(
            "create the deployer (an IAM user holding only the deployer policy), then enforce IAM",
            lambda: _enforced(server, config, identities),
        )
        admin, deployer = identities[0].admin, identities[0].deployer
        project = Project.create(scratch / "project", server.endpoint, config, admin)
        deploy_common(project, show, as_deployer=deployer)
        show.step("read back what common made", lambda: _read_back(project))
        show.step("terraform plan common as the deployer: no drift", lambda: _no_drift(project, deployer))
        colours = list(project.settings.clusters)
        show.step(
            f"plan each colour's AWS part against common's state as the deployer ({', '.join(colours)}, side by side)",
            lambda: _colour_plans(project, colours, deployer),
        )
        show.step(
            "cdktf destroy common as the deployer (of that synth: --skip-synth)",
            lambda: project.run("cdktf", "destroy", COMMON_STACK, "--skip-synth", "--auto-approve", env=deployer),
        )
        show.step("every call of the deployer was allowed", lambda: deployer_calls_allowed(server))
    finally:
        server.stop()
    seconds = time.monotonic() - show.started
    out(
        f"rehearsal passed in {seconds:.0f} s: as the deployer, common deploys, reads back without drift, serves every "
        "colour's plan, and goes"
    )


@dataclass(frozen=True)
class Identities:
    """Credentials on an emulator that enforces IAM, as AWS_* variables."""

    admin: dict[str, str]
    deployer: dict[str, str]


def enforce_deployer(server: MotoProcess, config: dict[str, Any]) -> Identities:
    """On a fresh emulator (IAM not enforced yet): an admin, and the deployer holding the deployer's managed policies
    filled for config, created and attached as README says; then IAM enforced. Nothing else may run on it meanwhile."""
    region = config_from_dict(config).region
    iam = client("iam", server.endpoint, region)
    admin = _user(iam, ADMIN_USER)
    iam.put_user_policy(UserName=ADMIN_USER, PolicyName="everything", PolicyDocument=json.dumps(ALLOW_ALL))
    deployer = _user(iam, DEPLOYER_USER)
    for name, document in documents(Deployer(config_from_dict(config), EMULATOR_ACCOUNT)).items():
        arn = iam.create_policy(PolicyName=name, PolicyDocument=json.dumps(widened(document)))["Policy"]["Arn"]
        iam.attach_user_policy(UserName=DEPLOYER_USER, PolicyArn=arn)
    server.enforce_iam()
    return Identities(admin, deployer)


def widened(document: dict[str, Any]) -> dict[str, Any]:
    """The document as the emulator can enforce it: every Allow on Resource `*`. moto 5.2 authorizes most services'
    requests against `*` (it knows no request's ARN), so a scoped Allow would never match there; its conditions it
    does not evaluate. The actions, and every Deny, stay as they are: the emulator proves which actions are needed."""
    return {
        **document,
        "Statement": [{**s, "Resource": "*"} if s["Effect"] == "Allow" else s for s in document["Statement"]],
    }


def deployer_calls_allowed(server: MotoProcess) -> str:
    """Every call the deployer made since IAM was enforced, allowed; raises StepFailedError naming each refused one."""
    made = calls_of_the_deployer(server)
    refused = sorted({action for outcome, action in made if outcome != "allowed"})
    if refused:
        raise StepFailedError("every call of the deployer was allowed", f"AccessDenied for {', '.join(refused)}")
    return f"{len(made)} calls, {len({action for _, action in made})} actions, no AccessDenied"


def calls_of_the_deployer(server: MotoProcess) -> list[tuple[str, str]]:
    """(allowed|denied, service:Action) of each call the deployer made since IAM was enforced."""
    return [(outcome, action) for outcome, caller, action in server.judged() if caller.endswith(f":user/{DEPLOYER_USER}")]


def _user(iam: Any, name: str) -> dict[str, str]:
    iam.create_user(UserName=name)
    key = iam.create_access_key(UserName=name)["AccessKey"]
    return {**CREDENTIALS, "AWS_ACCESS_KEY_ID": key["AccessKeyId"], "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"]}


def _enforced(server: MotoProcess, config: dict[str, Any], identities: list[Identities]) -> str:
    identities.append(enforce_deployer(server, config))
    return f"{DEPLOYER_USER} holds {len(documents(Deployer(config_from_dict(config), EMULATOR_ACCOUNT)))} managed policies"


def deploy_common(project: Project, show: Rehearsal, as_deployer: dict[str, str] | None = None) -> None:
    """What a user does first: the parent zone exists already; synth, init, `cdktf deploy common` (as_deployer:
    with the deployer's credentials)."""
    parent = project.settings.dns.parent_zone
    show.step(f"create the parent zone {parent}", lambda: create_parent_zone(project, parent))
    show.step("cdktf synth", lambda: project.run("cdktf", "synth"))
    show.step(
        "terraform init common (offline: providers from the local mirror when there is one)", lambda: project.init(COMMON_STACK)
    )
    # The CLI's own flag: deploy what that synth wrote (a plain `cdktf deploy common` would synthesize it again).
    show.step(
        f"cdktf deploy common{' as the deployer' if as_deployer else ''} (of that synth: --skip-synth)",
        lambda: project.run("cdktf", "deploy", COMMON_STACK, "--skip-synth", "--auto-approve", env=as_deployer),
    )


def create_parent_zone(project: Project, name: str) -> str:
    project.aws("route53").create_hosted_zone(Name=name, CallerReference="rehearsal-parent")
    return "the zone you already have in your account"


def _read_back(project: Project) -> str:
    outputs = json.loads(project.run("terraform", "output", "-json", cwd=project.stack_dir(COMMON_STACK)).output)
    value = {name: output["value"] for name, output in outputs.items()}
    certificate = project.aws("acm").describe_certificate(CertificateArn=value["certificate_arn"])["Certificate"]
    table = project.aws("dynamodb").describe_table(TableName=value["table_name"])["Table"]
    if certificate["Status"] != "ISSUED" or table["TableStatus"] != "ACTIVE":
        raise StepFailedError("read back", f"certificate {certificate['Status']}, table {table['TableStatus']}")
    return (
        f"VPC {value['vpc_id']} with {len(value['private_subnet_ids'])} private subnets, zone {value['zone_name']}, "
        f"certificate ISSUED, table {value['table_name']} ACTIVE, {len(outputs)} outputs"
    )


def _no_drift(project: Project, env: dict[str, str]) -> Run:
    return project.run(
        "terraform", "plan", "-detailed-exitcode", "-input=false", "-no-color", cwd=project.stack_dir(COMMON_STACK), env=env
    )


def _colour_plans(project: Project, colours: list[str], env: dict[str, str]) -> str | Run:
    stack_dirs = [project.stack_dir(colour) for colour in colours]
    plans = project.plan_aws_parts({stack_dir: env for stack_dir in stack_dirs})
    failed = next((plan for plan in plans if plan.returncode != 0), None)
    if failed:
        return failed
    found = {colour: project.planned(stack_dir) for colour, stack_dir in zip(colours, stack_dirs, strict=True)}
    kinds = sorted({address.split(".")[0].removeprefix("aws_") for planned in found.values() for address in planned})
    counts = ", ".join(f"{colour} {len(planned)}" for colour, planned in found.items())
    return f"resources: {counts} ({', '.join(kinds)})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make rehearse", description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the scratch copy (its path is printed)")
    parser.add_argument("--config", type=Path, default=PROJECT_DIR / "cdktf.json", help="the project file to rehearse")
    args = parser.parse_args(argv)
    try:
        raw = load_config(args.config)
    except ConfigError as err:
        print(err, file=sys.stderr)
        return 2
    # The project's configuration, as data: protection off, or the rehearsal's destroy could not finish.
    config = {**raw.model_dump(mode="json", exclude={"state"}), "deletion_protection": False}
    config["table"] = {**config["table"], "deletion_protection": False}
    scratch = Path(tempfile.mkdtemp(prefix="rehearsal-", dir=PROJECT_DIR / ".cache"))
    print(f"rehearsal in {scratch} (deletion protection off there; your cdktf.out/ and terraform-state/ are not touched)")
    try:
        rehearse(config, scratch)
    except StepFailedError as failed:
        print(f"rehearsal FAILED at: {failed.step}; the end of its output:\n{failed.output[-4000:]}", file=sys.stderr)
        print(f"the scratch copy stays for a look: {scratch}", file=sys.stderr)
        return 1
    if not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
